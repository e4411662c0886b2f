-- wrk script of the overload run (bench/suite/overload.ts): POST /api/public/leads with a new phone per
-- request, `-- RUN` keeps runs' phones apart. Counts responses per status (201, 409, 429, 503,
-- other) across threads; done() prints one line for overload.ts to parse.
local threads = {}
local run = 0
local n = 0
local counts = { s201 = 0, s409 = 0, s429 = 0, s503 = 0, other = 0 }

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  run = tonumber(args[1]) or 0
end

function request()
  n = n + 1
  local body = string.format('{"name":"Overload Lead %d","phone":"+4930%03d%07d","consent":true}', n, run, n)
  return wrk.format("POST", "/api/public/leads", nil, body)
end

function response(status, headers, body)
  if status == 201 then s201 = (s201 or 0) + 1
  elseif status == 409 then s409 = (s409 or 0) + 1
  elseif status == 429 then s429 = (s429 or 0) + 1
  elseif status == 503 then s503 = (s503 or 0) + 1
  else other = (other or 0) + 1 end
end

function done(summary, latency, requests)
  for _, t in ipairs(threads) do
    for k, _ in pairs(counts) do counts[k] = counts[k] + (t:get(k) or 0) end
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"s201":%d,"s409":%d,"s429":%d,"s503":%d,"other":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max,
    counts.s201, counts.s409, counts.s429, counts.s503, counts.other))
end
