// Durable submission throughput of a running daemon: N jobs submitted over C keep-alive
// connections, each connection a closed loop (send one submission, wait for its answer, send the
// next; no pipelining), the way C independent clients would. All connections are driven by one
// thread (one coroutine each), so the load generator costs the 2-core machine little CPU and wakes
// no sleeping threads per response; each connection takes the next job number from a shared
// counter, so fast connections do more.
//
// A 201 counts only if its body is the job that request submitted (its name, state PENDING, an id
// above the ones that existed before). Afterwards the store is asked what it holds:
// `GET /v1/jobs?limit=1` (newest first, read from SQLite by the store worker) must name the newest
// id, and paging through the whole listing must find every submitted job exactly once.
//
//   bench_submit --data-dir DIR [--jobs N] [--connections C] [--daemon-pid PID] [--ca-file FILE]
//   bench_submit --server URL --token-file FILE [...]
// An https:// daemon is spoken to over TLS (verified with --ca-file); each connection's handshake
// happens before the clock starts, as a long-lived client's would.
// With --daemon-pid it also prints the daemon's CPU time during the submissions, a figure that does
// not depend on what else the machine is running.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "cli/http_client.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<tcp::socket>;
using namespace trainyard::cli;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Options {
  std::string server;
  std::string token_file;
  int jobs = 50'000;
  int connections = 64;
  std::optional<int> daemon_pid;
  std::string ca_file;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_submit: %s\nusage: bench_submit (--data-dir DIR | --server URL --token-file FILE) "
               "[--jobs N] [--connections C] [--daemon-pid PID] [--ca-file FILE]\n",
               why.c_str());
  std::exit(2);
}

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "bench_submit: %s\n", why.c_str());
  std::exit(1);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read " + path);
  std::string line;
  std::getline(in, line);
  return line;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) usage("every flag takes a value");
    const std::string flag = argv[i];
    const std::string value = argv[++i];
    if (flag == "--data-dir") {
      o.server = read_first_line(value + "/daemon.addr");
      o.token_file = value + "/admin.token";
    } else if (flag == "--server") {
      o.server = value;
    } else if (flag == "--token-file") {
      o.token_file = value;
    } else if (flag == "--jobs") {
      o.jobs = std::atoi(value.c_str());
    } else if (flag == "--connections") {
      o.connections = std::atoi(value.c_str());
    } else if (flag == "--daemon-pid") {
      o.daemon_pid = std::atoi(value.c_str());
    } else if (flag == "--ca-file") {
      o.ca_file = value;
    } else {
      usage("unknown flag " + flag);
    }
  }
  if (o.server.empty() || o.token_file.empty()) usage("need --data-dir, or --server and --token-file");
  if (o.jobs < 1 || o.connections < 1) usage("--jobs and --connections must be positive");
  return o;
}

