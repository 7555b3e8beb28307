// What one trivial attempt costs, end to end: N command jobs running `/bin/true`
// are submitted over C keep-alive connections (one thread each, a closed loop: send a submission,
// wait for its 201, send the next) to a daemon with idle agents, and the clock stops when none of
// them is PENDING, STARTING or RUNNING any more. Prints jobs/s end to end and the CPU time
// (user + system, of the process and its waited-for children: fields 14-17 of /proc/PID/stat) the
// daemon and the agents spent per job. CPU per job is the figure that does not depend on what else
// the machine runs; jobs/s does.
//
//   trivial_jobs_bench --data-dir DIR --daemon-pid PID --agent-pids PID,PID,... [--jobs N] [--connections C]
//                      [--cores-per-job K]
//
// The daemon must be fresh (no other jobs): "all ended" is read as "no active job", and every job
// must end SUCCEEDED.
//
// It also prints the CPU time of a fixed loop run before the jobs and after them, and splits each
// CPU figure into user and system time: on these shared virtual machines the same binary's CPU per
// job drifts by half from run to run, and these tell the machine's speed and the kernel's part of
// it apart from the code's.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/http_client.h"

namespace {

using namespace trainyard::cli;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Options {
  std::string server;
  std::string token;
  int daemon_pid = 0;
  std::vector<int> agent_pids;
  int jobs = 500;
  int connections = 4;
  int cores_per_job = 1;  // 64 jobs at once on 4 x 16 cores; without it, one job takes a whole node
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "trivial_jobs_bench: %s\n", why.c_str());
  std::exit(1);
}

[[noreturn]] void usage(const std::string& why) {
  fail(why + "\nusage: trivial_jobs_bench --data-dir DIR --daemon-pid PID --agent-pids PID,PID,... [--jobs N] "
             "[--connections C] [--cores-per-job K]");
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read " + path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<int> parse_pids(const std::string& text) {
  std::vector<int> pids;
  std::istringstream in(text);
  for (std::string pid; std::getline(in, pid, ',');) {
    if (std::atoi(pid.c_str()) <= 0) usage("--agent-pids: not a pid: \"" + pid + "\"");
    pids.push_back(std::atoi(pid.c_str()));
  }
  return pids;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) usage("every flag takes a value");
    const std::string flag = argv[i];
    const std::string value = argv[++i];
    if (flag == "--data-dir") {
      o.server = read_first_line(value + "/daemon.addr");
      o.token = read_first_line(value + "/admin.token");
    } else if (flag == "--daemon-pid") {
      o.daemon_pid = std::atoi(value.c_str());
    } else if (flag == "--agent-pids") {
      o.agent_pids = parse_pids(value);
    } else if (flag == "--jobs") {
      o.jobs = std::atoi(value.c_str());
    } else if (flag == "--connections") {
      o.connections = std::atoi(value.c_str());
    } else if (flag == "--cores-per-job") {
      o.cores_per_job = std::atoi(value.c_str());
    } else {
      usage("unknown flag " + flag);
    }
  }
  if (o.server.empty()) usage("need --data-dir");
  if (o.daemon_pid <= 0 || o.agent_pids.empty()) usage("need --daemon-pid and --agent-pids");
  if (o.jobs < 1 || o.connections < 1 || o.cores_per_job < 1) {
    usage("--jobs, --connections and --cores-per-job must be positive");
  }
  return o;
}

// CPU seconds of a process and of its children it has waited for, in user mode and in the kernel.
struct CpuTimes {
  double user = 0;
  double system = 0;
  double total() const { return user + system; }
  CpuTimes operator-(const CpuTimes& earlier) const { return {user - earlier.user, system - earlier.system}; }
  CpuTimes& operator+=(const CpuTimes& more) {
    user += more.user;
    system += more.system;
    return *this;
  }
};

