-- wrk script of `npm run bench` (bench/lib/load-wrk.ts): `-- fixed`, `-- lead-get IDS_FILE`,
-- `-- lead-post RUN`, and the multi-tenant forms `-- lead-get-multi PAIRS_FILE` (lines
-- "key id": each request picks a line at random and sends its key) and
-- `-- lead-post-multi RUN KEYS_FILE` (each request picks a key at random). Bodies as
-- benchLeadBody in bench/lib/load-autocannon.ts builds them. done() prints one line for
-- load-wrk.ts to parse.
local mode = "fixed"
local ids = {}
local keys = {}
local run = 0
local n = 0

local function headers(key)
  return { ["Host"] = wrk.headers["Host"], ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key }
end

function init(args)
  mode = args[1] or "fixed"
  if mode == "lead-get" then
    for line in io.lines(args[2]) do ids[#ids + 1] = line end
  elseif mode == "lead-get-multi" then
    for line in io.lines(args[2]) do
      local key, id = line:match("^(%S+) (%S+)$")
      keys[#keys + 1] = key
      ids[#ids + 1] = id
    end
  elseif mode == "lead-post" then
    run = tonumber(args[2])
  elseif mode == "lead-post-multi" then
    run = tonumber(args[2])
    for line in io.lines(args[3]) do keys[#keys + 1] = line end
  end
  math.randomseed(run + #ids + #keys)
end

local function body()
  n = n + 1
  return string.format('{"name":"Bench Lead %d","phone":"+4930%03d%07d","email":"lead%d-%d@example.com","consent":true}', n, run, n, run, n)
end

function request()
  if mode == "lead-get" then
    return wrk.format("GET", "/api/public/leads/" .. ids[math.random(#ids)])
  elseif mode == "lead-get-multi" then
    local i = math.random(#ids)
    return wrk.format("GET", "/api/public/leads/" .. ids[i], headers(keys[i]))
  elseif mode == "lead-post" then
    return wrk.format("POST", "/api/public/leads", nil, body())
  elseif mode == "lead-post-multi" then
    return wrk.format("POST", "/api/public/leads", headers(keys[math.random(#keys)]), body())
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
