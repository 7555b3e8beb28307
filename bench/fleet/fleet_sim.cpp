// The fleet simulator: NODES virtual agents in this one process (virtual_agent.h:
// the real protocol over real WebSockets) drive one real daemon; then, in a steady phase of
// --steady-s seconds, jobs are submitted at --rate jobs/s over one keep-alive client, as virtual
// jobs that succeed, fail or hang (virtual_job.h), while every node heartbeats. It prints:
//   - daemon CPU over the steady phase, as % of one core (utime + stime from /proc/PID/stat),
//     and its RSS (VmRSS; VmHWM the peak);
//   - the scheduling pass p99 from the daemon's /metrics histogram over the steady phase (the
//     bucket bound it falls under);
//   - submit-to-running: from the submission's request until the virtual agent reports the attempt
//     started (the daemon marks the job RUNNING on that report), p50 / p99 / max, and the daemon's
//     own trainyard_submit_to_running_seconds p99 bucket;
//   - heartbeats per second sent, and what the virtual jobs did.
// Connections are spread over source addresses 127.0.0.2, 127.0.0.3, ... (--per-source each) so
// that neither the ephemeral ports of one address nor the daemon's per-address cap run out.
// bench/fleet/run.sh starts a fresh daemon around it.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <sstream>
#include <thread>
#include <vector>

#include "bench/fleet/virtual_agent.h"
#include "cli/http_client.h"
#include "proto/errors.h"
#include "proto/flag_parser.h"

namespace trainyard::fleet {
namespace {

struct Options {
  std::string server;
  std::string join_token_file;
  std::string admin_token_file;
  std::int64_t daemon_pid = 0;
  std::int64_t nodes = 1000;
  std::int64_t cores = 32;
  std::int64_t per_source = 1000;
  std::int64_t connecting = 200;  // connections being opened at once
  std::int64_t rate = 50;         // jobs submitted per second in the steady phase
  std::int64_t steady_s = 60;
  std::int64_t job_ms = 3000;
  std::int64_t fail_pct = 5;
  std::int64_t hang_pct = 2;
  std::int64_t stuck_after_s = 5;
  std::int64_t join_timeout_s = 600;
};

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) throw InvalidInput(path, "cannot be read");
  return line;
}

// ---- the daemon's process, from /proc ----------------------------------------------------------

double cpu_seconds(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name, which may hold spaces: the 14th and 15th of the whole line.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  std::int64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::int64_t status_kib(std::int64_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  }
  return 0;
}

// ---- Prometheus histograms ---------------------------------------------------------------------

// Cumulative bucket counts by upper bound ("+Inf" as infinity) of one histogram in an exposition.
std::map<double, double> histogram_buckets(const std::string& exposition, const std::string& name) {
  std::map<double, double> buckets;
  std::istringstream in(exposition);
  const std::string prefix = name + "_bucket{";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const auto le = line.find("le=\"");
    if (le == std::string::npos) continue;
    const auto end = line.find('"', le + 4);
    const std::string bound = line.substr(le + 4, end - le - 4);
    const double upper = bound == "+Inf" ? INFINITY : std::stod(bound);
    buckets[upper] += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return buckets;
}

// The bound under which `q` of the observations made between two scrapes fall, and their count.
std::pair<double, double> quantile_bound(const std::map<double, double>& before, const std::map<double, double>& after,
                                         double q) {
  const double total = after.empty() ? 0 : after.rbegin()->second - (before.empty() ? 0 : before.rbegin()->second);
  for (const auto& [bound, count] : after) {
    const auto was = before.find(bound);
    if (count - (was == before.end() ? 0 : was->second) >= q * total) return {bound, total};
  }
  return {INFINITY, total};
}

std::string seconds_text(double s) {
  if (std::isinf(s)) return "+Inf";
  char text[32];
  std::snprintf(text, sizeof text, "%g ms", s * 1000);
  return text;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<std::size_t>(q * static_cast<double>(values.size())))];
}

// ---- the fleet ----------------------------------------------------------------------------------

