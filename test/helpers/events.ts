// Event bodies the tests post, built in one place, and posting them until the builder applied them.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** A detail_pageview of `item` by a user (user_id null for a device alone); the device defaults to `device-of-<user>`. */
export function view(item: string, user: string | null, device = `device-of-${user}`, type = 'article'): Record<string, unknown> {
  return { event_type: 'detail_pageview', page_type: 'article_detail', channel: 'www', device_id: device, user_id: user, action_item: item, action_item_type: type };
}

/**
 * Posts `events` to the environment's events API (asserting its 200) and waits until the model
 * builder has written up to `position` (the events posted so far, this batch included).
 */
export async function postAndApply(url: string, environment: string, events: Array<Record<string, unknown>>, position: number): Promise<void> {
  const res = await fetch(`${url}/api/${environment}/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ events }) });
  assert.equal(res.status, 200, await res.text());
  // Long: the builder runs at niceness 10 and waits its turn on a saturated CI machine.
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const health = (await (await fetch(`${url}/health`)).json()) as { model_builder: { positions: Record<string, number> } | null };
    if ((health.model_builder?.positions[environment] ?? 0) >= position) return;
    await sleep(50);
  }
  throw new Error(`the model builder did not reach position ${position}`);
}
