// GET /v1/events/stream's subscribers (daemon/events/event_streams.h) over a real store worker whose
// completions the test runs: the committed events reach them in seq order, a resume is backfilled
// with no gap and none twice however live events interleave, a stream shows only what its reader
// may see, a reader that does not read is dropped without holding up the others, and live events
// go out in flush windows: one push per client per window, shared by the clients that read alike.
#include <gtest/gtest.h>

#include "daemon/events/event_streams.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

store::Event job_event_of(std::int64_t job, const std::string& user, std::string kind = "job.submitted") {
  store::Event e;
  e.kind = std::move(kind);
  e.job_id = job;
  e.user = user;
  e.message = "m";
  return e;
}

store::Change with_events(std::vector<store::Event> events) {
  store::Change change;
  change.events = std::move(events);
  return change;
}

// What a client's connection would write next.
std::string text_of(const std::vector<net::ResponseStream::Chunk>& chunks) {
  std::string text;
  for (const auto& chunk : chunks) text += *chunk;
  return text;
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
    worker.set_events_observer(0, [this](const std::vector<store::Event>& events) {
      streams.publish(events);
      published += events.size();
    });
    streams.set_flush_window(kWindow);
  }
  // Commits through the worker and runs completions until its events were published.
  void commit(std::vector<store::Event> events) {
    const std::size_t until = published + events.size();
    worker.write(with_events(std::move(events)), [](const Result<void>&, store::Change&) {});
    io.run_until([&] { return published == until; });
  }
  // Commits, and lets the flush window pass.
  void commit_and_flush(std::vector<store::Event> events) {
    commit(std::move(events));
    pass(kWindow);
  }
  // Runs completions until every store task queued so far has run and been completed.
  void settle_worker() {
    bool done = false;
    worker.read([&done](store::Store&) { return StoreWorker::Continuation([&done] { done = true; }); },
                [](const Error& error) { ADD_FAILURE() << error.message; });
    io.run_until([&done] { return done; });
  }
  void pass(Millis time) {
    clock.advance(time);
    timers.fire_due();
  }

  static constexpr Millis kWindow{25};
  InMemoryStore store;
  IoQueue io;
  StoreWorker worker{store, io.poster()};
  ManualTimeSource clock{test_epoch()};
  FakeTimers timers{clock};
  EventStreams streams{worker, timers};
  std::size_t published = 0;
  const Principal admin{"root", store::Role::admin, "t1"};
  const Principal alice{"alice", store::Role::user, "t2"};
};

TEST_F(EventStreamsTest, LiveEventsArriveInSeqOrderAsTheirReaderMaySeeThem) {
  auto mine = streams.subscribe(alice, {}, std::nullopt);
  auto all = streams.subscribe(admin, {}, std::nullopt);
  commit_and_flush({job_event_of(1, "alice"), job_event_of(2, "bob")});
  commit_and_flush({job_event_of(1, "alice", "job.started")});
  EXPECT_EQ(frame_ids(text_of(mine->take())), (std::vector<std::int64_t>{1, 3}));
  const std::string text = text_of(all->take());
  EXPECT_EQ(frame_ids(text), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_NE(text.find("id: 3\nevent: job.started\ndata: {"), std::string::npos) << text;
  EXPECT_EQ(streams.clients(), 2u);
}

TEST_F(EventStreamsTest, AResumeGetsTheStoredRestThenLiveEventsWithNoGapAndNoneTwice) {
  commit({job_event_of(1, "alice"), job_event_of(1, "alice"), job_event_of(1, "alice")});
  // 4 and 5 are committed before the resume's backfill is read, and published after it
  // subscribed: both the backfill and the live feed have them, and they are sent once.
  worker.write(with_events({job_event_of(1, "alice"), job_event_of(1, "alice")}), [](const Result<void>&, store::Change&) {});
  auto resumed = streams.subscribe(alice, {}, 1);
  std::string got;
  io.run_until([&] {
    pass(kWindow);
    got += text_of(resumed->take());
    return published == 5 && frame_ids(got).size() >= 4;
  });
  commit_and_flush({job_event_of(1, "alice"), job_event_of(2, "bob")});
  got += text_of(resumed->take());
  EXPECT_EQ(frame_ids(got), (std::vector<std::int64_t>{2, 3, 4, 5, 6})) << got;
}

// A client resuming from the start of a log far larger than its buffer: it is sent a part at a time
// as it reads, gets every event once in order, and is not dropped.
TEST_F(EventStreamsTest, AFarBehindClientCatchesUpInPagesAsItReadsAndIsNotDropped) {
  store::Event bulky = job_event_of(1, "alice");
  bulky.message = std::string(4 << 10, 'x');
  const int total = 2 * EventStreams::kBackfillPageEvents + 500;  // ~10 MB of frames, buffer 4 MiB
  for (int i = 0; i < total; i += 500) commit(std::vector<store::Event>(500, bulky));
  auto resumed = streams.subscribe(alice, {}, 0);
  // Not read yet: at most one part is queued, the log is not read ahead of the client.
  settle_worker();
  std::vector<std::int64_t> ids = frame_ids(text_of(resumed->take()));
  EXPECT_GT(ids.size(), 0u);
  EXPECT_LT(ids.size(), 300u) << "pushed more than one part before the client read";
  // The client reads on: each read that finds nothing waits for the store's next page.
  for (int reads = 0; ids.size() < static_cast<std::size_t>(total) && !resumed->closed() && reads < 1000; ++reads) {
    const auto more = frame_ids(text_of(resumed->take()));
    if (more.empty()) settle_worker();
    ids.insert(ids.end(), more.begin(), more.end());
  }
  EXPECT_FALSE(resumed->closed());
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) ASSERT_EQ(ids[static_cast<std::size_t>(i)], i + 1);
  commit_and_flush({job_event_of(1, "alice")});
  EXPECT_EQ(frame_ids(text_of(resumed->take())), (std::vector<std::int64_t>{total + 1})) << "live after the catch-up";
}

