#include "healthcheck/localisation.h"

#include <algorithm>
#include <map>
#include <optional>

#include "healthcheck/format.h"
#include "healthcheck/run_figures.h"

namespace trainyard::healthcheck {
namespace {

enum class Outcome { passed, slow, failed };

struct JudgedTest {
  const CollectiveRun* run;
  Outcome outcome;
  std::string why;  // empty when passed
};

// Per collective, the median over nodes of each node's best busbw in a correct test.
std::map<CollectiveKind, double> reference_busbw(const std::vector<CollectiveRun>& runs) {
  std::map<CollectiveKind, double> reference;
  for (CollectiveKind kind : kCollectiveKinds) {
    std::map<std::string, double> best;
    for (const CollectiveRun& run : runs) {
      const std::optional<double> b = run_busbw(run, kind);
      if (!b) continue;
      for (const std::string& node : run.nodes) best[node] = std::max(best[node], *b);
    }
    std::vector<double> values;
    for (const auto& [node, value] : best) values.push_back(value);
    reference[kind] = median(std::move(values));
  }
  return reference;
}

JudgedTest judge(const CollectiveRun& run, const std::map<CollectiveKind, double>& reference,
                 const CollectivePolicy& policy) {
  if (std::string failure = run_failure(run); !failure.empty()) return {&run, Outcome::failed, failure};
  for (CollectiveKind kind : kCollectiveKinds) {
    const double mine = run_busbw(run, kind).value_or(0);
    const double relative_floor = policy.suspect_fraction * reference.at(kind);
    if (mine < relative_floor) {
      return {&run, Outcome::slow,
              std::string(trainyard::to_string(kind)) + " busbw " + rate_text(mine) + " below " +
                  short_number(policy.suspect_fraction) + " x the reference " + rate_text(reference.at(kind))};
    }
    if (policy.min_busbw && mine < *policy.min_busbw) {
      return {&run, Outcome::slow,
              std::string(trainyard::to_string(kind)) + " busbw " + rate_text(mine) + " below the floor of " +
                  rate_text(*policy.min_busbw)};
    }
  }
  return {&run, Outcome::passed, ""};
}

std::vector<std::string> others(const TestSet& set, const std::string& node) {
  std::vector<std::string> rest;
  for (const std::string& member : set) {
    if (member != node) rest.push_back(member);
  }
  return rest;
}

std::string outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed: return "passed";
    case Outcome::slow: return "slow";
    case Outcome::failed: return "failed";
  }
  return "failed";
}

NodeState state_of(Outcome outcome) { return outcome == Outcome::failed ? NodeState::unhealthy : NodeState::suspect; }

std::string test_text(const JudgedTest& test, const std::string& node) {
  const std::vector<std::string> rest = others(test.run->nodes, node);
  return (test.outcome == Outcome::failed ? "failed" : "slow") + std::string(rest.empty() ? "" : " with " + joined(rest)) +
         ": " + test.why;
}

// The most damning of `tests`: a failure over a slowness.
const JudgedTest& worst(const std::vector<const JudgedTest*>& tests) {
  const auto it = std::find_if(tests.begin(), tests.end(), [](const JudgedTest* t) { return t->outcome == Outcome::failed; });
  return **(it != tests.end() ? it : tests.begin());
}

}  // namespace

LocalisationPlan plan_localisation(const std::vector<std::string>& nodes) {
  LocalisationPlan plan;
  if (nodes.size() < 3) return plan;
  // Seat 0 stays; the others rotate one place per round. An empty seat is a bye (odd counts).
  std::vector<std::optional<std::size_t>> seats;
  for (std::size_t i = 0; i < nodes.size(); ++i) seats.emplace_back(i);
  if (seats.size() % 2 == 1) seats.emplace_back(std::nullopt);
  const std::size_t n = seats.size();
  for (std::size_t round = 0; round + 1 < n; ++round) {
    std::vector<TestSet> pairs;
    for (std::size_t i = 0; i < n / 2; ++i) {
      const auto& a = seats[i];
      const auto& b = seats[n - 1 - i];
      if (a && b) pairs.push_back({nodes[*a], nodes[*b]});
    }
    plan.rounds.push_back(std::move(pairs));
    std::rotate(seats.begin() + 1, seats.end() - 1, seats.end());
  }
  return plan;
}

