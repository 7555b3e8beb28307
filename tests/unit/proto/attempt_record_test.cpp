// An attempt's stored record (proto/job.h attempt_record): to_json's document, with the provenance
// spliced in as rendered once, so a store write never re-renders or copies it.
#include <gtest/gtest.h>

#include "proto/job.h"
#include "proto/json_reader.h"

namespace trainyard::inline proto {
namespace {

Attempt finished_attempt() {
  Attempt a;
  a.id = 7;
  a.job_id = 3;
  a.number = 2;
  a.nodes = {"node-1", "node-2"};
  a.cores_per_node = 4;
  a.state = AttemptState::failed;
  a.exit_code = 1;
  a.reason = "exited 1: \"quoted\" \x01";
  return a;
}

TEST(AttemptRecord, IsToJsonsDocumentWithOrWithoutProvenance) {
  Attempt a = finished_attempt();
  EXPECT_EQ(parse_json_text(attempt_record(a)), to_json(a));
  EXPECT_FALSE(parse_json_text(attempt_record(a)).contains("provenance"));

  a.provenance = AttemptProvenance(Json{{"job", 3}, {"ranks", Json::array({{{"rank", 0}, {"node", "node-1"}}})}});
  const Json stored = parse_json_text(attempt_record(a));
  EXPECT_EQ(stored, to_json(a));
  EXPECT_EQ(stored["provenance"]["ranks"][0]["node"], "node-1");
  EXPECT_EQ(to_json(attempt_from_json(stored)), to_json(a)) << "what is stored reads back as it was";
}

TEST(AttemptRecord, ItsStragglersAreStoredAndReadBack) {
  Attempt a = finished_attempt();
  EXPECT_FALSE(to_json(a).contains("stragglers")) << "none: no field";
  a.stragglers = {Straggler{1, "node-2", 2.5, from_unix_ms(1'700'000'000'123)}};
  const Json stored = parse_json_text(attempt_record(a));
  EXPECT_EQ(stored["stragglers"][0]["node"], "node-2");
  EXPECT_EQ(stored["stragglers"][0]["ratio"], 2.5);
  EXPECT_EQ(attempt_from_json(stored).stragglers, a.stragglers);
}

TEST(AttemptRecord, ACopyOfAnAttemptSharesItsProvenanceUntilOneIsAmended) {
  Attempt a = finished_attempt();
  a.provenance = AttemptProvenance(Json{{"ranks", Json::array({Json::object()})}});
  const Attempt copy = a;
  EXPECT_EQ(&copy.provenance.json(), &a.provenance.json());
  a.provenance.amend([](Json& p) { p["ranks"][0]["environment"] = {{"RANK", "0"}}; });
  EXPECT_TRUE(a.provenance.json()["ranks"][0].contains("environment"));
  EXPECT_FALSE(copy.provenance.json()["ranks"][0].contains("environment"));
  EXPECT_EQ(parse_json_text(a.provenance.text()), a.provenance.json()) << "the text follows the new version";
}

TEST(AttemptRecord, NoProvenanceIsNullAndEmpty) {
  const AttemptProvenance none;
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none.json().is_null());
  EXPECT_TRUE(AttemptProvenance(Json()).empty()) << "a null record is no record";
}

}  // namespace
}  // namespace trainyard::inline proto
