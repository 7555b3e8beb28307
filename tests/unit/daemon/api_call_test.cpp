#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "daemon/api/call.h"

namespace trainyard::daemon::testing {
namespace {

// What `fail(error)` answers, through the call's responder.
net::HttpResponse answer_to(const Error& error) {
  std::optional<net::HttpResponse> answered;
  ApiCall call;
  call.respond = std::make_shared<net::HttpResponder>([&](net::HttpResponse r) { answered = std::move(r); });
  call.fail(error);
  EXPECT_TRUE(answered);
  return answered.value_or(net::HttpResponse{});
}

TEST(ApiCallFail, EachErrorCodeIsAnsweredWithItsStatusAndProblemCode) {
  const struct {
    Error error;
    int status;
  } cases[] = {
      {Error::invalid_input("share", "share gpu does not exist"), 400},
      {Error::unauthorized("missing bearer token"), 401},
      {Error::forbidden("role viewer may not cancel jobs"), 403},
      {Error::not_found("job 9 does not exist"), 404},
      {Error::conflict("job 9 already ended"), 409},
      {Error::too_many_pending("alice already has 3 pending jobs"), 429},
      {Error::internal("could not read jobs: disk I/O error"), 500},
      {Error::unavailable("the job could not be stored"), 503},
  };
  for (const auto& c : cases) {
    const net::HttpResponse r = answer_to(c.error);
    EXPECT_EQ(r.status, c.status) << c.error.message;
    const Json body = Json::parse(r.body);
    EXPECT_EQ(body["error"]["code"], std::string(to_string(c.error.code)));
    const std::string field_prefix = c.error.field.empty() ? "" : c.error.field + ": ";
    EXPECT_EQ(body["error"]["message"], field_prefix + c.error.message);
  }
}

TEST(ApiCallFail, AnInvalidInputNamesItsField) {
  const Json body = Json::parse(answer_to(Error::invalid_input("members", "takes no members")).body);
  EXPECT_EQ(body["error"]["code"], "invalid_field");
  EXPECT_EQ(body["error"]["field"], "members");
  EXPECT_EQ(body["error"]["message"], "members: takes no members") << "as a thrown InvalidInput's, which the CLI shows";
}

}  // namespace
}  // namespace trainyard::daemon::testing
