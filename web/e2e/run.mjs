// End-to-end: the built dashboard in headless Chromium (Debian's, driven by playwright-core)
// against a real daemon and agents this test starts on loopback and always stops. Screenshots of
// each view go to $BUILD/dashboard-e2e/ as artifacts.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Cluster, eventually } from "./cluster.mjs";

const web = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const build = resolve(process.env.TRAINYARD_BUILD_DIR ?? join(web, "../build"));
const artifacts = join(build, "dashboard-e2e");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";

let cluster;
let browser;
let aliceToken;
let failed = false;
const policyViolations = [];

async function signIn(context, token) {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  page.on("console", (m) => /Content.Security.Policy/i.test(m.text()) && policyViolations.push(m.text()));
  page.on("response", (r) => r.status() >= 400 && !r.url().includes("/v1/events")
    && console.error(`response: ${r.status()} ${r.url()}`));
  await page.goto(cluster.url + "/");
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

async function shot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

// GET as a plain HTTP client sends it, headers as they come off the wire.
function rawGet(path, headers = {}) {
  return new Promise((done, fail) => {
    const req = request(cluster.url + path, { headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => done({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", fail);
    req.end();
  });
}

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  cluster = new Cluster(build, join(web, "dist"));
  await cluster.startDaemon();
  cluster.startAgent("trn-1", "r1");
  cluster.startAgent("trn-2", "r1");
  cluster.startAgent("trn-3", "r2");
  await cluster.waitForHealthyNodes(3);
  const made = await cluster.api("POST", "/v1/tokens", { user: "alice", role: "user" });
  assert.equal(made.status, 201);
  aliceToken = made.body.token;
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"] });
});

after(async () => {
  await browser?.close();
  await cluster?.stopAll(failed);
  if (failed) console.error(`kept the cluster's files in ${cluster.dir}`);
});

function check(name, fn) {
  test(name, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      failed = true;
      throw e;
    }
  });
}

check("the daemon serves the dashboard with types, caching, gzip and a strict policy", async () => {
  const index = await rawGet("/");
  assert.equal(index.status, 200);
  assert.match(index.headers["content-type"], /^text\/html/);
  assert.equal(index.headers["cache-control"], "no-cache");
  assert.match(index.headers["content-security-policy"], /default-src 'self'.*connect-src 'self'/);
  assert.doesNotMatch(index.headers["content-security-policy"], /unsafe-inline/);
  assert.equal(index.headers["x-content-type-options"], "nosniff");
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(index.body.toString())[1];
  const zipped = await rawGet(script, { "Accept-Encoding": "gzip" });
  assert.equal(zipped.headers["content-encoding"], "gzip");
  assert.equal(zipped.headers["vary"], "Accept-Encoding");
  assert.equal(zipped.headers["cache-control"], "public, max-age=31536000, immutable");
  assert.match(zipped.headers["content-type"], /^text\/javascript/);
  const view = await rawGet("/jobs/5");
  assert.equal(view.status, 200);
  assert.equal(view.body.toString(), index.body.toString());
  assert.equal((await rawGet("/assets/%2e%2e/%2e%2e/data/admin.token")).status, 404);
  assert.equal((await rawGet("/v1/jobs")).status, 401, "the API keeps its routes and its token");
});

check("the browser enforces the policy: an inline script is refused and reported", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const reported = [];
  page.on("console", (m) => /Content.Security.Policy/i.test(m.text()) && reported.push(m.text()));
  await page.goto(cluster.url + "/");
  await page.addScriptTag({ content: "window.inlineRan = true;" }).catch(() => undefined);
  assert.equal(await page.evaluate(() => window.inlineRan), undefined);
  await eventually(() => reported.length > 0, 5_000, "the violation in the console");
  await context.close();
});

check("a bad token shows an error", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, "ty_not-a-token");
  await page.getByRole("alert").filter({ hasText: "not valid" }).waitFor();
  await shot(page, "login-error");
  await context.close();
});

check("an admin sees every node and the cluster over time on the overview (a user its gauges only), and the map grouped by rack", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByText("3", { exact: true }).first().waitFor();
  await shot(page, "overview");
  // The cluster over time: the daemon samples every second here, so it has points already; the
  // cluster is minutes old, so the charts open on the last hour, not a dot in 24 h.
  const overTime = page.getByRole("region", { name: "Cluster over time" });
  const coresChart = overTime.locator('figure[data-chart="Cores"]');
  await eventually(async () => Number(await coresChart.getAttribute("data-points")) > 0, 30_000, "points on the cores chart");
  assert.equal(await coresChart.locator("canvas").count(), 1);
  assert.deepEqual(await overTime.locator("figure[data-chart]").evaluateAll((charts) => charts.map((c) => c.dataset.chart)),
                   ["Cores", "Queue depth", "Attempts", "Goodput"]);
  const windowButton = (label) => overTime.getByRole("group", { name: "Window" }).getByRole("button", { name: label, exact: true });
  await eventually(async () => (await windowButton("1 h").getAttribute("aria-pressed")) === "true"
    && (await overTime.locator("[data-window-s]").getAttribute("data-window-s")) === "3600", 15_000,
  "the charts to open on the hour that has data");
  await overTime.screenshot({ path: join(artifacts, "overview-over-time.png") });
  await windowButton("7 d").click();
  await eventually(async () => (await overTime.locator("[data-window-s]").getAttribute("data-window-s")) === "604800"
    && Number(await coresChart.getAttribute("data-points")) > 0, 15_000, "the cores chart over the last 7 d");
  assert.equal(await windowButton("7 d").getAttribute("aria-pressed"), "true");
  assert.equal(await windowButton("24 h").getAttribute("aria-pressed"), "false");
  assert.match(await coresChart.getByRole("img").getAttribute("aria-label"), /^Cores over the last 7 d: allocated, usable, total; \d+ points$/);
  await overTime.screenshot({ path: join(artifacts, "overview-over-time-7d.png") });
  await page.getByRole("link", { name: "Nodes", exact: true }).click();
  for (const name of ["trn-1", "trn-2", "trn-3"]) await page.locator(`[data-node="${name}"]`).waitFor();
  assert.equal(await page.getByRole("region", { name: "rack r1" }).locator("[data-node]").count(), 2);
  assert.match(await page.locator('[data-node="trn-1"]').innerText(), /HEALTHY/);
  await shot(page, "nodes");
  await context.close();
  // The charts' axes, grid and series take the dark theme's colours: the screenshot shows them.
  const dark = await browser.newContext({ colorScheme: "dark" });
  const darkPage = await signIn(dark, cluster.adminToken);
  const darkOverTime = darkPage.getByRole("region", { name: "Cluster over time" });
  await eventually(async () => Number(await darkOverTime.locator('figure[data-chart="Cores"]').getAttribute("data-points")) > 0,
                   30_000, "points on the dark cores chart");
  await darkOverTime.screenshot({ path: join(artifacts, "overview-over-time-dark.png") });
  await dark.close();
  // A user reads the gauges, not attempts or goodput: those count other users' jobs too.
  const user = await browser.newContext();
  const userOverTime = (await signIn(user, aliceToken)).getByRole("region", { name: "Cluster over time" });
  await eventually(async () => Number(await userOverTime.locator('figure[data-chart="Cores"]').getAttribute("data-points")) > 0,
                   30_000, "points on the user's cores chart");
  assert.match(await userOverTime.locator('figure[data-chart="Attempts"]').innerText(), /shown only to roles that read every job/);
  assert.equal(await userOverTime.locator('figure[data-chart="Goodput"]').getAttribute("data-points"), "0");
  await user.close();
});

