#include "healthcheck/health_json.h"

#include <cfloat>
#include <cmath>
#include <functional>

namespace trainyard::healthcheck {
namespace {

constexpr std::size_t kMaxReason = 1 << 16;
constexpr std::size_t kMaxCores = 4096;
constexpr std::size_t kMaxNodes = 4096;
constexpr double kMaxFigure = DBL_MAX;

double finite(double x) { return std::isinf(x) ? std::copysign(kMaxFigure, x) : x; }

std::string item_path(const std::string& array_path, std::size_t i) { return array_path + "[" + std::to_string(i) + "]"; }

// A required array under `key`, each item read by `parse(item, item_path)`.
template <typename T>
std::vector<T> array_of(ObjectReader& r, std::string_view key, std::size_t max_items,
                        const std::function<T(const Json&, const std::string&)>& parse) {
  const Json* a = r.child(key);
  const std::string path = r.field_path(key);
  if (!a) throw InvalidInput(path, "is required");
  if (!a->is_array()) throw InvalidInput(path, "must be an array");
  if (a->size() > max_items) throw InvalidInput(path, "must have at most " + std::to_string(max_items) + " items");
  std::vector<T> out;
  for (std::size_t i = 0; i < a->size(); ++i) out.push_back(parse((*a)[i], item_path(path, i)));
  return out;
}

template <typename Enum>
Enum enum_field(ObjectReader& r, std::string_view key, std::optional<Enum> (*parse)(std::string_view),
                const char* allowed) {
  const std::optional<Enum> value = parse(r.string(key, 1, 64));
  if (!value) throw InvalidInput(r.field_path(key), std::string("must be one of ") + allowed);
  return *value;
}

NodeState node_state_field(ObjectReader& r, std::string_view key) {
  const std::optional<NodeState> state = parse_node_state(r.string(key, 1, 32));
  if (!state || (*state != NodeState::healthy && *state != NodeState::suspect && *state != NodeState::unhealthy)) {
    throw InvalidInput(r.field_path(key), "must be HEALTHY, SUSPECT or UNHEALTHY");
  }
  return *state;
}

std::string node_name(const Json& j, const std::string& path) {
  if (!j.is_string()) throw InvalidInput(path, "must be a string");
  const std::string name = j.get<std::string>();
  check_name(path, name);
  return name;
}

std::vector<std::string> node_names(ObjectReader& r, std::string_view key) {
  return array_of<std::string>(r, key, kMaxNodes, node_name);
}

Json array_json(const auto& items) {
  Json a = Json::array();
  for (const auto& item : items) a.push_back(to_json(item));
  return a;
}

}  // namespace

Json to_json(const CheckResult& c) {
  return {{"test", to_string(c.test)},       {"status", to_string(c.status)},   {"measured", finite(c.measured)},
          {"limit", finite(c.limit)},        {"duration_ms", c.duration_ms},    {"reason", c.reason}};
}

CheckResult check_result_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CheckResult c;
  c.test = enum_field(r, "test", parse_accelerator_test, "gemm, stochastic_rounding, memory");
  c.status = enum_field(r, "status", parse_check_status, "passed, failed, timed_out, crashed, skipped");
  c.measured = r.number("measured", -kMaxFigure, kMaxFigure);
  c.limit = r.number("limit", -kMaxFigure, kMaxFigure);
  c.duration_ms = r.number("duration_ms", 0, kMaxFigure);
  c.reason = r.string("reason", 0, kMaxReason);
  r.finish();
  return c;
}

Json to_json(const CoreResult& c) {
  return {{"core", c.core}, {"checks", array_json(c.checks)}, {"gemm_ms", c.gemm_ms}};
}

CoreResult core_result_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CoreResult c;
  c.core = static_cast<int>(r.integer("core", 0, kMaxCores - 1));
  c.checks = array_of<CheckResult>(r, "checks", 16, check_result_from_json);
  c.gemm_ms = r.opt_number("gemm_ms", 0, kMaxFigure).value_or(0);  // absent in checks stored before protocol 16
  r.finish();
  return c;
}

Json to_json(const AcceleratorReport& report) {
  return {{"cores", array_json(report.cores)}, {"duration_ms", report.duration_ms}};
}