std::vector<std::vector<std::string>> split_into_groups(const std::vector<std::string>& nodes, std::size_t max_size,
                                                        std::size_t min_size) {
  std::vector<std::vector<std::string>> groups;
  if (nodes.empty()) return groups;
  const std::size_t n = nodes.size();
  std::size_t count = (n + std::max<std::size_t>(max_size, 1) - 1) / std::max<std::size_t>(max_size, 1);
  if (min_size > 0) count = std::max<std::size_t>(1, std::min(count, n / min_size));
  std::size_t begin = 0;
  for (std::size_t g = 0; g < count; ++g) {
    const std::size_t size = n / count + (g < n % count ? 1 : 0);
    groups.emplace_back(nodes.begin() + static_cast<std::ptrdiff_t>(begin), nodes.begin() + static_cast<std::ptrdiff_t>(begin + size));
    begin += size;
  }
  return groups;
}

LocalisationPlan plan_localisation(const std::vector<std::string>& nodes, std::size_t group_size) {
  LocalisationPlan plan;
  for (const auto& group : split_into_groups(nodes, group_size, 3)) {
    const LocalisationPlan own = plan_localisation(group);
    if (plan.rounds.size() < own.rounds.size()) plan.rounds.resize(own.rounds.size());
    for (std::size_t r = 0; r < own.rounds.size(); ++r) {
      plan.rounds[r].insert(plan.rounds[r].end(), own.rounds[r].begin(), own.rounds[r].end());
    }
  }
  return plan;
}

LocalisationReport report_localisation(const std::vector<CollectiveRun>& follow_ups, const CollectivePolicy& policy) {
  LocalisationReport report{reference_busbw(follow_ups), policy.suspect_fraction, {}};
  for (const CollectiveRun& run : follow_ups) {
    const JudgedTest judged = judge(run, report.reference_busbw, policy);
    FollowUpTest test{run.nodes, outcome_name(judged.outcome), judged.why, {}};
    for (CollectiveKind kind : kCollectiveKinds) {
      if (const auto b = run_busbw(run, kind)) test.busbw[kind] = *b;
    }
    report.tests.push_back(std::move(test));
  }
  return report;
}

std::vector<NodeVerdict> localise(const std::vector<CollectiveRun>& follow_ups, const CollectivePolicy& policy) {
  const std::map<CollectiveKind, double> reference = reference_busbw(follow_ups);
  std::vector<JudgedTest> tests;
  for (const CollectiveRun& run : follow_ups) tests.push_back(judge(run, reference, policy));

  std::vector<std::string> order;  // first appearance
  std::map<std::string, const JudgedTest*> cleared_by;
  for (const JudgedTest& test : tests) {
    for (const std::string& node : test.run->nodes) {
      if (std::find(order.begin(), order.end(), node) == order.end()) order.push_back(node);
      if (test.outcome == Outcome::passed && !cleared_by.count(node)) cleared_by[node] = &test;
    }
  }

  std::map<std::string, std::vector<const JudgedTest*>> proven_by;    // bad tests where all others are cleared
  std::map<std::string, std::vector<const JudgedTest*>> implicated_by;  // every bad test of an uncleared node
  for (const JudgedTest& test : tests) {
    if (test.outcome == Outcome::passed) continue;
    std::vector<std::string> uncleared;
    for (const std::string& node : test.run->nodes) {
      if (!cleared_by.count(node)) uncleared.push_back(node);
    }
    for (const std::string& node : uncleared) implicated_by[node].push_back(&test);
    if (uncleared.size() == 1) proven_by[uncleared.front()].push_back(&test);
  }

  std::vector<NodeVerdict> verdicts;
  for (const std::string& node : order) {
    if (const auto it = cleared_by.find(node); it != cleared_by.end()) {
      const std::vector<std::string> rest = others(it->second->run->nodes, node);
      verdicts.push_back({node, NodeState::healthy, "passed a follow-up collective test with " + joined(rest)});
    } else if (const auto proof = proven_by.find(node); proof != proven_by.end()) {
      const JudgedTest& evidence = worst(proof->second);
      verdicts.push_back({node, state_of(evidence.outcome), "localised: " + test_text(evidence, node)});
    } else {
      const JudgedTest& evidence = worst(implicated_by.at(node));
      verdicts.push_back({node, state_of(evidence.outcome),
                          "implicated by " + std::to_string(implicated_by.at(node).size()) +
                              " follow-up tests but not localised: " + test_text(evidence, node)});
    }
  }
  return verdicts;
}

}  // namespace trainyard::healthcheck
