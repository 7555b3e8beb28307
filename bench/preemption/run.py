#!/usr/bin/env python3
"""Checkpoint-aware preemption, two shares: team "big" fills every node with
long simulated jobs; team "urgent" (no usage, so far below its fair share) submits one job. Prints,
per round and over all rounds, the time from the urgent job's submit to its start (its attempt
RUNNING) against the target of checkpoint time + 5 s, where the checkpoint time is the victim's:
from the preemption decision to its attempt ending PREEMPTED (it writes its checkpoint and stops).
Also the victim's own reported checkpoint write time, and whether it resumed from that checkpoint.

  bench/preemption/run.py [--build BUILD_DIR] [--rounds 3] [--agents 2] [--width 1024] [--depth 4]
                          [--step-ms 20] [--min-run-s 2]

A fresh daemon and agents per round (data under /var/tmp, where fsync is real), daemon defaults
but for --preempt, --preempt-min-run-s and no canary or periodic health checks. The model is made
large enough (--width, --depth) that its checkpoint takes measurable time. Everything started is
stopped at the end, whatever happens; a failed round's data is kept."""
import argparse, datetime, json, os, signal, statistics, subprocess, tempfile, time, urllib.request


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def step_of(checkpoint_path):
    # checkpoint/ names a checkpoint directory step-<zero-padded step>
    name = os.path.basename(checkpoint_path.rstrip("/"))
    return int(name.split("-")[-1]) if name.startswith("step-") else None


class Api:
    def __init__(self, url, token):
        self.url, self.token = url, token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())


def wait_for(what, predicate, timeout_s, poll_s=0.05):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll_s)
    raise TimeoutError(what)


