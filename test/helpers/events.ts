// Event bodies the tests post, built in one place.

/** A detail_pageview of `item` by a user (user_id null for a device alone); the device defaults to `device-of-<user>`. */
export function view(item: string, user: string | null, device = `device-of-${user}`, type = 'article'): Record<string, unknown> {
  return { event_type: 'detail_pageview', page_type: 'article_detail', channel: 'www', device_id: device, user_id: user, action_item: item, action_item_type: type };
}
