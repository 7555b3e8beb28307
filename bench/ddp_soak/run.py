#!/usr/bin/env python3
"""Real-job soak: data-parallel PyTorch jobs (Debian's python3-torch, gloo, 2 nodes each) on a
local cluster of agents while things go wrong as they do in real runs, with the daemon's default
hang and straggler rules (nothing tuned per job):

  - hang: one rank sleeps for ever or stops itself (SIGSTOP) at a random step, no progress file:
    found from idleness alone, and the diagnosis must name that rank (not the one waiting);
  - kill: an agent of a running job is killed (SIGKILL) and comes back 10 s later: the job must
    resume from its checkpoint elsewhere and succeed;
  - slow: independent workers reporting through the `trainyard` module, one 3x slower: it must be
    named a straggler;
  - clean: a job that just trains.

Prints the time from a hung rank's last line to the verdict (p50, p99, max), how many verdicts
named the right rank, whether the straggler was named, goodput of the jobs that report progress,
and jobs lost (any job not in the state its scenario expects).

  bench/ddp_soak/run.py [--build BUILD_DIR] [--agents 4] [--rounds 3]

The daemon's data lives under /var/tmp. Everything started is stopped at the end."""
import argparse, json, os, random, re, shutil, signal, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from soak import call, parse_time, percentile, stop, wait_for  # noqa: E402

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "integration", "scripts")


