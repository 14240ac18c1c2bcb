-- wrk script for POST /v1/query (bench/server_load.sh):
--   wrk -t2 -c16 -d20s --latency -s bench/server_query.lua http://127.0.0.1:PORT/v1/query -- BODIES
-- BODIES holds one JSON request body per line ({"question": ..., "method": ...});
-- each connection cycles through them from its own starting point.
local bodies = {}
local next_body = 1
local failures = 0

function init(args)
  local path = args[1]
  if path == nil then error("usage: wrk ... -s server_query.lua URL -- BODIES_FILE") end
  for line in io.lines(path) do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  if #bodies == 0 then error(path .. ": no request bodies") end
  next_body = math.random(#bodies)
end

function request()
  local body = bodies[next_body]
  next_body = next_body % #bodies + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end

function response(status, headers, body)
  if status ~= 200 then
    failures = failures + 1
    if failures <= 3 then io.stderr:write("HTTP " .. status .. ": " .. body:sub(1, 200) .. "\n") end
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format("requests      %d in %.1f s, %d errors (status %d, socket %d)\n",
    summary.requests, seconds,
    summary.errors.status + summary.errors.connect + summary.errors.read +
      summary.errors.write + summary.errors.timeout,
    summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  io.write(string.format("throughput    %.1f requests/s\n", summary.requests / seconds))
  io.write(string.format("latency ms    p50 %.2f  p90 %.2f  p99 %.2f  max %.2f  mean %.2f\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, latency.mean / 1000))
end
