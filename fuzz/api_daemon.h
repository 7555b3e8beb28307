#pragma once
// What the API fuzzers share: one daemon behind the route table (job manager over an in-memory
// store seen through a FailingStore, no agents, time standing still unless a target moves it), the
// request an input spells, and the checks every answer must pass. An input is "METHOD TARGET\n",
// header lines "name: value\n", an empty line and the body; the target picks the caller's token
// from a byte of its own.
#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/api/api.h"
#include "daemon/job_manager.h"
#include "scheduler/scheduler.h"
#include "tests/support/failing_store.h"
#include "tests/support/fake_timers.h"
#include "tests/support/in_memory_store.h"
#include "tests/support/io_queue.h"

namespace trainyard::fuzzing {

using namespace trainyard::daemon;

// Runs the completions the workers post until `done()` holds; returns how many ran. Aborts when none
// comes for a minute: a completion was lost.
inline int run_until(IoQueue& io, const std::function<bool()>& done) {
  int ran = 0;
  while (!done()) {
    if (!io.wait_until(std::chrono::steady_clock::now() + std::chrono::minutes(1))) std::abort();
    ran += io.run_ready();
  }
  return ran;
}

inline constexpr const char* kSecrets[] = {"", "admin-secret", "alice-secret", "bob-secret", "viewer-secret",
                                           "operator-secret", "join-secret", "ty_bad"};

struct Daemon {
  Daemon()
      : worker(store, io.poster()),
        files(io.poster()),
        jobs(worker, files, clock, timers, config(), scheduler),
        api(jobs, worker, files, tokens, clock, timers, "fuzz", "", limits(), join_token_file()) {
    tokens.add(new_token_record("admin-secret", "root", store::Role::admin, {}));
    tokens.add(new_token_record("alice-secret", "alice", store::Role::user, {}));
    tokens.add(new_token_record("bob-secret", "bob", store::Role::user, {}));
    tokens.add(new_token_record("viewer-secret", "vic", store::Role::viewer, {}));
    tokens.add(new_token_record("operator-secret", "olga", store::Role::operator_, {}));
    tokens.add(new_token_record("join-secret", "agent", store::Role::agent, {}));
    api.set_metrics_exposition([] { return std::string("trainyard_up 1\n"); }, false);
    spdlog::set_level(spdlog::level::off);  // a log line per request (or per failed commit) would be most of the time spent
  }

  static JobManagerConfig config() {
    JobManagerConfig c;
    c.daemon_version = "fuzz";
    c.checkpoint_root = (std::filesystem::temp_directory_path() / "trainyard-fuzz-api").string();
    c.registration_checks = false;
    c.preflight_checks = false;
    return c;
  }
  // Where a rotated join token is written: not the working directory, which is the repository's.
  static std::filesystem::path join_token_file() {
    return std::filesystem::temp_directory_path() / "trainyard-fuzz-api-join.token";
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
      if (run_until(io, [&barriers] { return barriers == 2; }) == 2) return;
    }
  }

  ManualTimeSource clock{from_unix_ms(1'800'000'000'000)};
  InMemoryStore memory;
  FailingStore store{memory};  // fails nothing unless a target says so
  IoQueue io;
  FakeTimers timers{clock};  // no timer fires while time stands still (no request waits on one without agents)
  scheduler::Scheduler scheduler{scheduler::Config{}};
  TokenRegistry tokens;
  StoreWorker worker;
  FileWorker files;
  JobManager jobs;
  Api api;
};

// The request `in` spells, as the caller with `secret`; false when its target is one the server
// refuses before the API.
inline bool parse_request(std::string_view in, const char* secret, net::HttpRequest& request) {
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
  if (*secret && !request.headers.contains("authorization")) request.headers["authorization"] = std::string("Bearer ") + secret;
  return net::parse_target(request).ok();
}

// What a request was answered, however late and however often.
struct Answers {
  int count = 0;
  net::HttpResponse last;
};

// Handles the request and runs what it queued; aborts unless it was answered exactly once. The
// answers go on being counted after.
inline std::shared_ptr<const Answers> answer_once(Daemon& daemon, net::HttpRequest request) {
  auto answers = std::make_shared<Answers>();
  daemon.api.handle(std::move(request), [answers](net::HttpResponse response) {
    ++answers->count;
    answers->last = std::move(response);
  });
  daemon.settle();
  if (answers->count != 1) std::abort();
  return answers;
}

// Aborts when a JSON answer does not parse, or an error's body is not the API's
// {"error":{"code","message"}}; /healthz's 503 while the store fails is its report, not an error.
inline void check_shape(const net::HttpResponse& answer) {
  if (answer.content_type != "application/json") return;
  const Json body = Json::parse(answer.body, nullptr, false);
  if (body.is_discarded()) std::abort();
  const bool error = body.contains("error") && body["error"].contains("code") && body["error"]["code"].is_string() &&
                     body["error"].contains("message");
  const bool degraded = answer.status == 503 && body.is_object() && body.value("status", "") == "degraded";
  if (answer.status >= 400 && !error && !degraded) std::abort();
}

}  // namespace trainyard::fuzzing
