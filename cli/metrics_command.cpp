// `trainyard metrics ID`: a training job's loss curve as a table, like a tail of TensorBoard scalars.
#include "cli/commands.h"
#include "cli/table.h"

namespace trainyard::cli {

std::vector<FlagSpec> ShowMetrics::flags() { return {{"--max-points", "N", "at most N rows (default 50)"}}; }

ShowMetrics ShowMetrics::parse(const ParsedArgs& args) {
  ShowMetrics metrics;
  metrics.id = parse_job_id(only_positional(args, "ID"));
  metrics.max_points = args.opt_integer("--max-points", 1, 100'000).value_or(50);
  return metrics;
}

std::vector<ApiRequest> ShowMetrics::requests(const InputReader&) const {
  Target target("/v1/jobs/" + std::to_string(id) + "/metrics");
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
  if (!points.is_array() || points.empty()) return "Job " + std::to_string(id) + " has reported no training steps.\n";
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

}  // namespace trainyard::cli