class Api:
    def __init__(self, url, token):
        self.url, self.token = url, token

    def call(self, method, path, body=None):
        status, answer = call(self.url, method, path, self.token, body, timeout=30)
        if not 200 <= status < 300:
            raise RuntimeError(f"{method} {path}: status {status}")
        return answer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--agents", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    # A SIGTERM ends the run through the finally below, which stops what it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    random.seed(a.seed)
    root = tempfile.mkdtemp(prefix="trainyard-ddp-soak.", dir="/var/tmp")
    os.chmod(root, 0o755)  # jobs run as their own accounts: they read the scripts from here
    for script in ("ddp_train.py", "report_train.py"):
        shutil.copy(os.path.join(SCRIPTS, script), root)
        os.chmod(os.path.join(root, script), 0o644)
    data = os.path.join(root, "data")
    procs, agents = [], {}

    def start_agent(name):
        log = open(os.path.join(root, f"agent-{name}.log"), "a")
        agents[name] = subprocess.Popen(
            [f"{a.build}/agent/trainyard-agent", "--server", url, "--join-token-file", os.path.join(data, "join.token"),
             "--name", name, "--cores", "4", "--work-dir", os.path.join(root, "work-" + name)], stdout=log, stderr=log)

    def ddp(name, steps, hang="", report=False):
        argv = ["/usr/bin/python3", os.path.join(root, "ddp_train.py"), str(steps), "0.2"] + ([hang] if hang else [])
        return {"name": name, "nodes": 2, "command": {"argv": argv, "env": {"REPORT_PROGRESS": "1" if report else "0"}}}

    try:
        # The daemon's defaults, but for canaries and periodic checks, which would take the nodes.
        daemon = subprocess.Popen(
            [f"{a.build}/daemon/trainyard-daemon", "--listen", "127.0.0.1:0", "--data-dir", data,
             "--canary-interval-s", "0", "--health-interval-s", "0"],
            stdout=open(os.path.join(root, "daemon.log"), "a"), stderr=subprocess.STDOUT)
        procs.append(daemon)
        wait_for(lambda: os.path.exists(os.path.join(data, "daemon.addr")), 30, "the daemon to start")
        url = open(os.path.join(data, "daemon.addr")).read().strip()
        api = Api(url, open(os.path.join(data, "admin.token")).read().strip())
        names = [f"soak-{i}" for i in range(a.agents)]
        for n in names:
            start_agent(n)
        wait_for(lambda: sum(n["state"] == "HEALTHY" for n in api.call("GET", "/v1/nodes")["nodes"]) == a.agents, 120,
                 "the agents to pass their checks")

        started = time.time()
        hangs, jobs = [], []  # hangs: (job id, how); jobs: (job id, scenario, expected state)
        kills = []
        for round_ in range(a.rounds):
            how = "sleep" if round_ % 2 == 0 else "stop"
            at = random.randint(10, 30)
            round_jobs = [(api.call("POST", "/v1/jobs", ddp(f"hang-{how}", 100000, f"{how}:{at}"))["id"], "hang", "FAILED"),
                          (api.call("POST", "/v1/jobs", ddp("kill", 150, report=True))["id"], "kill", "SUCCEEDED")]
            if round_ == 0:
                slow = {"name": "slow", "nodes": 2, "command": {
                    "argv": ["/usr/bin/python3", os.path.join(root, "report_train.py"), "300", "0.05", "0", "1", "3"]}}
                round_jobs.append((api.call("POST", "/v1/jobs", slow)["id"], "slow", "SUCCEEDED"))
            else:
                round_jobs.append((api.call("POST", "/v1/jobs", ddp("clean", 60, report=True))["id"], "clean", "SUCCEEDED"))
            jobs += round_jobs
            killer = next(j for j, s, _ in round_jobs if s == "kill")
            killed = None
            while True:
                states = {j: api.call("GET", f"/v1/jobs/{j}")["state"] for j, _, _ in round_jobs}
                if all(s in ("SUCCEEDED", "FAILED", "CANCELLED") for s in states.values()):
                    break
                attempt = api.call("GET", f"/v1/jobs/{killer}/attempts")["attempts"][-1]
                if killed is None and states[killer] == "RUNNING" and attempt.get("last_step", 0) >= 20:
                    victim = attempt["nodes"][1]
                    agents[victim].send_signal(signal.SIGKILL)
                    agents[victim].wait()
                    killed = (time.time(), victim)
                    kills.append(killed)
                if killed and killed[1] and time.time() - killed[0] >= 10:
                    start_agent(killed[1])
                    killed = (killed[0], None)
                time.sleep(0.5)
            if killed and killed[1]:
                start_agent(killed[1])
        elapsed = time.time() - started

        found, named_right = [], 0
        straggler = None
        goodputs = []
        lost = []
        for j, scenario, expected in jobs:
            job = api.call("GET", f"/v1/jobs/{j}")
            if job["state"] != expected:
                lost.append(f"{j}:{scenario}:{job['state']}")
            attempts = api.call("GET", f"/v1/jobs/{j}/attempts")["attempts"]
            if scenario == "hang":
                first = attempts[0]
                log = api.call("GET", f"/v1/jobs/{j}/logs?attempt=1&rank=1")["logs"][0]["text"]
                marker = re.search(r"last_line_at_ms=(\d+)", log)
                if marker and "stuck_detected_at" in first:
                    found.append(parse_time(first["stuck_detected_at"]) - int(marker.group(1)) / 1000)
                    culprit = "stopped" if "stop:" in " ".join(job["spec"]["command"]["argv"]) else "hung"
                    if f"rank 1 ({first['nodes'][1]}) {culprit}" in first.get("diagnosis", ""):
                        named_right += 1
            elif scenario == "slow":
                events = api.call("GET", f"/v1/events?type=job.straggler&job={j}")["events"]
                straggler = events[0]["details"] if events else None
            else:
                g = job.get("goodput", {})
                if g.get("goodput") is not None:
                    goodputs.append((scenario, g["goodput"], g.get("lost_core_s", {})))
        print(f"# ddp soak: {a.agents} agents x 4 cores, {a.rounds} rounds of a hung 2-node DDP job (no progress file; "
              f"asleep or SIGSTOP), a 2-node DDP job whose agent is killed, and a slow-rank or clean job; "
              f"daemon defaults (heartbeat 5 s, hang rule max(5 x p99, 30 s))")
        print(f"elapsed_s={elapsed:.0f} jobs={len(jobs)} jobs_lost={len(lost)} {' '.join(lost)} agent_kills={len(kills)}")
        if found:
            print(f"hang_found_after_last_line_s: n={len(found)} p50={statistics.median(found):.1f} "
                  f"p99={percentile(found, 0.99):.1f} max={max(found):.1f} culprit_named_right={named_right}/{len(found)}")
        print(f"straggler: {'rank %d named, ratio %.2f' % (straggler['rank'], straggler['ratio']) if straggler else 'not named'}")
        for scenario, ratio, lost_core_s in goodputs:
            print(f"goodput {scenario}: {100 * ratio:.1f}% lost_core_s={json.dumps(lost_core_s)}")
    finally:
        stop(list(agents.values()) + procs)
        if os.environ.get("KEEP_DATA") != "1":
            subprocess.run(["rm", "-rf", root])
        else:
            print(f"# kept {root}")


if __name__ == "__main__":
    main()
