// A real daemon and agents on 127.0.0.1 ephemeral ports for the browser tests, in a fresh
// directory; stop() ends exactly the processes start() began.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function eventually(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export class Cluster {
  constructor(buildDir, dashboardDir) {
    this.build = buildDir;
    this.dashboard = dashboardDir;
    this.dir = mkdtempSync(join(tmpdir(), "trainyard-e2e-"));
    // Agents run as root run jobs as accounts of their own, which must reach their attempt
    // directories and checkpoints under here (agents refuse to start otherwise).
    chmodSync(this.dir, 0o711);
    this.processes = new Map();
  }

  spawn(name, argv) {
    const log = openSync(join(this.dir, `${name}.log`), "a");
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", log, log] });
    this.processes.set(name, child);
    return child;
  }

  // `settings`: daemon flags (without --) over the fast defaults the browser tests want.
  async startDaemon(settings = {}) {
    const data = join(this.dir, "data");
    rmSync(join(data, "daemon.addr"), { force: true });
    const listen = this.url ? this.url.replace("http://", "") : "127.0.0.1:0";
    // A 3 s node timeout leaves room to fence (docs/DESIGN.md "Fencing: a cut-off node stops its own
    // attempts") within a 1 s kill grace: the agents stop what they run 1.7 s after their last ack.
    const flags = { "heartbeat-interval-ms": 200, "node-timeout-ms": 3000, "kill-grace-ms": 1000, "tick-ms": 50, "retry-backoff-ms": 50,
      "canary-interval-s": 0, "health-first-check-s": 0, "suspect-pct": 10, "history-interval-s": 1, ...settings };
    this.spawn("daemon", [join(this.build, "daemon/trainyard-daemon"), "--listen", listen, "--data-dir", data,
      "--dashboard-dir", this.dashboard, ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, String(v)])]);
    await eventually(() => existsSync(join(data, "daemon.addr")), 20_000, "the daemon's address");
    this.url = readFileSync(join(data, "daemon.addr"), "utf8").trim();
    this.adminToken = readFileSync(join(data, "admin.token"), "utf8").trim();
  }

  async stopDaemon() {
    await this.stop("daemon");
  }

  startAgent(name, rack, cores = 8) {
    mkdirSync(join(this.dir, "agents", name), { recursive: true });
    this.spawn(`agent-${name}`, [join(this.build, "agent/trainyard-agent"), "--server", this.url,
      "--join-token-file", join(this.dir, "data/join.token"), "--name", name, "--cores", String(cores),
      "--label", `rack=${rack}`, "--work-dir", join(this.dir, "agents", name),
      "--checkpoint-root", join(this.dir, "data/checkpoints"), "--collective-timeout-ms", "5000"]);
  }

  async api(method, target, body, token = this.adminToken) {
    const response = await fetch(this.url + target, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {} };
  }

  async waitForHealthyNodes(count) {
    await eventually(async () => {
      const { body } = await this.api("GET", "/v1/nodes");
      return body.nodes.filter((n) => n.state === "HEALTHY" && n.connected).length >= count;
    }, 60_000, `${count} healthy nodes`);
  }

  async stop(name) {
    const child = this.processes.get(name);
    if (!child) return;
    this.processes.delete(name);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  }

  async stopAll(keepFiles) {
    for (const name of [...this.processes.keys()].filter((n) => n !== "daemon")) await this.stop(name);
    await this.stop("daemon");
    if (!keepFiles) rmSync(this.dir, { recursive: true, force: true });
  }
}
