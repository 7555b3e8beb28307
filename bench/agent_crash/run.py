#!/usr/bin/env python3
"""Agent crash: the time from the SIGKILL of an agent running a 2-node simulated job, with a warm
spare free and the node itself alive, to the first step of the attempt that replaced it (issue 55:
under a second, at the daemon's default flags and with a 30 s kill grace).

  bench/agent_crash/run.py [--build BUILD_DIR] [--runs 3] [--step-ms 100] [-- DAEMON_FLAGS...]

e.g. `-- --kill-grace-ms 30000 --node-timeout-ms 45000` (a 30 s kill grace needs a node timeout of
at least 44.5 s at the default 5 s heartbeat: daemon/policy/fence_timing.h). Each run starts a fresh daemon
with `--warm-spares 1` and the flags given, and three agents: two take the job, the third is held
as the spare. Once the job has stepped and the spare has passed its check, the agent of rank 0 is
killed; the figure is the replacement attempt's `first_step_at` (the rank's own clock, this
machine's) less the kill's time. Prints each run, the mean, and what the daemon said the first
attempt ended of. Everything started is stopped at the end, whatever happens."""
import argparse, os, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import soak  # noqa: E402


def one_run(a, daemon_flags):
    root = tempfile.mkdtemp(prefix="trainyard-agent-crash.", dir="/var/tmp")
    os.chmod(root, 0o755)  # jobs run as accounts of their own: they must reach their checkpoints
    data = os.path.join(root, "data")
    procs, agents = [], {}
    try:
        daemon = subprocess.Popen(
            [f"{a.build}/daemon/trainyard-daemon", "--listen", "127.0.0.1:0", "--data-dir", data, "--warm-spares", "1"]
            + daemon_flags, stdout=open(os.path.join(root, "daemon.log"), "a"), stderr=subprocess.STDOUT)
        procs.append(daemon)
        soak.wait_for(lambda: os.path.exists(os.path.join(data, "daemon.addr")), 30, "the daemon's address")
        url = open(os.path.join(data, "daemon.addr")).read().strip()
        token = open(os.path.join(data, "admin.token")).read().strip()

        def get(path):
            status, body = soak.call(url, "GET", path, token)
            if status != 200:
                raise RuntimeError(f"GET {path}: {status}")
            return body

        for name in ("crash-0", "crash-1", "crash-2"):
            log = open(os.path.join(root, f"agent-{name}.log"), "a")
            agents[name] = subprocess.Popen(
                [f"{a.build}/agent/trainyard-agent", "--server", url, "--join-token-file", os.path.join(data, "join.token"),
                 "--name", name, "--cores", "4", "--work-dir", os.path.join(root, "work-" + name)],
                stdout=log, stderr=log)
            procs.append(agents[name])
        soak.wait_for(lambda: sum(n["state"] == "HEALTHY" for n in get("/v1/nodes")["nodes"]) == 3, 120, "3 healthy nodes")
        spec = {"name": "crash", "nodes": 2, "kind": "simulated",
                "workload": {"steps": 1_000_000, "step_ms": a.step_ms, "checkpoint_every": 20}}
        status, job = soak.call(url, "POST", "/v1/jobs", token, spec)
        if status != 201:
            raise RuntimeError(f"submit: {status}")
        path = f"/v1/jobs/{job['id']}"
        soak.wait_for(lambda: get(path + "/attempts")["attempts"][0].get("first_step_at"), 120, "the first attempt's first step")
        nodes = get(path + "/attempts")["attempts"][0]["nodes"]
        spare = next(n["name"] for n in get("/v1/nodes")["nodes"] if n["name"] not in nodes)
        soak.wait_for(lambda: get(f"/v1/nodes/{spare}").get("last_check", {}).get("verdict") == "HEALTHY", 120,
                      "the spare's check")
        victim = nodes[0]
        killed_at = time.time()
        agents[victim].send_signal(signal.SIGKILL)
        agents[victim].wait()

        def replacement():
            attempts = get(path + "/attempts")["attempts"]
            return attempts if len(attempts) >= 2 and attempts[1].get("first_step_at") else None
        soak.wait_for(replacement, 120, "the replacement's first step")
        first, second = replacement()[:2]
        get(path)  # still answering
        soak.call(url, "POST", path + "/cancel", token, {})
        return soak.parse_time(second["first_step_at"]) - killed_at, first.get("reason", ""), second["nodes"], victim
    finally:
        soak.stop(procs)
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


def main():
    argv = sys.argv[1:]
    daemon_flags = argv[argv.index("--") + 1:] if "--" in argv else []
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--step-ms", type=int, default=100)
    p.add_argument("--keep", action="store_true", help="keep each run's directory under /var/tmp")
    a = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    figures = []
    for run in range(a.runs):
        seconds, reason, nodes, victim = one_run(a, daemon_flags)
        figures.append(seconds)
        print(f"run {run + 1}: killed {victim}; replacement on {','.join(nodes)} stepped {seconds:.2f} s after the kill; "
              f"first attempt: {reason}", flush=True)
    flags = " ".join(daemon_flags) or "(defaults)"
    print(f"agent SIGKILL -> replacement's first step, daemon flags {flags} --warm-spares 1: "
          f"mean {sum(figures) / len(figures):.2f} s over {len(figures)} runs "
          f"({', '.join(f'{s:.2f}' for s in figures)})")


if __name__ == "__main__":
    main()
