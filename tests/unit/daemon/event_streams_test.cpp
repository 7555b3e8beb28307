// GET /v1/events/stream's subscribers (daemon/event_streams.h) over a real store worker whose
// completions the test runs: the committed events reach them in seq order, a resume is backfilled
// with no gap and none twice however live events interleave, a stream shows only what its reader
// may see, and a reader that does not read is dropped without holding up the others.
#include <gtest/gtest.h>

#include "daemon/event_streams.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::testing {
namespace {

Event job_event_of(std::int64_t job, const std::string& user, std::string kind = "job.submitted") {
  Event e;
  e.kind = std::move(kind);
  e.job_id = job;
  e.user = user;
  e.message = "m";
  return e;
}

Change with_events(std::vector<Event> events) {
  Change change;
  change.events = std::move(events);
  return change;
}

// The ids of the SSE frames in `text`, in order.
std::vector<std::int64_t> frame_ids(const std::string& text) {
  std::vector<std::int64_t> ids;
  for (auto at = text.find("id: "); at != std::string::npos; at = text.find("\nid: ", at + 1)) {
    ids.push_back(std::stoll(text.substr(text.find("id: ", at) + 4)));
  }
  return ids;
}

class EventStreamsTest : public ::testing::Test {
 protected:
  EventStreamsTest() {
    worker.set_events_observer(0, [this](const std::vector<Event>& events) {
      streams.publish(events);
      published += events.size();
    });
  }
  // Commits through the worker and runs completions until its events were published.
  void commit(std::vector<Event> events) {
    const std::size_t until = published + events.size();
    worker.write(with_events(std::move(events)), [](const Result<void>&, Change&) {});
    io.run_until([&] { return published == until; });
  }

  InMemoryStore store;
  IoQueue io;
  StoreWorker worker{store, io.poster()};
  EventStreams streams{worker};
  std::size_t published = 0;
  const Principal admin{"root", Role::admin, "t1"};
  const Principal alice{"alice", Role::user, "t2"};
};

TEST_F(EventStreamsTest, LiveEventsArriveInSeqOrderAsTheirReaderMaySeeThem) {
  auto mine = streams.subscribe(alice, {}, std::nullopt);
  auto all = streams.subscribe(admin, {}, std::nullopt);
  commit({job_event_of(1, "alice"), job_event_of(2, "bob")});
  commit({job_event_of(1, "alice", "job.started")});
  EXPECT_EQ(frame_ids(mine->take()), (std::vector<std::int64_t>{1, 3}));
  const std::string text = all->take();
  EXPECT_EQ(frame_ids(text), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_NE(text.find("id: 3\nevent: job.started\ndata: {"), std::string::npos) << text;
  EXPECT_EQ(streams.clients(), 2u);
}

TEST_F(EventStreamsTest, AResumeGetsTheStoredRestThenLiveEventsWithNoGapAndNoneTwice) {
  commit({job_event_of(1, "alice"), job_event_of(1, "alice"), job_event_of(1, "alice")});
  // 4 and 5 are committed before the resume's backfill is read, and published after it
  // subscribed: both the backfill and the live feed have them, and they are sent once.
  worker.write(with_events({job_event_of(1, "alice"), job_event_of(1, "alice")}), [](const Result<void>&, Change&) {});
  auto resumed = streams.subscribe(alice, {}, 1);
  std::string got;
  io.run_until([&] {
    got += resumed->take();
    return published == 5 && frame_ids(got).size() >= 4;
  });
  commit({job_event_of(1, "alice"), job_event_of(2, "bob")});
  got += resumed->take();
  EXPECT_EQ(frame_ids(got), (std::vector<std::int64_t>{2, 3, 4, 5, 6})) << got;
}

TEST_F(EventStreamsTest, AReaderThatDoesNotReadIsDroppedAndTheOthersCarryOn) {
  auto reading = streams.subscribe(admin, {}, std::nullopt);
  auto stalled = streams.subscribe(admin, {}, std::nullopt);
  Event big = job_event_of(1, "alice");
  big.message = std::string(64 << 10, 'x');
  std::size_t frames = 0;
  for (std::size_t sent = 0; sent <= EventStreams::kClientBufferBytes; sent += big.message.size()) {
    commit({big});
    frames += frame_ids(reading->take()).size();
  }
  EXPECT_TRUE(stalled->closed());
  EXPECT_FALSE(reading->closed());
  EXPECT_EQ(streams.clients(), 1u);
  EXPECT_EQ(frames, published);
}

TEST_F(EventStreamsTest, KeepAlivesFollowTheIntervalAndForgetStreamsThatEnded) {
  auto a = streams.subscribe(admin, {}, std::nullopt);
  auto b = streams.subscribe(admin, {}, std::nullopt);
  const MonoTime t0 = MonoTime{} + std::chrono::hours(1);
  streams.keep_alive(t0, Millis(15'000));
  EXPECT_EQ(a->take(), ": keep-alive\n\n");
  streams.keep_alive(t0 + Millis(14'999), Millis(15'000));
  EXPECT_EQ(a->take(), "");
  b->close();  // the connection ended
  streams.keep_alive(t0 + Millis(15'000), Millis(15'000));
  EXPECT_EQ(a->take(), ": keep-alive\n\n");
  EXPECT_EQ(streams.clients(), 1u);
}

}  // namespace
}  // namespace trainyard::testing
