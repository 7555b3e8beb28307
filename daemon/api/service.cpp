// The daemon about itself: liveness, the cluster's own condition, this API's OpenAPI document, and
// the Prometheus exposition.
#include "daemon/api/service.h"
#include "daemon/api/call.h"
#include "daemon/api/openapi.h"
#include "daemon/api/schemas.h"
#include "daemon/base/prometheus.h"
#include "daemon/job_manager.h"
#include "daemon/standby.h"

namespace trainyard::daemon {

void ServiceApi::set_metrics_exposition(std::function<std::string()> render, bool public_access) {
  render_metrics_ = std::move(render);
  metrics_public_ = public_access;
}

void ServiceApi::healthz(ApiCall call) {
  std::optional<std::string> problem = store_problem_ ? store_problem_() : std::nullopt;
  if (!problem) problem = jobs_.store_outage().problem();
  // 503 so a load balancer sends clients elsewhere: nothing this daemon would acknowledge can commit.
  call.reply(problem ? 503 : 200, healthz_body(version_, true, lease_, problem));
}

void ServiceApi::cluster_status(ApiCall call) {
  Json body = Json::object();
  if (const auto failing = jobs_.store_outage().failing()) {
    body["store_problem"] = {{"since", format_time(failing->since)}, {"error", failing->error}};
  }
  call.reply(200, body);
}

void ServiceApi::openapi(ApiCall call) {
  if (openapi_text_.empty()) openapi_text_ = json_text(openapi_document(api_routes(), api_schemas(), version_));
  (*call.respond)(net::HttpResponse{200, "application/json", openapi_text_, {}});
}

void ServiceApi::metrics_exposition(ApiCall call) {
  (*call.respond)(net::HttpResponse{200, std::string(prom::kContentType), render_metrics_(), {}});
}

}  // namespace trainyard::daemon
