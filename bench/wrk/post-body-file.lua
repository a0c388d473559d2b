-- wrk script: POST one body, read from a file (any bytes), with a given Content-Type, to a path.
-- Used by bench/wire-http.bench.ts to send the same batch as JSON and as protobuf.
-- Args (after --): path content_type body_file
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function init(args)
  common_init(0)
  local f = assert(io.open(args[3], "rb"))
  body = f:read("*a")
  f:close()
  req = wrk.format("POST", args[1], { ["Content-Type"] = args[2] }, body)
end

function request()
  return req
end
