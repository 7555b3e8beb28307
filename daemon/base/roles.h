#pragma once
// What each role may do (docs/DESIGN.md "Security"). Every API route names the action it needs
// (daemon/api/routes.cpp) and handlers ask `allows` for the rest; nothing else decides by role.
// Jobs are the one per-owner rule: whoever may submit may see and cancel their own jobs,
// read_all_jobs sees everyone's, cancel_any_job cancels everyone's.
//
//   admin     everything
//   operator  a user, plus reading every job and operating nodes (drain, undrain, health checks,
//             faults); no tokens but its own, no shares
//   user      submits, sees and cancels its own jobs; reads the cluster (nodes, shares, goodput)
//   viewer    reads everything but the audit log, changes nothing (but may revoke its own token)
//   (admin, operator and viewer scrape /metrics; a user does not: it is the whole cluster's)
//   agent     the agent gateway only
#include "store/store.h"

namespace trainyard::daemon {

enum class Action {
  use_api,         // any /v1 route; alone: read nodes, shares, health checks, own jobs and tokens
  use_gateway,     // connect as an agent
  read_all_jobs,   // every user's jobs, not only one's own
  submit_jobs,     // submit, and cancel one's own
  cancel_any_job,  // cancel every user's jobs
  operate_nodes,   // drain, undrain, start health checks, inject faults
  manage_tokens,   // create, list and revoke every token; rotate the join token; forget node credentials
  manage_shares,   // create and change shares, see their members, submit into any share
  read_audit,      // list the audit log (GET /v1/audit)
  read_metrics,    // scrape GET /metrics (Prometheus; no token needed with --metrics-public)
  manage_webhooks,  // webhooks to any URL for any events, and every user's webhooks (users: their own)
};

constexpr bool allows(store::Role role, Action action) {
  switch (role) {
    case store::Role::admin: return action != Action::use_gateway;
    case store::Role::operator_:
      return action == Action::use_api || action == Action::read_all_jobs || action == Action::submit_jobs ||
             action == Action::operate_nodes || action == Action::read_metrics;
    case store::Role::user: return action == Action::use_api || action == Action::submit_jobs;
    case store::Role::viewer:
      return action == Action::use_api || action == Action::read_all_jobs || action == Action::read_metrics;
    case store::Role::agent: return action == Action::use_gateway;
  }
  return false;
}

}  // namespace trainyard::daemon
