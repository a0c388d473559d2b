-- Shared by the wrk scripts of bench/http.bench.ts (loaded with dofile from the script's own
-- directory). Gives each thread an id, counts response statuses per thread, optionally paces
-- every connection (wrk has no fixed-rate mode), and prints one machine-readable result line:
--   WRK_RESULT {"requests":..,"duration_us":..,"errors":{..},"statuses":{"200":..},"latency_us":{..}}

local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

-- Called from each script's init(): per-thread state.
function common_init(delay_ms)
  statuses = {}
  responses = 0
  math.randomseed(12345 + tid)
  -- delay() is only defined when pacing, because wrk delays every request of a script that has
  -- one (even by 0 ms). wrk takes whole milliseconds: dither between floor and ceil so that the
  -- mean delay is delay_ms.
  if delay_ms and delay_ms > 0 then
    local whole = math.floor(delay_ms)
    local frac = delay_ms - whole
    delay = function()
      if math.random() < frac then return whole + 1 end
      return whole
    end
  end
end

function count_response(status)
  statuses[status] = (statuses[status] or 0) + 1
  responses = responses + 1
end

-- Ends the whole run now (not at -d): stop this thread's loop and interrupt wrk's main thread,
-- which sleeps for the duration and then reports. Used by the PUT loader once its quota is met.
local ffi = require("ffi")
ffi.cdef [[
  int getpid(void);
  int kill(int pid, int sig);
]]
function finish_run()
  wrk.thread:stop()
  ffi.C.kill(ffi.C.getpid(), 2) -- SIGINT: wrk's handler only sets its stop flag
end

local function json_number(x)
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  return string.format("%.17g", x)
end

function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(threads) do
    local s = thread:get("statuses")
    if s then
      for code, n in pairs(s) do merged[code] = (merged[code] or 0) + n end
    end
  end
  local codes = {}
  for code, n in pairs(merged) do
    table.insert(codes, string.format('"%d":%d', code, n))
  end
  local e = summary.errors
  local out = string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"statuses":{%s},' ..
      '"latency_us":{"min":%s,"mean":%s,"max":%s,"p50":%s,"p90":%s,"p99":%s,"p999":%s}}',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    table.concat(codes, ","),
    json_number(latency.min), json_number(latency.mean), json_number(latency.max),
    json_number(latency:percentile(50)), json_number(latency:percentile(90)),
    json_number(latency:percentile(99)), json_number(latency:percentile(99.9)))
  io.write("WRK_RESULT ", out, "\n")
end
