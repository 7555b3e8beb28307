// Goodput over a window, read in pages (daemon/telemetry/goodput_window.h): however the attempts fall into
// pages, the figures are those of reading them all at once.
#include <gtest/gtest.h>

#include "daemon/telemetry/goodput_window.h"
#include "tests/support/in_memory_store.h"
#include "tests/unit/store/records.h"

namespace trainyard::daemon {
namespace {

using store::at_ms;
using store::minimal_attempt;
using store::minimal_job;

Attempt ran_in_window(AttemptId id, JobId job, std::int64_t start_ms, std::optional<std::int64_t> end_ms) {
  Attempt a = minimal_attempt(id, job, end_ms ? AttemptState::failed : AttemptState::running);
  a.created_at = at_ms(start_ms);
  a.started_at = at_ms(start_ms + 100);
  a.first_step_at = at_ms(start_ms + 300);
  a.steps_completed = 50;
  a.last_progress_at = at_ms(end_ms.value_or(start_ms + 5'000) - 200);
  if (end_ms) a.ended_at = at_ms(*end_ms);
  return a;
}

class WindowedGoodputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::Change change;
    change.jobs = {minimal_job(1, "alice"), minimal_job(2, "alice"), minimal_job(3, "alice"),
                   minimal_job(4, "alice"), minimal_job(5, "bob"),   minimal_job(6, "alice")};
    change.attempts = {ran_in_window(1, 1, 0, 500),  // ended before the window
                       ran_in_window(2, 2, 2'000, 9'000),
                       ran_in_window(3, 2, 9'500, std::nullopt),
                       ran_in_window(4, 3, 4'000, std::nullopt),
                       ran_in_window(5, 4, 1'000, 3'000),
                       ran_in_window(6, 4, 3'500, 6'000),
                       ran_in_window(7, 4, 6'500, 20'000),
                       ran_in_window(8, 5, 7'000, std::nullopt)};
    store.commit(std::span<const store::Change>(&change, 1));
  }

  // The body, and how many pages it took.
  std::pair<Json, int> read(int page_rows, std::optional<std::string> user = std::nullopt, std::size_t rows = 100) {
    WindowedGoodput window(at_ms(1'000), at_ms(30'000), std::move(user), rows, page_rows);
    int pages = 1;
    while (window.read_page(store)) ++pages;
    return {window.body(), pages};
  }

  InMemoryStore store;
};

TEST_F(WindowedGoodputTest, PagesOfAnySizeThatHoldsAJobAddUpToTheWholeWindow) {
  const auto [whole, one_page] = read(1000);
  EXPECT_EQ(one_page, 1);
  ASSERT_EQ(whole["jobs"].size(), 4u) << whole.dump(2);
  EXPECT_EQ(whole["jobs"][0]["job_id"], 5) << "newest job first";
  EXPECT_EQ(whole["jobs"][3]["job_id"], 2) << "job 1 ran before the window";
  EXPECT_GT(whole["cluster"]["allocated_core_s"].get<double>(), 0);
  for (int rows : {3, 4, 5}) {
    const auto [paged, pages] = read(rows);
    EXPECT_GT(pages, 1) << rows;
    EXPECT_EQ(paged, whole) << "pages of " << rows << " attempts";
  }
}

TEST_F(WindowedGoodputTest, OnlyTheUsersJobsAndTheNewestRowsAreListed) {
  const auto [bobs, pages] = read(3, "bob");
  ASSERT_EQ(bobs["jobs"].size(), 1u);
  EXPECT_EQ(bobs["jobs"][0]["job_id"], 5);
  const auto [newest, more_pages] = read(3, std::nullopt, 2);
  ASSERT_EQ(newest["jobs"].size(), 2u);
  EXPECT_EQ(newest["jobs"][1]["job_id"], 4);
  EXPECT_EQ(newest["cluster"], read(1000).first["cluster"]) << "the total counts every job, listed or not";
}

}  // namespace
}  // namespace trainyard::daemon
