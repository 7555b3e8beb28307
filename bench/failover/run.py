#!/usr/bin/env python3
"""Failover time of active / standby daemons: two daemons on one throwaway
PostgreSQL, agents given both URLs; once the agents are connected to it, the active daemon is killed
(SIGKILL), N times. Failover time is
from the kill to the first submit the other daemon acknowledges (201), tried on both URLs every
20 ms as a client with both URLs would. After each kill the killed daemon is started again, as the
new standby, before the next kill. Prints every time, p50 and max, with the machine's load.

  bench/failover/run.py [--build BUILD_DIR] [--kills 10] [--lease-ttl-ms 5000] [--agents 2] [--keep]

Needs Debian's `postgresql` package (initdb, pg_ctl; as root the server runs as `postgres`).
Everything started is stopped at the end, whatever happens."""
import argparse, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from soak import call, pg_bin, role, wait_for  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """initdb + pg_ctl on a temporary directory, on a Unix socket only."""

    def __init__(self, root):
        self.dir = os.path.join(root, "pg")
        os.makedirs(self.dir)
        self.owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.owner:
            shutil.chown(self.dir, "postgres", "postgres")
        data = os.path.join(self.dir, "data")
        self.run([pg_bin("initdb"), "-D", data, "-U", "trainyard", "-A", "trust", "-E", "UTF8", "--locale=C",
                  "--no-instructions"])
        self.run([pg_bin("pg_ctl"), "-D", data, "-l", os.path.join(self.dir, "server.log"), "-w", "-o",
                  f"-k {self.dir} -c listen_addresses=", "start"])
        self.url = f"postgresql:///postgres?host={self.dir}&user=trainyard"

    def run(self, argv):
        subprocess.run(self.owner + argv, check=True, stdout=subprocess.DEVNULL)

    def stop(self):
        subprocess.run(self.owner + [pg_bin("pg_ctl"), "-D", os.path.join(self.dir, "data"), "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--lease-ttl-ms", type=int, default=5000)
    p.add_argument("--agents", type=int, default=2)
    p.add_argument("--keep", action="store_true", help="keep the logs' directory (printed) for a look afterwards")
    a = p.parse_args()
    root = tempfile.mkdtemp(prefix="trainyard-failover.", dir="/var/tmp")
    os.chmod(root, 0o755)
    postgres, procs, daemons = None, [], {}
    try:
        postgres = Postgres(root)
        urls = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
        datas = [os.path.join(root, f"data-{i}") for i in range(2)]

        def start_daemon(i):
            log = open(os.path.join(root, f"daemon-{i}.log"), "a")
            daemons[i] = subprocess.Popen(
                [f"{a.build}/daemon/trainyard-daemon", "--listen", urls[i][len("http://"):], "--advertise-url", urls[i],
                 "--data-dir", datas[i], "--store", postgres.url, "--lease-ttl-ms", str(a.lease_ttl_ms),
                 "--node-timeout-ms", "15000", "--kill-grace-ms", "2000"], stdout=log, stderr=log)

        start_daemon(0)
        wait_for(lambda: role(urls[0]) == "active", 30, "the first daemon to be active")
        os.makedirs(datas[1], mode=0o700)
        for name in ("admin.token", "join.token"):  # the store knows their hashes; both daemons take them
            shutil.copy(os.path.join(datas[0], name), os.path.join(datas[1], name))
        start_daemon(1)
        wait_for(lambda: role(urls[1]) == "standby", 30, "the second daemon to be a standby")
        token = open(os.path.join(datas[0], "admin.token")).read().strip()
        for n in range(a.agents):
            log = open(os.path.join(root, f"agent-{n}.log"), "a")
            procs.append(subprocess.Popen(
                [f"{a.build}/agent/trainyard-agent", "--server", ",".join(urls), "--join-token-file",
                 os.path.join(datas[0], "join.token"), "--name", f"node-{n}", "--cores", "4", "--work-dir",
                 os.path.join(root, f"work-{n}")], stdout=log, stderr=log))
        # Accepted whatever nodes are connected at that moment: the time measures the daemons alone.
        probe = {"name": "probe", "cores_per_node": 1, "wait_for_capacity": True, "command": {"argv": ["/bin/true"]}}

        def agents_connected(url):
            status, body = call(url, "GET", "/v1/nodes", token)
            return status == 200 and sum(n["connected"] for n in body["nodes"]) == a.agents

        times = []
        for kill in range(a.kills):
            active = next(i for i in (0, 1) if role(urls[i]) == "active")
            wait_for(lambda: agents_connected(urls[active]), 30, "the agents to connect to the active daemon")
            daemons[active].send_signal(signal.SIGKILL)
            killed = time.monotonic()
            daemons[active].wait()
            acknowledged = None
            while acknowledged is None:
                for url in urls:
                    if call(url, "POST", "/v1/jobs", token, probe, timeout=1)[0] == 201:
                        acknowledged = time.monotonic()
                        break
                else:
                    if time.monotonic() - killed > 60:
                        raise RuntimeError("no daemon acknowledged a submit within 60 s of the kill")
                    time.sleep(0.02)
            times.append(acknowledged - killed)
            print(f"kill {kill + 1}: daemon {active} killed, submit acknowledged after {times[-1]:.2f} s", flush=True)
            start_daemon(active)
            wait_for(lambda: role(urls[active]) == "standby", 30, "the killed daemon to come back as a standby")

        times.sort()
        print(f"failover time over {len(times)} kills (lease ttl {a.lease_ttl_ms} ms): "
              f"p50 {statistics.median(times):.2f} s, max {times[-1]:.2f} s")
        print("load: " + open("/proc/loadavg").read().strip())
    finally:
        for proc in procs + list(daemons.values()):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if postgres:
            postgres.stop()
        if a.keep:
            print("logs kept in " + root)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
