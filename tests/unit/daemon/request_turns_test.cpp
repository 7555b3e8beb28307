// Requests to one thing take turns (daemon/request_turns.h), and what a change touches is named the
// same way for every kind of record (daemon/base/changed_entities.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/base/changed_entities.h"
#include "daemon/request_turns.h"

namespace trainyard::daemon {
namespace {

TEST(RequestTurns, ASecondRequestToOneThingStartsOnlyOnceTheFirstIsAnsweredOthersAtOnce) {
  RequestTurns turns;
  std::vector<std::string> started;
  RequestTurns::Answered answer_first;
  turns.take("job/1", [&](RequestTurns::Answered answered) {
    started.push_back("job 1, first");
    answer_first = std::move(answered);
  });
  turns.take("job/1", [&](RequestTurns::Answered answered) {
    started.push_back("job 1, second");
    answered();
  });
  turns.take("job/2", [&](RequestTurns::Answered answered) {
    started.push_back("job 2");
    answered();
  });
  EXPECT_EQ(started, (std::vector<std::string>{"job 1, first", "job 2"}));
  EXPECT_TRUE(turns.running("job/1"));
  EXPECT_FALSE(turns.running("job/2"));
  EXPECT_EQ(turns.waiting(), 1u);
  answer_first();
  EXPECT_EQ(started, (std::vector<std::string>{"job 1, first", "job 2", "job 1, second"}));
  EXPECT_FALSE(turns.running("job/1")) << "answered at once, the second ended the turn";
  EXPECT_EQ(turns.waiting(), 0u);
}

TEST(RequestTurns, TakeAnsweringEndsTheTurnWhenTheCallerIsAnswered) {
  RequestTurns turns;
  std::vector<int> answers;
  std::function<void(int)> deliver;
  turns.take_answering("node/n1", std::function<void(int)>([&](int a) { answers.push_back(a); }),
                       [&](std::function<void(int)> done) { deliver = std::move(done); });
  turns.take_answering("node/n1", std::function<void(int)>([&](int a) { answers.push_back(a); }),
                       [](std::function<void(int)> done) { done(2); });
  EXPECT_TRUE(answers.empty());
  deliver(1);
  EXPECT_EQ(answers, (std::vector<int>{1, 2}));
  EXPECT_FALSE(turns.running("node/n1"));
}

TEST(ChangedEntities, NamesEachRewrittenRecordOnceAndLeavesAppendedRowsOut) {
  store::Change change;
  Job job;
  job.id = 7;
  change.jobs.push_back(job);
  Attempt attempt;
  attempt.job_id = 7;
  change.attempts.push_back(attempt);
  attempt.job_id = 9;
  change.attempts.push_back(attempt);
  Node node;
  node.name = "n1";
  change.nodes.push_back(node);
  change.deleted_shares.push_back("team");
  change.webhook_cursors.emplace_back(3, 100);
  change.revoked_tokens.push_back("abc");
  change.events.push_back(store::Event{});
  EXPECT_EQ(changed_entities(change),
            (std::vector<std::string>{"job/7", "job/9", "node/n1", "share/team", "token/abc", "webhook/3"}));
}

}  // namespace
}  // namespace trainyard::daemon
