// `trainyard metrics ID`: a training job's loss curve as a table, like a tail of TensorBoard scalars.
// `trainyard goodput`: how much of the allocated core-time became kept training steps.
#include <array>
#include <cstdio>

#include "cli/commands.h"
#include "cli/table.h"

namespace trainyard::cli {

std::vector<FlagSpec> ShowMetrics::flags() { return {{"--max-points", "N", "at most N rows (default 50)"}}; }

ShowMetrics ShowMetrics::parse(const ParsedArgs& args) {
  ShowMetrics metrics;
  metrics.job = parse_job_target(only_positional(args, "ID"));
  metrics.max_points = args.opt_integer("--max-points", 1, 100'000).value_or(50);
  return metrics;
}

std::vector<ApiRequest> ShowMetrics::requests(const InputReader&) const {
  Target target(job.path() + "/metrics");
  target.param("max_points", std::to_string(max_points));
  return {{"GET", target.str(), std::nullopt}};
}

namespace {
bool is_bucket(const Json& point) { return text_of(point, "first_step") != text_of(point, "step"); }
// "2.31" for one step, "2.31 (2.28..2.40)" for the mean and extremes of a bucket of several.
std::string loss_cell(const Json& point) {
  const std::string mean = number_of(point, "loss");
  if (!is_bucket(point)) return mean;
  return mean + " (" + number_of(point, "loss_min") + ".." + number_of(point, "loss_max") + ")";
}
std::string grad_norm_cell(const Json& point) {
  const std::string mean = number_of(point, "grad_norm");
  return is_bucket(point) ? mean + " (max " + number_of(point, "grad_norm_max") + ")" : mean;
}
}  // namespace

std::string ShowMetrics::render(const Replies& replies, const RenderContext&) const {
  const Json& reply = replies.at(0);
  const Json& points = field_or_null(reply, "points");
  if (!points.is_array() || points.empty()) return "Job " + job.text() + " has reported no training steps.\n";
  const bool buckets = text_of(reply, "bucket_steps") != "1";
  Table t({buckets ? "STEPS" : "STEP", "LOSS", "GRAD_NORM", "PARAM_NORM", "LR", "SAMPLES/S", "NAN", "SPIKES"});
  for (const Json& p : points) {
    const std::string steps = buckets ? text_of(p, "first_step") + "-" + text_of(p, "step") : text_of(p, "step");
    t.add_row({steps, loss_cell(p), grad_norm_cell(p),
               number_of(p, "param_norm"), number_of(p, "lr", 3), number_of(p, "samples_per_s", 5),
               text_of(p, "non_finite_losses"), text_of(p, "spikes")});
  }
  std::string out = t.str();
  const Json& spikes = field_or_null(reply, "spikes");
  if (spikes.is_array() && !spikes.empty()) {
    out += "\nGradient-norm spikes:\n";
    for (const Json& s : spikes) {
      const std::string back = text_of(s, "steps_to_return");
      out += "  step " + text_of(s, "started_at_step") +
             (back == kAbsent ? ": not back to normal yet\n" : ": back to normal after " + back + " steps\n");
    }
  }
  return out;
}

// ---- goodput ----

std::vector<FlagSpec> ShowGoodput::flags() { return {{"--limit", "N", "the newest N jobs (default 1000)"}}; }

ShowGoodput ShowGoodput::parse(const ParsedArgs& args) {
  if (!args.positionals.empty()) throw InvalidInput(args.positionals.front(), "unexpected argument");
  return ShowGoodput{args.opt_integer("--limit", 1, 10'000)};
}

std::vector<ApiRequest> ShowGoodput::requests(const InputReader&) const {
  Target target("/v1/goodput");
  target.param("limit", limit ? std::optional(std::to_string(*limit)) : std::nullopt);
  return {{"GET", target.str(), std::nullopt}};
}

namespace {
// GET /v1/goodput's lost_core_s keys, in the order of the table's columns.
constexpr std::array kLostCauses = {"preflight", "restart", "checkpoint", "redone", "stalled"};

std::string percent(const Json& row) {
  const Json& v = field_or_null(row, "goodput");
  if (!v.is_number()) return std::string(kAbsent);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v.get<double>());
  return buf;
}
std::vector<std::string> goodput_cells(const Json& row) {
  const Json& lost = field_or_null(row, "lost_core_s");
  std::vector<std::string> cells = {percent(row), number_of(row, "allocated_core_s"), number_of(row, "productive_core_s")};
  for (const char* cause : kLostCauses) cells.push_back(number_of(lost, cause));
  return cells;
}
}  // namespace

std::string ShowGoodput::render(const Replies& replies, const RenderContext&) const {
  Table t({"JOB", "NAME", "STATE", "GOODPUT", "ALLOC(core-s)", "KEPT(core-s)", "PREFLIGHT", "RESTART", "CHECKPOINT",
           "REDONE", "STALLED"});
  const Json& jobs = field_or_null(replies.at(0), "jobs");
  if (jobs.is_array()) {
    for (const Json& row : jobs) {
      std::vector<std::string> cells = {text_of(row, "job_id"), text_of(row, "name"), text_of(row, "state")};
      for (auto& cell : goodput_cells(row)) cells.push_back(std::move(cell));
      t.add_row(std::move(cells));
    }
  }
  std::vector<std::string> total = {"all", "", ""};
  for (auto& cell : goodput_cells(field_or_null(replies.at(0), "cluster"))) total.push_back(std::move(cell));
  t.add_row(std::move(total));
  return t.str();
}

}  // namespace trainyard::cli
