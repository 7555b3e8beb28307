"""What the soaks under bench/ share: talking to a daemon that may be away or a standby, waiting on
a condition with a deadline, stopping what they started, reading only their own agents' cgroups, naming
why a daemon exited, and PostgreSQL's tools."""
import datetime, glob, json, os, re, signal, subprocess, sys, time
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


def agent_cgroup_name(node, work_dir):
    """The agent's cgroup folder as agent/attempt_cgroup.cpp's agent_cgroup_name makes it (the node's
    name and an FNV-1a hash of its work dir): a soak that reads only these never counts the attempts
    of another cluster on the same machine."""
    hash_ = 2166136261
    for byte in work_dir.encode():
        hash_ = ((hash_ ^ byte) * 16777619) & 0xFFFFFFFF
    return f"{node}-{hash_:08x}"


def attempt_cgroup_procs(agent_cgroups):
    """(agent cgroup name, attempt id, cgroup.procs path) of each attempt cgroup of the named agents
    (started from the root cgroup), in cgroup v1's pids hierarchy or under cgroup v2."""
    base = "/sys/fs/cgroup" if os.path.exists("/sys/fs/cgroup/cgroup.controllers") else "/sys/fs/cgroup/pids"
    found = []
    for procs in glob.glob(f"{base}/trainyard/*/attempt-*/cgroup.procs"):
        agent, attempt = procs[len(base) + len("/trainyard/"):].split("/")[:2]
        if agent in agent_cgroups and attempt[len("attempt-"):].isdigit():
            found.append((agent, int(attempt[len("attempt-"):]), procs))
    return found


def exit_cause(log_path, since, returncode):
    """Why a daemon exited, from what it logged after byte `since` of its log: its last
    `event=daemon_failed` or `event=lease_lost` line, else its last critical or error line, else the
    signal or status."""
    try:
        with open(log_path, "rb") as f:
            f.seek(since)
            lines = f.read().decode(errors="replace").splitlines()
    except OSError as e:
        lines = [f"(log unreadable: {e})"]
    for pattern in (r"event=(daemon_failed|lease_lost)\b", r"\[(critical|error)\]"):
        said = [line for line in lines if re.search(pattern, line)]
        if said:
            return said[-1].strip()
    return f"killed by signal {-returncode}" if returncode < 0 else f"exit status {returncode}, nothing logged"