CpuTimes cpu_with_children(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto after_name = stat.rfind(')');
  if (after_name == std::string::npos) fail("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(after_name + 2));  // starts at field 3
  std::string skip;
  for (int field = 3; field < 14; ++field) fields >> skip;
  double utime = 0, stime = 0, cutime = 0, cstime = 0;
  fields >> utime >> stime >> cutime >> cstime;
  const auto ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return {(utime + cutime) / ticks, (stime + cstime) / ticks};
}

CpuTimes agents_cpu(const Options& o) {
  CpuTimes total;
  for (const int pid : o.agent_pids) total += cpu_with_children(pid);
  return total;
}

// CPU milliseconds this thread spends on the same fixed integer work every time.
double reference_loop_cpu_ms() {
  timespec began{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &began);
  std::uint64_t x = 88172645463325252ULL;
  std::uint64_t sum = 0;
  for (int i = 0; i < 200'000'000; ++i) {  // xorshift64: no memory traffic, no branch to mispredict
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    sum += x;
  }
  timespec ended{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ended);
  if (sum == 0) std::puts("");  // keeps the loop from being optimised away; never true
  return 1e3 * static_cast<double>(ended.tv_sec - began.tv_sec) +
         1e-6 * static_cast<double>(ended.tv_nsec - began.tv_nsec);
}

HttpRequest request(const Options& o, std::string method, std::string target, std::string body = "") {
  HttpRequest r{.method = std::move(method), .target = std::move(target), .body = std::move(body)};
  r.headers.emplace("authorization", "Bearer " + o.token);
  if (!r.body.empty()) r.headers.emplace("content-type", "application/json");
  return r;
}

// How many jobs have one of `states` (comma-separated), counted up to `limit`.
std::size_t count_jobs(HttpClient& client, const Options& o, const std::string& states, int limit) {
  const HttpResult result = client.send(request(o, "GET", "/v1/jobs?state=" + states + "&limit=" + std::to_string(limit)));
  if (!result) fail(result.error().message);
  if (result->status != 200) fail("GET /v1/jobs answered " + std::to_string(result->status) + ": " + result->body);
  return Json::parse(result->body)["jobs"].size();
}

// The value of a metric line "NAME VALUE" in GET /metrics; 0 when it is absent.
double metric(HttpClient& client, const Options& o, const std::string& name) {
  const HttpResult result = client.send(request(o, "GET", "/metrics"));
  if (!result || result->status != 200) fail("GET /metrics failed");
  const std::string prefix = "\n" + name + " ";
  const auto at = result->body.find(prefix);
  return at == std::string::npos ? 0 : std::atof(result->body.c_str() + at + prefix.size());
}

// Waits until every agent's node is HEALTHY and connected: it passed its registration tests, which
// take a while on a loaded machine.
void wait_for_nodes(HttpClient& client, const Options& o) {
  const auto deadline = Clock::now() + std::chrono::seconds(300);
  for (;;) {
    const HttpResult result = client.send(request(o, "GET", "/v1/nodes"));
    if (!result) fail(result.error().message);
    const Json nodes = Json::parse(result->body)["nodes"];
    std::size_t ready = 0;
    for (const auto& node : nodes) {
      ready += node["state"] == "HEALTHY" && node["connected"] == true;
    }
    if (ready >= o.agent_pids.size()) return;
    if (Clock::now() > deadline) fail("the agents' nodes did not become HEALTHY within 300 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void submit_jobs(const Options& o, std::atomic<int>& next, std::atomic<int>& failures) {
  auto client = make_http_client(parse_server_url(o.server));
  for (int n = next++; n < o.jobs; n = next++) {
    const std::string body = R"({"name":"trivial-)" + std::to_string(n) +
                             R"(","cores_per_node":)" + std::to_string(o.cores_per_job) +
                             R"(,"wait_for_capacity":true,"command":{"argv":["/bin/true"]}})";
    const HttpResult result = client->send(request(o, "POST", "/v1/jobs", body));
    if (!result || result->status != 201) {
      if (++failures <= 5) {
        std::fprintf(stderr, "job %d: %s\n", n, result ? result->body.c_str() : result.error().message.c_str());
      }
    }
  }
}

int run(const Options& o) {
  auto client = make_http_client(parse_server_url(o.server));
  wait_for_nodes(*client, o);
  if (count_jobs(*client, o, "PENDING,STARTING,RUNNING", 1) != 0) fail("the daemon has active jobs: give a fresh one");
  std::printf("trivial_jobs_bench: %d /bin/true jobs over %d keep-alive connections to %s, %zu agents\n", o.jobs,
              o.connections, o.server.c_str(), o.agent_pids.size());
  const double reference_before_ms = reference_loop_cpu_ms();
  const double commits_before = metric(*client, o, "trainyard_store_commit_batch_changes_count");
  const double changes_before = metric(*client, o, "trainyard_store_commit_batch_changes_sum");
  const CpuTimes daemon_before = cpu_with_children(o.daemon_pid);
  const CpuTimes agents_before = agents_cpu(o);
  const auto start = Clock::now();
  std::atomic<int> next = 0;
  std::atomic<int> failures = 0;
  std::vector<std::thread> submitters;
  for (int c = 0; c < o.connections; ++c) submitters.emplace_back([&] { submit_jobs(o, next, failures); });
  for (auto& t : submitters) t.join();
  const double submitted_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (failures > 0) fail(std::to_string(failures) + " submissions failed");
  // Polled, not streamed: one small indexed read every 5 ms costs the daemon little next to the jobs.
  const auto deadline = start + std::chrono::seconds(60 + o.jobs / 10);
  while (count_jobs(*client, o, "PENDING,STARTING,RUNNING", 1) != 0) {
    if (Clock::now() > deadline) fail("jobs still active after the deadline");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const CpuTimes daemon_cpu = cpu_with_children(o.daemon_pid) - daemon_before;
  const CpuTimes agent_cpu = agents_cpu(o) - agents_before;
  const std::size_t not_succeeded = count_jobs(*client, o, "FAILED,CANCELLED", 1000);
  std::printf("submitted in %.3f s; all ended in %.3f s = %.0f jobs/s end to end\n", submitted_s, seconds,
              o.jobs / seconds);
  std::printf("daemon cpu: %.3f s = %.3f ms per job (user %.3f, system %.3f)\n", daemon_cpu.total(),
              1e3 * daemon_cpu.total() / o.jobs, 1e3 * daemon_cpu.user / o.jobs, 1e3 * daemon_cpu.system / o.jobs);
  std::printf("agents cpu: %.3f s = %.3f ms per job (user %.3f, system %.3f; %zu agents, children included)\n",
              agent_cpu.total(), 1e3 * agent_cpu.total() / o.jobs, 1e3 * agent_cpu.user / o.jobs,
              1e3 * agent_cpu.system / o.jobs, o.agent_pids.size());
  const double commits = metric(*client, o, "trainyard_store_commit_batch_changes_count") - commits_before;
  const double changes = metric(*client, o, "trainyard_store_commit_batch_changes_sum") - changes_before;
  std::printf("store: %.0f commits = %.2f per job, %.1f changes per commit\n", commits, commits / o.jobs,
              commits > 0 ? changes / commits : 0.0);
  std::printf("machine: a fixed loop took %.0f ms of CPU before the jobs, %.0f ms after\n", reference_before_ms,
              reference_loop_cpu_ms());
  if (not_succeeded != 0) {
    std::printf("FAIL: %zu jobs did not succeed\n", not_succeeded);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run(parse_options(argc, argv)); }
