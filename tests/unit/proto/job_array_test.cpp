#include <gtest/gtest.h>

#include <climits>

#include "proto/errors.h"
#include "proto/job.h"
#include "proto/job_array.h"

namespace trainyard::inline proto {
namespace {

std::string array_refusal(std::string_view text, int max_size = kDefaultMaxArraySize) {
  try {
    parse_array_spec(text, max_size);
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "array");
    return e.message();
  }
  return "<accepted>";
}

TEST(ArraySpec, ReadsRangesStepsListsAndALimit) {
  EXPECT_EQ(parse_array_spec("0-3", 100).indices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_array_spec("0-10:4", 100).indices, (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(parse_array_spec("9,1,5", 100).indices, (std::vector<int>{1, 5, 9}));
  const ArraySpec mixed = parse_array_spec("1,3-4,10-20:5%2", 100);
  EXPECT_EQ(mixed.indices, (std::vector<int>{1, 3, 4, 10, 15, 20}));
  EXPECT_EQ(mixed.limit, 2);
  EXPECT_EQ(parse_array_spec("7", 100).indices, (std::vector<int>{7}));
}

TEST(ArraySpec, CanonicalTextReadsBackTheSame) {
  for (const char* text : {"0-99", "0-99:4%3", "1,5,9", "1,3-4,10-20:5%2", "7", "0-1", "2,4"}) {
    const ArraySpec spec = parse_array_spec(text, 1000);
    EXPECT_EQ(parse_array_spec(to_string(spec), 1000), spec) << text << " -> " << to_string(spec);
  }
  EXPECT_EQ(to_string(parse_array_spec("0-99:4%3", 1000)), "0-96:4%3");
}

TEST(ArraySpec, RefusesBadGrammarWithAMessage) {
  EXPECT_NE(array_refusal(""), "<accepted>");
  EXPECT_NE(array_refusal("a-3"), "<accepted>");
  EXPECT_NE(array_refusal("-3"), "<accepted>");
  EXPECT_NE(array_refusal("3-"), "<accepted>");
  EXPECT_NE(array_refusal("5-2"), "<accepted>");
  EXPECT_NE(array_refusal("0-9:0"), "<accepted>");
  EXPECT_NE(array_refusal("0-9%0"), "<accepted>");
  EXPECT_NE(array_refusal("0-9%"), "<accepted>");
  EXPECT_NE(array_refusal("1,,2"), "<accepted>");
  EXPECT_NE(array_refusal("1, 2"), "<accepted>");
  EXPECT_NE(array_refusal("+1"), "<accepted>");
  EXPECT_NE(array_refusal("99999999999999999999"), "<accepted>");
  EXPECT_NE(array_refusal("1000000"), "<accepted>");
  EXPECT_EQ(array_refusal("1,2,1"), "lists index 1 more than once");
}

TEST(ArraySpec, RefusesMoreTasksThanTheLimitNamingIt) {
  EXPECT_EQ(array_refusal("0-99", 100), "<accepted>");
  EXPECT_NE(array_refusal("0-100", 100).find("more than 100 tasks"), std::string::npos);
  EXPECT_NE(array_refusal("0-999999").find("--max-array-size"), std::string::npos);
  EXPECT_NE(array_refusal("0-50,60-110", 100), "<accepted>");
}

// The daemon reads specs it already accepted with no limit (INT_MAX): as many tasks as there are
// indices, with no overflow of the growth cap.
TEST(ArraySpec, NoLimitMeansEveryIndex) {
  EXPECT_EQ(parse_array_spec("0-3", INT_MAX).indices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_array_spec("0-999999", INT_MAX).indices.size(), 1'000'000u);
}

TEST(JobRef, ReadsAJobOrATask) {
  EXPECT_EQ(parse_job_ref("12").job, 12);
  EXPECT_FALSE(parse_job_ref("12").task);
  EXPECT_EQ(parse_job_ref("12_3").task, 3);
  for (const char* bad : {"", "0", "x", "12_", "_3", "12_x", "12_3_4", "-1"}) {
    EXPECT_THROW(parse_job_ref(bad), InvalidInput) << bad;
  }
}

TEST(DependencyFlag, ReadsSlurmsSyntax) {
  EXPECT_EQ(parse_dependency_flag("afterok:12"), (std::vector<Dependency>{{12, DependencyCondition::afterok}}));
  EXPECT_EQ(parse_dependency_flag("afterany:1:2,aftercorr:3"),
            (std::vector<Dependency>{{1, DependencyCondition::afterany},
                                     {2, DependencyCondition::afterany},
                                     {3, DependencyCondition::aftercorr}}));
  for (const char* bad : {"", "afterok", "afterok:", "after:1", "afterok:x", "afterok:1,", "afterok:0"}) {
    EXPECT_THROW(parse_dependency_flag(bad), InvalidInput) << bad;
  }
}

TEST(JobSpec, CarriesDependenciesAndAnArray) {
  Json j = {{"name", "sweep"},
            {"command", {{"argv", {"true"}}}},
            {"array", "0-9%2"},
            {"depends_on", {{{"job", 4}, {"condition", "afternotok"}}, {{"job", 5}}}}};
  const JobSpec s = parse_job_spec(j);
  EXPECT_EQ(s.array, "0-9%2");
  EXPECT_EQ(s.depends_on, (std::vector<Dependency>{{4, DependencyCondition::afternotok}, {5, DependencyCondition::afterok}}));
  EXPECT_EQ(to_json(parse_job_spec(to_json(s))), to_json(s));
}

TEST(Job, AnArrayTaskRoundTripsThroughItsRecord) {
  Job job;
  job.id = 14;
  job.spec.name = "t";
  job.spec.command.argv = {"true"};
  job.array_task = ArrayTask{12, 5, 10, 3};
  EXPECT_EQ(job_from_json(to_json(job)).array_task, job.array_task);
  EXPECT_EQ(job_ref_text(job), "12_5");
}

}  // namespace
}  // namespace trainyard::inline proto