class Fleet {
 public:
  Fleet(boost::asio::io_context& io, const Options& options, std::string server, std::string join_token)
      : options_(options), ticker_(io) {
    link_.connect_url = server + "/v1/agent/connect";
    link_.join_token = std::move(join_token);
    link_.cores = static_cast<int>(options.cores);
    link_.on_welcomed = [this](Millis heartbeat_interval) {
      heartbeat_interval_ = heartbeat_interval;
      ++welcomed_;
      --connecting_;
      connect_more();
    };
    link_.on_closed = [this](const std::string& node, const std::string& reason, bool was_welcomed) {
      if (stopping_) return;
      spdlog::warn("event=virtual_agent_closed node={} reason=\"{}\"", node, reason);
      if (was_welcomed) {
        --welcomed_;
      } else {
        --connecting_;
        connect_more();
      }
      ++closed_;
    };
    link_.on_attempt_started = [this](JobId job, Clock::time_point at) { started_.emplace(job, at); };
    for (std::int64_t i = 0; i < options.nodes; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "fleet-%06lld", static_cast<long long>(i));
      const std::int64_t source = 2 + i / options.per_source;  // 127.0.0.2 upwards
      const std::string address = "127." + std::to_string(source / 65536 % 256) + "." +
                                  std::to_string(source / 256 % 256) + "." + std::to_string(source % 256);
      agents_.push_back(std::make_unique<VirtualAgent>(io, link_, counters_, name, address));
    }
  }

  void start() {
    connect_more();
    tick();
  }

  void stop() {
    stopping_ = true;
    ticker_.cancel();
    for (auto& agent : agents_) agent->close();
  }

  std::int64_t welcomed() const { return welcomed_; }
  std::int64_t closed() const { return closed_; }
  const FleetCounters& counters() const { return counters_; }
  const std::map<JobId, Clock::time_point>& started() const { return started_; }

 private:
  static constexpr Millis kTick{50};

  void connect_more() {
    while (next_ < agents_.size() && connecting_ < options_.connecting) {
      ++connecting_;
      agents_[next_++]->connect();
    }
  }

  // Every tick: the virtual jobs that are due end, and the nodes whose slices of the heartbeat
  // interval have come heartbeat, so that each node beats once per interval, spread evenly over
  // it. A late tick (the simulator waited for a CPU) catches up on the slices it missed.
  void tick() {
    ticker_.expires_after(kTick);
    ticker_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      const Clock::time_point now = Clock::now();
      const std::size_t slices = std::max<std::size_t>(1, heartbeat_interval_ / kTick);
      std::vector<bool> due(slices, false);
      for (std::size_t n = 0; n < slices && next_slice_at_ <= now; ++n, next_slice_at_ += kTick) {
        due[next_slice_++ % slices] = true;
      }
      if (next_slice_at_ <= now) next_slice_at_ = now;  // over a whole interval late: start afresh
      for (std::size_t i = 0; i < agents_.size(); ++i) {
        agents_[i]->advance(now);
        if (due[i % slices]) agents_[i]->heartbeat(now);
      }
      tick();
    });
  }

  const Options& options_;
  FleetLink link_;
  FleetCounters counters_;
  std::vector<std::unique_ptr<VirtualAgent>> agents_;
  boost::asio::steady_timer ticker_;
  Millis heartbeat_interval_{5000};  // as the daemon's welcome says
  std::size_t next_slice_ = 0;
  Clock::time_point next_slice_at_ = Clock::now();
  std::size_t next_ = 0;
  std::int64_t connecting_ = 0;
  std::atomic<std::int64_t> welcomed_ = 0;  // joined and still connected
  std::atomic<std::int64_t> closed_ = 0;    // failed to join or lost, before the end
  bool stopping_ = false;
  std::map<JobId, Clock::time_point> started_;
};

// ---- the measuring side ------------------------------------------------------------------------

class Daemon {
 public:
  Daemon(const std::string& server, std::string admin_token)
      : client_(cli::make_http_client(cli::parse_server_url(server))), token_(std::move(admin_token)) {}

  std::string metrics() { return get("/metrics"); }

  void put_share(const std::string& name, double weight) {
    net::HttpRequest request = authorized("PUT", "/v1/shares/" + name);
    request.headers["content-type"] = "application/json";
    request.body = Json{{"weight", weight}}.dump();
    const auto response = client_->send(request);
    if (!response) throw std::runtime_error(response.error().message);
    if (response->status != 200) throw std::runtime_error("PUT share answered " + std::to_string(response->status) + ": " + response->body);
  }

