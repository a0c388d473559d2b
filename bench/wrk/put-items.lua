-- wrk script: PUT /api/<env>/items/<type>/<id> with a unique id per request and a realistic
-- Item body (title, description, categories, tags, publication_datetime). Ids are
-- <prefix>-<thread id>-<counter>, so runs with distinct prefixes never overwrite each other.
-- Args (after --): token environment item_type quota_per_thread id_prefix
--   quota_per_thread > 0: the run ends as soon as any thread has that many responses
--   (every response of our service is a commit, so this is "load N items as fast as possible").
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

local WORDS = {
  "market", "energy", "election", "climate", "season", "league", "storm", "budget", "festival",
  "research", "museum", "transit", "harbour", "startup", "vaccine", "orchestra", "drought",
  "council", "satellite", "recipe", "garden", "archive", "summit", "border", "railway",
  "library", "theatre", "reform", "coastline", "harvest", "quarter", "network", "mountain",
  "village", "airport", "forecast", "exhibition", "tournament", "pension", "housing",
}
local SECTIONS = {
  { "news", "politics" }, { "news", "world" }, { "sport", "football" }, { "sport", "tennis" },
  { "culture", "music" }, { "culture", "film" }, { "business", "markets" }, { "science" },
  { "travel", "europe" }, { "food" },
}

local function words(n)
  local out = {}
  for i = 1, n do out[i] = WORDS[math.random(#WORDS)] end
  return table.concat(out, " ")
end

local function quoted(list)
  local out = {}
  for i, s in ipairs(list) do out[i] = '"' .. s .. '"' end
  return table.concat(out, ",")
end

-- The part of a body after item_id, built once per thread (the id varies per request).
local function body_tail()
  local a = SECTIONS[math.random(#SECTIONS)]
  local b = SECTIONS[math.random(#SECTIONS)]
  local title = words(math.random(5, 10))
  title = title:sub(1, 1):upper() .. title:sub(2)
  local tags = {}
  for i = 1, math.random(3, 6) do tags[i] = WORDS[math.random(#WORDS)] end
  return string.format(
    '"title":"%s","description":"%s.","categories":[[%s],[%s]],"tags":[%s],' ..
      '"publication_datetime":"20%02d-%02d-%02dT%02d:%02d:%02dZ"}',
    title, words(math.random(35, 60)), quoted(a), quoted(b), quoted(tags),
    math.random(18, 25), math.random(1, 12), math.random(1, 28),
    math.random(0, 23), math.random(0, 59), math.random(0, 59))
end

function init(args)
  common_init(0)
  local token, environment, item_type = args[1], args[2], args[3]
  quota = tonumber(args[4]) or 0
  local prefix = args[5] or "bench"
  path_prefix = "/api/" .. environment .. "/items/" .. item_type .. "/" .. prefix .. "-" .. tid .. "-"
  body_head = '{"environment":"' .. environment .. '","item_type":"' .. item_type ..
    '","item_id":"' .. prefix .. "-" .. tid .. "-"
  headers = { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }
  tails = {}
  for i = 1, 512 do tails[i] = body_tail() end
  sent = 0
end

function request()
  sent = sent + 1
  local n = tostring(sent)
  return wrk.format("PUT", path_prefix .. n, headers, body_head .. n .. '",' .. tails[sent % 512 + 1])
end

function response(status)
  count_response(status)
  if quota > 0 and responses == quota then finish_run() end
end
