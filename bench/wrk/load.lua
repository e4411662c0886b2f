-- wrk script of `npm run bench` (bench/load-wrk.ts): `-- fixed`, `-- lead-get IDS_FILE` or
-- `-- lead-post RUN`. Bodies as benchLeadBody in bench/load-autocannon.ts builds them. done() prints one
-- line for load-wrk.ts to parse.
local mode = "fixed"
local ids = {}
local run = 0
local n = 0

function init(args)
  mode = args[1] or "fixed"
  if mode == "lead-get" then
    for line in io.lines(args[2]) do ids[#ids + 1] = line end
  elseif mode == "lead-post" then
    run = tonumber(args[2])
  end
  math.randomseed(run + #ids)
end

function request()
  if mode == "lead-get" then
    return wrk.format("GET", "/api/public/leads/" .. ids[math.random(#ids)])
  elseif mode == "lead-post" then
    n = n + 1
    local body = string.format('{"name":"Bench Lead %d","phone":"+1555%03d%07d","email":"lead%d-%d@example.com","consent":true}', n, run, n, run, n)
    return wrk.format("POST", "/api/public/leads", nil, body)
  end
  return wrk.format()
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
