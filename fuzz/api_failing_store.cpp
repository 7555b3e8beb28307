// The API fuzzer's daemon (fuzz/api_daemon.h) over a store that fails a subset of commits the
// input chooses (issue 53): the first byte picks the caller's token, the second which of the next
// eight commits fail (bit k: the k-th), the rest spells the request. Every request must be answered
// exactly once, also after the store writes again, and its answer must agree with what the store
// holds then. An API change carries its audit record in its own transaction, so the audit records
// tell whose change a failed commit held and what was stored:
// - never 2xx for a change not stored: when a failed commit held the request's audit record, a 2xx
//   answer needs one of its records stored (a record the daemon retried, or the tasks of an array
//   whose changes were stored, which the answer counts);
// - a 503 changed nothing: no audit record of it is stored;
// - no other 5xx, and every JSON answer has the API's shape.
// After each request the store writes again and the daemon's own changes that wait are stored
// (time moves on so the tick retries them), so the next input meets a daemon that takes changes.
#include <algorithm>
#include <optional>
#include <vector>

#include "daemon/base/audit.h"
#include "fuzz/api_daemon.h"

using namespace trainyard;
using namespace trainyard::fuzzing;

namespace {

// The newest event's seq, read through the worker as the daemon reads.
std::int64_t last_event_seq(Daemon& daemon) {
  std::optional<std::int64_t> seq;
  daemon.worker.read([&seq](store::Store& s) { return StoreWorker::Continuation([&seq, last = s.last_event_seq()] { seq = last; }); },
                     [](const Error&) { std::abort(); });
  run_until(daemon.io, [&seq] { return seq.has_value(); });
  return *seq;
}

std::size_t audit_records_in(const std::vector<store::Event>& events) {
  return static_cast<std::size_t>(
      std::count_if(events.begin(), events.end(), [](const store::Event& e) { return e.kind.starts_with(kAuditKindPrefix); }));
}

// The audit records stored after `seq`.
std::size_t audit_records_after(Daemon& daemon, std::int64_t seq) {
  std::optional<std::size_t> count;
  daemon.worker.read(
      [&count, seq](store::Store& s) {
        return StoreWorker::Continuation([&count, n = audit_records_in(s.events_after(seq, 1'000'000))] { count = n; });
      },
      [](const Error&) { std::abort(); });
  run_until(daemon.io, [&count] { return count.has_value(); });
  return *count;
}

// Lets the store write again and ticks, moving time past the retries' longest backoff, until the
// daemon's own changes that wait are stored.
void store_what_waits(Daemon& daemon) {
  daemon.store.fail_commits(false);
  for (int i = 0; i < 20 && daemon.jobs.changes_wait_for_store(); ++i) {
    daemon.clock.advance(PendingWrites::kRetries.cap);
    daemon.jobs.tick();
    daemon.settle();
  }
  if (daemon.jobs.changes_wait_for_store()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Daemon* daemon = new Daemon();  // lives for the whole run: its workers' threads too
  if (size < 2) return 0;
  net::HttpRequest request;
  const char* secret = kSecrets[data[0] % std::size(kSecrets)];
  if (!parse_request(std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2), secret, request)) return 0;

  const std::int64_t seq = last_event_seq(*daemon);
  daemon->store.fail_next_commits(data[1]);
  const auto answers = answer_once(*daemon, std::move(request));
  store_what_waits(*daemon);
  if (answers->count != 1) std::abort();  // answered again once the store wrote

  const net::HttpResponse& answer = answers->last;
  const bool refused_a_change = audit_records_in(daemon->store.take_failed_events()) > 0;
  const std::size_t stored = audit_records_after(*daemon, seq);
  if (answer.status / 100 == 2 && refused_a_change && stored == 0) std::abort();
  if (answer.status == 503 && stored > 0) std::abort();
  if (answer.status < 100 || (answer.status >= 500 && answer.status != 503)) std::abort();
  check_shape(answer);
  return 0;
}
