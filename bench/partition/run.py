#!/usr/bin/env python3
"""Partition soak: gray failures on hosts built out of network namespaces. PostgreSQL, two daemons
(active and standby on it), N agents and this script (the operator's machine) each run on a host of
their own, bridged by a switch namespace, so ranks reach each other at their nodes' addresses and
nothing shares loopback (the C++ tests' twin is tests/integration/host_network.h). A stream of
simulated 2-node jobs trains while a seeded nemesis, one fault at a time:

  - cuts an agent's link for 5-60 s, or drops only its packets to the daemons (one way);
  - cuts the active daemon's link (from agents, this client and PostgreSQL) for 5-60 s;
  - freezes (SIGSTOP) an agent or the active daemon for 5-20 s;
  - freezes one rank of a running job until its attempt ends (a hung rank);
  - kills (SIGKILL) an agent and starts it again 10 s later.

While it runs, a sampler reads every attempt cgroup's processes every 50 ms: a job with processes
in two of its attempts' cgroups at once ran twice. A prober submits a small job every 2 s to
whichever daemon acknowledges it; each acknowledged id must exist at the end. A daemon that exits (one
that lost its lease exits, to come back as the standby) is started again, as systemd would. Prints,
with the seed:
seconds of two attempts of one job running at once (target 0), acknowledged submits lost (0), jobs
finished, goodput, fault to training resumed (mean, p95) and hang detection (p99: a frozen rank's
freeze to its attempt's end, whichever rule ended it).

  bench/partition/run.py [--build BUILD_DIR] [--seed 1] [--minutes 10] [--agents 6] [--warm-spares 2]
                         [--jobs 8] [--steps 2000] [--step-ms 100] [--checkpoint-every 20]
                         [--quiet-s 5-15] [--fence-ms 12000] [--node-timeout-ms 15000]

Needs root, `ip netns`, cgroup v1 or v2 with the agents' attempt cgroups, and Debian's `postgresql`.
There is no tc netem or iptables here: the nemesis cannot delay, reorder or drop a fraction of
packets. Every namespace and process is removed at the end, whatever happens."""
import argparse, ctypes, os, random, shutil, signal, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from soak import agent_cgroup_name, attempt_cgroup_procs, call, exit_cause, parse_time, percentile, pg_bin, role, wait_for  # noqa: E402

SUBNET = "10.77.0."
NOWHERE = SUBNET + "254"  # a neighbour no host is: packets routed to it are dropped silently
CLONE_NEWNET = 0x40000000