  // The new job's id; the request starts the submit-to-running clock.
  JobId submit(const Json& spec) {
    net::HttpRequest request = authorized("POST", "/v1/jobs");
    request.headers["content-type"] = "application/json";
    request.body = spec.dump();
    const auto response = client_->send(request);
    if (!response) throw std::runtime_error(response.error().message);
    if (response->status != 201) throw std::runtime_error("submit answered " + std::to_string(response->status) + ": " + response->body);
    return Json::parse(response->body).at("id").get<JobId>();
  }

 private:
  std::string get(const std::string& target) {
    const auto response = client_->send(authorized("GET", target));
    if (!response) throw std::runtime_error(response.error().message);
    if (response->status != 200) throw std::runtime_error("GET " + target + " answered " + std::to_string(response->status));
    return response->body;
  }

  net::HttpRequest authorized(const std::string& method, const std::string& target) const {
    net::HttpRequest request;
    request.method = method;
    request.target = target;
    request.headers["authorization"] = "Bearer " + token_;
    return request;
  }

  std::unique_ptr<cli::HttpClient> client_;
  std::string token_;
};

double gauge(const std::string& exposition, const std::string& series) {
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return 0;
}

// The sum of every series of a metric whose labels begin with `labels` (e.g. `kind="periodic"`).
double series_sum(const std::string& exposition, const std::string& metric, const std::string& labels) {
  const std::string prefix = metric + "{" + labels;
  std::istringstream in(exposition);
  double sum = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const auto space = line.rfind(' ');
    if (space != std::string::npos) sum += std::stod(line.substr(space + 1));
  }
  return sum;
}

// Each job's behaviour, spread evenly over the mix: fail_pct in 100 fail, hang_pct hang.
Json job_spec(const Options& o, std::int64_t i) {
  const std::int64_t slot = i % 100;
  const auto outcome = slot < o.fail_pct ? VirtualJob::Outcome::fail
                       : slot < o.fail_pct + o.hang_pct ? VirtualJob::Outcome::hang
                                                        : VirtualJob::Outcome::succeed;
  return Json{{"name", "fleet-" + std::to_string(i)},
              {"share", i % 2 == 0 ? "fleet-a" : "fleet-b"},
              {"nodes", 1},
              {"cores_per_node", o.cores},
              {"kind", "command"},
              {"command", {{"argv", VirtualJob::argv(outcome, Millis(o.job_ms))}}},
              {"stuck_after_s", o.stuck_after_s}};
}

