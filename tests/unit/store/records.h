#pragma once
// Records for the store tests: `full_*` sets every optional field, `minimal_*` leaves them unset.
// Records are compared through proto's JSON, the shape the store keeps and the API shows.
#include <ostream>
#include <string>
#include <vector>

#include "store/store.h"

namespace trainyard::store {

inline TimePoint at_ms(std::int64_t ms) { return from_unix_ms(1'760'000'000'000 + ms); }

inline Job minimal_job(JobId id, std::string user = "bob", std::string share = "default",
                       JobState state = JobState::pending) {
  Job j;
  j.id = id;
  j.user = std::move(user);
  j.state = state;
  j.submitted_at = at_ms(id);
  j.spec.name = "job-" + std::to_string(id);
  j.spec.share = std::move(share);
  j.spec.command.argv = {"/bin/true"};
  return j;
}

inline Job full_job(JobId id) {
  Job j = minimal_job(id, "alice", "team-a", JobState::running);
  j.started_at = at_ms(1000);
  j.ended_at = at_ms(2000);
  j.not_before = at_ms(3000);
  j.attempts = 2;
  j.infra_retries = 1;
  j.reason = "retrying: \"node lost\"\nafter rank 3 stopped (ü)";
  j.exit_code = 3;
  j.failure_class = "node_lost";
  j.cancel_requested = true;
  JobSpec& s = j.spec;
  s.priority = 42;
  s.nodes = 4;
  s.nodes_min = 2;
  s.cores_per_node = 16;
  s.command.argv = {"/usr/bin/python3", "train.py", "--lr=3e-4"};
  s.command.env = {{"NCCL_DEBUG", "INFO"}, {"EMPTY", ""}};
  s.retry.attempts = 3;
  s.retry.evaluate_on_exit = {ExitRule{"137", std::nullopt, std::nullopt, RetryAction::retry},
                              ExitRule{std::nullopt, "*OOM*", "oom", RetryAction::exit}};
  s.timeout_s = 7200;
  s.stuck_after_s = 600;
  s.preflight = false;
  s.labels = {{"team", "a"}, {"tier", "prod"}};
  s.depends_on = {{1, DependencyCondition::afterok}, {2, DependencyCondition::aftercorr}};
  s.code_version = "git:abc123";
  return j;
}

inline Job simulated_job(JobId id) {
  Job j = minimal_job(id);
  j.spec.kind = JobKind::simulated;
  j.spec.command = {};
  j.spec.workload.steps = 500;
  j.spec.workload.precision = Precision::bf16_sr;
  j.spec.workload.checkpoint_every = 50;
  j.spec.workload.lr = 3e-4;
  j.spec.workload.seed = 7;
  return j;
}

inline Attempt minimal_attempt(AttemptId id, JobId job, AttemptState state = AttemptState::starting) {
  Attempt a;
  a.id = id;
  a.job_id = job;
  a.state = state;
  a.nodes = {"node-1"};
  a.cores_per_node = 32;
  a.created_at = at_ms(id);
  return a;
}

inline Attempt full_attempt(AttemptId id, JobId job) {
  Attempt a = minimal_attempt(id, job, AttemptState::failed);
  a.number = 2;
  a.nodes = {"node-1", "node-2"};
  a.cores_per_node = 16;
  a.started_at = at_ms(100);
  a.ended_at = at_ms(200);
  a.exit_code = 137;
  a.signal = 9;
  a.failure_class = "oom";
  a.reason = "killed by the OOM killer";
  a.infrastructure = true;
  a.resumed_from = "ckpt/step-100";
  a.steps_completed = 50;
  a.last_step = 150;
  a.last_progress_at = at_ms(190);
  return a;
}

inline Node minimal_node(std::string name) {
  Node n;
  n.name = std::move(name);
  n.cores = 32;
  n.state_since = at_ms(0);
  return n;
}

inline Node full_node(std::string name) {
  Node n = minimal_node(std::move(name));
  n.memory_mb = 512 * 1024;
  n.labels = {{"rack", "r1"}, {"zone", "a"}};
  n.agent_version = "0.1.0";
  n.data_addr = "127.0.0.1:4100";
  n.state = NodeState::suspect;
  n.state_reason = "busbw 40% below median";
  n.last_heartbeat = at_ms(500);
  n.connected = true;
  n.faults = {"core:3=corrupt", "link=drop"};
  n.last_check_id = 12;
  n.last_check_verdict = "SUSPECT";
  n.last_check_at = at_ms(400);
  return n;
}

inline Event event(std::string kind, std::optional<JobId> job = std::nullopt,
                   std::optional<AttemptId> attempt = std::nullopt, std::string node = "") {
  Event e;
  e.at = at_ms(0);
  e.kind = std::move(kind);
  e.job_id = job;
  e.attempt_id = attempt;
  e.node = std::move(node);
  e.message = e.kind + " happened";
  return e;
}

template <class Record>
std::string as_json(const Record& record) {
  return to_json(record).dump();
}

template <class Record>
std::vector<std::string> as_json(const std::vector<Record>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(as_json(r));
  return out;
}

template <class Record>
std::string as_json(const std::optional<Record>& record) {
  return record ? as_json(*record) : "<none>";
}

template <class WithId>
std::vector<std::int64_t> ids_of(const std::vector<WithId>& records) {
  std::vector<std::int64_t> out;
  for (const auto& r : records) out.push_back(r.id);
  return out;
}

// Readable gtest failure messages.
inline void PrintTo(const Event& e, std::ostream* os) {
  *os << "Event{seq=" << e.seq << " kind=" << e.kind << " job=" << e.job_id.value_or(-1)
      << " attempt=" << e.attempt_id.value_or(-1) << " node=" << e.node << " message=" << e.message << "}";
}
inline void PrintTo(const ShareRecord& s, std::ostream* os) {
  *os << "Share{" << s.name << " weight=" << s.weight << " max_running_cores=" << s.max_running_cores.value_or(-1)
      << " usage=" << s.usage_core_s << "@" << to_unix_ms(s.usage_at) << " created=" << s.created << " members=";
  if (s.members) {
    for (const auto& m : *s.members) *os << m << ",";
  } else {
    *os << "<all>";
  }
  *os << "}";
}
inline void PrintTo(const TokenRecord& t, std::ostream* os) {
  *os << "Token{" << t.hash << " id=" << t.id << " user=" << t.user << " role=" << to_string(t.role)
      << " expires_ms=" << (t.expires_at ? to_unix_ms(*t.expires_at) : -1)
      << " last_used_ms=" << (t.last_used_at ? to_unix_ms(*t.last_used_at) : -1) << "}";
}

}  // namespace trainyard::store
