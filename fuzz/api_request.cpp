// The API behind the route table (Api::handle) with fuzzed requests: the input's first byte picks
// the caller's token, then "METHOD TARGET\n", header lines "name: value\n", an empty line and the
// body. One daemon (job manager over an in-memory store, no agents, time standing still) serves
// every input, so state built by one request (jobs, shares, tokens) is there for the next.
// Every request must be answered exactly once, with a status from 100 to 499 (the store never
// fails here), and every JSON answer must parse; an error's body must be the API's
// {"error":{"code","message"}}.
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "daemon/api/api.h"
#include "daemon/job_manager.h"
#include "scheduler/scheduler.h"
#include "tests/support/fake_timers.h"
#include "tests/support/in_memory_store.h"

using namespace trainyard;
using namespace trainyard::daemon;

namespace {

// Completions the store and file workers post, run on the fuzzing thread.
class IoQueue {
 public:
  StoreWorker::PostToIo poster() {
    return [this](StoreWorker::Continuation fn) {
      {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(fn));
      }
      ready_.notify_all();
    };
  }
  // Waits for one completion at least, then runs every queued one; returns how many ran.
  int run_some() {
    std::deque<StoreWorker::Continuation> ready;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return !queue_.empty(); });
      ready.swap(queue_);
    }
    for (auto& fn : ready) fn();
    return static_cast<int>(ready.size());
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<StoreWorker::Continuation> queue_;
};

constexpr const char* kSecrets[] = {"", "admin-secret", "alice-secret", "bob-secret", "viewer-secret",
                                    "operator-secret", "join-secret", "ty_bad"};

struct Daemon {
  Daemon()
      : worker(store, io.poster()),
        files(io.poster()),
        jobs(worker, files, clock, timers, config(), scheduler),
        api(jobs, worker, files, tokens, clock, timers, "fuzz", "", limits()) {
    tokens.add(new_token_record("admin-secret", "root", store::Role::admin, {}));
    tokens.add(new_token_record("alice-secret", "alice", store::Role::user, {}));
    tokens.add(new_token_record("bob-secret", "bob", store::Role::user, {}));
    tokens.add(new_token_record("viewer-secret", "vic", store::Role::viewer, {}));
    tokens.add(new_token_record("operator-secret", "olga", store::Role::operator_, {}));
    tokens.add(new_token_record("join-secret", "agent", store::Role::agent, {}));
    api.set_metrics_exposition([] { return std::string("trainyard_up 1\n"); }, false);
    spdlog::set_level(spdlog::level::err);  // a log line per request would be most of the time spent
  }

  static JobManagerConfig config() {
    JobManagerConfig c;
    c.daemon_version = "fuzz";
    c.checkpoint_root = (std::filesystem::temp_directory_path() / "trainyard-fuzz-api").string();
    c.registration_checks = false;
    c.preflight_checks = false;
    return c;
  }
  static UserLimits limits() {
    UserLimits l;
    l.rate.per_second = 0;  // the clock stands still: a bucket would never refill
    return l;
  }

  // Runs completions until the workers are idle: a barrier behind each worker's queue, repeated
  // until a round ran nothing but the barriers.
  void settle() {
    for (;;) {
      int barriers = 0;
      worker.read([&barriers](store::Store&) { return StoreWorker::Continuation([&barriers] { ++barriers; }); },
                  [](const Error&) { std::abort(); });
      files.run([&barriers] { return FileWorker::Continuation([&barriers] { ++barriers; }); },
                [](const Error&) { std::abort(); });
      int ran = 0;
      while (barriers < 2) ran += io.run_some();
      if (ran == 2) return;
    }
  }

  ManualTimeSource clock{from_unix_ms(1'800'000'000'000)};
  InMemoryStore store;
  IoQueue io;
  FakeTimers timers{clock};  // time stands still: no timer fires (no request waits on one without agents)
  scheduler::Scheduler scheduler{scheduler::Config{}};
  TokenRegistry tokens;
  StoreWorker worker;
  FileWorker files;
  JobManager jobs;
  Api api;
};

// Splits the input into a request; false when the target is one the server refuses before the API.
bool parse_request(std::string_view in, net::HttpRequest& request) {
  auto line = [&in] {
    const auto end = in.find('\n');
    std::string_view l = in.substr(0, end);
    in.remove_prefix(end == std::string_view::npos ? in.size() : end + 1);
    return l;
  };
  const std::string_view first = line();
  const auto space = first.find(' ');
  if (space == std::string_view::npos) return false;
  request.method = first.substr(0, space);
  request.target = first.substr(space + 1);
  while (!in.empty()) {
    const std::string_view header = line();
    if (header.empty()) break;
    const auto colon = header.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(header.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = header.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    request.headers[name] = value;
  }
  request.body = in;
  request.remote = "192.0.2.1";
  return net::parse_target(request).ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Daemon* daemon = new Daemon();  // lives for the whole run: its workers' threads too
  if (size == 0) return 0;
  net::HttpRequest request;
  if (!parse_request(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), request)) return 0;
  const char* secret = kSecrets[data[0] % std::size(kSecrets)];
  if (*secret && !request.headers.contains("authorization")) request.headers["authorization"] = std::string("Bearer ") + secret;

  int answers = 0;
  net::HttpResponse answer;
  daemon->api.handle(request, [&answers, &answer](net::HttpResponse response) {
    ++answers;
    answer = std::move(response);
  });
  daemon->settle();
  if (answers != 1) std::abort();
  // The in-memory store never fails, so no input may cause a 5xx.
  if (answer.status < 100 || answer.status > 499) std::abort();
  if (answer.content_type == "application/json") {
    const Json body = Json::parse(answer.body, nullptr, false);
    if (body.is_discarded()) std::abort();
    if (answer.status >= 400 && !(body.contains("error") && body["error"].contains("code") &&
                                  body["error"]["code"].is_string() && body["error"].contains("message"))) {
      std::abort();
    }
  }
  return 0;
}
