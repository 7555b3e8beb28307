#include "proto/job.h"
#include "proto/output_path.h"
#include "proto/text.h"

#include <algorithm>
#include <cctype>

namespace trainyard::inline proto {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

constexpr std::int64_t kMaxTimeoutS = 30LL * 24 * 3600;

}  // namespace

CommandSpec parse_command(const Json& j, SpecOrigin origin) {
  ObjectReader r(j, "command");
  CommandSpec c;
  c.argv = r.string_list("argv", 1024, 64 * 1024);
  if (c.argv.empty()) throw InvalidInput("command.argv", "must name a program to run");
  if (c.argv[0].empty()) throw InvalidInput("command.argv[0]", "must not be empty");
  if (r.has("env")) c.env = r.string_map("env", 256, 64 * 1024);
  c.workdir = r.opt_string("workdir", 1, kMaxPathBytes);
  c.procs_per_node = static_cast<int>(r.opt_integer("procs_per_node", 1, kMaxProcsPerNode).value_or(1));
  c.script = r.opt_string("script", kScriptStart.size(), kMaxScriptBytes);
  c.output = r.opt_string("output", 1, kMaxPathBytes);
  c.error = r.opt_string("error", 1, kMaxPathBytes);
  if (origin == SpecOrigin::submitted) {
    if (c.output) check_output_pattern("command.output", *c.output);
    if (c.error) check_output_pattern("command.error", *c.error);
    if (c.script) {
      check_no_nul("command.script", *c.script);
      if (!c.script->starts_with(kScriptStart)) {
        throw InvalidInput("command.script", "must begin with an interpreter line such as #!/bin/bash");
      }
    }
    if (c.workdir) {
      check_no_nul("command.workdir", *c.workdir);
      if (!c.workdir->starts_with('/')) throw InvalidInput("command.workdir", "must be an absolute path, got \"" + *c.workdir + "\"");
    }
    for (std::size_t i = 0; i < c.argv.size(); ++i) check_no_nul("command.argv[" + std::to_string(i) + "]", c.argv[i]);
    for (const auto& [key, value] : c.env) {
      check_env_name("command.env", key);
      check_no_nul("command.env." + key, value);
      // The agent runs an array's tasks under the array's account by this name: set by the daemon only.
      if (key.starts_with("TRAINYARD_ARRAY_")) throw InvalidInput("command.env." + key, "is set by Trainyard for array tasks");
    }
  }
  r.finish();
  return c;
}

Json to_json(const CommandSpec& command) {
  Json j;
  j["argv"] = command.argv;
  j["env"] = command.env;
  if (command.workdir) j["workdir"] = *command.workdir;
  if (command.procs_per_node > 1) j["procs_per_node"] = command.procs_per_node;
  if (command.script) j["script"] = *command.script;
  if (command.output) j["output"] = *command.output;
  if (command.error) j["error"] = *command.error;
  return j;
}

namespace {

ExitRule parse_exit_rule(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  ExitRule rule;
  rule.on_exit_code = r.opt_string("on_exit_code", 1, 512);
  rule.on_reason = r.opt_string("on_reason", 1, 512);
  rule.on_class = r.opt_string("on_class", 1, 512);
  const std::string action = lower(r.string("action", 1, 16));
  if (action == "retry") {
    rule.action = RetryAction::retry;
  } else if (action == "exit") {
    rule.action = RetryAction::exit;
  } else {
    throw InvalidInput(path + ".action", "must be \"retry\" or \"exit\"");
  }
  if (!rule.on_exit_code && !rule.on_reason && !rule.on_class) {
    throw InvalidInput(path, "needs at least one of on_exit_code, on_reason, on_class");
  }
  r.finish();
  return rule;
}

RetrySpec parse_retry(const Json& j) {
  ObjectReader r(j, "retry");
  RetrySpec retry;
  retry.attempts = static_cast<int>(r.opt_integer("attempts", 1, 10).value_or(1));
  if (const Json* rules = r.child("evaluate_on_exit")) {
    if (!rules->is_array()) throw InvalidInput("retry.evaluate_on_exit", "must be an array of rules");
    if (rules->size() > 5) throw InvalidInput("retry.evaluate_on_exit", "must have at most 5 rules");
    for (std::size_t i = 0; i < rules->size(); ++i) {
      retry.evaluate_on_exit.push_back(
          parse_exit_rule((*rules)[i], "retry.evaluate_on_exit[" + std::to_string(i) + "]"));
    }
  }
  r.finish();
  return retry;
}

Json to_json(const ExitRule& rule) {
  Json j = {{"action", to_string(rule.action)}};
  if (rule.on_exit_code) j["on_exit_code"] = *rule.on_exit_code;
  if (rule.on_reason) j["on_reason"] = *rule.on_reason;
  if (rule.on_class) j["on_class"] = *rule.on_class;
  return j;
}

template <class T>
void put_optional(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

void put_time(Json& j, const char* key, const std::optional<TimePoint>& t) {
  if (t) j[key] = format_time(*t);
}

std::optional<TimePoint> get_time(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return parse_time(it->get<std::string>());
}

}  // namespace

std::string to_string(JobKind k) { return k == JobKind::command ? "command" : "simulated"; }

std::string to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::bf16: return "bf16";
    case Precision::bf16_sr: return "bf16_sr";
  }
  return "fp32";
}