check("the node map counts every state, filters by state and name in its URL, and shows a node's details on hover and focus", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.goto(cluster.url + "/nodes");
  const summary = page.locator("[data-node-summary]");
  await eventually(async () => /^3 nodes: 3 healthy · \d+ of 24 cores in use/.test(await summary.innerText()), 15_000,
                   "the summary of three healthy nodes");
  // Each tile: its state in words, its cores in use, a bar; its details (for screen readers always) shown on hover.
  const tile = page.locator('[data-node="trn-1"]');
  assert.match(await tile.innerText(), /trn-1[\s\S]*HEALTHY[\s\S]*\d+\/8/);
  const tip = tile.getByRole("tooltip");
  assert.equal(await tile.getByRole("link", { name: "trn-1", exact: true }).getAttribute("aria-describedby"), await tip.getAttribute("id"));
  assert.ok((await tip.boundingBox()).width <= 1, "the details are hidden until asked for");
  await tile.hover();
  await eventually(async () => (await tip.boundingBox()).width > 50, 5_000, "the details on hover");
  assert.match(await tip.innerText(), /trn-1 HEALTHY for[\s\S]*of 8 in use/);
  await shot(page, "nodes-hover");
  await page.mouse.move(0, 0);
  await page.locator('[data-node="trn-2"]').getByRole("link", { name: "trn-2", exact: true }).focus();
  await eventually(async () => (await page.locator('[data-node="trn-2"]').getByRole("tooltip").boundingBox()).width > 50, 5_000,
                   "the details on focus");
  // The name filter narrows as it is typed, into the URL; the states' boxes too.
  await page.getByRole("searchbox", { name: "Name" }).fill("RN-3");
  await page.waitForURL((url) => url.pathname === "/nodes" && url.searchParams.get("name") === "RN-3");
  await eventually(async () => (await page.locator("[data-node]").count()) === 1, 10_000, "only trn-3 shown");
  await page.locator('[data-node="trn-3"]').waitFor();
  assert.match(await summary.innerText(), /3 nodes: 3 healthy .* 1 shown$/);
  await page.getByRole("checkbox", { name: /^drained/ }).check();
  await page.waitForURL((url) => url.searchParams.get("state") === "DRAINED" && url.searchParams.get("name") === "RN-3");
  await page.getByText("No node matches these filters.").waitFor();
  assert.equal(await page.locator("[data-node]").count(), 0);
  // A filtered view is a link: opened afresh, its boxes ticked; one grid without the racks.
  await page.goto(`${cluster.url}/nodes?state=HEALTHY&group=none`);
  await eventually(async () => (await page.locator("[data-node]").count()) === 3, 15_000, "three healthy nodes");
  assert.equal(await page.getByRole("checkbox", { name: /^healthy/ }).isChecked(), true);
  assert.equal(await page.getByRole("checkbox", { name: "Group by rack" }).isChecked(), false);
  assert.equal(await page.getByRole("region", { name: "rack r1" }).count(), 0);
  await shot(page, "nodes-filtered");
  await page.getByRole("link", { name: "Clear filters" }).click();
  await page.waitForURL((url) => url.pathname === "/nodes" && url.search === "");
  await page.getByRole("region", { name: "rack r2" }).locator('[data-node="trn-3"]').waitFor();
  // Times are compact, 24-hour, and the zone is named once, in the footer.
  await page.goto(cluster.url + "/nodes/trn-1");
  assert.match(await page.locator(".facts time").first().innerText(), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  assert.match(await page.locator("footer").innerText(), /Times are in .+, 24-hour/);
  await context.close();
});

// A thousand nodes as GET /v1/nodes would give them (long names, 32 cores, some out of service), for
// the map's drawing: the browser's layout is what is tested, so the daemon's answer is stood in for.
function thousandNodes() {
  const states = ["HEALTHY", "HEALTHY", "HEALTHY", "HEALTHY", "HEALTHY", "HEALTHY", "SUSPECT", "UNHEALTHY", "DRAINED", "DOWN"];
  return Array.from({ length: 1000 }, (_, i) => {
    const state = states[i % states.length];
    const used = state === "HEALTHY" ? (i * 7) % 33 : 32;
    return {
      name: `rk${String(Math.floor(i / 40)).padStart(2, "0")}-trn2-node-${String(i).padStart(4, "0")}`, cores: 32, used_cores: used,
      free_cores: state === "HEALTHY" ? 32 - used : 0, state, state_since: new Date(Date.now() - 600_000).toISOString(),
      state_reason: state === "HEALTHY" ? "passed health check 3 (periodic)" : `${state.toLowerCase()} by test ${i}`,
      connected: state !== "DOWN", attempts: [], jobs: [], labels: { rack: `r${String(Math.floor(i / 40)).padStart(2, "0")}` },
    };
  });
}

check("the node map sizes its tiles to their text and draws a thousand nodes on one screen, the same facts on hover or focus", async () => {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const nodes = thousandNodes();
  await context.route(/\/v1\/nodes$/, (route) => route.fulfill({ json: { nodes } }));
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.goto(cluster.url + "/nodes?group=none");
  await eventually(async () => (await page.locator(".cell[data-node]").count()) === 1000, 15_000, "a thousand compact cells");
  assert.equal(await page.getByRole("group", { name: "Density" }).getByRole("button", { name: "Auto" }).getAttribute("aria-pressed"), "true");
  const bottom = await page.evaluate(() => Math.max(...[...document.querySelectorAll(".cell")].map((c) => c.getBoundingClientRect().bottom)));
  assert.ok(bottom <= 900, `the thousandth node is drawn at ${bottom} px, below a 900 px screen`);
  await shot(page, "nodes-thousand-compact");
  // A cell says no more than its colour and use; its name and facts are its link's, on focus and hover.
  const bad = nodes[7];
  const cell = page.locator(`[data-node="${bad.name}"]`);
  const link = cell.getByRole("link", { name: bad.name, exact: true });
  await link.focus();
  const tip = cell.getByRole("tooltip");
  await eventually(async () => (await tip.boundingBox()).width > 50, 5_000, "the cell's details on focus");
  assert.match(await tip.innerText(), new RegExp(`${bad.name} UNHEALTHY for[\\s\\S]*reason: unhealthy by test 7[\\s\\S]*32 cores of 32 in use`));
  await page.locator(`[data-node="${nodes[0].name}"]`).hover();
  await eventually(async () => (await page.locator(`[data-node="${nodes[0].name}"]`).getByRole("tooltip").boundingBox()).width > 50, 5_000,
                   "the cell's details on hover");
  // Tiles on request (in the URL): every name and "UNHEALTHY 32/32" whole, none cut.
  await page.getByRole("group", { name: "Density" }).getByRole("button", { name: "Tiles" }).click();
  await page.waitForURL((url) => url.searchParams.get("density") === "tiles");
  await eventually(async () => (await page.locator(".tile[data-node]").count()) === 1000, 15_000, "a thousand tiles");
  const cut = await page.evaluate(() => [...document.querySelectorAll(".tile-name, .tile-line")]
    .filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent));
  assert.deepEqual(cut.slice(0, 5), [], `${cut.length} tiles cut their text`);
  await shot(page, "nodes-thousand-tiles");
  await context.close();
});

