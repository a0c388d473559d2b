/**
 * @module domain/user-group
 * A/B assignment (DESIGN.md): a stable hash of environment and user (user_id, else device_id)
 * picks a point in [0, 1); control groups take their configured shares from the bottom, the
 * service group the rest. `no-consent` devices always get the service group. Pure.
 */

export interface GroupConfig {
  serviceGroup: string;
  /** Control group name → share of traffic, 0..1 (shares add up to at most 1). */
  controlGroups: Readonly<Record<string, number>>;
}

/**
 * A stable point in [0, 1) for a user of an environment: FNV-1a over the UTF-16 code units,
 * finished with murmur3's avalanche so nearby ids spread evenly. Not a cryptographic hash (a
 * user choosing an id to land in a group gains nothing), and cheap on the request path.
 */
export function bucketOf(environment: string, who: string): number {
  let h = 0x811c9dc5;
  const text = `${environment}\u0000${who}`;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

export function assignUserGroup(
  config: GroupConfig,
  environment: string,
  userId: string | undefined,
  deviceId: string,
): string {
  // Without consent nothing may be tested on the user, logged in or not (DESIGN.md).
  if (deviceId === 'no-consent') return config.serviceGroup;
  const point = bucketOf(environment, userId || deviceId);
  let edge = 0;
  for (const [group, share] of Object.entries(config.controlGroups)) {
    edge += share;
    if (point < edge) return group;
  }
  return config.serviceGroup;
}

/** True when `group` is a control group: its lists come back with empty items. */
export function isControlGroup(config: GroupConfig, group: string): boolean {
  return group !== config.serviceGroup && Object.hasOwn(config.controlGroups, group);
}
