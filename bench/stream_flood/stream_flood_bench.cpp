// One user opening catch-up streams (GET /v1/events/stream?after=0) at a steady rate while an
// admin lists jobs (GET /v1/jobs?limit=100) on one keep-alive connection every 50 ms: prints the
// listing's latency percentiles, and what the streams got. Each stream is read for one second,
// as a client resuming after an outage would start, then closed.
//
//   stream_flood_bench --data-dir DIR [--streams-per-s 20] [--seconds 20]
// --streams-per-s 0 measures the listing alone. The user's token is made through the API.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/http_client.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

struct Options {
  std::string data_dir;
  double streams_per_s = 20;
  int seconds = 20;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "stream_flood_bench: " << why << "\nusage: stream_flood_bench --data-dir DIR [--streams-per-s N] [--seconds S]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--data-dir")
      o.data_dir = value;
    else if (flag == "--streams-per-s")
      o.streams_per_s = std::stod(value);
    else if (flag == "--seconds")
      o.seconds = std::stoi(value);
    else
      usage("unknown flag " + flag);
  }
  if (o.data_dir.empty() || o.streams_per_s < 0 || o.seconds < 1) usage("--data-dir is required; rates and times positive");
  return o;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const auto k = std::min(v.size() - 1, static_cast<std::size_t>(p / 100 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Opens one catch-up stream, reads it for `read_for`, closes it; returns the bytes it got.
std::size_t one_stream(const sockaddr_in& addr, const std::string& request, std::chrono::milliseconds read_for) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::size_t got = 0;
  if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    const auto until = SteadyClock::now() + read_for;
    char chunk[65536];
    while (SteadyClock::now() < until) {
      pollfd p{fd, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - SteadyClock::now());
      if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(1, left.count()))) <= 0) continue;
      const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
  }
  if (fd >= 0) ::close(fd);
  return got;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::string url = read_file(o.data_dir + "/daemon.addr");
  const std::string admin = read_file(o.data_dir + "/admin.token");
  const std::string address = url.substr(url.find("://") + 3);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
  ::inet_pton(AF_INET, address.substr(0, address.rfind(':')).c_str(), &addr.sin_addr);

  auto client = trainyard::cli::make_http_client(trainyard::cli::parse_server_url(url));
  const auto authorized = [&](std::string method, std::string target, std::string body = "") {
    trainyard::cli::HttpRequest request{.method = std::move(method), .target = std::move(target)};
    request.headers = {{"authorization", "Bearer " + admin}, {"content-type", "application/json"}};
    request.body = std::move(body);
    return client->send(request);
  };
  const auto made = authorized("POST", "/v1/tokens", R"({"user":"flooder"})");
  if (!made || made->status != 201) usage("could not make the flooding user's token");
  const std::string user_token = nlohmann::json::parse(made->body).at("token").get<std::string>();
  const std::string request = "GET /v1/events/stream?after=0 HTTP/1.1\r\nHost: daemon\r\nAuthorization: Bearer " +
                              user_token + "\r\nAccept: text/event-stream\r\n\r\n";

  std::atomic<bool> stop{false};
  std::atomic<long> streams_opened{0};
  std::atomic<std::size_t> stream_bytes{0};
  std::vector<std::thread> readers;
  std::mutex readers_mutex;
  std::thread opener([&] {
    if (o.streams_per_s <= 0) return;
    const auto start = SteadyClock::now();
    for (long i = 0; !stop; ++i) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<SteadyClock::duration>(
                                                std::chrono::duration<double>(static_cast<double>(i) / o.streams_per_s)));
      if (stop) break;
      ++streams_opened;
      std::lock_guard lock(readers_mutex);
      readers.emplace_back([&] { stream_bytes += one_stream(addr, request, std::chrono::milliseconds(1000)); });
    }
  });

  std::vector<double> latencies_ms;
  long failures = 0;
  const auto end = SteadyClock::now() + std::chrono::seconds(o.seconds);
  while (SteadyClock::now() < end) {
    const auto t0 = SteadyClock::now();
    const auto listed = authorized("GET", "/v1/jobs?limit=100");
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
    if (!listed || listed->status != 200) ++failures;
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(50));
  }
  stop = true;
  opener.join();
  for (auto& reader : readers) reader.join();
  std::printf("catch-up streams: %ld opened at %.0f/s by one user, %.1f MB read\n", streams_opened.load(), o.streams_per_s,
              static_cast<double>(stream_bytes.load()) / 1e6);
  std::printf("GET /v1/jobs?limit=100 (admin) x %zu, %ld failed: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", latencies_ms.size(),
              failures, percentile(latencies_ms, 50), percentile(latencies_ms, 99),
              latencies_ms.empty() ? 0.0 : *std::max_element(latencies_ms.begin(), latencies_ms.end()));
  return failures == 0 ? 0 : 1;
}
