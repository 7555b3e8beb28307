// Many Server-Sent Events clients on one thread (non-blocking sockets, epoll): each reads
// GET /v1/events/stream?type=job.submitted and, for every event, notes the delay from the
// event's time to its arrival (same machine, same clock; the event time has millisecond
// resolution). Prints "subscribed" once every client has had a keep-alive comment (the daemon
// sends them only to subscribed streams: from then on no event is missed), then reads until every
// client has `expect` events (or the deadline), and prints the events each client got and the
// latency percentiles over every (client, event).
//
//   events_stream_bench --data-dir DIR [--clients 1000] [--expect N] [--timeout-s 300]
//   events_stream_bench --data-dir DIR [--clients 1000] --submit N --rate R
// With --submit it submits N jobs itself at R a second (one keep-alive connection), once subscribed.
// Run the daemon with a short --sse-keepalive-ms (run.sh uses 1000) so subscription shows quickly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/http_client.h"
#include "proto/time.h"

namespace {

using Clock = std::chrono::system_clock;

struct Options {
  std::string data_dir;
  int clients = 1000;
  long expect = 0;
  long submit = 0;
  double rate = 100;
  int timeout_s = 300;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr
      << "events_stream_bench: " << why
      << "\nusage: events_stream_bench --data-dir DIR [--clients N] [--expect N | --submit N --rate R] [--timeout-s S]\n";
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
    else if (flag == "--clients")
      o.clients = std::stoi(value);
    else if (flag == "--expect")
      o.expect = std::stol(value);
    else if (flag == "--submit")
      o.submit = std::stol(value);
    else if (flag == "--rate")
      o.rate = std::stod(value);
    else if (flag == "--timeout-s")
      o.timeout_s = std::stoi(value);
    else
      usage("unknown flag " + flag);
  }
  if (o.data_dir.empty() || o.clients < 1 || o.rate <= 0) usage("--data-dir is required; counts and rates positive");
  if (o.submit > 0) o.expect = o.submit;
  return o;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

struct Client {
  int fd = -1;
  std::string buffer;  // unparsed text
  bool subscribed = false;
  long events = 0;
};

class Streams {
 public:
  Streams(const std::string& host, int port, const std::string& token, int count) : epoll_(::epoll_create1(0)) {
    const std::string request = "GET /v1/events/stream?type=job.submitted HTTP/1.1\r\nHost: " + host +
                                "\r\nAuthorization: Bearer " + token + "\r\nAccept: text/event-stream\r\n\r\n";
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
    clients_.resize(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      Client& c = clients_[i];
      c.fd = ::socket(AF_INET, SOCK_STREAM, 0);
      if (c.fd < 0 || ::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        std::perror("events_stream_bench: connect");
        std::exit(1);
      }
      if (::send(c.fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
        std::perror("events_stream_bench: send");
        std::exit(1);
      }
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = i;
      ::epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &ev);
    }
  }
  ~Streams() {
    for (Client& c : clients_) ::close(c.fd);
    ::close(epoll_);
  }