check("a running job is on its node's tile and its node's page, each a link to the job", async () => {
  const made = await cluster.api("POST", "/v1/jobs",
    { name: "on-the-map", nodes: 1, cores_per_node: 2, command: { argv: ["/bin/sleep", "60"] } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id;
  const placed = await eventually(async () => {
    const { body } = await cluster.api("GET", `/v1/jobs/${id}/attempts`);
    return body.attempts?.[0]?.nodes?.[0];
  }, 30_000, "the job placed on a node");
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.goto(cluster.url + "/nodes");
  const tile = page.locator(`[data-node="${placed}"]`);
  await tile.getByRole("link", { name: `#${id}`, exact: true }).waitFor({ timeout: 15_000 });
  assert.match(await tile.innerText(), /[2-8]\/8/, "its cores in use");
  await shot(page, "nodes-running");
  await page.goto(`${cluster.url}/nodes/${placed}`);
  const jobs = page.getByRole("region", { name: "Jobs on this node" });
  await jobs.getByRole("link", { name: `#${id}`, exact: true }).click();
  await page.getByRole("heading", { name: `Job #${id} on-the-map` }).waitFor();
  // A running job's log is followed, and the control says so.
  assert.equal(await page.getByRole("checkbox", { name: "Follow" }).isChecked(), true);
  assert.equal((await cluster.api("POST", `/v1/jobs/${id}/cancel`)).status, 200);
  await page.locator(".facts .state-cancelled").waitFor({ timeout: 15_000 });
  assert.equal(await page.getByRole("checkbox", { name: "Follow" }).isDisabled(), true, "no Follow once it ended");
  await context.close();
});

check("a failed attempt's last output lines are on its job page, as text, in dark mode too", async () => {
  const lines = ["first line", "<b>not bold</b>", "ModuleNotFoundError: No module named x"];
  const made = await cluster.api("POST", "/v1/jobs", { name: "says-why", nodes: 1, cores_per_node: 1, retry: { attempts: 1 },
    command: { argv: ["/bin/sh", "-c", `${lines.map((l) => `echo '${l}'`).join("; ")}; exit 3`] } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id;
  const attempt = await eventually(async () => {
    const { body } = await cluster.api("GET", `/v1/jobs/${id}/attempts`);
    return body.attempts?.find((a) => a.output);
  }, 30_000, "the failed attempt's output");
  assert.equal(attempt.output_rank, 0);
  assert.equal((await cluster.api("GET", `/v1/jobs/${id}`)).body.state, "FAILED");
  const context = await browser.newContext({ colorScheme: "dark" });
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.goto(`${cluster.url}/jobs/${id}`);
  await page.getByRole("heading", { name: `Job #${id} says-why` }).waitFor();
  const output = page.getByRole("figure", { name: `Last output of attempt 1 (rank 0 on ${attempt.nodes[0]})`, exact: true });
  await output.waitFor({ timeout: 15_000 });
  const pre = output.locator("pre");
  assert.equal((await pre.innerText()).trimEnd(), lines.join("\n"));
  assert.equal(await pre.locator("b").count(), 0, "the job's text is not markup");
  assert.equal(await pre.evaluate((e) => getComputedStyle(e).backgroundColor), "rgb(26, 31, 37)", "the dark card colour");
  await shot(page, "job-failed-output");
  await context.close();
});

check("a job submitted through the API goes RUNNING then SUCCEEDED without a reload, with loss points", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  // Held until its page is open: the run takes seconds, and a page that loaded after it ended would
  // never show RUNNING.
  const submitted = await cluster.api("POST", "/v1/jobs", {
    name: "e2e-train", nodes: 1, cores_per_node: 4, kind: "simulated", hold: true,
    workload: { width: 64, depth: 2, global_batch: 64, steps: 12000, lr: 0.003, warmup: 10, checkpoint_every: 2000 },
  });
  assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
  const id = submitted.body.id;
  let reloads = 0;
  page.on("framenavigated", (f) => f === page.mainFrame() && reloads++);
  await page.getByRole("link", { name: `#${id}` }).first().click();
  await page.getByRole("heading", { name: `Job #${id} e2e-train` }).waitFor();
  await page.locator(".facts .state-pending").waitFor();
  const navigations = reloads;
  const released = await cluster.api("POST", `/v1/jobs/${id}/release`);
  assert.equal(released.status, 200, JSON.stringify(released.body));
  await page.locator(".facts .state-running").waitFor({ timeout: 60_000 });
  await page.locator(".facts .state-succeeded").waitFor({ timeout: 180_000 });
  assert.equal(reloads, navigations, "the page was not reloaded");
  await eventually(async () => Number(await page.locator("figure.chart").first().getAttribute("data-points")) > 0,
                   30_000, "loss points on the chart");
  assert.ok(await page.locator("figure.chart canvas").count() >= 1);
  // No legend lists a series that is not drawn; the loss chart turns to a log scale and back.
  assert.equal(await page.locator(".u-legend .u-off").count(), 0);
  const loss = page.locator('figure[data-chart="Loss"]');
  assert.equal(await loss.getAttribute("data-scale"), "linear");
  await loss.getByRole("checkbox", { name: /Log scale/ }).check();
  await eventually(async () => (await loss.getAttribute("data-scale")) === "log", 5_000, "the loss chart on a log scale");
  assert.match(await loss.getByRole("img").getAttribute("aria-label"), /log scale/);
  assert.equal(await loss.locator("canvas").count(), 1);
  await shot(page, "job-log-scale");
  await loss.getByRole("checkbox", { name: /Log scale/ }).uncheck();
  await eventually(async () => (await loss.getAttribute("data-scale")) === "linear", 5_000, "the loss chart linear again");
  assert.match(await page.locator(".facts time").first().innerText(), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  await shot(page, "job");
  // An ended job's logs are shown, not followed.
  const follow = page.getByRole("checkbox", { name: "Follow" });
  assert.equal(await follow.isChecked(), false, "Follow is off for an ended job");
  assert.equal(await follow.isDisabled(), true);
  // Its provenance: what attempt 1 ran with, and on which node.
  const provenance = page.getByRole("region", { name: "Provenance" });
  await provenance.getByText("Spec SHA-256").waitFor({ timeout: 15_000 });
  assert.match(await provenance.innerText(), /[0-9a-f]{64}/);
  assert.match(await provenance.getByRole("table", { name: "Ranks of attempt 1" }).innerText(), /trn-\d/);
  await context.close();
});

check("a command job's page charts the steps its progress file reported, the last of them written just before it exited", async () => {
  // Thirty steps of JSON lines as the trainyard module writes them, then the process exits at once:
  // the agent's last read of the file, not a heartbeat, carries them.
  const script = 'i=1; while [ $i -le 30 ]; do echo "{\\"step\\": $i, \\"loss\\": $((100 - i)).5, \\"lr\\": 0.001}" >> "$TRAINYARD_PROGRESS_FILE"; i=$((i + 1)); done';
  const made = await cluster.api("POST", "/v1/jobs",
    { name: "command-steps", nodes: 1, cores_per_node: 1, command: { argv: ["/bin/sh", "-c", script] } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id;
  await eventually(async () => (await cluster.api("GET", `/v1/jobs/${id}`)).body.state === "SUCCEEDED", 60_000, `job ${id} succeeded`);
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.goto(`${cluster.url}/jobs/${id}`);
  await page.getByRole("heading", { name: `Job #${id} command-steps` }).waitFor();
  const loss = page.locator('figure[data-chart="Loss"]');
  await eventually(async () => Number(await loss.getAttribute("data-points")) === 30, 15_000, "thirty loss points");
  await page.getByText(/30 steps, 1 step per point\./).waitFor();
  assert.equal(await page.getByText("No steps reported yet.").count(), 0);
  await shot(page, "job-command-steps");
  await context.close();
});

check("a straggler is named on its job's page with its rank, node and ratio", async () => {
  const made = await cluster.api("POST", "/v1/jobs", { name: "e2e-gang", nodes: 2, cores_per_node: 1, kind: "simulated",
    workload: { steps: 4000, step_ms: 50 } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id;
  const attempt = async () => (await cluster.api("GET", `/v1/jobs/${id}/attempts`)).body.attempts?.[0];
  await eventually(async () => (await cluster.api("GET", `/v1/jobs/${id}`)).body.state === "RUNNING", 60_000, "the gang running");
  const slow = (await attempt()).nodes[1];
  const set = await cluster.api("PUT", `/v1/nodes/${slow}/faults`, { faults: ["node=slow:3"] });
  assert.equal(set.status, 202, JSON.stringify(set.body));
  await eventually(async () => ((await attempt()).stragglers ?? []).length > 0, 60_000, "the straggler named");
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.goto(`${cluster.url}/jobs/${id}`);
  await page.getByRole("heading", { name: `Job #${id} e2e-gang` }).waitFor();
  const named = page.locator(".straggler");
  await named.waitFor();
  assert.match(await named.innerText(), new RegExp(`straggler\\s+rank 1 on ${slow} took [\\d.]+x the other ranks' median time per step`));
  await shot(page, "job-straggler");
  assert.equal((await cluster.api("POST", `/v1/jobs/${id}/cancel`)).status, 200);
  await cluster.api("DELETE", `/v1/nodes/${slow}/faults`);
  // Its node was SUSPECT until its health check; the checks after this one want it back in service.
  await eventually(async () => (await cluster.api("GET", `/v1/nodes/${slow}`)).body.state === "HEALTHY", 90_000,
                   `${slow} back to HEALTHY after its check`);
  await context.close();
});

check("a user sees only their own jobs and no admin buttons", async () => {
  const own = await cluster.api("POST", "/v1/jobs",
    { name: "alices-run", nodes: 1, cores_per_node: 1, command: { argv: ["/bin/sleep", "1"] } }, aliceToken);
  assert.equal(own.status, 201, JSON.stringify(own.body));
  const context = await browser.newContext();
  const page = await signIn(context, aliceToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.locator(`tr[data-job="${own.body.id}"]`).waitFor();
  assert.equal(await page.getByText("e2e-train").count(), 0, "the admin's job is not shown");
  assert.match(await page.locator(".who").innerText(), /alice \(user\)/);
  await page.goto(cluster.url + "/nodes/trn-1");
  await page.getByRole("heading", { name: "Node trn-1" }).waitFor();
  await page.getByText("Health history").waitFor();
  assert.equal(await page.getByRole("button", { name: /drain|health check/i }).count(), 0);
  await context.close();
});

// The jobs list writes goodput as the API gives it: a percentage, or n/a when it judged none.
const goodputText = (accounting) => accounting?.goodput === null || accounting?.goodput === undefined
  ? "n/a" : `${(accounting.goodput * 100).toFixed(1)} %`;

// The ids of the jobs list's rows, top to bottom, once the rows answer the page's current request.
async function listedJobs(page) {
  await page.locator('table[aria-label="Jobs"][aria-busy="false"]').waitFor({ timeout: 15_000 });
  return page.locator('table[aria-label="Jobs"] tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.job)));
}

check("the jobs list shows submitted jobs newest first with their accounting, each row a link to its page", async () => {
  const ids = [];
  for (const name of ["list-a", "list-b", "list-c"]) {
    const made = await cluster.api("POST", "/v1/jobs", { name, nodes: 1, cores_per_node: 1, command: { argv: ["/bin/true"] } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    ids.push(made.body.id);
  }
  await eventually(async () => {
    for (const id of ids) if ((await cluster.api("GET", `/v1/jobs/${id}`)).body.state !== "SUCCEEDED") return false;
    return true;
  }, 60_000, "the three jobs to succeed");
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByRole("link", { name: "Jobs", exact: true }).click();
  await page.getByRole("heading", { name: "Jobs", exact: true }).waitFor();
  assert.equal(new URL(page.url()).pathname, "/jobs");
  for (const id of ids) await page.locator(`tr[data-job="${id}"]`).waitFor({ timeout: 15_000 });
  const listed = await listedJobs(page);
  assert.deepEqual(listed, [...listed].sort((a, b) => b - a), "newest first");
  // Each row's accounting as the API reports it: the trained job's core-time and goodput too.
  const { body } = await cluster.api("GET", "/v1/jobs?limit=100");
  const train = body.jobs.find((j) => j.name === "e2e-train");
  assert.ok(train?.accounting, "the API gives the trained job's accounting");
  const trainRow = page.locator(`tr[data-job="${train.id}"]`);
  assert.match(await trainRow.innerText(), /SUCCEEDED[\s\S]*1 × 4/);
  // Core-hours in one unit, the header's: the API's figure with its decimals.
  assert.equal(Number((await trainRow.locator("[data-core-hours]").innerText()).replace(/,/g, "")).toFixed(2),
               train.accounting.core_hours.toFixed(2));
  assert.equal(await trainRow.locator("[data-goodput]").innerText(), goodputText(train.accounting));
  for (const id of ids) {
    const listedJob = body.jobs.find((j) => j.id === id);
    assert.equal(await page.locator(`tr[data-job="${id}"] [data-goodput]`).innerText(), goodputText(listedJob.accounting));
    assert.match(await page.locator(`tr[data-job="${id}"]`).innerText(), /SUCCEEDED[\s\S]*1 × 1/);
  }
  await shot(page, "jobs");
  // A row opens its job's page in place, and Back returns to the list.
  await page.locator(`tr[data-job="${ids[1]}"]`).getByRole("link", { name: `#${ids[1]}` }).click();
  await page.getByRole("heading", { name: `Job #${ids[1]} list-b` }).waitFor();
  await page.goBack();
  await page.locator(`tr[data-job="${ids[1]}"]`).waitFor();
  await context.close();
  // A user's list is their own jobs, with no user filter to set.
  const userContext = await browser.newContext();
  const userPage = await signIn(userContext, aliceToken);
  await userPage.getByRole("heading", { name: "Overview" }).waitFor();
  await userPage.goto(cluster.url + "/jobs");
  const own = await listedJobs(userPage);
  assert.ok(own.length >= 1);
  for (const id of [...ids, train.id]) assert.ok(!own.includes(id), `job ${id} is not alice's`);
  assert.equal(await userPage.getByRole("textbox", { name: "User" }).count(), 0);
  await userContext.close();
});

check("the jobs list narrows by state in its URL and by name on the page, and pages with a small limit", async () => {
  // Waits for cores no node has, then is cancelled: a job in a state no other check leaves.
  const waiting = await cluster.api("POST", "/v1/jobs", { name: "list-cancelled", nodes: 1, cores_per_node: 16,
    wait_for_capacity: true, command: { argv: ["/bin/true"] } });
  assert.equal(waiting.status, 201, JSON.stringify(waiting.body));
  const cancelledId = waiting.body.id;
  assert.equal((await cluster.api("POST", `/v1/jobs/${cancelledId}/cancel`)).status, 200);
  const succeeded = (await cluster.api("GET", "/v1/jobs?state=SUCCEEDED&limit=1")).body.jobs[0].id;
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByRole("link", { name: "Jobs", exact: true }).click();
  await page.locator(`tr[data-job="${succeeded}"]`).waitFor({ timeout: 15_000 });
  await page.getByRole("checkbox", { name: "cancelled", exact: true }).check();
  await page.waitForURL((url) => url.pathname === "/jobs" && url.searchParams.get("state") === "CANCELLED");
  await page.locator(`tr[data-job="${cancelledId}"]`).waitFor({ timeout: 15_000 });
  assert.ok(!(await listedJobs(page)).includes(succeeded), "a succeeded job is filtered out");
  const states = await page.locator('table[aria-label="Jobs"] tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.state));
  assert.ok(states.length >= 1 && states.every((s) => s === "CANCELLED"), states.join(","));
  assert.match(await page.locator("[data-list-status]").innerText(), /Jobs CANCELLED/);
  await shot(page, "jobs-cancelled");
  // The filtered view is a link: opened afresh it shows the same, its box ticked.
  await page.goto(`${cluster.url}/jobs?state=CANCELLED`);
  await page.locator(`tr[data-job="${cancelledId}"]`).waitFor({ timeout: 15_000 });
  assert.equal(await page.getByRole("checkbox", { name: "cancelled", exact: true }).isChecked(), true);
  assert.ok(!(await listedJobs(page)).includes(succeeded));
  // The name filter narrows the loaded page, says so, and is in the URL too.
  await page.goto(`${cluster.url}/jobs`);
  await page.getByText("name filters this page").waitFor();
  await page.getByRole("searchbox", { name: "Name" }).fill("list-b");
  await page.waitForURL((url) => url.searchParams.get("name") === "list-b");
  await eventually(async () => {
    const shown = await page.locator('table[aria-label="Jobs"] tbody tr').allInnerTexts();
    return shown.length === 1 && /list-b/.test(shown[0]);
  }, 10_000, "only list-b shown");
  // Two a page: the next page holds the next-older jobs, and the first page is a click away.
  await page.goto(`${cluster.url}/jobs?limit=2`);
  const first = await listedJobs(page);
  assert.equal(first.length, 2, first.join(","));
  assert.match(await page.locator("[data-list-status]").innerText(), /page 1 · 2 jobs a page/);
  await page.getByRole("link", { name: "Next page" }).click();
  await page.waitForURL((url) => url.searchParams.has("cursor") && url.searchParams.get("page") === "2");
  await eventually(async () => {
    const second = await listedJobs(page);
    return second.length === 2 && Math.max(...second) < Math.min(...first);
  }, 15_000, "the second page's two older jobs");
  assert.match(await page.locator("[data-list-status]").innerText(), /page 2 · 2 jobs a page/);
  await shot(page, "jobs-page-2");
  await page.getByRole("link", { name: "First page" }).click();
  await page.waitForURL((url) => !url.searchParams.has("cursor"));
  await eventually(async () => (await listedJobs(page)).join() === first.join(), 15_000, "the first page again");
  await context.close();
});

check("the health page shows a check's pair tests as a matrix and busbw against the reference", async () => {
  const started = await cluster.api("POST", "/v1/healthchecks", { nodes: ["trn-1", "trn-2", "trn-3"], suites: ["collective"] });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const id = started.body.id;
  await eventually(async () => (await cluster.api("GET", `/v1/healthchecks/${id}`)).body.finished_at, 90_000, "the check to finish");
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("link", { name: "Health", exact: true }).click();
  const matrix = page.getByRole("table", { name: `Pair tests of check ${id}` });
  await matrix.waitFor({ timeout: 15_000 });
  // Three nodes, three pairs, each in two cells; every cell says how its pair did in words.
  const labels = await matrix.locator("td[data-pair]").allInnerTexts();
  assert.equal(labels.length, 6, labels.join(" | "));
  for (const label of labels) assert.match(label, /^(ok \d+ %|slow \d+ %|failed)$/);
  const busbw = page.getByRole("table", { name: "Bus bandwidth against the reference" });
  assert.match(await busbw.innerText(), /all_reduce.*B\/s.*%/);
  await shot(page, "health-pairs");
  await context.close();
});

check("an admin runs a canary from the Health page and sees its id; a user has no such button", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("link", { name: "Health", exact: true }).click();
  const section = page.getByRole("region", { name: "Canaries" });
  const button = section.getByRole("button", { name: "Run canary now" });
  await button.click();
  const started = section.locator("[data-canary]");
  await started.waitFor({ timeout: 15_000 });
  const id = await started.getAttribute("data-canary");
  assert.equal(await started.innerText(), `Started canary #${id}.`);
  const { body } = await cluster.api("GET", `/v1/jobs/${id}`);
  assert.equal(body.user, "system");
  assert.equal(body.name, "canary");
  // The list shows it without a reload.
  await section.locator(`tr[data-job="${id}"]`).waitFor({ timeout: 15_000 });
  await shot(page, "health-canary");
  // A second click while it runs is refused with the API's reason (409); one that comes after it
  // ended starts another.
  await button.click();
  let second;
  await eventually(async () => {
    if (await section.getByRole("alert").count()) return true;
    const now = (await started.count()) ? await started.getAttribute("data-canary") : null;
    if (now && now !== id) second = now;
    return second;
  }, 15_000, "the second click's answer");
  if (!second) assert.match(await section.getByRole("alert").innerText(), /Could not start a canary: a canary job is running already/);
  const ended = async (job) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes((await cluster.api("GET", `/v1/jobs/${job}`)).body.state);
  await eventually(async () => (await ended(id)) && (!second || (await ended(second))), 120_000, "the canaries to end");
  await section.locator(`tr[data-job="${id}"]`).getByRole("link").click();
  await page.getByRole("heading", { name: `Job #${id} canary` }).waitFor();
  await context.close();
  const userContext = await browser.newContext();
  const userPage = await signIn(userContext, aliceToken);
  await userPage.getByRole("heading", { name: "Overview" }).waitFor();
  await userPage.getByRole("link", { name: "Health", exact: true }).click();
  await userPage.getByRole("region", { name: "Canaries" }).locator(`tr[data-job="${id}"]`).waitFor({ timeout: 15_000 });
  assert.equal(await userPage.getByRole("button", { name: "Run canary now" }).count(), 0);
  await userPage.getByRole("link", { name: "Canaries", exact: true }).click();
  await userPage.waitForURL((url) => url.pathname === "/canaries");
  await userPage.getByRole("heading", { name: "Canaries", level: 1 }).waitFor();
  await userPage.locator(`tr[data-job="${id}"]`).waitFor({ timeout: 15_000 });
  assert.equal(await userPage.getByRole("button", { name: "Run canary now" }).count(), 0);
  await userContext.close();
});

check("an admin runs a health check of all nodes from the Health page and sees its verdicts; a user has no form", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("link", { name: "Health", exact: true }).click();
  const form = page.getByRole("region", { name: "Run a health check" });
  const all = form.getByRole("radio", { name: "All connected nodes (3)" });
  await all.waitFor({ timeout: 15_000 });
  assert.equal(await all.isChecked(), true, "all nodes by default");
  for (const suite of ["accelerator", "collective"]) assert.equal(await form.getByRole("checkbox", { name: suite }).isChecked(), true);
  const run = form.getByRole("button", { name: "Run check" });
  // The form says what the API would refuse before asking: no node picked.
  await form.getByRole("radio", { name: "Only these:" }).check();
  await run.click();
  assert.equal(await form.getByRole("alert").innerText(), "Pick at least one node.");
  await all.check();
  // A refusal is in the API's own words: the accelerator suite needs idle nodes.
  const busy = await cluster.api("POST", "/v1/jobs", { name: "keeps-a-node-busy", nodes: 1, cores_per_node: 1,
    command: { argv: ["/bin/sleep", "600"] } });
  assert.equal(busy.status, 201, JSON.stringify(busy.body));
  const busyNode = await eventually(async () => (await cluster.api("GET", "/v1/nodes")).body.nodes.find((n) => n.attempts.length)?.name,
    30_000, "the job running on a node");
  await run.click();
  assert.match(await form.getByRole("alert").innerText(), new RegExp(
    `^Could not start a health check: nodes\\[\\d\\]: node ${busyNode} is running attempts; the accelerator suite needs idle nodes`));
  await shot(page, "health-check-refused");
  assert.equal((await cluster.api("POST", `/v1/jobs/${busy.body.id}/cancel`)).status, 200);
  await eventually(async () => (await cluster.api("GET", "/v1/nodes")).body.nodes.every((n) => !n.attempts.length), 30_000,
                   "every node idle again");
  // Every node, both suites: the page names the check, then finds it among the recent checks.
  await run.click();
  const status = form.locator("[data-check]");
  await status.waitFor({ timeout: 15_000 });
  const id = Number(await status.getAttribute("data-check"));
  assert.match(await status.innerText(), new RegExp(`^(Started|Finished) health check #${id} of 3 nodes`));
  const { body: started } = await cluster.api("GET", `/v1/healthchecks/${id}`);
  assert.deepEqual([[...started.nodes].sort(), started.suites], [["trn-1", "trn-2", "trn-3"], ["accelerator", "collective"]]);
  assert.equal(started.kind, "on_demand");
  await eventually(async () => (await status.innerText()) === `Finished health check #${id} of 3 nodes: its verdicts are under Recent checks.`,
                   120_000, "the page to find the finished check");
  const recent = page.getByRole("region", { name: "Recent checks" });
  await recent.getByRole("button", { name: `Show check ${id}` }).click();
  const verdicts = page.getByRole("region", { name: `Check #${id}: verdicts` });
  const listed = await verdicts.locator("li").allInnerTexts();
  assert.deepEqual(listed.map((v) => v.split(" ")[0]).sort(), ["trn-1", "trn-2", "trn-3"]);
  for (const v of listed) assert.match(v, /^trn-\d (HEALTHY|SUSPECT|UNHEALTHY)/);
  await shot(page, "health-check-run");
  await context.close();
  const userContext = await browser.newContext();
  const userPage = await signIn(userContext, aliceToken);
  await userPage.getByRole("heading", { name: "Overview" }).waitFor();
  await userPage.getByRole("link", { name: "Health", exact: true }).click();
  await userPage.getByRole("region", { name: "Recent checks" }).getByRole("button", { name: `Show check ${id}` }).waitFor({ timeout: 15_000 });
  assert.equal(await userPage.getByRole("region", { name: "Run a health check" }).count(), 0);
  assert.equal(await userPage.getByRole("button", { name: "Run check" }).count(), 0);
  await userContext.close();
});

check("an admin drains a node from the UI after confirming", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.goto(cluster.url + "/nodes/trn-3");
  await page.getByRole("button", { name: "Drain" }).click();
  await page.getByRole("dialog").getByRole("textbox", { name: "Reason" }).fill("e2e maintenance");
  await page.getByRole("dialog").getByRole("button", { name: "Yes, drain" }).click();
  await page.locator(".facts .state-drained").waitFor({ timeout: 15_000 });
  const { body } = await cluster.api("GET", "/v1/nodes/trn-3");
  assert.equal(body.state, "DRAINED");
  assert.match(body.state_reason, /^e2e maintenance \(drained by .+\)$/);
  // Buttons match the state: a drained node can be undrained, not drained again.
  await page.getByRole("button", { name: "Undrain" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Drain", exact: true }).count(), 0);
  // A refused action keeps its dialog open with the API's own words (the refusal is staged here:
  // the answer a stale page would get, so trn-3 stays drained for the checks after this one).
  await page.route("**/v1/nodes/trn-3/undrain", (route) => route.fulfill({ status: 409, contentType: "application/json",
    body: JSON.stringify({ error: { code: "conflict", message: "node trn-3 is DOWN; it returns when its agent reconnects" } }) }));
  await page.getByRole("button", { name: "Undrain" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Yes, undrain" }).click();
  assert.match(await page.getByRole("dialog").getByRole("alert").innerText(), /node trn-3 is DOWN; it returns when its agent reconnects/);
  await shot(page, "node-refused");
  await page.unroute("**/v1/nodes/trn-3/undrain");
  await page.getByRole("dialog").getByRole("button", { name: "Keep as it is" }).click();
  assert.equal((await cluster.api("GET", "/v1/nodes/trn-3")).body.state, "DRAINED");
  await shot(page, "node-drained");
  for (const view of ["shares", "health", "events"]) {
    await page.getByRole("link", { name: { shares: "Fair share", health: "Health", events: "Events" }[view], exact: true }).click();
    await page.locator("main h1").waitFor();
    await shot(page, view);
  }
  await context.close();
});

check("the queue shows a waiting job at its position with the reason as a sentence", async () => {
  const waiting = await cluster.api("POST", "/v1/jobs", { name: "too-big-for-now", nodes: 3, cores_per_node: 8,
    wait_for_capacity: true, command: { argv: ["/bin/true"] } });
  assert.equal(waiting.status, 201, JSON.stringify(waiting.body));
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("link", { name: "Queue", exact: true }).click();
  const row = page.getByRole("region", { name: /^In the queue \(/ }).locator(`[data-job="${waiting.body.id}"]`);
  await row.waitFor({ timeout: 15_000 });
  assert.match(await row.innerText(), /1st in the queue of share default for .*: .+\./);
  // Wider than the nodes in service, it keeps its place but is not counted ready to start.
  if (await row.getAttribute("data-reason") === "nodes_unavailable") {
    assert.match(await page.locator("[data-pending-summary]").innerText(), /\b1 for nodes to return\b/);
  }
  await shot(page, "queue");
  assert.equal((await cluster.api("POST", `/v1/jobs/${waiting.body.id}/cancel`)).status, 200);
  await context.close();
});

// A user's pending jobs as the API counts them: GET /v1/jobs?state=PENDING, page after page (an
// array folded into one row counts its pending tasks), and of those the ones in the ready queue that
// do not wait for nodes to return.
const readyToStart = (j) => Boolean(j.queue_position) && j.pending_reason?.code !== "nodes_unavailable";

async function pendingCounts(token) {
  let total = 0;
  let ready = 0;
  let cursor = null;
  do {
    const { body } = await cluster.api("GET",
      `/v1/jobs?state=PENDING&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, undefined, token);
    for (const j of body.jobs) {
      if (j.array && j.array.task_id === undefined) {
        total += j.array.counts?.PENDING ?? 0;
        const tasks = await cluster.api("GET", `/v1/jobs?array=${j.id}&state=PENDING&after=${j.id - 1}`, undefined, token);
        ready += tasks.body.jobs.filter(readyToStart).length;
      } else {
        total += 1;
        if (readyToStart(j)) ready += 1;
      }
    }
    cursor = body.next;
  } while (cursor);
  return { total, ready, waiting: total - ready };
}

check("the queue lists held, dependency-blocked and array-limited jobs under Waiting, and its header adds up", async () => {
  const submit = async (spec) => {
    const made = await cluster.api("POST", "/v1/jobs", { nodes: 1, cores_per_node: 1, wait_for_capacity: true, ...spec },
                                   aliceToken);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return made.body.id;
  };
  const long = await submit({ name: "long-one", command: { argv: ["/bin/sleep", "600"] } });
  const held = await submit({ name: "held-at-submit", hold: true, command: { argv: ["/bin/true"] } });
  const after = await submit({ name: "after-long", depends_on: [{ job: long, condition: "afterok" }],
                               command: { argv: ["/bin/true"] } });
  const sweep = await submit({ name: "one-at-a-time", array: "0-2%1", command: { argv: ["/bin/sleep", "600"] } });
  const context = await browser.newContext();
  const page = await signIn(context, aliceToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByRole("link", { name: "Queue", exact: true }).click();
  const waiting = page.getByRole("region", { name: /^Waiting \(/ });
  const heldRow = waiting.locator(`tr[data-job="${held}"]`);
  await heldRow.waitFor({ timeout: 15_000 });
  assert.equal(await heldRow.getAttribute("data-reason"), "held");
  assert.match(await heldRow.innerText(), new RegExp(`#${held}\\s+held-at-submit\\s+alice[\\s\\S]*held by its owner\\.`));
  const afterRow = waiting.locator(`tr[data-job="${after}"]`);
  await afterRow.waitFor({ timeout: 15_000 });
  assert.equal(await afterRow.getAttribute("data-reason"), "dependency");
  assert.match(await afterRow.innerText(), /Waiting outside the queue of share default for .*: .+\./);
  assert.equal(await waiting.getByRole("region", { name: "Held" }).locator(`tr[data-job="${held}"]`).count(), 1);
  assert.equal(await waiting.getByRole("region", { name: "Waiting on dependencies" }).locator(`tr[data-job="${after}"]`).count(), 1);
  // The array's tasks after the first wait on its %1 limit, in one row with its tasks counted.
  const sweepRow = waiting.locator(`tr[data-job="${sweep}"][data-reason="array_limit"]`);
  await eventually(async () => (await sweepRow.count()) === 1
    && /^1 RUNNING, 2 PENDING$/.test(await sweepRow.locator("[data-task-counts]").innerText())
    && new RegExp(`^#${sweep}_\\[[\\s\\S]*2 tasks \\(${sweep}_\\d, ${sweep}_\\d\\): Waiting outside the queue`).test(await sweepRow.innerText()),
  30_000, "the array's two tasks waiting on its limit, with its task counts");
  // The header adds up, and to what the API lists as pending for this user.
  const summary = page.locator("[data-pending-summary]");
  await eventually(async () => {
    const api = await pendingCounts(aliceToken);
    const text = await summary.innerText();
    const m = /^(\d+) pending: (\d+) ready to start, (\d+) waiting \((.*)\)$/.exec(text);
    if (!m) return false;
    const [total, ready, waitingCount] = [m[1], m[2], m[3]].map(Number);
    const parts = m[4].split(", ").map((p) => Number(p.split(" ")[0]));
    return total === ready + waitingCount && waitingCount === parts.reduce((a, b) => a + b, 0)
      && total === api.total && ready === api.ready && /\b1 held\b/.test(m[4]) && /\b1 on a dependency\b/.test(m[4])
      && /\b2 array limits\b/.test(m[4]);
  }, 30_000, "the queue's header to add up to the API's pending jobs");
  await shot(page, "queue-waiting");
  // The overview counts the cluster's pending jobs as the queue does, the held one included.
  const adminContext = await browser.newContext();
  const adminPage = await signIn(adminContext, cluster.adminToken);
  await eventually(async () => {
    await adminPage.locator("nav").getByRole("link", { name: "Overview", exact: true }).click();
    const pending = adminPage.locator("[data-cluster-pending]");
    await pending.waitFor();
    const overview = /^([\d,]+) pending in the cluster \((\d+) held\)$/.exec(await pending.innerText());
    await adminPage.locator("nav").getByRole("link", { name: "Queue", exact: true }).click();
    const queue = /^([\d,]+) pending:/.exec(await adminPage.locator("[data-pending-summary]").innerText());
    return overview !== null && queue !== null && overview[1] === queue[1] && Number(overview[2]) >= 1;
  }, 30_000, "the overview and the queue to count the same pending jobs");
  await adminContext.close();
  for (const id of [sweep, after, held, long]) assert.equal((await cluster.api("POST", `/v1/jobs/${id}/cancel`, undefined, aliceToken)).status, 200);
  await context.close();
});

check("an injected fault turns a node UNHEALTHY on the map", async () => {
  const context = await browser.newContext({ colorScheme: "dark" });  // and the screenshot shows dark mode
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("link", { name: "Nodes", exact: true }).click();
  await page.locator('[data-node="trn-2"]').waitFor();
  const set = await cluster.api("PUT", "/v1/nodes/trn-2/faults", { faults: ["core:0=corrupt"] });
  assert.equal(set.status, 202, JSON.stringify(set.body));
  await eventually(async () => (await cluster.api("GET", "/v1/nodes/trn-2")).body.faults?.length > 0, 15_000,
                   "the agent to apply the fault");
  const started = await cluster.api("POST", "/v1/healthchecks", { nodes: ["trn-2"], suites: ["accelerator"] });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  await eventually(async () => /UNHEALTHY/.test(await page.locator('[data-node="trn-2"]').innerText()), 60_000,
                   "trn-2 UNHEALTHY on the map");
  assert.match(await page.locator('[data-node="trn-2"]').innerText(), /core:0=corrupt/);
  await shot(page, "nodes-unhealthy");
  await page.locator('[data-node="trn-2"]').getByRole("link", { name: "trn-2", exact: true }).click();
  const history = page.getByRole("region", { name: "Health history" });
  await history.getByText(/core 0 .*failed/).first().waitFor({ timeout: 15_000 });
  assert.match(await history.innerText(), /UNHEALTHY/);
  await shot(page, "node-health");
  // An unhealthy node that was never drained offers a health-checked return to service, not "Undrain".
  await page.getByRole("button", { name: "Return to service" }).waitFor();
  assert.equal(await page.getByRole("button", { name: "Undrain" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Drain", exact: true }).count(), 1);
  await cluster.api("DELETE", "/v1/nodes/trn-2/faults");
  await context.close();
});

check("an array has its own page: its tasks with their states, one task cancelled alone, all of them said so", async () => {
  const made = await cluster.api("POST", "/v1/jobs", { name: "sweep", nodes: 1, cores_per_node: 1, array: "0-2",
    wait_for_capacity: true, command: { argv: ["/bin/sleep", "600"] } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = made.body.id;
  const state = async (task) => (await cluster.api("GET", `/v1/jobs/${id}_${task}`)).body.state;
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.goto(`${cluster.url}/jobs/${id}`);
  await page.getByRole("heading", { name: `Array #${id}_[0-2] sweep` }).waitFor();
  await page.locator('tr[data-task="2"]').waitFor();
  assert.match(await page.locator('tr[data-task="1"]').innerText(), new RegExp(`#${id}_1`));
  await shot(page, "array");
  await page.locator('tr[data-task="1"]').getByRole("button", { name: "Cancel task" }).click();
  assert.match(await page.locator("dialog[open]").innerText(), new RegExp(`Cancel task #${id}_1 only\\?`));
  await page.locator("dialog[open]").getByRole("button", { name: "Yes, cancel task" }).click();
  await eventually(async () => (await state(1)) === "CANCELLED", 15_000, "task 1 cancelled");
  assert.notEqual(await state(0), "CANCELLED");
  assert.notEqual(await state(2), "CANCELLED");
  await page.getByRole("button", { name: "Cancel all 3 tasks" }).click();
  await page.locator("dialog[open]").getByRole("button", { name: "Yes, cancel all 3 tasks" }).click();
  await eventually(async () => (await state(0)) === "CANCELLED" && (await state(2)) === "CANCELLED", 15_000,
                   "every task cancelled");
  await context.close();
});

check("the daemon restarted under the page: a reconnecting banner, then live again", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await cluster.stopDaemon();
  await page.getByRole("status").filter({ hasText: "reconnecting" }).waitFor({ timeout: 30_000 });
  await shot(page, "reconnecting");
  await cluster.startDaemon();
  await page.getByRole("status").filter({ hasText: "reconnecting" }).waitFor({ state: "detached", timeout: 30_000 });
  const after = await cluster.api("POST", "/v1/jobs",
    { name: "after-restart", nodes: 1, cores_per_node: 1, wait_for_capacity: true, command: { argv: ["/bin/true"] } });
  assert.equal(after.status, 201, JSON.stringify(after.body));
  await page.locator(`tr[data-job="${after.body.id}"]`).waitFor({ timeout: 30_000 });
  await context.close();
});

check("the overview's last hour holds this run: cores held, the queue, attempts started and failed by class, goodput", async () => {
  const context = await browser.newContext();
  const page = await signIn(context, cluster.adminToken);
  const overTime = page.getByRole("region", { name: "Cluster over time" });
  await overTime.getByRole("group", { name: "Window" }).getByRole("button", { name: "1 h", exact: true }).click();
  await eventually(async () => (await overTime.locator("[data-window-s]").getAttribute("data-window-s")) === "3600",
                   15_000, "the last hour's history");
  const chart = (title) => overTime.locator(`figure[data-chart="${title}"]`);
  for (const title of ["Cores", "Queue depth", "Attempts", "Goodput"]) {
    await eventually(async () => Number(await chart(title).getAttribute("data-points")) > 1, 30_000, `points on ${title}`);
  }
  // Earlier checks ran jobs that failed (a missing module, an exit code): the attempts chart names their classes.
  assert.match(await chart("Attempts").innerText(), /failed: /);
  await overTime.screenshot({ path: join(artifacts, "overview-over-time-1h.png") });
  await context.close();
});

check("no page broke the Content-Security-Policy", async () => {
  assert.deepEqual(policyViolations, []);
});
