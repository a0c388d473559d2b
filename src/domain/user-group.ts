/**
 * @module domain/user-group
 * A/B assignment (DESIGN.md): a stable hash of environment and user (user_id, else device_id)
 * picks a point in [0, 1); control groups take their configured shares from the bottom, the
 * service group the rest. `no-consent` devices always get the service group. Pure.
 */
import { createHash } from 'node:crypto';

export interface GroupConfig {
  serviceGroup: string;
  /** Control group name → share of traffic, 0..1 (shares add up to at most 1). */
  controlGroups: Readonly<Record<string, number>>;
}

/** A stable point in [0, 1) for a user of an environment (first 48 bits of SHA-256). */
export function bucketOf(environment: string, who: string): number {
  const digest = createHash('sha256').update(environment).update('\u0000').update(who).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
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
