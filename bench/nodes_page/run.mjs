// GET /v1/nodes at fleet scale: a real daemon with NODES (default 10,000) nodes
// registered over the real agent protocol by web/e2e/fake-nodes.mjs's thin agents (WebSocket, join
// token, hello, heartbeats, the registration check; they run nothing). One keep-alive connection
// then walks the list in pages (limit LIMIT, default 100, following `next`) ROUNDS times, reads
// filtered pages, and reads the whole list without a limit; it prints the latency of each request
// (request sent to the last byte of the answer) as p50 / p99 / max and the daemon's CPU per request
// (a figure the machine's load does not inflate), and checks every walk saw every node once.
//
//   nice node bench/nodes_page/run.mjs            # from the repository root, after deploy/build.sh
//   NODES=50000 ROUNDS=3 node bench/nodes_page/run.mjs
// TRAINYARD_BUILD_DIR picks the build (default build/). The fake nodes share the machine and the
// daemon's event loop (their heartbeats arrive during the measurement), as a real fleet's would.
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { loadavg } from "node:os";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Cluster, eventually } from "../../web/e2e/cluster.mjs";
import { connectFakeNodes } from "../../web/e2e/fake-nodes.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const build = resolve(process.env.TRAINYARD_BUILD_DIR ?? join(root, "build"));
const nodeCount = Number(process.env.NODES ?? 10000);
const limit = Number(process.env.LIMIT ?? 100);
const rounds = Number(process.env.ROUNDS ?? 5);

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

// One GET over the kept-alive connection: its latency in ms and its parsed body.
function get(url, token, target) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const req = request(url + target, { agent: keepAlive, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) return fail(new Error(`${target}: ${res.statusCode} ${text}`));
        done({ ms, body: JSON.parse(text), bytes: text.length });
      });
    });
    req.on("error", fail);
    req.end();
  });
}

// The daemon's CPU time so far (user + system), in ms: what a page costs it, whatever the machine's load.
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;  // utime, stime in clock ticks (USER_HZ 100)
}

// The daemon CPU `run` costs beyond what it spends meanwhile on the fleet (heartbeats): the same
// wall time idle right after is subtracted.
async function cpuOf(pid, run) {
  const before = cpuMs(pid);
  const started = Date.now();
  await run();
  const wall = Date.now() - started;
  const during = cpuMs(pid) - before;
  const idleFrom = cpuMs(pid);
  await sleep(wall);
  return during - (cpuMs(pid) - idleFrom);
}

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const figures = (ms) =>
  `n=${ms.length} p50 ${percentile(ms, 0.5).toFixed(2)} ms  p99 ${percentile(ms, 0.99).toFixed(2)} ms  max ${Math.max(...ms).toFixed(2)} ms`;

// Every page of `query`, following next: the latencies and the names seen.
async function walk(url, token, query) {
  const latencies = [];
  const names = [];
  const base = `/v1/nodes?limit=${limit}${query ? "&" + query : ""}`;
  let target = base;
  for (;;) {
    const { ms, body } = await get(url, token, target);
    latencies.push(ms);
    names.push(...body.nodes.map((n) => n.name));
    if (!body.next) return { latencies, names };
    target = `${base}&cursor=${encodeURIComponent(body.next)}`;
  }
}

const cluster = new Cluster(build, join(root, "web/dist"));
let fakes;
let ok = false;
try {
  // Room for the fleet's connections and the measuring client's.
  await cluster.startDaemon({ "heartbeat-interval-ms": 30000, "node-timeout-ms": 300000, "health-interval-s": 0,
    "max-connections": nodeCount + 100 });
  const joinToken = readFileSync(join(cluster.dir, "data/join.token"), "utf8").trim();
  let t = Date.now();
  fakes = await connectFakeNodes(cluster.url, joinToken, nodeCount);
  await eventually(async () => (await get(cluster.url, cluster.adminToken, "/v1/nodes?state=HEALTHY")).body.nodes.length === nodeCount,
    600_000, `${nodeCount} healthy nodes`);
  console.log(`setup: ${nodeCount} fake nodes joined over the agent protocol and passed their check in ${Date.now() - t} ms`);

  const daemon = cluster.processes.get("daemon").pid;
  const pages = [];
  const pageCpu = await cpuOf(daemon, async () => {
    for (let round = 0; round < rounds; round++) {
      const { latencies, names } = await walk(cluster.url, cluster.adminToken, "");
      assert.equal(new Set(names).size, nodeCount, "a walk saw every node once");
      assert.equal(names.length, nodeCount);
      pages.push(...latencies);
    }
  });
  console.log(`GET /v1/nodes?limit=${limit}, ${rounds} walks of the fleet: ${figures(pages)}; ` +
    `daemon CPU ${(pageCpu / pages.length).toFixed(2)} ms a page`);

  const filtered = [];
  for (let round = 0; round < rounds; round++) {
    const rack = await walk(cluster.url, cluster.adminToken, "label=rack%3Dr07");
    assert.equal(rack.names.length, Math.min(40, Math.max(0, nodeCount - 280)));
    const prefix = await walk(cluster.url, cluster.adminToken, "state=HEALTHY&name_prefix=fake-1");
    filtered.push(...rack.latencies, ...prefix.latencies);
  }
  console.log(`filtered pages (label=rack=r07; state=HEALTHY&name_prefix=fake-1): ${figures(filtered)}`);

  const whole = [];
  let bytes = 0;
  const wholeCpu = await cpuOf(daemon, async () => {
    for (let round = 0; round < rounds; round++) {
      const answer = await get(cluster.url, cluster.adminToken, "/v1/nodes");
      assert.equal(answer.body.nodes.length, nodeCount);
      whole.push(answer.ms);
      bytes = answer.bytes;
    }
  });
  console.log(`GET /v1/nodes without a limit (${nodeCount} nodes, ${(bytes / 1e6).toFixed(1)} MB): ${figures(whole)}; ` +
    `daemon CPU ${(wholeCpu / rounds).toFixed(1)} ms each`);
  console.log(`load average during the run: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  ok = true;
} finally {
  fakes?.close();
  keepAlive.destroy();
  await cluster.stopAll(!ok);
  if (!ok) console.error(`kept the cluster's files in ${cluster.dir}`);
}
