// Cursor paging and server-side filters of the list endpoints: walks that see every
// item once while items are added, filters, and refused cursors and parameters.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "daemon/api/paging.h"
#include "proto/errors.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

net::HttpRequest request_to(const std::string& target) {
  net::HttpRequest req;
  req.method = "GET";
  req.target = target;
  EXPECT_TRUE(net::parse_target(req).ok()) << target;
  return req;
}

// The field an InvalidInput names, or "" when `read` accepts.
std::string read_refused_field(const std::function<void()>& read) {
  try {
    read();
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "";
}

TEST(PageCursor, NamesThePositionItWasGivenForTheSameListAndFilters) {
  const auto first = request_to("/v1/nodes?state=HEALTHY&limit=2");
  const std::string cursor = page_cursor(first, "nodes", "trn-007");
  // The page size may change during a walk; the filters may not.
  const PageRequest page = page_request(request_to("/v1/nodes?state=HEALTHY&limit=5&cursor=" + cursor), "nodes", 10);
  EXPECT_EQ(page.after, "trn-007");
  EXPECT_EQ(page.limit, 5u);
  EXPECT_EQ(page_request(request_to("/v1/nodes"), "nodes", std::nullopt).limit, std::nullopt);
  EXPECT_EQ(page_request(request_to("/v1/nodes"), "nodes", 10).limit, 10u);
}

TEST(PageCursor, RefusesAlteredForeignAndMisfilteredCursors) {
  const std::string cursor = page_cursor(request_to("/v1/jobs?state=RUNNING"), "jobs", "42");
  const auto read = [](const std::string& target, const std::string& list = "jobs") {
    return [=] { page_request(request_to(target), list, 100); };
  };
  EXPECT_EQ(read_refused_field(read("/v1/jobs?state=RUNNING&cursor=" + cursor)), "");
  std::string altered = cursor;
  altered[3] = altered[3] == '3' ? '4' : '3';  // the position's first digit
  EXPECT_EQ(read_refused_field(read("/v1/jobs?state=RUNNING&cursor=" + altered)), "cursor");
  std::string resigned = cursor;
  resigned.back() = resigned.back() == '0' ? '1' : '0';
  EXPECT_EQ(read_refused_field(read("/v1/jobs?state=RUNNING&cursor=" + resigned)), "cursor");
  EXPECT_EQ(read_refused_field(read("/v1/jobs?state=FAILED&cursor=" + cursor)), "cursor") << "other filters";
  EXPECT_EQ(read_refused_field(read("/v1/jobs?cursor=" + cursor)), "cursor") << "no filters";
  EXPECT_EQ(read_refused_field(read("/v1/nodes?state=RUNNING&cursor=" + cursor, "nodes")), "cursor") << "another list";
  for (const char* garbage : {"", "42", "c1.", "c1..", "c2.3432.0123456789abcdef", "c1.zz.0123456789abcdef", "c1.343.00"}) {
    EXPECT_EQ(read_refused_field(read(std::string("/v1/jobs?cursor=") + garbage)), "cursor") << garbage;
  }
}

class PagingTest : public ApiTest {
 protected:
  // Every item of `list` from `target`'s pages of `limit`, following next; `between` runs after each page.
  std::vector<Json> walk(const std::string& target, const std::string& list, int limit, const std::string& token,
                         const std::function<void()>& between = [] {}) {
    std::vector<Json> seen;
    const std::string first = target + (target.find('?') == std::string::npos ? "?" : "&") + "limit=" + std::to_string(limit);
    Reply page = call("GET", first, token);
    for (int pages = 0; pages < 1000; ++pages) {
      EXPECT_EQ(page.status, 200) << page.body.dump();
      EXPECT_LE(page.body[list].size(), static_cast<std::size_t>(limit));
      for (const Json& item : page.body[list]) seen.push_back(item);
      if (page.body["next"].is_null()) return seen;
      between();
      page = call("GET", first + "&cursor=" + page.body["next"].get<std::string>(), token);
    }
    ADD_FAILURE() << "the walk did not end";
    return seen;
  }

  // A node whose agent registered `labels`.
  void connect_labelled(const std::string& name, std::map<std::string, std::string> labels) {
    HelloMsg hello;
    hello.agent_version = "test-agent";
    hello.name = name;
    hello.cores = 8;
    hello.memory_mb = 1024;
    hello.labels = std::move(labels);
    auto agent = std::make_shared<FakeAgent>();
    EXPECT_TRUE(cluster.jobs.agent_hello(hello, agent).ok()) << "hello of " << name << " refused";
    cluster.agents[name] = agent;
    cluster.settle();
  }

  static std::vector<std::string> names_of(const std::vector<Json>& nodes) {
    std::vector<std::string> names;
    for (const Json& n : nodes) names.push_back(n["name"]);
    return names;
  }
};

TEST_F(PagingTest, NodesWalkSeesEveryNodeOnceWhileNodesJoin) {
  for (int i = 0; i < 10; ++i) cluster.connect("trn-" + std::to_string(100 + i));
  int joined = 0;
  const auto walked = names_of(walk("/v1/nodes", "nodes", 3, kAlice, [&] {
    // Before and after the walk's position, so some of them are seen and some are not.
    cluster.connect("trn-0" + std::to_string(joined));
    cluster.connect("trn-2" + std::to_string(joined++));
  }));
  const std::set<std::string> unique(walked.begin(), walked.end());
  EXPECT_EQ(unique.size(), walked.size()) << "a node listed twice";
  EXPECT_TRUE(std::is_sorted(walked.begin(), walked.end())) << "in name order";
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(unique.contains("trn-" + std::to_string(100 + i))) << "missed trn-" << 100 + i;
  EXPECT_GT(joined, 0);
  EXPECT_EQ(call("GET", "/v1/nodes", kAlice).body["nodes"].size(), 10u + 2 * joined) << "no limit: every node";
  EXPECT_TRUE(call("GET", "/v1/nodes", kAlice).body["next"].is_null());
}

TEST_F(PagingTest, NodesFilterByStateLabelAndNamePrefix) {
  connect_labelled("a-1", {{"rack", "r1"}});
  connect_labelled("a-2", {{"rack", "r2"}});
  connect_labelled("b-1", {{"rack", "r1"}});
  cluster.connect("b-2");
  ASSERT_EQ(call("POST", "/v1/nodes/b-1/drain", kOperator).status, 200);
  const auto names = [&](const std::string& query) { return names_of(walk("/v1/nodes?" + query, "nodes", 1, kAlice)); };
  EXPECT_EQ(names("name_prefix=a-"), (std::vector<std::string>{"a-1", "a-2"}));
  EXPECT_EQ(names("label=rack%3Dr1"), (std::vector<std::string>{"a-1", "b-1"}));
  EXPECT_EQ(names("state=DRAINED"), (std::vector<std::string>{"b-1"}));
  EXPECT_EQ(names("state=HEALTHY,DRAINED&name_prefix=b"), (std::vector<std::string>{"b-1", "b-2"}));
  EXPECT_EQ(names("label=rack%3Dr1&name_prefix=a"), (std::vector<std::string>{"a-1"}));
  EXPECT_TRUE(names("name_prefix=c").empty());
}

TEST_F(PagingTest, NodesRefuseBadFiltersAndCursorsNamingTheParameter) {
  cluster.connect("a-1");
  cluster.connect("a-2");
  EXPECT_EQ(call("GET", "/v1/nodes?state=BROKEN", kAlice).error_field(), "state");
  EXPECT_EQ(call("GET", "/v1/nodes?state=HEALTHY,", kAlice).error_field(), "state");
  EXPECT_EQ(call("GET", "/v1/nodes?label=rack", kAlice).error_field(), "label");
  EXPECT_EQ(call("GET", "/v1/nodes?label=%3Dr1", kAlice).error_field(), "label");
  EXPECT_EQ(call("GET", "/v1/nodes?limit=0", kAlice).error_field(), "limit");
  EXPECT_EQ(call("GET", "/v1/nodes?rack=r1", kAlice).error_field(), "rack");
  const std::string next = call("GET", "/v1/nodes?limit=1", kAlice).body["next"];
  EXPECT_EQ(call("GET", "/v1/nodes?limit=1&cursor=" + next, kAlice).status, 200);
  std::string altered = next;
  altered.back() = altered.back() == '0' ? '1' : '0';
  const Reply tampered = call("GET", "/v1/nodes?limit=1&cursor=" + altered, kAlice);
  EXPECT_EQ(tampered.status, 400);
  EXPECT_EQ(tampered.error_field(), "cursor");
  EXPECT_EQ(call("GET", "/v1/nodes?limit=1&name_prefix=a&cursor=" + next, kAlice).error_field(), "cursor");
  EXPECT_EQ(call("GET", "/v1/jobs?limit=1&cursor=" + next, kAlice).error_field(), "cursor");
}

TEST_F(PagingTest, JobsWalkSeesEveryJobOnceWhileJobsAreSubmitted) {
  std::set<JobId> before_walk;
  for (int i = 0; i < 7; ++i) before_walk.insert(submit_as(kAlice));
  const auto walked = walk("/v1/jobs", "jobs", 2, kAlice, [&] { submit_as(kAlice); });
  std::set<JobId> seen;
  for (const Json& j : walked) EXPECT_TRUE(seen.insert(j["id"].get<JobId>()).second) << "job " << j["id"] << " twice";
  for (JobId id : before_walk) EXPECT_TRUE(seen.contains(id)) << "missed job " << id;
  EXPECT_EQ(walked.size(), before_walk.size()) << "newest first: the jobs submitted during the walk are above it";
  EXPECT_EQ(walk("/v1/jobs?state=PENDING", "jobs", 4, kAlice).size(), 10u);
  EXPECT_EQ(call("GET", "/v1/jobs?state=PENDING&cursor=c1.3131.0123456789abcdef", kAlice).error_field(), "cursor");
}

TEST_F(PagingTest, JobsListAccountsEachRowWithItsOwnAttempts) {
  cluster.connect("n1");
  const JobId ran = submit_as(kAlice);
  const JobId next = submit_as(kAlice);
  const auto launches = cluster.agents.at("n1")->launches();
  ASSERT_EQ(launches.size(), 1u);
  ASSERT_EQ(launches[0].job_id, ran);
  cluster.started("n1", launches[0].attempt_id);
  cluster.advance(Millis(4000));
  cluster.exited("n1", launches[0].attempt_id, 0);  // stored ended; `next` starts now
  const Reply list = call("GET", "/v1/jobs?limit=10", kAlice);
  std::map<JobId, Json> accounting;
  for (const Json& job : list.body["jobs"]) accounting[job["id"].get<JobId>()] = job["accounting"];
  ASSERT_EQ(accounting.size(), 2u) << list.body.dump();
  EXPECT_DOUBLE_EQ(accounting[ran]["elapsed_s"].get<double>(), 4.0) << accounting[ran].dump();
  EXPECT_GT(accounting[ran]["core_hours"].get<double>(), 0.0);
  EXPECT_EQ(accounting[next]["core_hours"].get<double>(), 0.0) << accounting[next].dump();
}

TEST_F(PagingTest, EventsAndAuditWalksSeeEveryEntryOnce) {
  for (int i = 0; i < 5; ++i) submit_as(kAlice);
  const auto events = walk("/v1/events?type=job.*", "events", 2, kAdmin, [&] { submit_as(kAlice); });
  std::set<std::int64_t> ids;
  for (const Json& e : events) EXPECT_TRUE(ids.insert(e["id"].get<std::int64_t>()).second) << e.dump();
  EXPECT_GE(ids.size(), 5u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  const auto audit = walk("/v1/audit", "events", 2, kAdmin, [&] { submit_as(kAlice); });
  std::set<std::int64_t> audited;
  for (const Json& e : audit) EXPECT_TRUE(audited.insert(e["id"].get<std::int64_t>()).second) << e.dump();
  EXPECT_GE(audited.size(), 10u) << "every submission so far, and those during the walk";
}

TEST_F(PagingTest, TokensPageInCreationOrder) {
  const auto tokens = walk("/v1/tokens", "tokens", 4, kAdmin);
  const Reply whole = call("GET", "/v1/tokens", kAdmin);
  ASSERT_EQ(tokens.size(), whole.body["tokens"].size());
  for (std::size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(tokens[i]["id"], whole.body["tokens"][i]["id"]);
  EXPECT_EQ(walk("/v1/tokens", "tokens", 1, kAlice).size(), 1u) << "a user pages through their own tokens";
}

TEST_F(PagingTest, HealthChecksAndCanariesPage) {
  EXPECT_TRUE(call("GET", "/v1/healthchecks?limit=5", kAlice).body["next"].is_null());
  EXPECT_EQ(call("GET", "/v1/healthchecks?cursor=x", kAlice).error_field(), "cursor");
  EXPECT_TRUE(call("GET", "/v1/canaries?limit=5", kAlice).body["next"].is_null());
  EXPECT_EQ(call("GET", "/v1/canaries?cursor=x", kAlice).error_field(), "cursor");
}

}  // namespace
}  // namespace trainyard::daemon::testing