template <class Condition>
bool wait_until(Condition condition, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(Millis(100));
  }
  return true;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int run(const Options& o, const std::string& data_dir) {
  const std::string server = read_first_line(data_dir + "/daemon.addr");
  Daemon daemon(server, read_first_line(data_dir + "/admin.token"));
  boost::asio::io_context io;
  Fleet fleet(io, o, server, read_first_line(data_dir + "/join.token"));
  auto work = boost::asio::make_work_guard(io);
  std::thread io_thread([&io] { io.run(); });
  boost::asio::post(io, [&fleet] { fleet.start(); });

  // 1. Join: every node connects, is welcomed and passes its registration check. The daemon's CPU
  // over it is its own cost of a join, apart from the wait for a CPU on a loaded machine.
  const double join_cpu_before = cpu_seconds(o.daemon_pid);
  const auto join_began = Clock::now();
  const bool joined = wait_until([&] { return fleet.welcomed() + fleet.closed() >= o.nodes; },
                                 std::chrono::seconds(o.join_timeout_s));
  const double join_s = ms_between(join_began, Clock::now()) / 1000;
  std::printf("join: %lld of %lld nodes welcomed in %.1f s (%.0f/s), %lld failed%s\n",
              static_cast<long long>(fleet.welcomed()), static_cast<long long>(o.nodes), join_s,
              static_cast<double>(fleet.welcomed()) / join_s, static_cast<long long>(fleet.closed()),
              joined ? "" : " (timed out)");
  double healthy = 0;
  wait_until([&] { return (healthy = gauge(daemon.metrics(), "trainyard_nodes{state=\"HEALTHY\"}")) >= fleet.welcomed(); },
             std::chrono::seconds(o.join_timeout_s));
  const double join_cpu = cpu_seconds(o.daemon_pid) - join_cpu_before;
  std::printf("healthy: %.0f nodes after %.1f s; daemon CPU over the join %.2f s (%.0f µs a node)\n", healthy,
              ms_between(join_began, Clock::now()) / 1000, join_cpu, healthy > 0 ? join_cpu * 1e6 / healthy : 0.0);

  // 2. Steady phase: heartbeats from every node, jobs submitted at the rate to two shares of
  // different weights, so the passes rank shares by fair share as they would in use.
  daemon.put_share("fleet-a", 1);
  daemon.put_share("fleet-b", 2);
  const std::string metrics_before = daemon.metrics();
  const double cpu_before = cpu_seconds(o.daemon_pid);
  const std::int64_t beats_before = fleet.counters().heartbeats;
  const std::int64_t health_before = fleet.counters().health_checks;
  const auto steady_began = Clock::now();
  std::vector<std::pair<JobId, Clock::time_point>> submitted;
  std::int64_t submit_errors = 0;
  const auto period = std::chrono::duration<double>(1.0 / static_cast<double>(std::max<std::int64_t>(o.rate, 1)));
  for (std::int64_t i = 0; o.rate > 0; ++i) {
    const auto due = steady_began + std::chrono::duration_cast<Clock::duration>(period * static_cast<double>(i));
    if (due - steady_began >= std::chrono::seconds(o.steady_s)) break;
    std::this_thread::sleep_until(due);
    const auto at = Clock::now();
    try {
      submitted.emplace_back(daemon.submit(job_spec(o, i)), at);
    } catch (const std::exception& e) {
      if (submit_errors++ == 0) std::fprintf(stderr, "fleet_sim: submit failed: %s\n", e.what());
    }
  }
  std::this_thread::sleep_until(steady_began + std::chrono::seconds(o.steady_s));
  const double steady_s = ms_between(steady_began, Clock::now()) / 1000;
  const double cpu = cpu_seconds(o.daemon_pid) - cpu_before;
  const std::int64_t beats = fleet.counters().heartbeats - beats_before;
  const std::int64_t health_tasks = fleet.counters().health_checks - health_before;
  const std::string metrics_after = daemon.metrics();
  const std::int64_t rss = status_kib(o.daemon_pid, "VmRSS");
  const std::int64_t peak = status_kib(o.daemon_pid, "VmHWM");

  // 3. The jobs of the last second start, then the fleet leaves.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  boost::asio::post(io, [&fleet] { fleet.stop(); });
  work.reset();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the close frames go out
  io.stop();
  io_thread.join();

  std::vector<double> to_running;
  for (const auto& [job, at] : submitted) {
    auto it = fleet.started().find(job);
    if (it != fleet.started().end()) to_running.push_back(ms_between(at, it->second));
  }
  const auto pass = quantile_bound(histogram_buckets(metrics_before, "trainyard_scheduling_pass_duration_seconds"),
                                   histogram_buckets(metrics_after, "trainyard_scheduling_pass_duration_seconds"), 0.99);
  const auto daemon_to_running =
      quantile_bound(histogram_buckets(metrics_before, "trainyard_submit_to_running_seconds"),
                     histogram_buckets(metrics_after, "trainyard_submit_to_running_seconds"), 0.99);
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  const FleetCounters& c = fleet.counters();

  // One closed-loop client: a submission waits for its durable 201, so a slow daemon lowers the rate.
  std::printf("steady phase: %.1f s, %zu jobs submitted, %.1f/s (asked %lld/s; %lld errors), %lld cores each, mix "
              "%lld%% fail, %lld%% hang, %lld ms each\n",
              steady_s, submitted.size(), static_cast<double>(submitted.size()) / steady_s,
              static_cast<long long>(o.rate), static_cast<long long>(submit_errors),
              static_cast<long long>(o.cores), static_cast<long long>(o.fail_pct), static_cast<long long>(o.hang_pct),
              static_cast<long long>(o.job_ms));
  std::printf("daemon CPU: %.1f%% of one core (%.2f s over %.1f s)\n", 100 * cpu / steady_s, cpu, steady_s);
  std::printf("daemon RSS: %.0f MiB (peak %.0f MiB)\n", static_cast<double>(rss) / 1024, static_cast<double>(peak) / 1024);
  std::printf("scheduling pass p99: <= %s (%.0f passes; the histogram's bucket bound)\n", seconds_text(pass.first).c_str(),
              pass.second);
  std::printf("submit-to-running: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%zu of %zu started; the daemon's own "
              "histogram: p99 <= %s)\n",
              percentile(to_running, 0.5), percentile(to_running, 0.99),
              to_running.empty() ? NAN : *std::max_element(to_running.begin(), to_running.end()), to_running.size(),
              submitted.size(), seconds_text(daemon_to_running.first).c_str());
  std::printf("heartbeats: %.0f/s from %lld nodes\n", static_cast<double>(beats) / steady_s,
              static_cast<long long>(fleet.welcomed()));
  const auto periodic = [&](const std::string& exposition) {
    return series_sum(exposition, "trainyard_health_verdicts_total", "kind=\"periodic\"");
  };
  std::printf("health checks over the steady phase: %.0f periodic verdicts, %lld suites answered\n",
              periodic(metrics_after) - periodic(metrics_before), static_cast<long long>(health_tasks));
  std::printf("virtual jobs: %lld launched, %lld succeeded, %lld failed, %lld killed (hung ones, by the stuck "
              "detector), %lld refused; %lld health checks answered\n",
              static_cast<long long>(c.launches.load()), static_cast<long long>(c.exits_succeeded.load()),
              static_cast<long long>(c.exits_failed.load()), static_cast<long long>(c.kills.load()),
              static_cast<long long>(c.refused_launches.load()), static_cast<long long>(c.health_checks.load()));
  std::printf("simulator CPU: %.1f s user, %.1f s system in all\n",
              static_cast<double>(self.ru_utime.tv_sec) + static_cast<double>(self.ru_utime.tv_usec) / 1e6,
              static_cast<double>(self.ru_stime.tv_sec) + static_cast<double>(self.ru_stime.tv_usec) / 1e6);
  return fleet.welcomed() == o.nodes && submit_errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace trainyard::fleet

int main(int argc, char** argv) {
  using namespace trainyard;
  fleet::Options o;
  std::string data_dir;
  FlagParser flags("fleet_sim", "Virtual agents in one process driving one real daemon (bench/fleet/run.sh runs it).");
  flags.add_string("data-dir", "the daemon's data dir (daemon.addr, admin.token, join.token)", &data_dir, true);
  flags.add_int("daemon-pid", "the daemon's process, for its CPU and RSS", &o.daemon_pid, 1, 1 << 30);
  flags.add_int("nodes", "virtual nodes", &o.nodes, 1, 1'000'000);
  flags.add_int("cores", "cores per node (each job takes a whole node)", &o.cores, 1, 4096);
  flags.add_int("per-source", "connections per source address 127.0.0.2, 127.0.0.3, ...", &o.per_source, 1, 28'000);
  flags.add_int("connecting", "connections being opened at once while the fleet joins", &o.connecting, 1, 100'000);
  flags.add_int("rate", "jobs submitted per second in the steady phase (0: none)", &o.rate, 0, 100'000);
  flags.add_int("steady-s", "length of the steady phase", &o.steady_s, 1, 24 * 3600);
  flags.add_int("job-ms", "how long a virtual job runs (or runs before it hangs)", &o.job_ms, 0, 3'600'000);
  flags.add_int("fail-pct", "percent of jobs that fail (exit 1)", &o.fail_pct, 0, 100);
  flags.add_int("hang-pct", "percent of jobs that hang (stop advancing until killed)", &o.hang_pct, 0, 100);
  flags.add_int("stuck-after-s", "the jobs' stuck_after_s", &o.stuck_after_s, 1, 3600);
  flags.add_int("join-timeout-s", "how long the fleet may take to join and pass its checks", &o.join_timeout_s, 1, 3600);
  try {
    if (!flags.parse(argc, argv)) {
      std::fputs(flags.output().c_str(), stdout);
      return 0;
    }
    if (o.fail_pct + o.hang_pct > 100) throw InvalidInput("--hang-pct", "--fail-pct and --hang-pct add up to over 100");
    if (o.daemon_pid == 0) throw InvalidInput("--daemon-pid", "is required");
    return fleet::run(o, data_dir);
  } catch (const InvalidInput& e) {
    std::fprintf(stderr, "fleet_sim: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleet_sim: %s\n", e.what());
    return 1;
  }
}
