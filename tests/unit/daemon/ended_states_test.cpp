#include "daemon/policy/ended_states.h"

#include <gtest/gtest.h>

#include <climits>

namespace trainyard::daemon {
namespace {

TEST(EndedStates, RemembersEachEndedJobAndNothingElse) {
  EndedStates ended;
  EXPECT_FALSE(ended.contains(1));
  ended.set(10, JobState::succeeded);
  ended.set(13, JobState::cancelled);
  EXPECT_EQ(ended.find(10), JobState::succeeded);
  EXPECT_EQ(ended.find(13), JobState::cancelled);
  EXPECT_FALSE(ended.contains(11)) << "a job between two ended ones that has not ended";
  EXPECT_FALSE(ended.contains(9));
  EXPECT_FALSE(ended.contains(14));
}

TEST(EndedStates, AnOlderJobReadBackLaterKeepsTheNewerOnes) {
  EndedStates ended;
  ended.set(100, JobState::failed);
  ended.set(3, JobState::succeeded);
  EXPECT_EQ(ended.find(3), JobState::succeeded);
  EXPECT_EQ(ended.find(100), JobState::failed);
  EXPECT_FALSE(ended.contains(50));
  ended.set(100, JobState::cancelled);  // a later word wins
  EXPECT_EQ(ended.find(100), JobState::cancelled);
}

TEST(EndedStates, AnyIdAUserNamesIsAnsweredWithoutGrowing) {
  EndedStates ended;
  ended.set(5, JobState::failed);
  for (JobId id : {JobId{0}, JobId{-1}, JobId{LLONG_MIN}, JobId{LLONG_MAX}, JobId{6}}) {
    EXPECT_FALSE(ended.contains(id)) << id;
  }
  EXPECT_EQ(ended.find(5), JobState::failed);
}

}  // namespace
}  // namespace trainyard::daemon
