#include "proto/metrics.h"

#include <cmath>
#include <limits>

namespace trainyard::inline proto {
namespace {

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

double number_or_nan(ObjectReader& r, const char* key) {
  const Json* v = r.child(key);  // null reads as absent
  if (!v) return std::numeric_limits<double>::quiet_NaN();
  if (!v->is_number()) throw InvalidInput(r.field_path(key), "must be a number or null");
  return v->get<double>();
}

}  // namespace

Json to_json(const StepMetric& m) {
  Json j = {{"step", m.step},
            {"loss", finite_or_null(m.loss)},
            {"grad_norm", finite_or_null(m.grad_norm)},
            {"param_norm", finite_or_null(m.param_norm)},
            {"lr", finite_or_null(m.lr)},
            {"samples_per_s", finite_or_null(m.samples_per_s)},
            {"spike", m.spike}};
  if (m.spike_steps_to_return) j["spike_steps_to_return"] = *m.spike_steps_to_return;
  return j;
}

StepMetric parse_step_metric(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  StepMetric m;
  m.step = r.integer("step", 1, INT64_MAX);
  m.loss = number_or_nan(r, "loss");
  m.grad_norm = number_or_nan(r, "grad_norm");
  m.param_norm = number_or_nan(r, "param_norm");
  m.lr = number_or_nan(r, "lr");
  m.samples_per_s = number_or_nan(r, "samples_per_s");
  m.spike = r.opt_boolean("spike").value_or(false);
  m.spike_steps_to_return = r.opt_integer("spike_steps_to_return", 1, INT64_MAX);
  r.finish();
  return m;
}

}  // namespace trainyard::proto