std::optional<Precision> parse_precision(std::string_view s) {
  const std::string l = lower(s);
  if (l == "fp32") return Precision::fp32;
  if (l == "bf16") return Precision::bf16;
  if (l == "bf16_sr") return Precision::bf16_sr;
  return std::nullopt;
}

std::string to_string(RetryAction a) { return a == RetryAction::retry ? "retry" : "exit"; }

std::string to_string(JobState s) {
  switch (s) {
    case JobState::pending: return "PENDING";
    case JobState::starting: return "STARTING";
    case JobState::running: return "RUNNING";
    case JobState::succeeded: return "SUCCEEDED";
    case JobState::failed: return "FAILED";
    case JobState::cancelled: return "CANCELLED";
  }
  return "PENDING";
}

std::string to_string(AttemptState s) {
  switch (s) {
    case AttemptState::starting: return "STARTING";
    case AttemptState::running: return "RUNNING";
    case AttemptState::succeeded: return "SUCCEEDED";
    case AttemptState::failed: return "FAILED";
    case AttemptState::cancelled: return "CANCELLED";
    case AttemptState::requeued: return "REQUEUED";
    case AttemptState::preempted: return "PREEMPTED";
  }
  return "STARTING";
}

std::string to_string(Hold h) {
  switch (h) {
    case Hold::none: return "";
    case Hold::owner: return "owner";
    case Hold::admin: return "admin";
  }
  return "";
}

std::string hold_reason(Hold h) { return h == Hold::admin ? "held by an admin" : "held by its owner"; }

std::string to_string(StopIntent i) {
  switch (i) {
    case StopIntent::none: return "";
    case StopIntent::requeue: return "requeue";
    case StopIntent::preempt: return "preempt";
  }
  return "";
}

std::optional<JobState> parse_job_state(std::string_view s) {
  const std::string l = lower(s);
  for (JobState st : {JobState::pending, JobState::starting, JobState::running, JobState::succeeded, JobState::failed,
                      JobState::cancelled}) {
    if (lower(to_string(st)) == l) return st;
  }
  return std::nullopt;
}

std::optional<AttemptState> parse_attempt_state(std::string_view s) {
  const std::string l = lower(s);
  for (AttemptState st : {AttemptState::starting, AttemptState::running, AttemptState::succeeded, AttemptState::failed,
                          AttemptState::cancelled, AttemptState::requeued, AttemptState::preempted}) {
    if (lower(to_string(st)) == l) return st;
  }
  return std::nullopt;
}

bool is_terminal(JobState s) {
  return s == JobState::succeeded || s == JobState::failed || s == JobState::cancelled;
}
bool is_terminal(AttemptState s) {
  return s == AttemptState::succeeded || s == AttemptState::failed || s == AttemptState::cancelled ||
         s == AttemptState::requeued || s == AttemptState::preempted;
}

