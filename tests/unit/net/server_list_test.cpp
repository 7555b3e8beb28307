// The failover choice of the agent and the CLI: a list of daemons and what a try came to -> the
// next URL, or why to stop.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/server_list.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

const std::vector<std::string> kTwo = {"http://10.0.0.1:8080", "http://10.0.0.2:8080"};

TryOutcome unreachable(std::string why) { return {TryOutcome::Kind::unreachable, "", std::move(why)}; }
TryOutcome redirect(std::string location) { return {TryOutcome::Kind::redirected, std::move(location), ""}; }
const TryOutcome kStandby{TryOutcome::Kind::standby, "", ""};

TEST(SplitServerList, SplitsAndTrims) {
  EXPECT_EQ(split_server_list("http://a:1", "--server"), std::vector<std::string>{"http://a:1"});
  EXPECT_EQ(split_server_list("http://a:1, http://b:2 ,c:3", "--server"),
            (std::vector<std::string>{"http://a:1", "http://b:2", "c:3"}));
}

TEST(SplitServerList, RefusesEmptyEntriesAndRepeatsNamingTheField) {
  for (const char* bad : {"", "http://a:1,", ",http://a:1", "http://a:1,,http://b:1", "http://a:1, http://a:1"}) {
    try {
      split_server_list(bad, "--server");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--server") << bad;
    }
  }
}

TEST(OutcomeOfStatus, TellsStandbysFromAnswers) {
  EXPECT_EQ(outcome_of_status(200, "").kind, TryOutcome::Kind::answered);
  EXPECT_EQ(outcome_of_status(404, "").kind, TryOutcome::Kind::answered);
  EXPECT_EQ(outcome_of_status(500, "").kind, TryOutcome::Kind::answered);
  EXPECT_EQ(outcome_of_status(503, "").kind, TryOutcome::Kind::standby);
  EXPECT_EQ(outcome_of_status(307, "").kind, TryOutcome::Kind::standby);
  const TryOutcome moved = outcome_of_status(307, "http://b:1/v1/jobs");
  EXPECT_EQ(moved.kind, TryOutcome::Kind::redirected);
  EXPECT_EQ(moved.location, "http://b:1/v1/jobs");
}

TEST(OutcomeOfLinkClose, ReadsBackARefusedUpgrade) {
  const TryOutcome moved = outcome_of_link_close(refused_upgrade_reason(307, "http://b:1/v1/agent/connect", "{}"));
  EXPECT_EQ(moved.kind, TryOutcome::Kind::redirected);
  EXPECT_EQ(moved.location, "http://b:1/v1/agent/connect");
  EXPECT_EQ(outcome_of_link_close(refused_upgrade_reason(503, "", "{\"role\":\"standby\"}")).kind,
            TryOutcome::Kind::standby);
  const TryOutcome lost = outcome_of_link_close("cannot connect to a:1: Connection refused");
  EXPECT_EQ(lost.kind, TryOutcome::Kind::unreachable);
  EXPECT_EQ(lost.detail, "cannot connect to a:1: Connection refused");
  EXPECT_EQ(outcome_of_link_close(refused_upgrade_reason(401, "", "bad token")).kind, TryOutcome::Kind::unreachable);
}

TEST(RefusedUpgrade, CarriesItsRetryAfterForTheAgentToWait) {
  const std::string refused = refused_upgrade_reason(429, "", "{}", "7");
  EXPECT_EQ(refused, "HTTP 429 (retry after 7 s): {}");
  EXPECT_EQ(retry_after_of_link_close(refused), std::chrono::seconds(7));
  EXPECT_EQ(outcome_of_link_close(refused_upgrade_reason(503, "", "{}", "1")).kind, TryOutcome::Kind::standby);
  EXPECT_EQ(retry_after_of_link_close(refused_upgrade_reason(503, "", "{}", "86400")), kMaxRetryAfter);
  // An HTTP date, or anything but whole seconds, is not carried; nor is a body's text read as one.
  EXPECT_EQ(refused_upgrade_reason(503, "", "{}", "Wed, 21 Oct 2026 07:28:00 GMT"), "HTTP 503: {}");
  EXPECT_EQ(retry_after_of_link_close(refused_upgrade_reason(401, "", " (retry after 9 s)")), std::nullopt);
  EXPECT_EQ(retry_after_of_link_close("the upgrade got no answer: end of stream"), std::nullopt);
}

