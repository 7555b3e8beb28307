// HttpServer::reload_tls without a socket: a server that speaks plain HTTP has no files to reload
// (tests/integration/tls_test.cpp reloads real ones, good and bad, under a running daemon).
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "net/http_server.h"

namespace trainyard::net {
namespace {

TEST(HttpServerReloadTls, APlainHttpServerHasNothingToReload) {
  boost::asio::io_context io(1);
  HttpServer server(io, HttpServerOptions{}, [](HttpRequest, HttpResponder respond) { respond(HttpResponse{}); }, {});
  const Result<void> reloaded = server.reload_tls();
  ASSERT_FALSE(reloaded.ok());
  EXPECT_EQ(reloaded.error().code, ErrorCode::conflict);
  EXPECT_EQ(reloaded.error().message, "the server does not speak TLS");
}

}  // namespace
}  // namespace trainyard::net
