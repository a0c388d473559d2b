-- wrk script: clients guessing client secrets at POST /api/oauth/token, one guess per request
-- (form fields, a fresh random secret each time). With -c16, sixteen guessers.
-- Args (after --): client_id   (one id for all, as an attacker after one client; "random": a new
--   unknown id per request, as one probing ids)
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

local client_id

function init(args)
  common_init()
  client_id = args[1] or "random"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end

function request()
  local id = client_id
  if id == "random" then id = string.format("ac_%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff)) end
  local secret = string.format("%08x%08x%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff), math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
  return wrk.format(nil, "/api/oauth/token", nil, "grant_type=client_credentials&client_id=" .. id .. "&client_secret=" .. secret)
end

function response(status)
  count_response(status)
end
