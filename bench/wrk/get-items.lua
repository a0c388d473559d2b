-- wrk script: GET /api/<env>/items/<type>/<id> of ids drawn at random from a file of ids known
-- to exist (one per line), optionally paced to a target rate.
-- Args (after --): token environment item_type ids_file [delay_ms per request per connection]
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  local token, environment, item_type, ids_file = args[1], args[2], args[3], args[4]
  common_init(tonumber(args[5]) or 0)
  headers = { ["Authorization"] = "Bearer " .. token }
  local prefix = "/api/" .. environment .. "/items/" .. item_type .. "/"
  paths = {}
  for id in io.lines(ids_file) do
    if id ~= "" then paths[#paths + 1] = prefix .. id end
  end
  if #paths == 0 then error("no ids in " .. ids_file) end
end

function request()
  return wrk.format("GET", paths[math.random(#paths)], headers)
end

function response(status)
  count_response(status)
end
