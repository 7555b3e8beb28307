#!/usr/bin/env python3
"""Webhook delivery under faults (figures in bench/webhooks/RESULTS.md), against a real daemon and a receiver in this
script (a threaded HTTP/1.1 server on 127.0.0.1 that checks every signature).

Phase 1, faults: --events job submissions (each a job.submitted event) go to --webhooks webhooks
whose receiver answers 20% of requests 500, 5% 429 with Retry-After, and lets 5% time out (answers
nothing until after the daemon's --webhook-timeout-ms, then closes); half-way the daemon is killed
with SIGKILL and restarted on the same port. Then it waits until every event reached every webhook
or was dead-lettered, and reports delivered / dead-lettered / lost and bad signatures.
Phase 2, healthy: a fresh webhook on a receiver that always answers 200: event-to-delivery
latency (event time to the receiver's clock, same machine) at --paced-rate events/s, then
deliveries/s for a backlog of --burst events (the receiver answers 503 with Retry-After: 1 while
they are submitted, then 200 to everything).

  bench/webhooks/run.py [--build BUILD_DIR] [--events 10000] [--webhooks 3] [--burst 10000]
                        [--paced 2000 --paced-rate 200] [--timeout-ms 200] [--retry-after 1]

The daemon runs with short retry settings (printed), storm control off (--webhook-max-per-minute
100000, its largest: every event is its own message) and its data under /var/tmp (fsync is real there)."""
import argparse, datetime, hashlib, hmac, http.client, json, os, random, signal, subprocess, sys, tempfile, threading, \
    time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p / 100 * len(s)))] if s else float("nan")


