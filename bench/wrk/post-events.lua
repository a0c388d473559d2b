-- wrk script: POST /api/<env>/events with batches of 10 mixed events (page views, impressions,
-- add to cart, purchases, clicks, page visits) from 50,000 users over 100,000 items with a
-- popularity skew (item = floor(100000 * u^3)), as a backend integration sends them.
-- Args (after --): environment [delay_ms per request per connection, to pace the load]
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

local templates = {
  '{"event_type":"detail_pageview","page_type":"article_detail","device_id":"d%d","user_id":"u%d","action_item":"i%d","action_item_type":"article","channel":"www"}',
  '{"event_type":"impression","page_type":"home","device_id":"d%d","user_id":"u%d","action_item":"i%d","action_item_type":"article","channel":"www","list_name":"popular","request_id":"r1","user_group":"affinity"}',
  '{"event_type":"detail_pageview","page_type":"article_detail","device_id":"d%d","user_id":null,"action_item":"i%d","action_item_type":"article","channel":"www-mobile"}',
  '{"event_type":"add_to_cart","page_type":"product_detail","device_id":"d%d","user_id":"u%d","action_item":"i%d","action_item_type":"article","amount":1,"channel":"www"}',
  '{"event_type":"click_on_recommendation","page_type":"home","device_id":"d%d","user_id":"u%d","action_item":"i%d","action_item_type":"article","channel":"www","list_name":"popular","request_id":"r1","user_group":"affinity"}',
  '{"event_type":"purchase","device_id":"d%d","user_id":"u%d","action_item":"i%d","action_item_type":"article","amount":1,"purchased_price":9.5,"channel":"www"}',
  '{"event_type":"page_visit","page_type":"home","device_id":"d%d","user_id":"u%d","channel":"app"}',
}
-- Weights of the templates in a batch of 10: 4 page views, 2 impressions, 1 anonymous view,
-- 1 add to cart, 1 click, 1 purchase or page visit alternately.
local batch = { 1, 1, 1, 1, 2, 2, 3, 4, 5, 6 }

function init(args)
  common_init(tonumber(args[2]) or 0)
  prefix = "/api/" .. (args[1] or "demo") .. "/events"
  headers = { ["Content-Type"] = "application/json" }
  n = 0
end

function request()
  n = n + 1
  local parts = {}
  for k = 1, 10 do
    local t = batch[k]
    if t == 6 and n % 2 == 0 then t = 7 end
    local u = math.random(1, 50000)
    local i = math.floor(math.random() ^ 3 * 100000)
    local tpl = templates[t]
    if t == 3 then
      parts[k] = string.format(tpl, u, i)
    elseif t == 7 then
      parts[k] = string.format(tpl, u, u)
    else
      parts[k] = string.format(tpl, u, u, i)
    end
  end
  return wrk.format("POST", prefix, headers, '{"events":[' .. table.concat(parts, ",") .. ']}')
end

function response(status)
  count_response(status)
end
