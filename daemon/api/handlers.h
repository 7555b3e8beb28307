#pragma once
// The resource handlers a request is dispatched to, and how a route binds one of their members:
// routes.cpp names `on<&JobsApi::get_job>`, and the dispatcher calls it with the handlers it holds.
#include <tuple>

#include "daemon/api/call.h"
#include "daemon/api/cluster.h"
#include "daemon/api/events.h"
#include "daemon/api/health.h"
#include "daemon/api/job_control.h"
#include "daemon/api/jobs.h"
#include "daemon/api/nodes.h"
#include "daemon/api/queue.h"
#include "daemon/api/service.h"
#include "daemon/api/shares.h"
#include "daemon/api/tokens.h"
#include "daemon/api/webhooks.h"

namespace trainyard::daemon {

struct ApiHandlers {
  // WebhooksApi is null while the daemon serves no webhooks; the dispatcher then serves no route of it.
  std::tuple<ServiceApi*, JobsApi*, JobControlApi*, QueueApi*, NodesApi*, HealthApi*, ClusterApi*, TokensApi*,
             SharesApi*, WebhooksApi*, EventsApi*>
      resources;
};

template <class>
struct ResourceOf;
template <class Resource>
struct ResourceOf<void (Resource::*)(ApiCall)> {
  using type = Resource;
};

template <auto handler>
void on(const ApiHandlers& handlers, ApiCall call) {
  using Resource = typename ResourceOf<decltype(handler)>::type;
  (std::get<Resource*>(handlers.resources)->*handler)(std::move(call));
}

}  // namespace trainyard::daemon
