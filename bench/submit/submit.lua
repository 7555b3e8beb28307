-- wrk script of bench/submit/run.sh (CLIENT=wrk): each request submits a 1-node command job that
-- waits for capacity, as bench_submit's do; counts the 201s, which run.sh divides the daemon's CPU by.
local threads = {}

wrk.method = "POST"
wrk.path = "/v1/jobs"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TRAINYARD_TOKEN")
wrk.body = '{"name":"wrk","wait_for_capacity":true,"command":{"argv":["/bin/true"]}}'

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  created = 0
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("created")
  end
  io.write(string.format("wrk: %d of %d answers were 201\n", total, summary.requests))
end