  // Reads what has come, for up to `wait`; false once a stream ended.
  bool poll(std::chrono::milliseconds wait) {
    epoll_event ready[256];
    const int n = ::epoll_wait(epoll_, ready, 256, static_cast<int>(wait.count()));
    char chunk[65536];
    for (int k = 0; k < n; ++k) {
      Client& c = clients_[ready[k].data.u64];
      const ssize_t got = ::recv(c.fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (got <= 0) {
        ended_ = true;
        continue;
      }
      const auto now = Clock::now();
      c.buffer.append(chunk, static_cast<std::size_t>(got));
      take_lines(c, now);
    }
    return !ended_;
  }

  bool all_subscribed() const {
    return std::all_of(clients_.begin(), clients_.end(), [](const Client& c) { return c.subscribed; });
  }
  long fewest_events() const {
    long least = LONG_MAX;
    for (const Client& c : clients_) least = std::min(least, c.events);
    return least;
  }
  long most_events() const {
    long most = 0;
    for (const Client& c : clients_) most = std::max(most, c.events);
    return most;
  }
  std::vector<double>& latencies_ms() { return latencies_ms_; }

 private:
  void take_lines(Client& c, Clock::time_point now) {
    std::size_t start = 0;
    for (std::size_t end; (end = c.buffer.find('\n', start)) != std::string::npos; start = end + 1) {
      const std::string_view line(c.buffer.data() + start, end - start);
      if (line.starts_with(": keep-alive")) c.subscribed = true;
      if (!line.starts_with("data: ")) continue;
      ++c.events;
      constexpr std::string_view key = "\"time\":\"";
      if (const auto at = line.find(key); at != std::string_view::npos) {
        const auto time = trainyard::parse_time(line.substr(at + key.size(), 24));
        if (time) latencies_ms_.push_back(std::chrono::duration<double, std::milli>(now - *time).count());
      }
    }
    c.buffer.erase(0, start);
  }

  int epoll_;
  std::vector<Client> clients_;
  std::vector<double> latencies_ms_;
  bool ended_ = false;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const auto k = std::min(v.size() - 1, static_cast<std::size_t>(p / 100 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Submits `count` jobs at `rate` a second on one keep-alive connection; returns how many got 201.
long submit_paced(const std::string& url, const std::string& token, long count, double rate) {
  auto client = trainyard::cli::make_http_client(trainyard::cli::parse_server_url(url));
  const auto start = std::chrono::steady_clock::now();
  long accepted = 0;
  for (long i = 0; i < count; ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(static_cast<double>(i) / rate)));
    const nlohmann::json spec = {{"name", "stream-" + std::to_string(i)},
                                 {"nodes", 1},
                                 {"wait_for_capacity", true},
                                 {"command", {{"argv", {"/bin/true"}}}}};
    trainyard::cli::HttpRequest request{.method = "POST", .target = "/v1/jobs"};
    request.headers = {{"authorization", "Bearer " + token}, {"content-type", "application/json"}};
    request.body = spec.dump();
    const auto result = client->send(request);
    if (result && result->status == 201) ++accepted;
  }
  return accepted;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  const std::string url = read_file(o.data_dir + "/daemon.addr");
  const std::string token = read_file(o.data_dir + "/admin.token");
  const std::string address = url.substr(url.find("://") + 3);
  const std::string host = address.substr(0, address.rfind(':'));
  const int port = std::stoi(address.substr(address.rfind(':') + 1));

  Streams streams(host, port, token, o.clients);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  while (!streams.all_subscribed()) {
    if (!streams.poll(std::chrono::milliseconds(100)) || std::chrono::steady_clock::now() > deadline) {
      std::cerr << "events_stream_bench: not every stream subscribed\n";
      return 1;
    }
  }
  std::cout << "subscribed " << o.clients << " clients" << std::endl;
  std::thread submitter;
  long accepted = 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (o.submit > 0) submitter = std::thread([&] { accepted = submit_paced(url, token, o.submit, o.rate); });
  while (streams.fewest_events() < o.expect && std::chrono::steady_clock::now() < deadline) {
    if (!streams.poll(std::chrono::milliseconds(100))) {
      std::cerr << "events_stream_bench: a stream ended early\n";
      break;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (submitter.joinable()) submitter.join();
  auto& l = streams.latencies_ms();
  const double p50 = percentile(l, 50), p99 = percentile(l, 99),
               max = l.empty() ? 0 : *std::max_element(l.begin(), l.end());
  std::printf("clients %d, events expected per client %ld (submitted %ld), got: fewest %ld, most %ld, in %.1f s\n",
              o.clients, o.expect, o.submit > 0 ? accepted : o.expect, streams.fewest_events(), streams.most_events(),
              seconds);
  std::printf("event-to-client latency over %zu deliveries: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", l.size(), p50,
              p99, max);
  // What reading the streams cost this process: on a machine the daemon shares, it is CPU the
  // daemon's submissions do not get.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::printf("stream clients' cpu: %.2f s (user+system) = %.2f us per delivery\n", cpu_s,
              l.empty() ? 0.0 : cpu_s * 1e6 / static_cast<double>(l.size()));
  return streams.fewest_events() >= o.expect ? 0 : 1;
}