// User plus system CPU seconds of a process so far (fields 14 and 15 of /proc/PID/stat).
double process_cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto after_name = stat.rfind(')');
  if (after_name == std::string::npos) fail("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(after_name + 2));  // starts at field 3
  std::string skip;
  for (int field = 3; field < 14; ++field) fields >> skip;
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Seconds the threads of a process have run on a CPU and waited, runnable, for one (the first two
// fields of each /proc/PID/task/TID/schedstat, in ns). The wait is what a busy machine adds.
struct SchedTimes {
  double ran = 0;
  double waited = 0;
};

SchedTimes process_sched_times(int pid) {
  SchedTimes t;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream in(task.path() / "schedstat");
    double ran_ns = 0, waited_ns = 0;
    if (in >> ran_ns >> waited_ns) {
      t.ran += ran_ns / 1e9;
      t.waited += waited_ns / 1e9;
    }
  }
  return t;
}

double own_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Returns why `response` is not the 201 of the job named `name`, or nothing (and sets `id`).
std::optional<std::string> check_accepted(const http::response<http::string_body>& response, const std::string& name,
                                          std::int64_t& id) {
  if (response.result_int() != 201) return "status " + std::to_string(response.result_int()) + ": " + response.body();
  const Json body = Json::parse(response.body(), nullptr, false);
  if (!body.is_object() || !body.contains("id") || !body["id"].is_number_integer() || body["id"] < 1) {
    return "201 without a job id: " + response.body();
  }
  if (body.value("name", "") != name || body.value("state", "") != "PENDING") {
    return "201 for another job or state: " + response.body();
  }
  id = body["id"].get<std::int64_t>();
  return std::nullopt;
}

// One job's outcome as the benchmark saw it.
struct Submission {
  std::int64_t id = 0;  // 0 unless a verified 201
  double latency_ms = 0;
};

class Bench {
 public:
  explicit Bench(Options options)
      : options_(std::move(options)),
        url_(with_trust(parse_server_url(options_.server), options_.ca_file)),
        token_(read_first_line(options_.token_file)),
        submissions_(static_cast<std::size_t>(options_.jobs)) {}

  int run() {
    auto client = make_http_client(url_);
    const std::int64_t baseline = newest_stored_id(*client);
    std::printf("bench_submit: %d jobs over %d keep-alive connections to %s (newest job before: %lld)\n", options_.jobs,
                options_.connections, url_.text.c_str(), static_cast<long long>(baseline));

    asio::io_context io;
    const auto endpoints = tcp::resolver(io).resolve(url_.host, url_.port);
    // Connected (and over TLS, shaken hands) before the clock starts.
    std::vector<std::unique_ptr<tcp::socket>> plain;
    std::vector<std::unique_ptr<TlsStream>> tls;
    const trainyard::net::TlsContext context = url_.tls ? trainyard::net::make_client_tls_context(url_.trust) : nullptr;
    for (int c = 0; c < options_.connections; ++c) {
      if (context) {
        tls.push_back(std::make_unique<TlsStream>(io, *context));
        asio::co_spawn(io, open(*tls.back(), endpoints), asio::detached);
      } else {
        plain.push_back(std::make_unique<tcp::socket>(io));
        asio::co_spawn(io, open(*plain.back(), endpoints), asio::detached);
      }
    }
    io.run();
    io.restart();
    if (failures_) fail("could not open the connections");
    const double daemon_cpu_before = options_.daemon_pid ? process_cpu_seconds(*options_.daemon_pid) : 0;
    const SchedTimes daemon_sched_before = options_.daemon_pid ? process_sched_times(*options_.daemon_pid) : SchedTimes{};
    const double own_cpu_before = own_cpu_seconds();
    const auto start = Clock::now();
    const auto failed = [this](std::exception_ptr error) {
      if (error) note_failure(-1, "a connection failed unexpectedly");
    };
    for (auto& stream : plain) asio::co_spawn(io, submit_over(*stream), failed);
    for (auto& stream : tls) asio::co_spawn(io, submit_over(*stream), failed);
    io.run();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

    const bool accepted_all = report_submissions(seconds, baseline);
    report_cpu("bench_submit", own_cpu_seconds() - own_cpu_before);
    if (options_.daemon_pid) {
      report_cpu("daemon", process_cpu_seconds(*options_.daemon_pid) - daemon_cpu_before);
      const SchedTimes after = process_sched_times(*options_.daemon_pid);
      std::printf("daemon threads: ran %.2f s, waited %.2f s runnable for a CPU (other load on the machine)\n",
                  after.ran - daemon_sched_before.ran, after.waited - daemon_sched_before.waited);
    }
    const bool stored_all = verify_stored(*client, baseline);
    return accepted_all && stored_all ? 0 : 1;
  }

 private:
  static std::string job_name(int n) { return "bench-" + std::to_string(n); }

  // The request as it goes on the wire, written whole in one write.
  std::string submission(int n) const {
    const std::string body =
        R"({"name":")" + job_name(n) + R"(","wait_for_capacity":true,"command":{"argv":["/bin/true"]}})";
    return "POST /v1/jobs HTTP/1.1\r\nHost: " + url_.host + ":" + url_.port + "\r\nAuthorization: Bearer " + token_ +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  static ServerUrl with_trust(ServerUrl url, const std::string& ca_file) {
    url.trust.ca_file = ca_file;
    return url;
  }

  template <class Stream>
  asio::awaitable<void> open(Stream& stream, const tcp::resolver::results_type& endpoints) {
    auto& socket = beast::get_lowest_layer(stream);
    try {
      co_await asio::async_connect(socket, endpoints, asio::use_awaitable);
      socket.set_option(tcp::no_delay(true));
      if constexpr (std::is_same_v<Stream, TlsStream>) {
        trainyard::net::expect_server_name(stream.native_handle(), url_.host);
        co_await stream.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
      }
    } catch (const std::exception& e) {
      note_failure(-1, std::string("cannot connect: ") + e.what());
    }
  }

  template <class Stream>
  asio::awaitable<void> submit_over(Stream& socket) {
    beast::flat_buffer buffer;
    for (int n = next_++; n < options_.jobs; n = next_++) {
      const std::string request = submission(n);
      http::response_parser<http::string_body> parser;
      Submission& s = submissions_[static_cast<std::size_t>(n)];
      const auto sent = Clock::now();
      try {
        co_await asio::async_write(socket, asio::buffer(request), asio::use_awaitable);
        co_await http::async_read(socket, buffer, parser, asio::use_awaitable);
      } catch (const std::exception& e) {
        note_failure(n, std::string("connection lost: ") + e.what());
        co_return;  // the other connections take the remaining jobs
      }
      s.latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      const auto& response = parser.get();
      if (auto why = check_accepted(response, job_name(n), s.id)) note_failure(n, *why);
      if (!response.keep_alive()) {
        note_failure(n, "the daemon closed the keep-alive connection");
        co_return;
      }
    }
  }

  void note_failure(int n, const std::string& why) {
    if (++failures_ <= 5) std::fprintf(stderr, "job %d: %s\n", n, why.c_str());
  }

  bool report_submissions(double seconds, std::int64_t baseline) {
    std::vector<double> latencies;
    std::vector<std::int64_t> ids;
    for (const auto& s : submissions_) {
      if (s.id == 0) continue;
      latencies.push_back(s.latency_ms);
      ids.push_back(s.id);
    }
    std::printf("accepted: %zu/%d (201, verified) in %.3f s = %.0f jobs/s\n", ids.size(), options_.jobs, seconds,
                static_cast<double>(ids.size()) / seconds);
    accepted_ = ids.size();
    if (ids.empty()) return false;
    std::sort(latencies.begin(), latencies.end());
    std::sort(ids.begin(), ids.end());
    const auto at = [&](double q) {
      return latencies[std::min(latencies.size() - 1, static_cast<std::size_t>(q * latencies.size()))];
    };
    std::printf("latency: p50=%.2f ms  p99=%.2f ms  max=%.2f ms\n", at(0.50), at(0.99), latencies.back());
    const bool distinct = std::adjacent_find(ids.begin(), ids.end()) == ids.end();
    const bool fresh = ids.front() > baseline;
    if (!distinct || !fresh) std::printf("FAIL: the 201s carry %s ids\n", distinct ? "stale" : "duplicate");
    newest_accepted_ = ids.back();
    return failures_ == 0 && distinct && fresh;
  }

  void report_cpu(const char* who, double cpu_seconds) const {
    std::printf("%s cpu: %.2f s (user+system) = %.1f us per accepted job\n", who, cpu_seconds,
                accepted_ ? 1e6 * cpu_seconds / static_cast<double>(accepted_) : 0.0);
  }

  // Pages through the stored listing (newest first) down to the baseline.
  bool verify_stored(HttpClient& client, std::int64_t baseline) {
    const std::int64_t newest = newest_stored_id(client);
    const std::int64_t expected_newest = baseline + options_.jobs;
    std::size_t found = 0;
    std::vector<bool> seen(static_cast<std::size_t>(options_.jobs), false);
    std::string cursor;
    for (;;) {
      const Json page = get_json(client, "/v1/jobs?limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor));
      bool below_baseline = false;
      for (const auto& job : page["jobs"]) {
        if (job["id"].get<std::int64_t>() <= baseline) {
          below_baseline = true;
          break;
        }
        const std::string name = job["name"].get<std::string>();
        const int n = name.rfind("bench-", 0) == 0 ? std::atoi(name.c_str() + 6) : -1;
        if (n >= 0 && n < options_.jobs && !seen[static_cast<std::size_t>(n)]) {
          seen[static_cast<std::size_t>(n)] = true;
          ++found;
        }
      }
      if (below_baseline || page["next"].is_null()) break;
      cursor = page["next"].get<std::string>();
    }
    std::printf("stored: newest id %lld (expected %lld); listing holds %zu/%d submitted jobs\n",
                static_cast<long long>(newest), static_cast<long long>(expected_newest), found, options_.jobs);
    const bool ok = newest == expected_newest && newest_accepted_ == expected_newest &&
                    found == static_cast<std::size_t>(options_.jobs) && accepted_ == found;
    if (!ok) std::printf("FAIL: the store does not hold exactly the accepted jobs\n");
    return ok;
  }

  std::int64_t newest_stored_id(HttpClient& client) const {
    const Json page = get_json(client, "/v1/jobs?limit=1");
    return page["jobs"].empty() ? 0 : page["jobs"][0]["id"].get<std::int64_t>();
  }

  Json get_json(HttpClient& client, const std::string& target) const {
    const HttpResult result = client.send(HttpRequest{.method = "GET", .target = target, .headers = {{"authorization", "Bearer " + token_}}});
    if (!result) fail(result.error().message);
    const HttpResponse& response = *result;
    if (response.status != 200) fail("GET " + target + " answered " + response.body);
    return Json::parse(response.body);
  }

  const Options options_;
  const ServerUrl url_;
  const std::string token_;
  std::vector<Submission> submissions_;  // indexed by job number
  int next_ = 0;                         // the next job number to submit
  int failures_ = 0;
  std::int64_t newest_accepted_ = 0;
  std::size_t accepted_ = 0;
};

}  // namespace

int main(int argc, char** argv) { return Bench(parse_options(argc, argv)).run(); }