def ip(*args):
    subprocess.run(["ip", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Hosts:
    """A switch namespace with a bridge, and a namespace per host with one veth into it."""

    def __init__(self):
        self.prefix = f"trainyard-{os.getpid()}-1-"
        self.switch = self.prefix + "switch"
        self.hosts = {}
        ip("netns", "add", self.switch)
        ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        ip("-n", self.switch, "link", "set", "br0", "up")

    def add(self, name):
        index = len(self.hosts) + 1
        netns, port, address = self.prefix + name, f"h{index}", SUBNET + str(index)
        ip("netns", "add", netns)
        self.hosts[name] = (netns, port, address)
        ip("-n", netns, "link", "set", "lo", "up")
        ip("-n", self.switch, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", netns)
        ip("-n", self.switch, "link", "set", port, "master", "br0")
        ip("-n", self.switch, "link", "set", port, "up")
        ip("-n", netns, "addr", "add", address + "/24", "dev", "eth0")
        ip("-n", netns, "link", "set", "eth0", "up")
        return address

    def address(self, name):
        return self.hosts[name][2]

    def wrap(self, name, argv):
        """argv run on the host (nsenter keeps the mounts, so the agents keep their cgroups)."""
        return ["nsenter", f"--net=/var/run/netns/{self.hosts[name][0]}", "--", *argv]

    def enter(self, name):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        fd = os.open(f"/var/run/netns/{self.hosts[name][0]}", os.O_RDONLY)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            sys.exit(f"setns into {name}: {os.strerror(ctypes.get_errno())}")
        os.close(fd)

    def cut(self, name, down=True):
        ip("-n", self.switch, "link", "set", self.hosts[name][1], "down" if down else "up")

    def drop(self, sender, to, dropping=True):
        ip("-n", self.hosts[sender][0], "route", "add" if dropping else "del", self.address(to) + "/32", "via", NOWHERE)

    def remove(self):
        for netns, _, _ in self.hosts.values():
            subprocess.run(["ip", "netns", "del", netns], stderr=subprocess.DEVNULL)
        subprocess.run(["ip", "netns", "del", self.switch], stderr=subprocess.DEVNULL)


class Sampler(threading.Thread):
    """Which attempts have processes, every 50 ms, from the process lists of this soak's own agents'
    attempt cgroups (another cluster on the machine is not counted)."""

    def __init__(self, agent_cgroups, period=0.05):
        super().__init__(daemon=True)
        self.agent_cgroups, self.period, self.samples, self.stop = agent_cgroups, period, [], threading.Event()

    def live_attempts(self):
        """Attempt id -> the agents' cgroup folders (one per node) holding its processes."""
        live = {}
        for agent, attempt, procs in attempt_cgroup_procs(self.agent_cgroups):
            try:
                with open(procs) as f:
                    if f.read().strip():
                        live.setdefault(attempt, set()).add(agent)
            except OSError:
                pass
        return live

    def run(self):
        while not self.stop.is_set():
            self.samples.append((time.time(), self.live_attempts()))
            time.sleep(self.period)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--minutes", type=float, default=10)
    p.add_argument("--agents", type=int, default=6)
    p.add_argument("--warm-spares", type=int, default=2)
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--step-ms", type=int, default=100)
    p.add_argument("--checkpoint-every", type=int, default=20)
    p.add_argument("--quiet-s", default="5-15", help="MIN-MAX seconds of quiet between one fault's end and the next")
    # A fence of 2 x 1.2 lease ttls rides through the standby's take-over (daemon/policy/fence_timing.h),
    # and the node timeout must exceed it plus the kill grace and a margin.
    p.add_argument("--fence-ms", type=int, default=12000)
    p.add_argument("--node-timeout-ms", type=int, default=15000)
    p.add_argument("--default-timings", action="store_true",
                   help="leave heartbeat, node timeout, fence and kill grace at the daemon's defaults (the settings users get)")
    a = p.parse_args()
    quiet = tuple(float(x) for x in a.quiet_s.split("-"))
    if len(quiet) != 2 or not 0 <= quiet[0] <= quiet[1]:
        p.error(f"--quiet-s: want MIN-MAX seconds, got {a.quiet_s!r}")
    build = os.path.abspath(a.build)
    rng = random.Random(a.seed)
    root = tempfile.mkdtemp(prefix="trainyard-partition.", dir="/var/tmp")
    os.chmod(root, 0o755)
    hosts, procs, pg_data = None, {}, None
    try:
        hosts = Hosts()
        for name in ["client", "pg", "daemon-0", "daemon-1"] + [f"node-{i}" for i in range(a.agents)]:
            hosts.add(name)
        hosts.enter("client")

        # PostgreSQL on its own host, over TCP, so a cut daemon loses its store too.
        pg_dir = os.path.join(root, "pg")
        os.makedirs(pg_dir)
        shutil.chown(pg_dir, "postgres", "postgres")
        pg_data = os.path.join(pg_dir, "data")
        as_postgres = ["runuser", "-u", "postgres", "--"]
        subprocess.run(as_postgres + [pg_bin("initdb"), "-D", pg_data, "-U", "trainyard", "-A", "trust", "-E", "UTF8",
                                      "--locale=C", "--no-instructions"], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(pg_data, "pg_hba.conf"), "a") as hba:
            hba.write(f"host all all {SUBNET}0/24 trust\n")
        subprocess.run(hosts.wrap("pg", as_postgres + [pg_bin("pg_ctl"), "-D", pg_data, "-l", os.path.join(pg_dir, "log"),
                                                        "-w", "-o", f"-k {pg_dir} -c listen_addresses={hosts.address('pg')}",
                                                        "start"]), check=True, stdout=subprocess.DEVNULL)
        store = f"postgresql://trainyard@{hosts.address('pg')}:5432/postgres"

        urls = [f"http://{hosts.address(f'daemon-{i}')}:8080" for i in range(2)]
        datas = [os.path.join(root, f"data-{i}") for i in range(2)]
        checkpoints = os.path.join(root, "checkpoints")

        timings = [] if a.default_timings else [
            "--heartbeat-interval-ms", "500", "--node-timeout-ms", str(a.node_timeout_ms), "--kill-grace-ms", "500",
            "--fence-ms", str(a.fence_ms)]
        log_starts = [0, 0]  # where each daemon's current run begins in its log

        def start_daemon(i):
            log = open(os.path.join(root, f"daemon-{i}.log"), "a")
            log_starts[i] = log.tell()
            procs[f"daemon-{i}"] = subprocess.Popen(hosts.wrap(f"daemon-{i}", [
                f"{build}/daemon/trainyard-daemon", "--listen", urls[i][len("http://"):], "--advertise-url", urls[i],
                "--data-dir", datas[i], "--store", store, "--lease-ttl-ms", "5000", "--insecure-http",  # the link never leaves this machine
                "--checkpoint-root", checkpoints,  # shared storage: whichever daemon is active resumes from it
                *timings,
                "--retry-backoff-ms", "200", "--max-infra-retries", "100", "--canary-interval-s", "0",
                "--health-interval-s", "0", "--suspect-pct", "10", "--warm-spares", str(a.warm_spares)]),
                stdout=log, stderr=log)

        start_daemon(0)
        wait_for(lambda: role(urls[0]) == "active", 30, "the first daemon to be active")
        os.makedirs(datas[1], mode=0o700)
        for name in ("admin.token", "join.token"):
            shutil.copy(os.path.join(datas[0], name), os.path.join(datas[1], name))
        start_daemon(1)
        wait_for(lambda: role(urls[1]) == "standby", 30, "the second daemon to be a standby")
        token = open(os.path.join(datas[0], "admin.token")).read().strip()

        restarts = []

        def supervise():
            """Starts a daemon that exited again, as its systemd unit would (Restart=always): one that
            lost its lease (frozen or cut off past it) exits, and comes back as the standby."""
            for i in (0, 1):
                if procs[f"daemon-{i}"].poll() is not None:
                    returncode = procs[f"daemon-{i}"].returncode
                    cause = exit_cause(os.path.join(root, f"daemon-{i}.log"), log_starts[i], returncode)
                    restarts.append((time.time(), i, returncode, cause))
                    print(f"daemon-{i} exited ({returncode}): {cause}", flush=True)
                    start_daemon(i)

        def active():
            supervise()
            for i in (0, 1):
                if role(urls[i]) == "active":
                    return i
            return None

        def api(method, path, body=None):
            """Through whichever daemon is active; retried while neither answers."""
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                i = active()
                if i is not None:
                    status, reply = call(urls[i], method, path, token, body, timeout=5)
                    if status in (200, 201, 202):
                        return reply
                time.sleep(0.2)
            raise RuntimeError(f"{method} {path}: no daemon answered for 120 s")

        def start_agent(n):
            log = open(os.path.join(root, f"agent-{n}.log"), "a")
            procs[n] = subprocess.Popen(hosts.wrap(n, [
                f"{build}/agent/trainyard-agent", "--server", ",".join(urls), "--join-token-file",
                os.path.join(datas[0], "join.token"), "--name", n, "--cores", "4", "--work-dir", os.path.join(root, "work-" + n),
                "--data-listen", hosts.address(n) + ":0", "--collective-timeout-ms", "5000"]), stdout=log, stderr=log)

        agents = [f"node-{i}" for i in range(a.agents)]
        for n in agents:
            start_agent(n)
        wait_for(lambda: sum(n["state"] == "HEALTHY" for n in api("GET", "/v1/nodes")["nodes"]) == a.agents, 60,
                 "the agents to be healthy")

        agent_cgroups = {n: agent_cgroup_name(n, os.path.join(root, "work-" + n)) for n in agents}
        sampler = Sampler(set(agent_cgroups.values()))
        sampler.start()
        spec = {"name": "soak", "nodes": 2, "kind": "simulated",
                "workload": {"steps": a.steps, "step_ms": a.step_ms, "checkpoint_every": a.checkpoint_every}}
        jobs = [api("POST", "/v1/jobs", spec)["id"] for _ in range(a.jobs)]
        acknowledged, faults, frozen_ranks, slowed = [], [], [], []
        stop_probing = threading.Event()

        def probe():
            probe_spec = {"name": "probe", "cores_per_node": 1, "timeout_s": 60, "command": {"argv": ["/bin/true"]}}
            while not stop_probing.is_set():
                for i in (0, 1):
                    status, body = call(urls[i], "POST", "/v1/jobs", token, probe_spec, timeout=2)
                    if status == 201:
                        acknowledged.append(body["id"])
                        break
                stop_probing.wait(2)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()

        def busy_agents():
            return [n["name"] for n in api("GET", "/v1/nodes")["nodes"] if n.get("attempts") and n["name"] in procs]

        def rank_pids(node):
            """The simulated ranks' processes on `node`: the agent's children in attempt cgroups."""
            pids = []
            for _, _, procs_file in attempt_cgroup_procs({agent_cgroups[node]}):
                with open(procs_file) as f:
                    pids += [int(x) for x in f.read().split()]
            return pids

        started = time.time()
        deadline = started + 60 * a.minutes
        kinds = ["agent_cut", "agent_one_way", "daemon_cut", "agent_freeze", "daemon_freeze", "rank_freeze", "agent_kill",
                 "node_slow"]
        while time.time() < deadline:
            states = [api("GET", f"/v1/jobs/{j}")["state"] for j in jobs]
            if all(s in ("SUCCEEDED", "FAILED", "CANCELLED") for s in states):
                break
            time.sleep(rng.uniform(*quiet))  # a quiet spell between faults
            kind = rng.choice(kinds)
            busy = busy_agents()
            at = time.time()
            if kind.startswith("agent") or kind in ("rank_freeze", "node_slow"):
                if not busy:
                    continue
                victim = rng.choice(busy)
            else:
                victim = f"daemon-{active()}"
                if victim == "daemon-None":
                    continue
            if kind == "agent_cut" or kind == "daemon_cut":
                hosts.cut(victim)
                time.sleep(rng.uniform(5, 60))
                hosts.cut(victim, down=False)
            elif kind == "agent_one_way":
                for d in ("daemon-0", "daemon-1"):
                    hosts.drop(victim, d)
                time.sleep(rng.uniform(5, 60))
                for d in ("daemon-0", "daemon-1"):
                    hosts.drop(victim, d, dropping=False)
            elif kind in ("agent_freeze", "daemon_freeze"):
                procs[victim].send_signal(signal.SIGSTOP)
                time.sleep(rng.uniform(5, 20))
                procs[victim].send_signal(signal.SIGCONT)
            elif kind == "rank_freeze":
                pids = rank_pids(victim)
                if not pids:
                    continue
                os.kill(rng.choice(pids), signal.SIGSTOP)  # its attempt's end kills it
                frozen_ranks.append((at, victim))
            elif kind == "node_slow":
                # Its simulated device computes 3 times slower for a while: its rank is a straggler.
                api("PUT", f"/v1/nodes/{victim}/faults", {"faults": ["node=slow:3"]})
                time.sleep(rng.uniform(30, 60))
                api("DELETE", f"/v1/nodes/{victim}/faults")
                slowed.append((at, time.time(), victim))
            elif kind == "agent_kill":
                procs[victim].send_signal(signal.SIGKILL)
                procs[victim].wait()
                time.sleep(10)
                start_agent(victim)
            faults.append((at, kind, victim))
            print(f"# {at - started:7.1f}s {kind} {victim} ({time.time() - at:.1f} s)", flush=True)

        # Faults over: everything heals and the jobs finish.
        end_by = time.monotonic() + 30 * 60
        while not all(api("GET", f"/v1/jobs/{j}")["state"] in ("SUCCEEDED", "FAILED", "CANCELLED") for j in jobs):
            if time.monotonic() > end_by:
                raise RuntimeError("the jobs did not end within 30 minutes of the last fault")
            time.sleep(1)
        elapsed = time.time() - started
        stop_probing.set()
        prober.join()
        sampler.stop.set()
        sampler.join()

        attempts = {j: api("GET", f"/v1/jobs/{j}/attempts")["attempts"] for j in jobs}
        job_of = {at["id"]: j for j, ats in attempts.items() for at in ats}
        twice_s = 0.0
        for (t0, live), (t1, _) in zip(sampler.samples, sampler.samples[1:]):
            per_job = {}
            for attempt in live:
                if attempt in job_of:
                    per_job.setdefault(job_of[attempt], set()).add(attempt)
            overlapping = {j: both for j, both in per_job.items() if len(both) > 1}
            if overlapping:
                twice_s += t1 - t0
            for j, both in overlapping.items():
                print(f"# two attempts of job {j} at {t0 - started:.2f} s: " +
                      ", ".join(f"{x} on {sorted(live[x])}" for x in sorted(both)))
        lost_submits = [i for i in acknowledged if call(urls[active() or 0], "GET", f"/v1/jobs/{i}", token)[0] != 200]

        fault_times = [(at, victim) for at, kind, victim in faults if kind not in ("rank_freeze", "node_slow")]
        resumed, hangs = [], []
        for j, ats in attempts.items():
            for prev, nxt in zip(ats, ats[1:]):
                if "ended_at" not in prev or "started_at" not in nxt or not prev.get("infrastructure"):
                    continue
                ended = parse_time(prev["ended_at"])
                causes = [at for at, victim in fault_times if at <= ended and (victim in prev["nodes"] or victim.startswith("daemon"))]
                if causes:
                    resumed.append(parse_time(nxt["started_at"]) - max(causes))
            for attempt in ats:  # a frozen rank is found when its attempt is ended, stuck or timed out in a collective
                if "started_at" not in attempt or "ended_at" not in attempt:
                    continue
                began, ended = parse_time(attempt["started_at"]), parse_time(attempt["ended_at"])
                for t, node in frozen_ranks:
                    if node in attempt["nodes"] and began <= t <= ended:
                        hangs.append((ended - t, attempt.get("failure_class", "")))
        for j, ats in attempts.items():  # where each job's time went, attempt by attempt
            print(f"# job {j}: " + "; ".join(
                f"{at['state']}{'/' + at['failure_class'] if at.get('failure_class') else ''} on {','.join(at['nodes'])} "
                f"from {os.path.basename(at.get('resumed_from') or 'start')} to step {at.get('steps_completed', 0)}" for at in ats))
        final = [api("GET", f"/v1/jobs/{j}")["state"] for j in jobs]
        # The soak's jobs alone: the cluster figure would count the prober's jobs too.
        rows = [r for r in api("GET", f"/v1/goodput?limit={len(jobs) + len(acknowledged) + 10}")["jobs"] if r["job_id"] in jobs]
        allocated = sum(r["allocated_core_s"] for r in rows)
        lost = {}
        for r in rows:
            for cause, v in r["lost_core_s"].items():
                lost[cause] = lost.get(cause, 0) + v
        goodput = {"goodput": sum(r["productive_core_s"] for r in rows) / allocated if allocated else float("nan"),
                   "allocated_core_s": allocated}
        kinds_seen = {}
        for _, kind, _ in faults:
            kinds_seen[kind] = kinds_seen.get(kind, 0) + 1
        timing_text = "heartbeat, node timeout, fence and kill grace at their defaults" if a.default_timings else (
            f"heartbeat 0.5 s, node timeout {a.node_timeout_ms / 1000:g} s, fence {a.fence_ms / 1000:g} s, kill grace 0.5 s")
        print(f"# partition soak, seed {a.seed}: {a.agents} agents x 4 cores on their own hosts, {a.warm_spares} warm spares, "
              f"active + standby daemons on PostgreSQL (lease 5 s, {timing_text}); {quiet[0]:g}-{quiet[1]:g} s of quiet between faults; "
              f"{a.jobs} simulated jobs x 2 nodes, {a.steps} steps of {a.step_ms} ms, checkpoint every {a.checkpoint_every}")
        print("faults: " + " ".join(f"{k}={v}" for k, v in sorted(kinds_seen.items())))
        print(f"elapsed_s={elapsed:.0f} two_attempts_running_s={twice_s:.2f} samples={len(sampler.samples)}")
        print(f"acknowledged_submits={len(acknowledged)} lost={len(lost_submits)} "
              f"daemon_restarts={len(restarts)} (exit codes {sorted(set(rc for _, _, rc, _ in restarts))})")
        for at, i, rc, cause in restarts:
            print(f"daemon_exit: daemon-{i} at {at - started:.0f} s, status {rc}: {cause}")
        print(f"jobs_finished={final.count('SUCCEEDED')}/{len(jobs)} states={sorted(set(final))}")
        print(f"goodput={100 * goodput['goodput']:.2f}% (jobs {len(rows)}) allocated_core_s={goodput['allocated_core_s']:.0f} lost_core_s: "
              + " ".join(f"{cause}={round(v)}" for cause, v in sorted(lost.items())))
        print(f"fault_to_resumed_s: n={len(resumed)} mean={sum(resumed) / len(resumed) if resumed else float('nan'):.2f} "
              f"p95={percentile(resumed, 0.95):.2f}")
        print(f"hang_detection_s: n={len(hangs)} of {len(frozen_ranks)} frozen ranks, "
              f"p99={percentile([h for h, _ in hangs], 0.99):.2f} classes={sorted(set(c for _, c in hangs))}")
        named = []
        for at, until, victim in slowed:
            events = api("GET", f"/v1/events?type=job.straggler&node={victim}&limit=1000")["events"]
            found = [parse_time(e["time"]) - at for e in events if at <= parse_time(e["time"]) <= until + 5]
            if found:
                named.append(min(found))
        print(f"straggler_named_s: n={len(named)} of {len(slowed)} slowed nodes, "
              f"max={max(named) if named else float('nan'):.2f} mean={sum(named) / len(named) if named else float('nan'):.2f}")
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if pg_data:
            subprocess.run(["runuser", "-u", "postgres", "--", pg_bin("pg_ctl"), "-D", pg_data, "-m", "immediate", "stop"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if hosts:
            hosts.remove()
        if os.environ.get("KEEP_DATA") != "1":
            subprocess.run(["rm", "-rf", root])
        else:
            print(f"# kept {root}")


if __name__ == "__main__":
    main()
