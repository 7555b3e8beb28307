// The dashboard at scale, measured in the browser: 2,000 nodes on the map and 10,000 pending jobs
// in the queue, against a real daemon. The nodes are e2e/fake-nodes.mjs's thin agents (the real
// protocol, no work); the jobs are real submissions that wait (each wants 16 cores per node, the
// nodes have 8). Prints time to first render and scroll frame times for each view, and fails if a
// view does not show everything or scrolls worse than the limits below. Run by hand (about two
// minutes): node e2e/scale.mjs; the figures are in docs/DESIGN.md "The dashboard".
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Cluster, eventually } from "./cluster.mjs";
import { connectFakeNodes } from "./fake-nodes.mjs";

const web = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const build = resolve(process.env.TRAINYARD_BUILD_DIR ?? join(web, "../build"));
const artifacts = join(build, "dashboard-e2e");
const nodeCount = Number(process.env.SCALE_NODES ?? 2000);
const jobCount = Number(process.env.SCALE_JOBS ?? 10000);
// Limits that say "usable", not "fast on this machine": a shared 2-core host runs the daemon, the
// fake nodes and the browser at once.
const limits = { firstRenderMs: 5000, p95FrameMs: 50 };

async function submitWaitingJobs(cluster, count, parallel = 16) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const { status, body } = await cluster.api("POST", "/v1/jobs", {
        name: `wide-${i}`, nodes: 2, cores_per_node: 16, wait_for_capacity: true, command: { argv: ["/bin/true"] },
      });
      assert.equal(status, 201, JSON.stringify(body));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

// In the page: scrolls `selector` (or the window) by `step` px a frame for `frames` frames; the
// intervals between frames, in ms.
function scrollFrames({ selector, step, frames }) {
  return new Promise((done) => {
    const target = selector ? document.querySelector(selector) : document.scrollingElement;
    const gaps = [];
    let last = performance.now();
    const tick = (now) => {
      gaps.push(now - last);
      last = now;
      target.scrollTop += step;
      if (gaps.length < frames) requestAnimationFrame(tick);
      else done(gaps.slice(1));
    };
    requestAnimationFrame(tick);
  });
}

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const frameFigures = (gaps) => ({ frames: gaps.length, p50: percentile(gaps, 0.5), p95: percentile(gaps, 0.95), max: Math.max(...gaps) });
const ms = (x) => `${x.toFixed(1)} ms`;

const cluster = new Cluster(build, join(web, "dist"));
let browser;
let fakes;
let ok = false;
try {
  mkdirSync(artifacts, { recursive: true });
  await cluster.startDaemon({ "heartbeat-interval-ms": 5000, "node-timeout-ms": 60000, "health-interval-s": 0 });
  const joinToken = readFileSync(join(cluster.dir, "data/join.token"), "utf8").trim();
  let t = Date.now();
  fakes = await connectFakeNodes(cluster.url, joinToken, nodeCount);
  await eventually(async () => (await cluster.api("GET", "/v1/nodes")).body.nodes.filter((n) => n.state === "HEALTHY").length === nodeCount,
    120_000, `${nodeCount} healthy nodes`);
  console.log(`setup: ${nodeCount} nodes joined and passed their check in ${Date.now() - t} ms`);
  t = Date.now();
  await submitWaitingJobs(cluster, jobCount);
  const queue = await cluster.api("GET", "/v1/queue?limit=1");
  assert.equal(queue.body.total, jobCount);
  console.log(`setup: ${jobCount} jobs submitted in ${Date.now() - t} ms`);

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(cluster.url + "/");
  await page.getByLabel("API token").fill(cluster.adminToken);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();

  // Node map: a fresh load of the view (the token stays in sessionStorage), until every node is drawn.
  await page.goto(cluster.url + "/nodes");
  // The time (since navigation) of the first frame that had every node: polled once a frame.
  const mapRender = await (await page.waitForFunction(
    (n) => document.querySelectorAll("li[data-node]").length === n && performance.now(), nodeCount, { timeout: 60_000 })).jsonValue();
  const mapFrames = frameFigures(await page.evaluate(scrollFrames, { selector: null, step: 60, frames: 120 }));
  await page.screenshot({ path: join(artifacts, "scale-nodes.png") });
  console.log(`node map, ${nodeCount} nodes: first render ${ms(mapRender)} after navigation; scrolling ` +
    `${mapFrames.frames} frames p50 ${ms(mapFrames.p50)} p95 ${ms(mapFrames.p95)} max ${ms(mapFrames.max)}`);

  // Queue: a fresh load, until the first rows are in; then a fast scroll through it, and the rows at
  // the bottom load from the server's pages.
  await page.goto(cluster.url + "/queue");
  const queueRender = await (await page.waitForFunction(
    () => document.querySelector(".queue-row[data-job]") !== null && performance.now(), null, { timeout: 60_000 })).jsonValue();
  const rows = await page.locator(".virtual-row").count();
  const queueFrames = frameFigures(await page.evaluate(scrollFrames, { selector: ".virtual", step: 4000, frames: 120 }));
  await page.evaluate(() => { const v = document.querySelector(".virtual"); v.scrollTop = v.scrollHeight; });
  await page.locator(".queue-row[data-job] .pos", { hasText: String(jobCount) }).first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(artifacts, "scale-queue.png") });
  console.log(`queue, ${jobCount} pending: first rows ${ms(queueRender)} after navigation, ${rows} rows in the DOM; scrolling ` +
    `${queueFrames.frames} frames p50 ${ms(queueFrames.p50)} p95 ${ms(queueFrames.p95)} max ${ms(queueFrames.max)}; ` +
    `the last row (position ${jobCount}) loaded`);

  assert.ok(mapRender < limits.firstRenderMs, `node map first render ${ms(mapRender)}`);
  assert.ok(queueRender < limits.firstRenderMs, `queue first render ${ms(queueRender)}`);
  assert.ok(mapFrames.p95 < limits.p95FrameMs, `node map p95 frame ${ms(mapFrames.p95)}`);
  assert.ok(queueFrames.p95 < limits.p95FrameMs, `queue p95 frame ${ms(queueFrames.p95)}`);
  assert.ok(rows < 100, `the queue rendered ${rows} rows: not virtualised`);
  ok = true;
} finally {
  await browser?.close();
  fakes?.close();
  await cluster.stopAll(!ok);
  if (!ok) console.error(`kept the cluster's files in ${cluster.dir}`);
}
