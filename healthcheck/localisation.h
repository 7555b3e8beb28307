#pragma once
// Localising a bad node after a collective run over 3 or more nodes failed or was slow
// (verdict.h: in a ring, one bad node makes every rank look bad).
//
// Design note. The planner proposes follow-up tests: every pair of the run's nodes, arranged by the
// circle method of round-robin tournaments into rounds of disjoint pairs, so a round runs all its
// pairs at once (n-1 rounds for even n, n for odd; each node is in one pair per round). All pairs,
// rather than rings leaving one node out, because pairs still localise when several nodes are bad:
// as long as two nodes are good, every good node shares a pair with another good one.
//
// The decoder is the "definite defectives" rule of group testing, and works for any follow-up
// sets, not only pairs: a test passes only if all its members are good, so every member of a passed
// test is cleared; a failed or slow test whose members are all cleared but one proves that one bad
// (UNHEALTHY if a proving test gave a wrong result or broke, SUSPECT if it was only slow). Members
// of bad tests that are neither cleared nor proven could not be localised and keep the worst state
// of their tests, with a reason that says so.
//
// A test is slow when, for some collective, its busbw (its slowest rank's) is below
// `suspect_fraction` of a reference, or below `min_busbw`. The reference is the median over nodes
// of each node's best busbw in any correct test: a good node's best is a test with another good
// node, so while most nodes are good the median is a good pair's speed.
//
// Pure: no I/O, no clock.
#include <map>
#include <string>
#include <vector>

#include "healthcheck/results.h"
#include "healthcheck/verdict.h"

namespace trainyard::healthcheck {

using TestSet = std::vector<std::string>;  // node names; the order is the rank order

struct LocalisationPlan {
  std::vector<std::vector<TestSet>> rounds;  // the sets of one round are disjoint
  bool operator==(const LocalisationPlan&) const = default;
};

// Empty for fewer than 3 nodes (nothing to compare with).
LocalisationPlan plan_localisation(const std::vector<std::string>& nodes);
// The same within groups (split_into_groups(nodes, group_size, 3)): pairs are compared only inside
// a group, and the groups' rounds run side by side, so a set of n nodes costs about group_size - 1
// rounds of n / 2 pairs rather than n - 1 rounds: the plan grows with the group, not the set.
LocalisationPlan plan_localisation(const std::vector<std::string>& nodes, std::size_t group_size);

// `nodes` cut, in order, into the fewest groups of at most `max_size` whose sizes differ by one at
// most, but never a group smaller than `min_size` while there are two or more (fewer, larger groups
// instead). `max_size` 0 counts as 1. Pure: the same nodes in the same order give the same groups.
std::vector<std::vector<std::string>> split_into_groups(const std::vector<std::string>& nodes, std::size_t max_size,
                                                        std::size_t min_size = 1);

// One verdict per node named in `follow_ups`, in order of first appearance.
std::vector<NodeVerdict> localise(const std::vector<CollectiveRun>& follow_ups, const CollectivePolicy& policy);

// What the verdicts were made from, for people to see (the dashboard's pair matrix): the reference
// busbw per collective, and each follow-up test's outcome with its own busbw against it.
struct FollowUpTest {
  TestSet nodes;
  std::string outcome;  // "passed", "slow" or "failed"
  std::string why;      // empty when passed
  std::map<CollectiveKind, double> busbw;  // the run's (its slowest rank's), where it completed exactly
};
struct LocalisationReport {
  std::map<CollectiveKind, double> reference_busbw;
  double suspect_fraction = 0;
  std::vector<FollowUpTest> tests;
};
LocalisationReport report_localisation(const std::vector<CollectiveRun>& follow_ups, const CollectivePolicy& policy);

}  // namespace trainyard::healthcheck
