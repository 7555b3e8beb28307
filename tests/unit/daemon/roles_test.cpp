// The role policy, whole: every role against every action.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <utility>

#include "daemon/base/roles.h"

namespace trainyard::daemon {
namespace {

constexpr std::array kRoles = {store::Role::admin, store::Role::operator_, store::Role::user, store::Role::viewer, store::Role::agent};
constexpr std::array kActions = {Action::use_api,        Action::use_gateway,   Action::read_all_jobs,
                                 Action::submit_jobs,    Action::cancel_any_job, Action::operate_nodes,
                                 Action::manage_tokens,  Action::manage_shares, Action::read_audit,
                                 Action::read_metrics,   Action::manage_webhooks};

const char* name(Action a) {
  switch (a) {
    case Action::use_api: return "use_api";
    case Action::use_gateway: return "use_gateway";
    case Action::read_all_jobs: return "read_all_jobs";
    case Action::submit_jobs: return "submit_jobs";
    case Action::cancel_any_job: return "cancel_any_job";
    case Action::operate_nodes: return "operate_nodes";
    case Action::manage_tokens: return "manage_tokens";
    case Action::manage_shares: return "manage_shares";
    case Action::read_audit: return "read_audit";
    case Action::read_metrics: return "read_metrics";
    case Action::manage_webhooks: return "manage_webhooks";
  }
  return "?";
}

TEST(Roles, AllowExactlyTheTable) {
  // Columns: use_api, use_gateway, read_all_jobs, submit_jobs, cancel_any_job, operate_nodes, manage_tokens, manage_shares,
  // read_audit, read_metrics, manage_webhooks
  const std::map<store::Role, std::array<bool, kActions.size()>> table = {
      {store::Role::admin, {true, false, true, true, true, true, true, true, true, true, true}},
      {store::Role::operator_, {true, false, true, true, false, true, false, false, false, true, false}},
      {store::Role::user, {true, false, false, true, false, false, false, false, false, false, false}},
      {store::Role::viewer, {true, false, true, false, false, false, false, false, false, true, false}},
      {store::Role::agent, {false, true, false, false, false, false, false, false, false, false, false}},
  };
  ASSERT_EQ(table.size(), kRoles.size());
  for (const store::Role role : kRoles) {
    for (std::size_t i = 0; i < kActions.size(); ++i) {
      EXPECT_EQ(allows(role, kActions[i]), table.at(role)[i]) << to_string(role) << " x " << name(kActions[i]);
    }
  }
}

TEST(Roles, RoundTripThroughTheirNames) {
  for (const store::Role role : kRoles) EXPECT_EQ(store::parse_role(to_string(role)), role);
  EXPECT_EQ(to_string(store::Role::operator_), "operator");
  EXPECT_EQ(store::parse_role("Viewer"), store::Role::viewer);
  EXPECT_FALSE(store::parse_role("root"));
}

}  // namespace
}  // namespace trainyard::daemon