class Api:
    """One keep-alive connection per thread to the daemon."""

    def __init__(self, address, token):
        self.host, self.port = address.rsplit(":", 1)
        self.token, self.local = token, threading.local()

    def call(self, method, path, body=None):
        for attempt in range(2):
            conn = getattr(self.local, "conn", None) or http.client.HTTPConnection(self.host, int(self.port), timeout=30)
            self.local.conn = conn
            try:
                conn.request(method, path, None if body is None else json.dumps(body),
                             {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
                r = conn.getresponse()
                return r.status, json.loads(r.read() or b"null")
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 1:
                    raise


class Receiver:
    """Records (webhook index, event id) -> (first arrival, event time); checks the signature of every
    request; counts requests, faults, bad signatures and repeats of an event it already had."""

    def __init__(self, faults, timeout_s, retry_after):
        self.faults, self.timeout_s, self.retry_after = faults, timeout_s, retry_after
        self.secrets, self.arrived, self.lock = {}, {}, threading.Lock()
        self.requests = self.bad_signatures = self.duplicates = 0
        self.holding = False  # answer 503 + Retry-After: 1 (lets a backlog build up)
        self.fault_counts = {"500": 0, "429": 0, "timeout": 0}
        self.rng = random.Random(1)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.handle(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # the daemon closing a timed-out request
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, index):
        return f"http://127.0.0.1:{self.server.server_port}/hook/{index}"

    def answer(self, h, status, headers=()):
        h.send_response(status)
        for k, v in headers:
            h.send_header(k, v)
        h.send_header("Content-Length", "0")
        h.end_headers()

    def handle(self, h, body):
        now = time.time()
        index = int(h.path.rsplit("/", 1)[1])
        ts, sig = h.headers.get("X-Trainyard-Request-Timestamp", ""), h.headers.get("X-Trainyard-Signature", "")
        expected = "v0=" + hmac.new(self.secrets[index].encode(), b"v0:" + ts.encode() + b":" + body,
                                    hashlib.sha256).hexdigest()
        with self.lock:
            self.requests += 1
            if not hmac.compare_digest(sig, expected):
                self.bad_signatures += 1
            roll = self.rng.random() if self.faults else 1.0
            fault = "500" if roll < 0.20 else "429" if roll < 0.25 else "timeout" if roll < 0.30 else None
            if fault:
                self.fault_counts[fault] += 1
        if self.holding:
            return self.answer(h, 503, [("Retry-After", "1")])
        if fault == "500":
            return self.answer(h, 500)
        if fault == "429":
            return self.answer(h, 429, [("Retry-After", str(self.retry_after))])
        if fault == "timeout":
            time.sleep(self.timeout_s + 0.1)
            h.close_connection = True
            return
        event = json.loads(body)
        key = (index, event["id"])
        with self.lock:
            if key in self.arrived:
                self.duplicates += 1
            elif hmac.compare_digest(sig, expected):
                self.arrived[key] = (now, parse_time(event["time"]))
        self.answer(h, 200)

    def count(self, index):
        with self.lock:
            return sum(1 for (i, _) in self.arrived if i == index)


class Daemon:
    def __init__(self, build, root, flags):
        self.binary, self.data, self.flags, self.proc = f"{build}/daemon/trainyard-daemon", os.path.join(root, "data"), flags, None
        self.log = open(os.path.join(root, "daemon.log"), "a")
        self.listen = "127.0.0.1:0"

    def start(self):
        addr = os.path.join(self.data, "daemon.addr")
        if os.path.exists(addr):
            os.remove(addr)
        self.proc = subprocess.Popen([self.binary, "--listen", self.listen, "--data-dir", self.data] + self.flags,
                                     stdout=self.log, stderr=self.log)
        for _ in range(300):
            if os.path.exists(addr) and open(addr).read().strip():
                break
            if self.proc.poll() is not None:
                sys.exit("the daemon exited; see " + self.log.name)
            time.sleep(0.1)
        self.address = open(addr).read().strip().split("://")[-1]
        self.listen = self.address  # a restart comes back on the same port
        return Api(self.address, open(os.path.join(self.data, "admin.token")).read().strip())

    def kill(self, sig):
        self.proc.send_signal(sig)
        self.proc.wait()


def job(i):
    return {"name": f"bench-{i}", "nodes": 1, "wait_for_capacity": True, "command": {"argv": ["/bin/true"]}}


def submit(api_ref, count, first, threads=8, rate=None, on_half=None):
    """Submits `count` jobs from `threads` threads (at `rate`/s in all when given); a submission that
    fails on a lost connection is retried (a duplicate job is only one more event)."""
    next_i, lock, half = [first], threading.Lock(), threading.Event()
    start = time.time()

    def worker():
        while True:
            with lock:
                i = next_i[0]
                if i >= first + count:
                    return
                next_i[0] += 1
            if rate:
                time.sleep(max(0.0, start + (i - first) / rate - time.time()))
            if i == first + count // 2 and on_half:
                on_half()
                half.set()
            while True:
                try:
                    status, body = api_ref[0].call("POST", "/v1/jobs", job(i))
                    if status == 201:
                        break
                    sys.exit(f"submit {i}: HTTP {status} {body}")
                except (OSError, http.client.HTTPException):
                    pass  # the daemon is being restarted
                time.sleep(0.2)

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def submitted_event_ids(api, after):
    ids, cursor = [], ""
    while True:
        status, page = api.call("GET", f"/v1/events?type=job.submitted&after={after}&limit=1000{cursor}")
        ids += [e["id"] for e in page["events"]]
        if not page.get("next"):
            return ids
        cursor = f"&cursor={page['next']}"


def dead_letters(api, webhook_id):
    dead, before = 0, ""
    while True:
        status, page = api.call("GET", f"/v1/webhooks/{webhook_id}/deliveries?limit=1000{before}")
        deliveries = page.get("deliveries", [])
        dead += sum(1 for d in deliveries if d.get("state") == "dead")
        if len(deliveries) < 1000:
            return dead
        before = f"&before={deliveries[-1]['n']}"


def wait_for(condition, timeout, idle_timeout=60):
    """Polls until `condition()` (a number, or True when done) says done; gives up after `timeout`
    or after `idle_timeout` s without progress."""
    deadline, last, last_change = time.time() + timeout, None, time.time()
    while time.time() < deadline:
        value = condition()
        if value is True:
            return True
        if value != last:
            last, last_change = value, time.time()
        elif time.time() - last_change > idle_timeout:
            return False
        time.sleep(0.2)
    return False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--events", type=int, default=10000)
    p.add_argument("--webhooks", type=int, default=3)
    p.add_argument("--paced", type=int, default=2000)
    p.add_argument("--paced-rate", type=float, default=200)
    p.add_argument("--burst", type=int, default=10000)
    p.add_argument("--timeout-ms", type=int, default=200)
    p.add_argument("--retry-after", type=int, default=1)
    p.add_argument("--wait-s", type=float, default=1800)
    a = p.parse_args()
    root = tempfile.mkdtemp(prefix="trainyard-bench-webhooks.", dir="/var/tmp")
    flags = ["--webhook-backoff-initial-ms", "50", "--webhook-backoff-cap-ms", "1000", "--webhook-timeout-ms",
             str(a.timeout_ms), "--webhook-max-per-minute", "100000"]
    print(f"# data {root}; daemon flags: {' '.join(flags)}")
    print(f"# machine: {os.cpu_count()} cores, load average before: {open('/proc/loadavg').read().split()[:3]}")
    daemon = Daemon(a.build, root, flags)
    faulty = Receiver(True, a.timeout_ms / 1000, a.retry_after)
    try:
        api = [daemon.start()]
        hooks = []
        for i in range(a.webhooks):
            status, made = api[0].call("POST", "/v1/webhooks", {"url": faulty.url(i), "events": ["job.submitted"], "format": "json"})
            assert status == 201, made
            faulty.secrets[i] = made["secret"]
            hooks.append(made["id"])

        def kill_and_restart():
            print(f"# kill -9 of the daemon after {a.events // 2} submissions")
            daemon.kill(signal.SIGKILL)
            api[0] = daemon.start()

        t0 = time.time()
        submit(api, a.events, 0, on_half=kill_and_restart)
        print(f"# phase 1: {a.events} submitted in {time.time() - t0:.1f} s")
        expected = set(submitted_event_ids(api[0], 0))  # no job existed before the webhooks

        def progress():
            got = sum(faulty.count(i) for i in range(a.webhooks))
            return True if got >= len(expected) * a.webhooks else got

        complete = wait_for(progress, a.wait_s)
        elapsed = time.time() - t0
        dead = sum(dead_letters(api[0], h) for h in hooks)
        delivered = sum(1 for (i, seq) in faulty.arrived if seq in expected)
        total = len(expected) * a.webhooks
        lost = total - delivered - dead
        print(f"phase 1 (faults): {len(expected)} events x {a.webhooks} webhooks = {total} messages in {elapsed:.1f} s"
              f"{'' if complete else ' (stopped waiting: no progress)'}")
        print(f"  delivered {delivered} ({100 * delivered / total:.2f}%), dead-lettered {dead}, lost {lost}, "
              f"bad signatures {faulty.bad_signatures}, repeats of delivered events {faulty.duplicates}")
        print(f"  receiver: {faulty.requests} requests, faults {faulty.fault_counts}")
        for h in hooks:
            api[0].call("DELETE", f"/v1/webhooks/{h}")

        healthy = Receiver(False, 0, 0)
        status, made = api[0].call("POST", "/v1/webhooks", {"url": healthy.url(0), "events": ["job.submitted"], "format": "json"})
        assert status == 201, made
        healthy.secrets[0] = made["secret"]
        time.sleep(0.5)
        submit(api, a.paced, 1_000_000, threads=4, rate=a.paced_rate)
        wait_for(lambda: True if healthy.count(0) >= a.paced else healthy.count(0), 120)
        latencies = [(arrived - at) * 1000 for (arrived, at) in healthy.arrived.values()]
        print(f"phase 2 (healthy, {a.paced} events at {a.paced_rate:.0f}/s): delivered {healthy.count(0)}, "
              f"event-to-delivery p50 {percentile(latencies, 50):.1f} ms, p99 {percentile(latencies, 99):.1f} ms, "
              f"max {max(latencies):.1f} ms; bad signatures {healthy.bad_signatures}")
        before = healthy.count(0)
        # The receiver answers 503 (Retry-After: 1) until the whole burst is in the log, so what is
        # measured is how fast the daemon delivers a backlog, not how fast this script submits.
        healthy.holding = True
        submit(api, a.burst, 2_000_000, threads=8)
        healthy.holding = False
        wait_for(lambda: True if healthy.count(0) >= before + a.burst else healthy.count(0), 300)
        times = sorted(arrived for (arrived, _) in healthy.arrived.values())[before:]
        rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else float("nan")
        print(f"phase 2 (healthy, burst of {a.burst}): delivered {len(times)}, {rate:.0f} deliveries/s "
              f"(first to last arrival); bad signatures {healthy.bad_signatures}")
    finally:
        if daemon.proc and daemon.proc.poll() is None:
            daemon.kill(signal.SIGTERM)
    if os.environ.get("KEEP_DATA") != "1":
        subprocess.run(["rm", "-rf", root])


if __name__ == "__main__":
    main()
