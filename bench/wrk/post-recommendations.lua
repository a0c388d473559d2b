-- wrk script: POST /api/<env>/recommendations/requests for an article detail page with two lists
-- of 10 (personalized and item-to-item), as a site's backend asks for them: a random one of
-- `users` users (u1..uN, devices d1..dN) and a context item drawn from a file of item ids
-- (one `type id` pair per line; give the popular ones more lines for a realistic skew).
-- Args (after --): token environment users context_file [delay_ms per request per connection]
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

local template = '{"page_type":"article_detail","channel":"www","device_id":"d%d","user_id":"u%d",' ..
  '"context_item":"%s","context_item_type":"%s","lists":[' ..
  '{"list_name":"recommended_for_you","list_size":10},{"list_name":"more_like_this","list_size":10}]}'

function init(args)
  local token, environment, users, context_file = args[1], args[2], tonumber(args[3]), args[4]
  common_init(tonumber(args[5]) or 0)
  headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
  path = "/api/" .. environment .. "/recommendations/requests"
  user_count = users
  contexts = {}
  for line in io.lines(context_file) do
    local item_type, id = line:match("^(%S+)%s+(%S+)$")
    if id then contexts[#contexts + 1] = { item_type, id } end
  end
  if #contexts == 0 then error("no context items in " .. context_file) end
end

function request()
  local u = math.random(1, user_count)
  local c = contexts[math.random(#contexts)]
  return wrk.format("POST", path, headers, string.format(template, u, u, c[2], c[1]))
end

function response(status)
  count_response(status)
end
