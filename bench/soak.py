"""What the soaks under bench/ share: talking to a daemon that may be away or a standby, waiting on
a condition with a deadline, stopping what they started, and PostgreSQL's tools."""
import datetime, glob, json, signal, subprocess, sys, time
import urllib.error, urllib.request


def pg_bin(tool):
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"))
    if not found:
        sys.exit(f"bench: {tool} not found (apt-get install postgresql)")
    return found[-1]


def call(url, method, path, token=None, body=None, timeout=2):
    """(status, JSON body) without following redirects; (0, None) when nothing answered."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data else {}
    if token:
        headers["Authorization"] = "Bearer " + token
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url + path, data=data, method=method, headers=headers),
                         timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except (urllib.error.URLError, OSError):
        return 0, None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def role(url):
    status, body = call(url, "GET", "/healthz")
    return body.get("role") if status == 200 and isinstance(body, dict) else None


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def stop(procs, grace=10):
    """SIGTERM to each process still running, then SIGKILL to any that outlives `grace` seconds."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