WorkloadSpec parse_workload(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  WorkloadSpec w;
  w.width = static_cast<int>(r.opt_integer("width", 1, 4096).value_or(w.width));
  w.depth = static_cast<int>(r.opt_integer("depth", 1, 16).value_or(w.depth));
  w.input_dim = static_cast<int>(r.opt_integer("input_dim", 1, 4096).value_or(w.input_dim));
  w.output_dim = static_cast<int>(r.opt_integer("output_dim", 1, 4096).value_or(w.output_dim));
  w.global_batch = static_cast<int>(r.opt_integer("global_batch", 1, 65536).value_or(w.global_batch));
  w.steps = r.opt_integer("steps", 1, 10'000'000).value_or(w.steps);
  w.lr = r.opt_number("lr", 1e-9, 10.0).value_or(w.lr);
  w.min_lr = r.opt_number("min_lr", 0.0, 10.0).value_or(std::min(w.min_lr, w.lr));
  if (w.min_lr > w.lr) throw InvalidInput(r.field_path("min_lr"), "must not exceed lr");
  w.warmup = r.opt_integer("warmup", 0, 10'000'000).value_or(std::min(w.warmup, w.steps));
  if (w.warmup > w.steps) throw InvalidInput(r.field_path("warmup"), "must not exceed steps");
  w.seed = static_cast<std::uint64_t>(r.opt_integer("seed", 0, INT64_MAX).value_or(1));
  if (auto p = r.opt_string("precision", 1, 16)) {
    auto parsed = parse_precision(*p);
    if (!parsed) throw InvalidInput(r.field_path("precision"), "must be one of fp32, bf16, bf16_sr");
    w.precision = *parsed;
  }
  w.checkpoint_every = r.opt_integer("checkpoint_every", 0, 10'000'000).value_or(0);
  w.keep_checkpoints = static_cast<int>(r.opt_integer("keep_checkpoints", 1, 100).value_or(w.keep_checkpoints));
  w.step_ms = static_cast<int>(r.opt_integer("step_ms", 0, 600'000).value_or(0));
  w.spike_threshold = r.opt_number("spike_threshold", 0.0, 1e9).value_or(w.spike_threshold);
  r.finish();
  return w;
}

Json to_json(const WorkloadSpec& w) {
  return Json{{"width", w.width},
              {"depth", w.depth},
              {"input_dim", w.input_dim},
              {"output_dim", w.output_dim},
              {"global_batch", w.global_batch},
              {"steps", w.steps},
              {"lr", w.lr},
              {"min_lr", w.min_lr},
              {"warmup", w.warmup},
              {"seed", static_cast<std::int64_t>(w.seed)},
              {"precision", to_string(w.precision)},
              {"checkpoint_every", w.checkpoint_every},
              {"keep_checkpoints", w.keep_checkpoints},
              {"step_ms", w.step_ms},
              {"spike_threshold", w.spike_threshold}};
}

// [{"job": 12, "condition": "afterok"}, ...]; records stored before conditions existed list bare
// ids, which meant afterok.
static std::vector<Dependency> parse_dependencies(const Json& deps, bool submitted) {
  if (!deps.is_array() || deps.size() > 64) throw InvalidInput("depends_on", "must be an array of at most 64 dependencies");
  std::vector<Dependency> out;
  for (std::size_t i = 0; i < deps.size(); ++i) {
    const std::string path = "depends_on[" + std::to_string(i) + "]";
    const Json& d = deps[i];
    if (!submitted && d.is_number_integer()) {
      out.push_back(Dependency{d.get<JobId>(), DependencyCondition::afterok});
      continue;
    }
    ObjectReader r(d, path);
    Dependency dep;
    dep.job = r.integer("job", 1, INT64_MAX);
    const auto condition = parse_dependency_condition(r.opt_string("condition", 1, 16).value_or("afterok"));
    if (!condition) throw InvalidInput(path + ".condition", "must be one of afterok, afterany, afternotok, aftercorr");
    dep.condition = *condition;
    r.finish();
    out.push_back(dep);
  }
  return out;
}

JobSpec parse_job_spec(const Json& j, SpecOrigin origin) {
  ObjectReader r(j, "");
  const bool submitted = origin == SpecOrigin::submitted;
  JobSpec s;
  s.name = r.string("name", 1, 128);
  if (submitted) check_printable("name", s.name);
  if (auto share = r.opt_string("share", 1, 64)) {
    check_name("share", *share);
    s.share = *share;
  }
  s.priority = static_cast<int>(r.opt_integer("priority", 0, 9999).value_or(0));
  s.nodes = static_cast<int>(r.opt_integer("nodes", 1, 1024).value_or(1));
  if (auto nmin = r.opt_integer("nodes_min", 1, 1024)) {
    if (*nmin > s.nodes) throw InvalidInput("nodes_min", "must not exceed nodes (" + std::to_string(s.nodes) + ")");
    s.nodes_min = static_cast<int>(*nmin);
  }
  if (auto cores = r.opt_integer("cores_per_node", 1, 4096)) s.cores_per_node = static_cast<int>(*cores);

  const std::string kind = lower(r.opt_string("kind", 1, 32).value_or("command"));
  if (kind == "command") {
    s.kind = JobKind::command;
  } else if (kind == "simulated") {
    s.kind = JobKind::simulated;
  } else {
    throw InvalidInput("kind", "must be \"command\" or \"simulated\"");
  }
  const Json* command = r.child("command");
  const Json* workload = r.child("workload");
  if (s.kind == JobKind::command) {
    if (!command) throw InvalidInput("command", "is required when kind is \"command\"");
    if (workload) throw InvalidInput("workload", "applies only to kind \"simulated\"");
    s.command = parse_command(*command, origin);
  } else {
    if (command) throw InvalidInput("command", "applies only to kind \"command\"");
    if (workload) s.workload = parse_workload(*workload, "workload");
  }
  if (const Json* retry = r.child("retry")) s.retry = parse_retry(*retry);
  s.timeout_s = r.opt_integer("timeout_s", 1, kMaxTimeoutS);
  s.stuck_after_s = r.opt_integer("stuck_after_s", 1, kMaxTimeoutS);
  s.preflight = r.opt_boolean("preflight");
  s.wait_for_capacity = r.opt_boolean("wait_for_capacity").value_or(false);
  if (r.has("labels")) {
    s.labels = r.string_map("labels", 32, 256);
    if (submitted) check_labels("labels", s.labels);
  }
  if (const Json* deps = r.child("depends_on")) s.depends_on = parse_dependencies(*deps, submitted);
  if (auto array = r.opt_string("array", 1, 4096)) {
    // The grammar only: the size limit is the daemon's (--max-array-size), checked at submit.
    parse_array_spec(*array, kMaxArrayIndex + 1, "array");
    s.array = std::move(array);
  }
  s.code_version = r.opt_string("code_version", 1, 256);
  if (submitted && s.code_version) check_printable("code_version", *s.code_version);
  s.hold = r.opt_boolean("hold").value_or(false);
  s.storage_limit_mb = r.opt_integer("storage_limit_mb", 1, kMaxStorageLimitMb);
  s.memory_mb = r.opt_integer("memory_mb", 1, kMaxJobMemoryMb);
  s.replace_stragglers = r.opt_boolean("replace_stragglers").value_or(false);
  r.finish();
  return s;
}

Json to_json(const JobSpec& s) {
  // Field by field: an initializer list of pairs builds each field twice (a pair, then a copy).
  Json j = Json::object();
  j["name"] = s.name;
  j["share"] = s.share;
  j["priority"] = s.priority;
  j["nodes"] = s.nodes;
  j["kind"] = to_string(s.kind);
  j["preflight"] = s.preflight_enabled();
  put_optional(j, "nodes_min", s.nodes_min);
  put_optional(j, "stuck_after_s", s.stuck_after_s);
  put_optional(j, "cores_per_node", s.cores_per_node);
  if (s.wait_for_capacity) j["wait_for_capacity"] = true;
  if (s.kind == JobKind::command) {
    j["command"] = to_json(s.command);
  } else {
    j["workload"] = to_json(s.workload);
  }
  Json rules = Json::array();
  for (const auto& rule : s.retry.evaluate_on_exit) rules.push_back(to_json(rule));
  Json& retry = j["retry"];
  retry["attempts"] = s.retry.attempts;
  retry["evaluate_on_exit"] = std::move(rules);
  put_optional(j, "timeout_s", s.timeout_s);
  if (!s.labels.empty()) j["labels"] = s.labels;
  if (!s.depends_on.empty()) {
    Json deps = Json::array();
    for (const auto& d : s.depends_on) deps.push_back({{"job", d.job}, {"condition", to_string(d.condition)}});
    j["depends_on"] = std::move(deps);
  }
  put_optional(j, "array", s.array);
  put_optional(j, "code_version", s.code_version);
  if (s.hold) j["hold"] = true;
  put_optional(j, "storage_limit_mb", s.storage_limit_mb);
  put_optional(j, "memory_mb", s.memory_mb);
  if (s.replace_stragglers) j["replace_stragglers"] = true;
  return j;
}

Json to_json(const Job& job) {
  Json j = Json::object();  // field by field, as to_json(JobSpec): a job's record is written at every change
  j["id"] = job.id;
  j["name"] = job.spec.name;
  j["user"] = job.user;
  j["share"] = job.spec.share;
  j["state"] = to_string(job.state);
  j["submitted_at"] = format_time(job.submitted_at);
  j["attempts"] = job.attempts;
  j["infra_retries"] = job.infra_retries;
  j["infra_retries_in_a_row"] = job.infra_retries_in_a_row;
  j["reason"] = job.reason;
  j["failure_class"] = job.failure_class;
  j["suggestion"] = job.suggestion;
  j["cancel_requested"] = job.cancel_requested;
  j["excluded_nodes"] = job.excluded_nodes;
  j["spec"] = to_json(job.spec);
  put_time(j, "started_at", job.started_at);
  put_time(j, "ended_at", job.ended_at);
  put_time(j, "not_before", job.not_before);
  put_optional(j, "exit_code", job.exit_code);
  if (const auto& t = job.array_task) {
    j["array"] = {{"job_id", t->array_job}, {"task_id", t->index}, {"task_count", t->count}};
    put_optional(j["array"], "limit", t->limit);
  }
  if (job.requeues > 0) j["requeues"] = job.requeues;
  if (job.held != Hold::none) j["held_by"] = to_string(job.held);
  if (job.stopping_to != StopIntent::none) j["stopping_to"] = to_string(job.stopping_to);
  return j;
}

std::string job_ref_text(const Job& job) {
  if (!job.array_task) return std::to_string(job.id);
  return std::to_string(job.array_task->array_job) + "_" + std::to_string(job.array_task->index);
}

AttemptProvenance::AttemptProvenance(Json record) {
  if (!record.is_null()) version_ = std::make_shared<const Version>(std::move(record));
}

const Json& AttemptProvenance::json() const {
  static const Json kNone;
  return version_ ? version_->record : kNone;
}

const std::string& AttemptProvenance::text() const {
  static const std::string kNone = "null";
  if (!version_) return kNone;
  std::call_once(version_->rendered, [v = version_.get()] { v->text = json_text(v->record); });
  return version_->text;
}

namespace {

Json attempt_without_provenance(const Attempt& a) {
  Json j = Json::object();  // field by field, as to_json(JobSpec): an attempt's record is written at every change
  j["id"] = a.id;
  j["job_id"] = a.job_id;
  j["number"] = a.number;
  j["nodes"] = a.nodes;
  j["cores_per_node"] = a.cores_per_node;
  j["state"] = to_string(a.state);
  j["created_at"] = format_time(a.created_at);
  j["failure_class"] = a.failure_class;
  j["reason"] = a.reason;
  j["infrastructure"] = a.infrastructure;
  j["steps_completed"] = a.steps_completed;
  j["last_step"] = a.last_step;
  put_time(j, "launched_at", a.launched_at);
  put_time(j, "started_at", a.started_at);
  put_time(j, "first_step_at", a.first_step_at);
  put_time(j, "ended_at", a.ended_at);
  put_time(j, "last_progress_at", a.last_progress_at);
  if (a.checkpoint_ms > 0) j["checkpoint_ms"] = a.checkpoint_ms;
  if (a.checkpoint_failures.count > 0) j["checkpoint_failures"] = to_json(a.checkpoint_failures);
  put_optional(j, "exit_code", a.exit_code);
  put_optional(j, "signal", a.signal);
  put_optional(j, "resumed_from", a.resumed_from);
  if (!a.diagnosis.empty()) j["diagnosis"] = a.diagnosis;
  if (!a.output.empty()) {
    j["output"] = a.output;
    put_optional(j, "output_rank", a.output_rank);
  }
  put_time(j, "stuck_detected_at", a.stuck_detected_at);
  if (!a.stragglers.empty()) {
    Json& stragglers = j["stragglers"] = Json::array();
    for (const Straggler& s : a.stragglers) {
      stragglers.push_back({{"rank", s.rank}, {"node", s.node}, {"ratio", s.ratio}, {"found_at", format_time(s.found_at)}});
    }
  }
  return j;
}

}  // namespace

Json to_json(const Attempt& a) {
  Json j = attempt_without_provenance(a);
  if (!a.provenance.empty()) j["provenance"] = a.provenance.json();
  return j;
}

std::string attempt_record(const Attempt& a) {
  std::string text = json_text(attempt_without_provenance(a));
  if (a.provenance.empty()) return text;
  text.pop_back();  // the object's closing brace; the object always has fields before it
  text += ",\"provenance\":";
  text += a.provenance.text();
  text += '}';
  return text;
}

Job job_from_json(const Json& j) {
  Job job;
  job.id = j.at("id").get<JobId>();
  job.spec = parse_job_spec(j.at("spec"), SpecOrigin::stored);
  job.user = j.value("user", "");
  job.state = parse_job_state(j.value("state", "PENDING")).value_or(JobState::pending);
  job.submitted_at = get_time(j, "submitted_at").value_or(TimePoint{});
  job.started_at = get_time(j, "started_at");
  job.ended_at = get_time(j, "ended_at");
  job.not_before = get_time(j, "not_before");
  job.attempts = j.value("attempts", 0);
  job.infra_retries = j.value("infra_retries", 0);
  job.infra_retries_in_a_row = j.value("infra_retries_in_a_row", job.infra_retries);
  job.reason = j.value("reason", "");
  job.failure_class = j.value("failure_class", "");
  job.suggestion = j.value("suggestion", "");
  job.cancel_requested = j.value("cancel_requested", false);
  job.excluded_nodes = j.value("excluded_nodes", std::vector<std::string>{});
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) job.exit_code = j["exit_code"].get<int>();
  if (const auto a = j.find("array"); a != j.end() && a->is_object()) {
    job.array_task = ArrayTask{a->value("job_id", job.id), a->value("task_id", 0), a->value("task_count", 1), std::nullopt};
    if (a->contains("limit")) job.array_task->limit = (*a)["limit"].get<int>();
  }
  job.requeues = j.value("requeues", 0);
  const std::string held_by = j.value("held_by", "");
  job.held = held_by == "admin" ? Hold::admin : held_by == "owner" ? Hold::owner : Hold::none;
  const std::string stopping_to = j.value("stopping_to", "");
  job.stopping_to = stopping_to == "preempt"   ? StopIntent::preempt
                    : stopping_to == "requeue" ? StopIntent::requeue
                                               : StopIntent::none;
  return job;
}

Json to_json(const CheckpointFailures& f) { return {{"count", f.count}, {"last_error", f.last_error}}; }

CheckpointFailures parse_checkpoint_failures(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CheckpointFailures f{r.integer("count", 1, INT64_MAX), r.string("last_error", 0, kMaxCheckpointErrorLength)};
  r.finish();
  return f;
}

Attempt attempt_from_json(const Json& j) {
  Attempt a;
  a.id = j.at("id").get<AttemptId>();
  a.job_id = j.at("job_id").get<JobId>();
  a.number = j.value("number", 1);
  a.nodes = j.value("nodes", std::vector<std::string>{});
  a.cores_per_node = j.value("cores_per_node", 0);
  a.state = parse_attempt_state(j.value("state", "STARTING")).value_or(AttemptState::starting);
  a.created_at = get_time(j, "created_at").value_or(TimePoint{});
  a.launched_at = get_time(j, "launched_at");
  a.started_at = get_time(j, "started_at");
  a.first_step_at = get_time(j, "first_step_at");
  a.ended_at = get_time(j, "ended_at");
  a.last_progress_at = get_time(j, "last_progress_at");
  a.checkpoint_ms = j.value("checkpoint_ms", std::int64_t{0});
  if (const auto f = j.find("checkpoint_failures"); f != j.end() && f->is_object()) {
    a.checkpoint_failures = {f->value("count", std::int64_t{0}), f->value("last_error", "")};
  }
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) a.exit_code = j["exit_code"].get<int>();
  if (j.contains("signal") && j["signal"].is_number_integer()) a.signal = j["signal"].get<int>();
  a.failure_class = j.value("failure_class", "");
  a.reason = j.value("reason", "");
  a.infrastructure = j.value("infrastructure", false);
  if (j.contains("resumed_from") && j["resumed_from"].is_string()) a.resumed_from = j["resumed_from"].get<std::string>();
  a.diagnosis = j.value("diagnosis", "");
  a.output = j.value("output", "");
  if (j.contains("output_rank") && j["output_rank"].is_number_integer()) a.output_rank = j["output_rank"].get<int>();
  a.stuck_detected_at = get_time(j, "stuck_detected_at");
  if (j.contains("stragglers") && j["stragglers"].is_array()) {
    for (const Json& s : j["stragglers"]) {
      if (!s.is_object()) continue;
      a.stragglers.push_back({s.value("rank", 0), s.value("node", ""), s.value("ratio", 0.0),
                              get_time(s, "found_at").value_or(TimePoint{})});
    }
  }
  a.steps_completed = j.value("steps_completed", std::int64_t{0});
  a.last_step = j.value("last_step", std::int64_t{0});
  if (j.contains("provenance") && j["provenance"].is_object()) a.provenance = AttemptProvenance(j["provenance"]);
  return a;
}

}  // namespace trainyard::proto