AcceleratorReport accelerator_report_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  AcceleratorReport report;
  report.cores = array_of<CoreResult>(r, "cores", kMaxCores, core_result_from_json);
  report.duration_ms = r.number("duration_ms", 0, kMaxFigure);
  r.finish();
  return report;
}

Json to_json(const CollectiveMeasurement& m) {
  return {{"kind", std::string(trainyard::to_string(m.kind))},
          {"exact", m.exact},
          {"bytes", m.bytes},
          {"seconds", m.seconds},
          {"busbw", finite(m.busbw)},
          {"error", m.error}};
}

CollectiveMeasurement collective_measurement_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CollectiveMeasurement m;
  m.kind = enum_field(r, "kind", parse_collective_kind, "all_reduce, all_gather, reduce_scatter");
  m.exact = r.boolean("exact");
  m.bytes = static_cast<std::size_t>(r.integer("bytes", 0, INT64_MAX));
  m.seconds = r.number("seconds", 0, kMaxFigure);
  m.busbw = r.number("busbw", 0, kMaxFigure);
  m.error = r.string("error", 0, kMaxReason);
  r.finish();
  return m;
}

Json to_json(const RankCollectiveResult& result) {
  Json j = {{"rank", result.rank},
            {"world_size", result.world_size},
            {"collectives", array_json(result.collectives)},
            {"error", result.error}};
  if (result.failed_peer) j["failed_peer"] = *result.failed_peer;
  if (result.refused_connections > 0) j["refused_connections"] = result.refused_connections;
  return j;
}

RankCollectiveResult rank_collective_result_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  RankCollectiveResult result;
  result.world_size = static_cast<int>(r.integer("world_size", 1, kMaxNodes));
  result.rank = static_cast<int>(r.integer("rank", 0, result.world_size - 1));
  result.collectives = array_of<CollectiveMeasurement>(r, "collectives", 16, collective_measurement_from_json);
  result.error = r.string("error", 0, kMaxReason);
  if (auto peer = r.opt_integer("failed_peer", 0, result.world_size - 1)) result.failed_peer = static_cast<int>(*peer);
  result.refused_connections =
      static_cast<std::uint64_t>(r.opt_integer("refused_connections", 0, INT64_MAX).value_or(0));
  r.finish();
  return result;
}

Json to_json(const CollectiveRun& run) { return {{"nodes", run.nodes}, {"ranks", array_json(run.ranks)}}; }

CollectiveRun collective_run_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CollectiveRun run;
  run.nodes = node_names(r, "nodes");
  if (run.nodes.empty()) throw InvalidInput(r.field_path("nodes"), "must not be empty");
  run.ranks = array_of<RankCollectiveResult>(r, "ranks", kMaxNodes, rank_collective_result_from_json);
  if (run.ranks.size() != run.nodes.size()) throw InvalidInput(r.field_path("ranks"), "must have one result per node");
  for (std::size_t i = 0; i < run.ranks.size(); ++i) {
    const std::string at = item_path(r.field_path("ranks"), i);
    if (run.ranks[i].rank != static_cast<int>(i)) throw InvalidInput(at + ".rank", "must be " + std::to_string(i));
    if (run.ranks[i].world_size != static_cast<int>(run.nodes.size())) {
      throw InvalidInput(at + ".world_size", "must be the number of nodes, " + std::to_string(run.nodes.size()));
    }
  }
  r.finish();
  return run;
}

Json to_json(const LocalisationReport& report) {
  const auto by_kind = [](const std::map<CollectiveKind, double>& values) {
    Json out = Json::object();
    for (const auto& [kind, value] : values) out[std::string(trainyard::to_string(kind))] = value;
    return out;
  };
  Json tests = Json::array();
  for (const FollowUpTest& t : report.tests) {
    tests.push_back({{"nodes", t.nodes}, {"outcome", t.outcome}, {"why", t.why}, {"busbw", by_kind(t.busbw)}});
  }
  return {{"reference_busbw", by_kind(report.reference_busbw)},
          {"suspect_fraction", report.suspect_fraction},
          {"tests", tests}};
}

Json to_json(const NodeVerdict& v) { return {{"node", v.node}, {"state", to_string(v.state)}, {"reason", v.reason}}; }

