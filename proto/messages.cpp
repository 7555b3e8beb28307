#include "proto/messages.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "proto/provenance.h"
#include "proto/text.h"

namespace trainyard::inline proto {
namespace {

constexpr std::size_t kMaxTextField = 1 << 20;
// A job spec's 256 variables plus what the agent adds (inherited ones, LC_*, TRAINYARD_*).
constexpr std::size_t kMaxEnvironmentVariables = 512;
constexpr std::size_t kMaxFaults = 4096;  // one per core and the link, with room to spare
constexpr std::size_t kMaxMetricSteps = 100'000;
constexpr std::size_t kMinDataPlaneSecret = 32;  // characters: a guessable secret authenticates nothing

Json to_json(const CheckpointReport& c) { return {{"step", c.step}, {"manifest_sha256", c.manifest_sha256}}; }

CheckpointReport parse_checkpoint_report(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CheckpointReport c;
  c.step = r.integer("step", 0, INT64_MAX);
  c.manifest_sha256 = r.string("manifest_sha256", 0, 64);
  const bool hex = std::all_of(c.manifest_sha256.begin(), c.manifest_sha256.end(),
                               [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
  if (!hex || (c.manifest_sha256.size() != 0 && c.manifest_sha256.size() != 64)) {
    throw InvalidInput(r.field_path("manifest_sha256"), "must be 64 lowercase hex digits, or empty without a manifest");
  }
  r.finish();
  return c;
}

void put_checkpoint_failures(Json& j, const CheckpointFailures& f) {
  if (f.count > 0) j["checkpoint_failures"] = to_json(f);
}

CheckpointFailures optional_checkpoint_failures(ObjectReader& r) {
  const Json* failures = r.child("checkpoint_failures");
  return failures ? parse_checkpoint_failures(*failures, r.field_path("checkpoint_failures")) : CheckpointFailures{};
}

Json to_json(const ProcessWhere& w) {
  return {{"rank", w.rank}, {"pid", w.pid}, {"state", w.state}, {"wchan", w.wchan}, {"stack", w.stack}};
}

ProcessWhere parse_where(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  ProcessWhere w;
  w.rank = static_cast<int>(r.integer("rank", 0, INT32_MAX));
  w.pid = static_cast<int>(r.integer("pid", 1, INT32_MAX));
  w.state = r.string("state", 1, 1);
  if (!std::isalpha(static_cast<unsigned char>(w.state[0]))) throw InvalidInput(r.field_path("state"), "must be a letter");
  w.wchan = r.string("wchan", 0, 128);
  check_printable(r.field_path("wchan"), w.wchan);
  w.stack = r.string("stack", 0, kMaxStackChars);
  // Lines of printable text, each quoted in a diagnosis that terminals show.
  for (std::size_t at = 0; at <= w.stack.size();) {
    const std::size_t end = std::min(w.stack.find('\n', at), w.stack.size());
    check_printable(r.field_path("stack"), std::string_view(w.stack).substr(at, end - at));
    at = end + 1;
  }
  r.finish();
  return w;
}

Json to_json(const AttemptReport& r) {
  Json j = {{"attempt_id", r.attempt_id}, {"job_id", r.job_id}, {"step", r.step}, {"phase", r.phase}};
  if (r.last_progress_at) j["last_progress_at"] = to_unix_ms(*r.last_progress_at);
  if (r.first_step_at) j["first_step_at"] = to_unix_ms(*r.first_step_at);
  if (r.checkpoint_ms > 0) j["checkpoint_ms"] = r.checkpoint_ms;
  put_checkpoint_failures(j, r.checkpoint_failures);
  if (r.busy_ms) j["busy_ms"] = *r.busy_ms;
  if (r.log_bytes > 0) j["log_bytes"] = r.log_bytes;
  if (r.work_bytes > 0) j["work_bytes"] = r.work_bytes;
  if (r.idle_ms) j["idle_ms"] = *r.idle_ms;
  if (!r.where.empty()) {
    Json& where = j["where"] = Json::array();
    for (const auto& w : r.where) where.push_back(to_json(w));
  }
  return j;
}

AttemptReport parse_report(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  AttemptReport rep;
  rep.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
  rep.job_id = r.integer("job_id", 1, INT64_MAX);
  rep.step = r.integer("step", 0, INT64_MAX);
  if (auto t = r.opt_integer("last_progress_at", 0, INT64_MAX)) rep.last_progress_at = from_unix_ms(*t);
  rep.phase = r.opt_string("phase", 0, 128).value_or("");
  if (auto t = r.opt_integer("first_step_at", 0, INT64_MAX)) rep.first_step_at = from_unix_ms(*t);
  rep.checkpoint_ms = r.opt_integer("checkpoint_ms", 0, INT64_MAX).value_or(0);
  rep.checkpoint_failures = optional_checkpoint_failures(r);
  rep.busy_ms = r.opt_integer("busy_ms", 0, INT64_MAX);
  rep.log_bytes = r.opt_integer("log_bytes", 0, INT64_MAX).value_or(0);
  rep.work_bytes = r.opt_integer("work_bytes", 0, INT64_MAX).value_or(0);
  rep.idle_ms = r.opt_integer("idle_ms", 0, INT64_MAX);
  if (const Json* where = r.child("where")) {
    const std::string where_path = r.field_path("where");
    // One entry per process of the rank: at most a node's procs_per_node.
    if (!where->is_array() || where->size() > static_cast<std::size_t>(kMaxProcsPerNode)) {
      throw InvalidInput(where_path, "must be an array of at most " + std::to_string(kMaxProcsPerNode) + " processes");
    }
    for (std::size_t i = 0; i < where->size(); ++i) {
      rep.where.push_back(parse_where((*where)[i], where_path + "[" + std::to_string(i) + "]"));
    }
  }
  r.finish();
  return rep;
}

Json reports_to_json(const std::vector<AttemptReport>& reports) {
  Json a = Json::array();
  for (const auto& rep : reports) a.push_back(to_json(rep));
  return a;
}

std::vector<AttemptReport> parse_reports(ObjectReader& r, const char* key) {
  std::vector<AttemptReport> out;
  const Json* a = r.child(key);
  if (!a) return out;
  if (!a->is_array()) throw InvalidInput(r.field_path(key), "must be an array");
  for (std::size_t i = 0; i < a->size(); ++i) {
    out.push_back(parse_report((*a)[i], r.field_path(key) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

// Not empty, each an attempt id (1 or more), at most kMaxStoppedAttempts, none twice.
std::vector<AttemptId> parse_attempt_ids(ObjectReader& r, const char* key) {
  const Json* ids = r.child(key);
  if (!ids || !ids->is_array() || ids->empty() || ids->size() > kMaxStoppedAttempts) {
    throw InvalidInput(r.field_path(key), "must be an array of 1 to " + std::to_string(kMaxStoppedAttempts) + " attempt ids");
  }
  std::vector<AttemptId> out;
  std::set<AttemptId> seen;
  for (std::size_t i = 0; i < ids->size(); ++i) {
    const Json& id = (*ids)[i];
    const std::string field = r.field_path(key) + "[" + std::to_string(i) + "]";
    if (!id.is_number_integer() || id.get<std::int64_t>() < 1) throw InvalidInput(field, "must be an attempt id (an integer >= 1)");
    if (!seen.insert(id.get<AttemptId>()).second) throw InvalidInput(field, "names an attempt twice");
    out.push_back(id.get<AttemptId>());
  }
  return out;
}

JobNetworkPlan parse_job_network(const Json& j, int world_size) {
  ObjectReader r(j, "job_network");
  JobNetworkPlan plan;
  plan.pool = parse_ipv4_network(r.string("pool", 1, 18), "job_network.pool");
  plan.block = parse_ipv4_network(r.string("block", 1, 18), "job_network.block");
  if (!plan.pool.contains(plan.block)) throw InvalidInput("job_network.block", "must lie inside job_network.pool");
  const auto addresses = r.string_list("addresses", kMaxRanks, 15);
  if (std::ssize(addresses) != world_size) throw InvalidInput("job_network.addresses", "must hold one address per rank");
  std::set<Ipv4> seen;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const std::string field = "job_network.addresses[" + std::to_string(i) + "]";
    const auto address = parse_ipv4(addresses[i]);
    if (!address) throw InvalidInput(field, "must be an IPv4 address");
    if (!plan.block.contains(*address)) throw InvalidInput(field, "must lie inside job_network.block");
    if (!seen.insert(*address).second) throw InvalidInput(field, "is another rank's address too");
    plan.addresses.push_back(*address);
  }
  r.finish();
  return plan;
}

struct AgentEncoder {
  Json operator()(const HelloMsg& m) const {
    Json j = {{"type", "hello"},    {"protocol", m.protocol},   {"agent_version", m.agent_version},
              {"name", m.name},     {"cores", m.cores},         {"memory_mb", m.memory_mb},
              {"labels", m.labels}, {"data_addr", m.data_addr}, {"attempts", reports_to_json(m.attempts)},
              {"faults", m.faults}};
    if (!m.cgroups.empty()) j["cgroups"] = m.cgroups;
    if (!m.job_network.empty()) j["job_network"] = m.job_network;
    return j;
  }
  Json operator()(const HeartbeatMsg& m) const {
    Json j = {{"type", "heartbeat"}, {"seq", m.seq}, {"attempts", reports_to_json(m.attempts)}};
    if (!m.disks.empty()) {
      j["disks"] = Json::array();
      for (const auto& d : m.disks) j["disks"].push_back(to_json(d));
    }
    return j;
  }
  Json operator()(const AttemptStartedMsg& m) const {
    Json j = {{"type", "attempt_started"}, {"attempt_id", m.attempt_id}};
    if (!m.environment.empty()) j["environment"] = m.environment;
    return j;
  }
  Json operator()(const AttemptExitedMsg& m) const {
    Json j = {{"type", "attempt_exited"}, {"attempt_id", m.attempt_id}, {"reason", m.reason},
              {"steps", m.steps},          {"log_tail", m.log_tail}};
    if (m.exit_code) j["exit_code"] = *m.exit_code;
    if (m.signal) j["signal"] = *m.signal;
    if (m.first_step_at) j["first_step_at"] = to_unix_ms(*m.first_step_at);
    if (m.checkpoint_ms > 0) j["checkpoint_ms"] = m.checkpoint_ms;
    put_checkpoint_failures(j, m.checkpoint_failures);
    if (!m.user_facts.is_null()) j["user_facts"] = m.user_facts;
    if (!m.user_facts_error.empty()) j["user_facts_error"] = m.user_facts_error;
    if (m.peer_closed_rank) j["peer_closed_rank"] = *m.peer_closed_rank;
    return j;
  }
  Json operator()(const MetricsMsg& m) const {
    Json steps = Json::array();
    for (const auto& step : m.steps) steps.push_back(to_json(step));
    Json checkpoints = Json::array();
    for (const auto& c : m.checkpoints) checkpoints.push_back(to_json(c));
    return {{"type", "metrics"}, {"attempt_id", m.attempt_id}, {"steps", std::move(steps)},
            {"checkpoints", std::move(checkpoints)}};
  }
  Json operator()(const FaultsMsg& m) const { return {{"type", "faults"}, {"faults", m.faults}}; }
  Json operator()(const AttemptsStoppedMsg& m) const {
    return {{"type", "attempts_stopped"}, {"protocol", m.protocol}, {"node", m.node}, {"attempts", m.attempts}};
  }
  Json operator()(const HealthResultMsg& m) const {
    return {{"type", "health_result"}, {"task_id", m.task_id}, {"result", m.result}, {"error", m.error}};
  }
  Json operator()(const LogReplyMsg& m) const {
    return {{"type", "log_reply"}, {"request_id", m.request_id}, {"attempt_id", m.attempt_id},
            {"text", m.text},      {"error", m.error},           {"log_bytes", m.log_bytes},
            {"truncated", m.truncated}};
  }
};

struct DaemonEncoder {
  Json operator()(const WelcomeMsg& m) const {
    Json j = {{"type", "welcome"}, {"daemon_version", m.daemon_version}, {"heartbeat_interval_ms", m.heartbeat_interval_ms}};
    if (!m.node_credential.empty()) j["node_credential"] = m.node_credential;
    if (m.fence_after_ms > 0) j["fence_after_ms"] = m.fence_after_ms;
    if (!m.cluster.empty()) j["cluster"] = m.cluster;
    return j;
  }
  Json operator()(const HeartbeatAckMsg& m) const { return {{"type", "heartbeat_ack"}, {"seq", m.seq}}; }
  Json operator()(const RefusedMsg& m) const { return {{"type", "refused"}, {"reason", m.reason}}; }
  Json operator()(const StopNotedMsg&) const { return {{"type", "stop_noted"}}; }
  Json operator()(const LaunchMsg& m) const {
    Json j = Json::object();  // field by field, as to_json(JobSpec): one is sent per rank of every attempt
    j["type"] = "launch";
    j["attempt_id"] = m.attempt_id;
    j["job_id"] = m.job_id;
    j["attempt_number"] = m.attempt_number;
    j["kind"] = to_string(m.kind);
    j["rank"] = m.rank;
    j["world_size"] = m.world_size;
    j["cores"] = m.cores;
    j["peers"] = m.peers;
    j["master_addr"] = m.master_addr;
    j["master_port"] = m.master_port;
    j["checkpoint_dir"] = m.checkpoint_dir;
    j["user"] = m.user;
    if (!m.job_name.empty()) j["job_name"] = m.job_name;
    if (!m.node.empty()) j["node"] = m.node;
    j["data_plane_secret"] = m.data_plane_secret;
    j["preempt_grace_ms"] = m.preempt_grace_ms;
    if (m.memory_mb > 0) j["memory_mb"] = m.memory_mb;
    if (m.kind == JobKind::command) {
      j["command"] = to_json(m.command);
    } else {
      j["workload"] = to_json(m.workload);
    }
    if (m.resume_from) j["resume_from"] = *m.resume_from;
    if (m.job_network) {
      Json addresses = Json::array();
      for (const Ipv4 address : m.job_network->addresses) addresses.push_back(ipv4_text(address));
      j["job_network"] = {{"pool", m.job_network->pool.text()},
                          {"block", m.job_network->block.text()},
                          {"addresses", std::move(addresses)}};
    }
    return j;
  }
  Json operator()(const KillMsg& m) const {
    Json j = {{"type", "kill"}, {"attempt_id", m.attempt_id}, {"reason", m.reason}, {"grace_ms", m.grace_ms}};
    if (m.checkpoint) j["checkpoint"] = true;
    return j;
  }
  Json operator()(const LogRequestMsg& m) const {
    return {{"type", "log_request"}, {"request_id", m.request_id}, {"attempt_id", m.attempt_id},
            {"tail_lines", m.tail_lines}, {"max_bytes", m.max_bytes}};
  }
  Json operator()(const SetFaultsMsg& m) const { return {{"type", "set_faults"}, {"faults", m.faults}}; }
  Json operator()(const HealthCheckMsg& m) const {
    Json j = {{"type", "health_check"}, {"task_id", m.task_id}, {"suite", to_string(m.suite)}, {"options", m.options},
              {"rank", m.rank},         {"peers", m.peers},     {"session", m.session}};
    if (!m.session_secret.empty()) j["session_secret"] = m.session_secret;
    return j;
  }
};

Json parse_object(std::string_view text) {
  Json j = parse_json_text(text);
  if (!j.is_object()) throw InvalidInput("", "message must be a JSON object");
  return j;
}

const Json& object_child(ObjectReader& r, const char* key) {
  const Json* j = r.child(key);
  if (!j || !j->is_object()) throw InvalidInput(r.field_path(key), "must be an object");
  return *j;
}

}  // namespace

std::string to_string(HealthSuite s) { return s == HealthSuite::accelerator ? "accelerator" : "collective"; }

std::optional<HealthSuite> parse_health_suite(std::string_view s) {
  if (s == "accelerator") return HealthSuite::accelerator;
  if (s == "collective") return HealthSuite::collective;
  return std::nullopt;
}

std::string encode(const AgentMessage& m) { return json_text(std::visit(AgentEncoder{}, m)); }
std::string encode(const DaemonMessage& m) { return json_text(std::visit(DaemonEncoder{}, m)); }

AgentMessage parse_agent_message(std::string_view text) {
  const Json j = parse_object(text);
  ObjectReader r(j, "");
  const std::string type = r.string("type", 1, 32);
  if (type == "hello") {
    HelloMsg m;
    m.protocol = static_cast<int>(r.integer("protocol", 0, 1 << 20));
    m.agent_version = r.string("agent_version", 1, 64);
    m.name = r.string("name", 1, 64);
    check_name("name", m.name);
    m.cores = static_cast<int>(r.integer("cores", 1, 4096));
    m.memory_mb = r.integer("memory_mb", 0, INT64_MAX);
    check_printable("agent_version", m.agent_version);
    if (r.has("labels")) {
      m.labels = r.string_map("labels", 32, 256);
      check_labels("labels", m.labels);
    }
    m.data_addr = r.string("data_addr", 0, 256);
    check_printable("data_addr", m.data_addr);
    m.attempts = parse_reports(r, "attempts");
    if (r.has("faults")) m.faults = r.string_list("faults", kMaxFaults, 256);
    m.cgroups = r.opt_string("cgroups", 1, 512).value_or("");
    check_printable("cgroups", m.cgroups);
    m.job_network = r.opt_string("job_network", 1, 512).value_or("");
    check_printable("job_network", m.job_network);
    r.finish();
    return m;
  }
  if (type == "heartbeat") {
    HeartbeatMsg m;
    m.seq = r.opt_integer("seq", 0, INT64_MAX).value_or(0);
    m.attempts = parse_reports(r, "attempts");
    if (const Json* disks = r.child("disks")) {
      if (!disks->is_array() || disks->size() > 2) throw InvalidInput(r.field_path("disks"), "must be an array of at most 2");
      for (std::size_t i = 0; i < disks->size(); ++i) {
        m.disks.push_back(parse_disk_space((*disks)[i], r.field_path("disks") + "[" + std::to_string(i) + "]"));
      }
    }
    r.finish();
    return m;
  }
  if (type == "attempt_started") {
    AttemptStartedMsg m{r.integer("attempt_id", 1, INT64_MAX), {}};
    if (r.has("environment")) m.environment = r.string_map("environment", kMaxEnvironmentVariables, 64 * 1024);
    r.finish();
    return m;
  }
  if (type == "attempt_exited") {
    AttemptExitedMsg m;
    m.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
    if (auto c = r.opt_integer("exit_code", -1, 255)) m.exit_code = static_cast<int>(*c);
    if (auto s = r.opt_integer("signal", 1, 128)) m.signal = static_cast<int>(*s);
    m.reason = r.opt_string("reason", 0, 4096).value_or("");
    m.steps = r.opt_integer("steps", 0, INT64_MAX).value_or(0);
    m.log_tail = r.opt_string("log_tail", 0, kMaxTextField).value_or("");
    if (auto t = r.opt_integer("first_step_at", 0, INT64_MAX)) m.first_step_at = from_unix_ms(*t);
    m.checkpoint_ms = r.opt_integer("checkpoint_ms", 0, INT64_MAX).value_or(0);
    m.checkpoint_failures = optional_checkpoint_failures(r);
    if (const Json* facts = r.child("user_facts")) {
      try {
        check_user_facts(*facts);
      } catch (const InvalidInput& e) {
        throw InvalidInput("user_facts", e.message());
      }
      m.user_facts = *facts;
    }
    m.user_facts_error = r.opt_string("user_facts_error", 0, 4096).value_or("");
    if (auto peer = r.opt_integer("peer_closed_rank", 0, kMaxRanks - 1)) m.peer_closed_rank = static_cast<int>(*peer);
    r.finish();
    return m;
  }
  if (type == "metrics") {
    MetricsMsg m;
    m.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
    const Json* steps = r.child("steps");
    if (!steps || !steps->is_array()) throw InvalidInput("steps", "must be an array");
    if (steps->size() > kMaxMetricSteps) {
      throw InvalidInput("steps", "at most " + std::to_string(kMaxMetricSteps) + " steps per message");
    }
    for (std::size_t i = 0; i < steps->size(); ++i) {
      m.steps.push_back(parse_step_metric((*steps)[i], "steps[" + std::to_string(i) + "]"));
    }
    if (const Json* checkpoints = r.child("checkpoints")) {
      if (!checkpoints->is_array() || checkpoints->size() > kMaxCheckpointReports) {
        throw InvalidInput("checkpoints", "must be an array of at most " + std::to_string(kMaxCheckpointReports));
      }
      for (std::size_t i = 0; i < checkpoints->size(); ++i) {
        m.checkpoints.push_back(parse_checkpoint_report((*checkpoints)[i], "checkpoints[" + std::to_string(i) + "]"));
      }
    }
    r.finish();
    return m;
  }
  if (type == "faults") {
    FaultsMsg m{r.string_list("faults", kMaxFaults, 256)};
    r.finish();
    return m;
  }
  if (type == "attempts_stopped") {
    AttemptsStoppedMsg m;
    m.protocol = static_cast<int>(r.integer("protocol", 0, 1 << 20));
    m.node = r.string("node", 1, 64);
    check_name("node", m.node);
    m.attempts = parse_attempt_ids(r, "attempts");
    r.finish();
    return m;
  }
  if (type == "health_result") {
    HealthResultMsg m;
    m.task_id = r.integer("task_id", 1, INT64_MAX);
    m.error = r.opt_string("error", 0, 4096).value_or("");
    if (m.error.empty()) {
      m.result = object_child(r, "result");
    } else {
      r.child("result");  // null beside an error
    }
    r.finish();
    return m;
  }
  if (type == "log_reply") {
    LogReplyMsg m;
    m.request_id = r.integer("request_id", 0, INT64_MAX);
    m.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
    // Each invalid byte the agent sent became U+FFFD (3 bytes) on the way.
    m.text = r.opt_string("text", 0, 3 * static_cast<std::size_t>(kMaxLogReplyBytes)).value_or("");
    m.error = r.opt_string("error", 0, 4096).value_or("");
    m.log_bytes = r.opt_integer("log_bytes", 0, INT64_MAX).value_or(0);
    m.truncated = r.opt_boolean("truncated").value_or(false);
    r.finish();
    return m;
  }
  throw InvalidInput("type", "unknown agent message type \"" + type + "\"");
}

bool valid_cluster_name(std::string_view name) {
  return name.size() <= kMaxClusterNameChars &&
         std::ranges::all_of(name, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

DaemonMessage parse_daemon_message(std::string_view text) {
  const Json j = parse_object(text);
  ObjectReader r(j, "");
  const std::string type = r.string("type", 1, 32);
  if (type == "welcome") {
    WelcomeMsg m;
    m.daemon_version = r.string("daemon_version", 0, 64);
    m.heartbeat_interval_ms = static_cast<int>(r.integer("heartbeat_interval_ms", 10, 3'600'000));
    m.node_credential = r.opt_string("node_credential", 1, 256).value_or("");
    m.fence_after_ms = static_cast<int>(r.opt_integer("fence_after_ms", 1, 86'400'000).value_or(0));
    m.cluster = r.opt_string("cluster", 1, kMaxClusterNameChars).value_or("");
    if (!valid_cluster_name(m.cluster)) throw InvalidInput("cluster", "must be lowercase hex digits");
    r.finish();
    return m;
  }
  if (type == "heartbeat_ack") {
    HeartbeatAckMsg m{r.integer("seq", 0, INT64_MAX)};
    r.finish();
    return m;
  }
  if (type == "refused") {
    RefusedMsg m{r.string("reason", 0, 4096)};
    r.finish();
    return m;
  }
  if (type == "stop_noted") {
    r.finish();
    return StopNotedMsg{};
  }
  if (type == "launch") {
    LaunchMsg m;
    m.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
    m.job_id = r.integer("job_id", 1, INT64_MAX);
    m.attempt_number = static_cast<int>(r.integer("attempt_number", 1, 1 << 20));
    const std::string kind = r.string("kind", 1, 32);
    if (kind != "command" && kind != "simulated") throw InvalidInput("kind", "must be \"command\" or \"simulated\"");
    m.kind = kind == "command" ? JobKind::command : JobKind::simulated;
    m.rank = static_cast<int>(r.integer("rank", 0, kMaxRanks - 1));
    m.world_size = static_cast<int>(r.integer("world_size", 1, kMaxRanks));
    if (m.rank >= m.world_size) throw InvalidInput("rank", "must be below world_size");
    m.cores = static_cast<int>(r.integer("cores", 1, 4096));
    m.peers = r.string_list("peers", kMaxRanks, kMaxPeerAddressChars);
    m.master_addr = r.string("master_addr", 0, 256);
    m.master_port = static_cast<int>(r.integer("master_port", 0, 65535));
    m.checkpoint_dir = r.string("checkpoint_dir", 0, 4096);
    m.resume_from = r.opt_string("resume_from", 1, 4096);
    m.user = r.string("user", 1, 256);
    m.job_name = r.opt_string("job_name", 1, 128).value_or("");
    m.node = r.opt_string("node", 1, 256).value_or("");
    m.data_plane_secret = r.string("data_plane_secret", kMinDataPlaneSecret, 256);
    m.preempt_grace_ms = static_cast<int>(r.opt_integer("preempt_grace_ms", 0, 3'600'000).value_or(10000));
    m.memory_mb = r.opt_integer("memory_mb", 1, kMaxJobMemoryMb).value_or(0);
    if (const Json* c = r.child("command")) m.command = parse_command(*c, SpecOrigin::stored);
    if (m.kind == JobKind::command && m.command.argv.empty()) throw InvalidInput("command.argv", "must name a program");
    if (const Json* w = r.child("workload")) m.workload = parse_workload(*w, "workload");
    if (const Json* n = r.child("job_network")) m.job_network = parse_job_network(*n, m.world_size);
    r.finish();
    return m;
  }
  if (type == "kill") {
    KillMsg m;
    m.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
    m.reason = r.opt_string("reason", 0, 4096).value_or("");
    m.grace_ms = static_cast<int>(r.integer("grace_ms", 0, 3'600'000));
    m.checkpoint = r.opt_boolean("checkpoint").value_or(false);
    r.finish();
    return m;
  }
  if (type == "log_request") {
    LogRequestMsg m;
    m.request_id = r.integer("request_id", 0, INT64_MAX);
    m.attempt_id = r.integer("attempt_id", 1, INT64_MAX);
    m.tail_lines = r.integer("tail_lines", 1, kMaxLogLines);
    m.max_bytes = r.integer("max_bytes", 1, kMaxLogReplyBytes);
    r.finish();
    return m;
  }
  if (type == "set_faults") {
    SetFaultsMsg m{r.string_list("faults", kMaxFaults, 256)};
    r.finish();
    return m;
  }
  if (type == "health_check") {
    HealthCheckMsg m;
    m.task_id = r.integer("task_id", 1, INT64_MAX);
    const auto suite = parse_health_suite(r.string("suite", 1, 32));
    if (!suite) throw InvalidInput("suite", "must be \"accelerator\" or \"collective\"");
    m.suite = *suite;
    m.options = object_child(r, "options");
    m.rank = static_cast<int>(r.integer("rank", 0, kMaxRanks - 1));
    if (r.has("peers")) m.peers = r.string_list("peers", kMaxRanks, kMaxPeerAddressChars);
    m.session = r.integer("session", 0, INT64_MAX);
    m.session_secret = r.opt_string("session_secret", kMinDataPlaneSecret, 256).value_or("");
    if (m.suite == HealthSuite::collective && m.rank >= std::ssize(m.peers)) {
      throw InvalidInput("rank", "must name one of the peers");
    }
    if (m.suite == HealthSuite::collective && m.session_secret.empty()) {
      throw InvalidInput("session_secret", "a collective suite needs the session's data-plane secret");
    }
    r.finish();
    return m;
  }
  throw InvalidInput("type", "unknown daemon message type \"" + type + "\"");
}

namespace {

std::string peers_error(const std::vector<std::string>& peers) {
  if (peers.size() > static_cast<std::size_t>(kMaxRanks)) {
    return "peers: at most " + std::to_string(kMaxRanks) + " items, got " + std::to_string(peers.size());
  }
  for (std::size_t i = 0; i < peers.size(); ++i) {
    if (peers[i].size() > kMaxPeerAddressChars) {
      return "peers[" + std::to_string(i) + "]: at most " + std::to_string(kMaxPeerAddressChars) + " characters";
    }
  }
  return "";
}

std::string rank_error(int rank) {
  if (rank >= 0 && rank < kMaxRanks) return "";
  return "rank: must be an integer from 0 to " + std::to_string(kMaxRanks - 1) + ", got " + std::to_string(rank);
}

}  // namespace

std::string bounds_error(const DaemonMessage& message) {
  if (const auto* launch = std::get_if<LaunchMsg>(&message)) {
    if (std::string e = rank_error(launch->rank); !e.empty()) return e;
    if (launch->world_size < 1 || launch->world_size > kMaxRanks) {
      return "world_size: must be an integer from 1 to " + std::to_string(kMaxRanks) + ", got " +
             std::to_string(launch->world_size);
    }
    if (launch->rank >= launch->world_size) return "rank: must be below world_size";
    return peers_error(launch->peers);
  }
  if (const auto* check = std::get_if<HealthCheckMsg>(&message)) {
    if (std::string e = rank_error(check->rank); !e.empty()) return e;
    if (std::string e = peers_error(check->peers); !e.empty()) return e;
    if (check->suite == HealthSuite::collective && check->rank >= std::ssize(check->peers)) {
      return "rank: must name one of the peers";
    }
  }
  return "";
}

}  // namespace trainyard::proto