// Each page of a catch-up is a request of the user's: a user over their rate waits for it.
TEST_F(EventStreamsTest, ACatchUpPageWaitsForTheUsersRate) {
  commit({job_event_of(1, "alice"), job_event_of(1, "alice")});
  int asked = 0;
  streams.set_page_admission([&](const Principal& who) -> std::optional<Millis> {
    EXPECT_EQ(who.user, "alice");
    return ++asked == 1 ? std::optional<Millis>(Millis(1000)) : std::nullopt;
  });
  auto resumed = streams.subscribe(alice, {}, 0);
  settle_worker();
  EXPECT_EQ(text_of(resumed->take()), "") << "read before the rate allowed";
  pass(Millis(1000));
  std::vector<std::int64_t> ids;
  io.run_until([&] {
    const auto more = frame_ids(text_of(resumed->take()));
    ids.insert(ids.end(), more.begin(), more.end());
    return ids.size() >= 2;
  });
  EXPECT_EQ(ids, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(asked, 2);
}

TEST_F(EventStreamsTest, AReaderThatDoesNotReadIsDroppedAndTheOthersCarryOn) {
  auto reading = streams.subscribe(admin, {}, std::nullopt);
  auto stalled = streams.subscribe(admin, {}, std::nullopt);
  store::Event big = job_event_of(1, "alice");
  big.message = std::string(64 << 10, 'x');
  std::size_t frames = 0;
  for (std::size_t sent = 0; sent <= EventStreams::kClientBufferBytes; sent += big.message.size()) {
    commit_and_flush({big});
    frames += frame_ids(text_of(reading->take())).size();
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
  EXPECT_EQ(text_of(a->take()), ": keep-alive\n\n");
  streams.keep_alive(t0 + Millis(14'999), Millis(15'000));
  EXPECT_EQ(text_of(a->take()), "");
  b->close();  // the connection ended
  streams.keep_alive(t0 + Millis(15'000), Millis(15'000));
  EXPECT_EQ(text_of(a->take()), ": keep-alive\n\n");
  EXPECT_EQ(streams.clients(), 1u);
}

TEST_F(EventStreamsTest, LiveEventsWaitForTheWindowThenGoAsOneSharedPushPerClient) {
  auto a = streams.subscribe(admin, {}, std::nullopt);
  auto b = streams.subscribe(admin, {}, std::nullopt);
  commit({job_event_of(1, "alice")});
  pass(kWindow - Millis(1));
  commit({job_event_of(2, "bob"), job_event_of(1, "alice", "job.started")});
  EXPECT_TRUE(a->take().empty()) << "sent before the window that the first event opened has passed";
  pass(Millis(1));
  const auto chunks = a->take();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(frame_ids(*chunks[0]), (std::vector<std::int64_t>{1, 2, 3}));
  const auto same_reader = b->take();
  ASSERT_EQ(same_reader.size(), 1u);
  EXPECT_EQ(same_reader[0], chunks[0]) << "readers of the same events share one batch";
}

TEST_F(EventStreamsTest, AWindowOpensWithTheFirstEventAfterAFlushAndNoneWithoutClients) {
  commit({job_event_of(1, "alice")});
  EXPECT_EQ(timers.pending(), 0u) << "no client, nothing to send";
  auto a = streams.subscribe(admin, {}, std::nullopt);
  commit_and_flush({job_event_of(1, "alice")});
  EXPECT_EQ(frame_ids(text_of(a->take())), (std::vector<std::int64_t>{2}));
  pass(Millis(100));
  commit({job_event_of(1, "alice")});
  pass(kWindow - Millis(1));
  EXPECT_TRUE(a->take().empty());
  pass(Millis(1));
  EXPECT_EQ(frame_ids(text_of(a->take())), (std::vector<std::int64_t>{3}));
}

TEST_F(EventStreamsTest, AClientThatSubscribesWithinAWindowGetsOnlyWhatCameAfter) {
  auto early = streams.subscribe(admin, {}, std::nullopt);
  commit({job_event_of(1, "alice")});
  auto late = streams.subscribe(admin, {}, std::nullopt);
  commit_and_flush({job_event_of(2, "bob")});
  EXPECT_EQ(frame_ids(text_of(early->take())), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(frame_ids(text_of(late->take())), (std::vector<std::int64_t>{2}));
  commit_and_flush({job_event_of(2, "bob")});
  EXPECT_EQ(frame_ids(text_of(early->take())), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(frame_ids(text_of(late->take())), (std::vector<std::int64_t>{3}));
}

}  // namespace
}  // namespace trainyard::daemon::testing