TEST(ServerOf, MatchesSchemeHostAndPortOnly) {
  const std::vector<std::string> servers = {"http://10.0.0.1:8080", "https://Daemon.example", "localhost:9000"};
  EXPECT_EQ(server_of(servers, "http://10.0.0.1:8080/v1/jobs?state=RUNNING"), 0u);
  EXPECT_EQ(server_of(servers, "https://daemon.example:443/v1/agent/connect"), 1u);
  EXPECT_EQ(server_of(servers, "http://localhost:9000/healthz"), 2u);
  EXPECT_EQ(server_of(servers, "http://10.0.0.1:8081/v1/jobs"), std::nullopt);
  EXPECT_EQ(server_of(servers, "http://daemon.example/v1/jobs"), std::nullopt);  // http is not https
  EXPECT_EQ(server_of(servers, "not a url"), std::nullopt);
}

TEST(Failover, MovesToTheNextOnAnUnreachableDaemonOrAStandby) {
  Failover failover(kTwo);
  EXPECT_EQ(failover.current(), kTwo[0]);
  EXPECT_EQ(failover.failed(unreachable("connection refused")).kind, FailoverStep::Kind::try_next);
  EXPECT_EQ(failover.current(), kTwo[1]);
  failover.answered();
  EXPECT_EQ(failover.current(), kTwo[1]);  // the next round starts where the last answer came from
  EXPECT_EQ(failover.failed(kStandby).kind, FailoverStep::Kind::try_next);
  EXPECT_EQ(failover.current(), kTwo[0]);
}

TEST(Failover, ARoundOfFailuresNamesEveryDaemonAndWhy) {
  Failover failover(kTwo);
  EXPECT_EQ(failover.failed(unreachable("connection refused")).kind, FailoverStep::Kind::try_next);
  const FailoverStep step = failover.failed(kStandby);
  EXPECT_EQ(step.kind, FailoverStep::Kind::exhausted);
  EXPECT_NE(step.message.find(kTwo[0] + " (connection refused)"), std::string::npos) << step.message;
  EXPECT_NE(step.message.find(kTwo[1] + " (a standby"), std::string::npos) << step.message;
  // A caller that keeps trying goes around the list, with a fresh round.
  EXPECT_EQ(failover.current(), kTwo[0]);
  EXPECT_EQ(failover.failed(kStandby).kind, FailoverStep::Kind::try_next);
}

TEST(Failover, FollowsARedirectWithinTheList) {
  Failover failover({"http://a:1", "http://b:1", "http://c:1"});
  EXPECT_EQ(failover.failed(redirect("http://c:1/v1/jobs")).kind, FailoverStep::Kind::try_next);
  EXPECT_EQ(failover.current(), "http://c:1");
}

TEST(Failover, RefusesARedirectOutOfTheListNamingBothUrls) {
  Failover failover(kTwo);
  const FailoverStep step = failover.failed(redirect("http://10.9.9.9:8080/v1/jobs"));
  EXPECT_EQ(step.kind, FailoverStep::Kind::refused);
  EXPECT_NE(step.message.find("the daemon at " + kTwo[0] + " is a standby"), std::string::npos) << step.message;
  EXPECT_NE(step.message.find("http://10.9.9.9:8080/v1/jobs"), std::string::npos) << step.message;
  EXPECT_NE(step.message.find("add it to --server"), std::string::npos) << step.message;
  EXPECT_EQ(failover.current(), kTwo[1]);  // a caller that keeps trying does not go there
}

TEST(Failover, StopsARedirectLoop) {
  Failover failover(kTwo);
  for (int hop = 0; hop < Failover::kMaxRedirects; ++hop) {
    const std::string other = failover.current() == kTwo[0] ? kTwo[1] : kTwo[0];
    ASSERT_EQ(failover.failed(redirect(other + "/healthz")).kind, FailoverStep::Kind::try_next) << hop;
    EXPECT_EQ(failover.current(), other);
  }
  const FailoverStep step = failover.failed(redirect(kTwo[0] + "/healthz"));
  EXPECT_EQ(step.kind, FailoverStep::Kind::refused);
  EXPECT_NE(step.message.find("more than 3 redirects"), std::string::npos) << step.message;
}

TEST(Failover, ARedirectIsNotAFailureOfTheRound) {
  Failover failover({"http://a:1", "http://b:1"});
  EXPECT_EQ(failover.failed(redirect("http://b:1/x")).kind, FailoverStep::Kind::try_next);
  EXPECT_EQ(failover.failed(unreachable("refused")).kind, FailoverStep::Kind::try_next);  // b died meanwhile
  EXPECT_EQ(failover.current(), "http://a:1");
  EXPECT_EQ(failover.failed(unreachable("refused")).kind, FailoverStep::Kind::exhausted);
}

}  // namespace
}  // namespace trainyard::net
