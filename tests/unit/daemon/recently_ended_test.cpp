#include "daemon/recently_ended.h"

#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

Job ended(JobId id, JobState state) {
  Job job;
  job.id = id;
  job.state = state;
  return job;
}

TEST(RecentlyEnded, KeepsTheLastJobsThatEndedAndForgetsTheOldestFirst) {
  RecentlyEnded kept(2);
  kept.remember(ended(1, JobState::succeeded));
  kept.remember(ended(2, JobState::failed));
  kept.remember(ended(1, JobState::cancelled));  // a newer record of a kept job replaces it
  ASSERT_NE(kept.find(1), nullptr);
  EXPECT_EQ(kept.find(1)->state, JobState::cancelled);
  EXPECT_EQ(kept.size(), 2u);
  kept.remember(ended(3, JobState::succeeded));
  EXPECT_EQ(kept.find(1), nullptr) << "the first to end goes first";
  EXPECT_NE(kept.find(2), nullptr);
  EXPECT_NE(kept.find(3), nullptr);
  RecentlyEnded none(0);
  none.remember(ended(1, JobState::succeeded));
  EXPECT_EQ(none.find(1), nullptr);
}

}  // namespace
}  // namespace trainyard::daemon
