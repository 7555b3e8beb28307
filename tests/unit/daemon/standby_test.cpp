// Active / standby's pure parts: what a standby answers, and when the active daemon takes its lease
// as lost, on a manual clock.
#include "daemon/standby.h"

#include <gtest/gtest.h>

#include "tests/unit/daemon/response_header.h"

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;

net::HttpRequest request(std::string method, std::string target) {
  net::HttpRequest r;
  r.method = std::move(method);
  r.target = target;
  r.path = target.substr(0, target.find('?'));
  return r;
}

using testing::response_header;

const store::LeaseState kActiveKnown{.held = false, .epoch = 4, .active_url = "https://a.example:8443"};
const store::LeaseState kActiveUnknown{.held = false, .epoch = 4, .active_url = ""};
const std::string kOwnUrl = "https://b.example:8443";

TEST(StandbyAnswer, HealthzSaysStandbyWithTheEpochAndTheActiveUrl) {
  const net::HttpResponse r = standby_answer(request("GET", "/healthz"), kActiveKnown, kOwnUrl, "1.2.3");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Json::parse(r.body), (Json{{"status", "ok"}, {"version", "1.2.3"}, {"role", "standby"}, {"epoch", 4},
                                       {"active_url", "https://a.example:8443"}}));
}

TEST(StandbyAnswer, EverythingElseIsRedirectedToTheActiveDaemonWithPathAndQuery) {
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/v1/jobs?state=RUNNING&limit=5"}, {"POST", "/v1/jobs"}, {"GET", "/v1/agent/connect"}, {"POST", "/healthz"}}) {
    const net::HttpResponse r = standby_answer(request(method, target), kActiveKnown, kOwnUrl, "1.2.3");
    EXPECT_EQ(r.status, 307) << method << " " << target;
    EXPECT_EQ(response_header(r, "Location"), "https://a.example:8443" + target);
    EXPECT_EQ(r.content_type, "application/problem+json");
    const Json body = Json::parse(r.body);
    EXPECT_EQ(body["role"], "standby");
    EXPECT_EQ(body["status"], 307);
    EXPECT_EQ(body["active_url"], "https://a.example:8443");
  }
}

TEST(StandbyAnswer, AnActiveUrlWithATrailingSlashGivesOneSlash) {
  const store::LeaseState lease{.epoch = 1, .active_url = "http://a:1/"};
  EXPECT_EQ(response_header(standby_answer(request("GET", "/v1/nodes"), lease, kOwnUrl, "v"), "Location"),
            "http://a:1/v1/nodes");
}

TEST(StandbyAnswer, WithoutAKnownActiveDaemonItIs503RetryAfterOne) {
  const net::HttpResponse r = standby_answer(request("GET", "/v1/jobs"), kActiveUnknown, kOwnUrl, "1.2.3");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(response_header(r, "Retry-After"), "1");
  EXPECT_EQ(response_header(r, "Location"), "");
  EXPECT_EQ(Json::parse(r.body)["role"], "standby");
}

TEST(StandbyAnswer, ALeaseStillHeldAtItsOwnUrlIsADeadPredecessorsSo503NotARedirectToItself) {
  const store::LeaseState predecessor{.epoch = 4, .active_url = kOwnUrl + "/"};
  const net::HttpResponse r = standby_answer(request("GET", "/v1/jobs"), predecessor, kOwnUrl, "1.2.3");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(response_header(r, "Location"), "");
}

TEST(HealthzBody, TheActiveDaemonNamesItselfActive) {
  const store::LeaseState held{.held = true, .epoch = 7, .active_url = "http://b:2"};
  EXPECT_EQ(healthz_body("v", true, held)["role"], "active");
  EXPECT_EQ(healthz_body("v", true, held)["epoch"], 7);
}

class ActiveLeaseTest : public ::testing::Test {
 protected:
  ManualTimeSource clock{TimePoint{}};
  ActiveLease lease{3, 5000ms, clock.monotonic_now()};
  const store::LeaseState kept{.held = true, .epoch = 3, .active_url = "http://a:1"};
};

TEST_F(ActiveLeaseTest, RenewsEveryFifthOfTheTtl) { EXPECT_EQ(lease.renew_every(), 1000ms); }

TEST_F(ActiveLeaseTest, IsHeldUntilATtlAfterTheLastConfirmedRenewalWasSent) {
  clock.advance(1000ms);
  const MonoTime sent = clock.monotonic_now();
  clock.advance(3000ms);  // a slow answer: the lease counts from the sending
  EXPECT_TRUE(lease.renewed(sent, kept).ok());
  clock.advance(1999ms);
  EXPECT_TRUE(lease.still_held(clock.monotonic_now()).ok());
  clock.advance(1ms);
  EXPECT_EQ(lease.still_held(clock.monotonic_now()).error().code, ErrorCode::unavailable);
}

TEST_F(ActiveLeaseTest, WithoutAnyConfirmedRenewalItExpiresATtlAfterTheTakeOver) {
  clock.advance(4999ms);
  EXPECT_TRUE(lease.still_held(clock.monotonic_now()).ok());
  clock.advance(1ms);
  EXPECT_EQ(lease.still_held(clock.monotonic_now()).error().code, ErrorCode::unavailable);
}

TEST_F(ActiveLeaseTest, AnOlderRenewalAnsweredLateNeverShortensIt) {
  const MonoTime early = clock.monotonic_now();
  clock.advance(2000ms);
  EXPECT_TRUE(lease.renewed(clock.monotonic_now(), kept).ok());
  EXPECT_TRUE(lease.renewed(early, kept).ok());
  clock.advance(6999ms - 2000ms);
  EXPECT_TRUE(lease.still_held(clock.monotonic_now()).ok());
}

TEST_F(ActiveLeaseTest, IsLostWhenARenewalFindsItNotHeldOrHeldAtAnotherEpoch) {
  const Result<void> taken =
      lease.renewed(clock.monotonic_now(), {.held = false, .epoch = 4, .active_url = "http://b:1"});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::conflict);
  EXPECT_NE(taken.error().message.find("epoch 4"), std::string::npos) << taken.error().message;
  EXPECT_NE(taken.error().message.find("http://b:1"), std::string::npos) << taken.error().message;
  EXPECT_FALSE(lease.renewed(clock.monotonic_now(), {.held = true, .epoch = 5, .active_url = "http://a:1"}).ok());
}

// A store that stops answering (cut off, frozen): the lease's renewals go unconfirmed, and after
// two renewal periods /healthz says so, and when the lease runs out.
TEST_F(ActiveLeaseTest, UnconfirmedRenewalsForTwoPeriodsMakeTheStoreAProblemUntilOneIsConfirmed) {
  clock.advance(2000ms);
  EXPECT_FALSE(lease.store_problem(clock.monotonic_now())) << "two periods, as a slow renewal may take";
  clock.advance(1ms);
  const auto problem = lease.store_problem(clock.monotonic_now());
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem, "the store confirmed no lease renewal for 2001 ms: writes wait, and the lease runs out in "
                      "2999 ms, when this daemon stops and a standby takes over");
  const Json body = healthz_body("v", true, kept, problem);
  EXPECT_EQ(body["status"], "degraded");
  EXPECT_EQ(body["store"], *problem);
  EXPECT_EQ(healthz_body("v", true, kept)["status"], "ok");
  EXPECT_FALSE(healthz_body("v", true, kept).contains("store"));

  EXPECT_TRUE(lease.renewed(clock.monotonic_now(), kept).ok());
  EXPECT_FALSE(lease.store_problem(clock.monotonic_now())) << "answered again";
}

}  // namespace
}  // namespace trainyard::daemon