def one_round(a, root, procs):
    data = os.path.join(root, "data")
    daemon = subprocess.Popen(
        [f"{a.build}/daemon/trainyard-daemon", "--listen", "127.0.0.1:0", "--data-dir", data,
         "--canary-interval-s", "0", "--health-interval-s", "0",
         "--preempt", "--preempt-min-run-s", str(a.min_run_s)],
        stdout=open(os.path.join(root, "daemon.log"), "a"), stderr=subprocess.STDOUT)
    procs.append(daemon)
    wait_for("daemon address", lambda: os.path.exists(os.path.join(data, "daemon.addr")), 30, 0.1)
    url = open(os.path.join(data, "daemon.addr")).read().strip()
    api = Api(url, open(os.path.join(data, "admin.token")).read().strip())
    for i in range(a.agents):
        name = f"pre-{i}"
        log = open(os.path.join(root, f"agent-{name}.log"), "a")
        procs.append(subprocess.Popen(
            [f"{a.build}/agent/trainyard-agent", "--server", url, "--join-token-file", os.path.join(data, "join.token"),
             "--name", name, "--cores", "4", "--work-dir", os.path.join(root, "work-" + name)], stdout=log, stderr=log))
    wait_for("healthy nodes", lambda: sum(n["state"] == "HEALTHY" for n in api.call("GET", "/v1/nodes")["nodes"]) >= a.agents,
             60, 0.2)
    for share in ("big", "urgent"):
        api.call("PUT", f"/v1/shares/{share}", {"weight": 1})

    def simulated(name, share, steps, checkpoint_every):
        return {"name": name, "share": share, "kind": "simulated",
                "workload": {"steps": steps, "step_ms": a.step_ms, "checkpoint_every": checkpoint_every,
                             "width": a.width, "depth": a.depth}}

    # Long jobs whose periodic checkpoints are rare: the preemption must save their work itself.
    longs = [api.call("POST", "/v1/jobs", simulated(f"long-{i}", "big", 1_000_000, 100_000))["id"] for i in range(a.agents)]
    for j in longs:
        wait_for(f"job {j} RUNNING", lambda j=j: api.call("GET", f"/v1/jobs/{j}")["state"] == "RUNNING", 60)
    time.sleep(a.min_run_s + 1)  # past the minimum run time, and some steps done since the last checkpoint

    urgent = api.call("POST", "/v1/jobs", simulated("urgent", "urgent", 20, 10))["id"]
    attempt = wait_for("urgent job RUNNING", lambda: next(
        (x for x in api.call("GET", f"/v1/jobs/{urgent}/attempts")["attempts"] if x.get("started_at")), None), 120, 0.02)
    job = api.call("GET", f"/v1/jobs/{urgent}")
    submitted = parse_time(job["submitted_at"])
    events = api.call("GET", "/v1/events?type=job.*&limit=1000")["events"]
    decision = next(e for e in events if e["type"] == "job.waiting_on_preemption" and e.get("job") == urgent)
    victims = [j for j in longs if api.call("GET", f"/v1/jobs/{j}/attempts")["attempts"][0]["state"] == "PREEMPTED"]
    if not victims:
        raise RuntimeError(f"the urgent job started but no job of share big was preempted; see {root}/daemon.log")
    stopped = api.call("GET", f"/v1/jobs/{victims[0]}/attempts")["attempts"][0]
    figures = {
        "submit_to_start_s": parse_time(attempt["started_at"]) - submitted,
        "submit_to_decision_s": parse_time(decision["time"]) - submitted,
        "checkpoint_s": parse_time(stopped["ended_at"]) - parse_time(decision["time"]),
        "victim_checkpoint_write_ms": stopped.get("checkpoint_ms", 0),
        "victims": len(victims),
        "victim_steps_done": stopped.get("steps_completed", 0),
    }
    # The victim resumes from the checkpoint its stop wrote once the urgent job is done.
    resumed = wait_for("victim resumed", lambda: next(
        (x for x in api.call("GET", f"/v1/jobs/{victims[0]}/attempts")["attempts"][1:] if x.get("resumed_from")), None), 120)
    figures["victim_resumed_from_step"] = step_of(resumed["resumed_from"])
    return figures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--agents", type=int, default=2)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--step-ms", type=int, default=20)
    p.add_argument("--min-run-s", type=int, default=2)
    a = p.parse_args()
    print(f"# preemption bench: {a.agents} agents x 4 cores filled by share big, one urgent job; MLP width {a.width} "
          f"depth {a.depth}, step_ms {a.step_ms}; load average before: {os.getloadavg()[0]:.1f}")
    rows = []
    for r in range(a.rounds):
        root = tempfile.mkdtemp(prefix="trainyard-preempt.", dir="/var/tmp")
        os.chmod(root, 0o711)  # jobs run as their own accounts: they must reach their attempt directories
        procs, f = [], None
        try:
            f = one_round(a, root, procs)
        finally:
            for proc in reversed(procs):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
            if f is not None and os.environ.get("KEEP_DATA") != "1":
                subprocess.run(["rm", "-rf", root])
            else:
                print(f"# kept {root}")
        met = f["submit_to_start_s"] <= f["checkpoint_s"] + 5
        print(f"round={r + 1} submit_to_start_s={f['submit_to_start_s']:.2f} checkpoint_s={f['checkpoint_s']:.2f} "
              f"target_s={f['checkpoint_s'] + 5:.2f} met={'yes' if met else 'NO'} "
              f"submit_to_decision_s={f['submit_to_decision_s']:.2f} victims={f['victims']} "
              f"victim_checkpoint_write_ms={f['victim_checkpoint_write_ms']} victim_steps_done={f['victim_steps_done']} "
              f"victim_resumed_from_step={f['victim_resumed_from_step']}", flush=True)
        rows.append(f)
    waits = [f["submit_to_start_s"] for f in rows]
    print(f"submit_to_start_s: median={statistics.median(waits):.2f} max={max(waits):.2f}; "
          f"checkpoint_s: median={statistics.median(f['checkpoint_s'] for f in rows):.2f}; "
          f"rounds meeting checkpoint + 5 s: {sum(f['submit_to_start_s'] <= f['checkpoint_s'] + 5 for f in rows)}/{len(rows)}; "
          f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