NodeVerdict node_verdict_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  NodeVerdict v;
  v.node = r.string("node", 1, 64);
  check_name(r.field_path("node"), v.node);
  v.state = node_state_field(r, "state");
  v.reason = r.string("reason", 0, kMaxReason);
  r.finish();
  return v;
}

Json to_json(const CollectiveVerdict& v) {
  Json j = {{"nodes", array_json(v.nodes)}, {"needs_localisation", v.needs_localisation}};
  if (!v.interference.empty()) j["interference"] = v.interference;
  return j;
}

CollectiveVerdict collective_verdict_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CollectiveVerdict v;
  v.nodes = array_of<NodeVerdict>(r, "nodes", kMaxNodes, node_verdict_from_json);
  v.needs_localisation = r.boolean("needs_localisation");
  v.interference = r.opt_string("interference", 1, kMaxReason).value_or("");
  r.finish();
  return v;
}

Json to_json(const LocalisationPlan& p) { return {{"rounds", p.rounds}}; }

LocalisationPlan localisation_plan_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  LocalisationPlan p;
  const auto test_set = [](const Json& set, const std::string& at) {
    if (!set.is_array() || set.empty()) throw InvalidInput(at, "must be a non-empty array of node names");
    TestSet names;
    for (std::size_t i = 0; i < set.size(); ++i) names.push_back(node_name(set[i], item_path(at, i)));
    return names;
  };
  const auto round = [&](const Json& sets, const std::string& at) {
    if (!sets.is_array()) throw InvalidInput(at, "must be an array of test sets");
    std::vector<TestSet> out;
    for (std::size_t i = 0; i < sets.size(); ++i) out.push_back(test_set(sets[i], item_path(at, i)));
    return out;
  };
  p.rounds = array_of<std::vector<TestSet>>(r, "rounds", kMaxNodes, round);
  r.finish();
  return p;
}

Json to_json(const AcceleratorSuiteOptions& o) {
  return {{"budget_ms", o.budget.count()},
          {"gemm_size", o.gemm_size},
          {"rounding_samples", o.rounding_samples},
          {"false_alarm_probability", o.false_alarm_probability},
          {"memory_words", o.memory_words},
          {"parallel_cores", o.parallel_cores},
          {"timing_repeats", o.timing_repeats},
          {"seed", o.seed}};
}

AcceleratorSuiteOptions accelerator_suite_options_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  AcceleratorSuiteOptions o;
  o.budget = std::chrono::milliseconds(r.integer("budget_ms", 1, 3'600'000));
  o.gemm_size = static_cast<int>(r.integer("gemm_size", 1, 1024));
  o.rounding_samples = static_cast<std::size_t>(r.integer("rounding_samples", 1, 1 << 26));
  o.false_alarm_probability = r.number("false_alarm_probability", 1e-300, 0.5);
  o.memory_words = static_cast<std::size_t>(r.integer("memory_words", 1, 1 << 26));
  o.parallel_cores = static_cast<int>(r.integer("parallel_cores", 0, kMaxCores));
  o.timing_repeats = static_cast<int>(r.integer("timing_repeats", 1, 1000));
  o.seed = static_cast<std::uint64_t>(r.integer("seed", 0, INT64_MAX));
  r.finish();
  return o;
}

Json to_json(const CollectiveSuiteOptions& o) { return {{"elements", o.elements}, {"iterations", o.iterations}}; }

CollectiveSuiteOptions collective_suite_options_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CollectiveSuiteOptions o;
  o.elements = static_cast<std::size_t>(r.integer("elements", 1, 1 << 28));
  o.iterations = static_cast<int>(r.integer("iterations", 1, 1000));
  r.finish();
  return o;
}

Json to_json(const CollectivePolicy& p) {
  Json j = {{"suspect_fraction", p.suspect_fraction}};
  if (p.min_busbw) j["min_busbw"] = *p.min_busbw;
  return j;
}

CollectivePolicy collective_policy_from_json(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  CollectivePolicy p;
  p.suspect_fraction = r.number("suspect_fraction", 0, 1);
  p.min_busbw = r.opt_number("min_busbw", 0, kMaxFigure);
  r.finish();
  return p;
}

}  // namespace trainyard::healthcheck
