// The pending queue paged in the scheduler's order, for the dashboard's queue view: the same order
// queue_position counts, across shares, from any offset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "tests/unit/scheduler/scheduler_fixtures.h"

namespace trainyard::scheduler {
namespace {

using namespace fixtures;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(QueuePage, PagesTheReadyJobsInQueuePositionOrderAcrossShares) {
  Scheduler s{Config{}};
  s.import_usage({"B", 100, at_s(0)});
  s.queue(job(3, {.share = "B"}));
  s.queue(job(5, {.share = "B", .priority = 2}));
  s.queue(job(1, {.share = "A", .priority = 1}));
  s.queue(job(2, {.share = "A"}));
  PendingJob blocked = job(4, {.share = "A"});
  blocked.waiting_for = {1};
  s.queue(blocked);
  s.schedule(at_s(0));  // no nodes: nothing starts
  EXPECT_EQ(s.queue_length(), 4u) << "the job held by a dependency is not in the queue";
  const std::vector<JobId> all = s.queue_page(0, 100);
  EXPECT_THAT(all, ElementsAre(1, 2, 5, 3));
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(s.queue_position(all[i]), static_cast<int>(i) + 1);
  EXPECT_THAT(s.queue_page(1, 2), ElementsAre(2, 5)) << "a page may span two shares";
  EXPECT_THAT(s.queue_page(3, 10), ElementsAre(3));
  EXPECT_THAT(s.queue_page(4, 10), IsEmpty());
  EXPECT_THAT(s.queue_page(0, 0), IsEmpty());
}

TEST(QueuePage, TenThousandPendingJobsPageWithoutWalkingThemAll) {
  Scheduler s{Config{}};
  for (JobId id = 1; id <= 10'000; ++id) s.queue(job(id, {.share = id % 2 ? "A" : "B", .submitted_s = id}));
  s.schedule(at_s(0));
  EXPECT_EQ(s.queue_length(), 10'000u);
  const std::vector<JobId> page = s.queue_page(9'990, 50);
  ASSERT_EQ(page.size(), 10u);
  EXPECT_EQ(s.queue_position(page.front()), 9'991);
  EXPECT_EQ(s.queue_position(page.back()), 10'000);
}

}  // namespace
}  // namespace trainyard::scheduler
