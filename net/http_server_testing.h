#pragma once
// For tests of the HTTP server's connection handling without sockets: one connection served over
// Beast's in-memory stream, whose fail_count makes a chosen read or write fail, exactly as an
// accepted plain-HTTP connection is served (caps, TLS and timeouts aside). Includes Beast: only
// http_server.cpp and tests/unit/net include it.
#include <boost/asio/socket_base.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <utility>

#include "net/http_server.h"

namespace trainyard::net {

// Beast's test stream dressed as the server's sockets: deadlines do nothing, and closing or
// half-closing the "socket" closes the stream, which its peer reads as end-of-file.
class InMemoryStream : public boost::beast::test::stream {
 public:
  using Base = boost::beast::test::stream;
  using Base::Base;

  struct Socket {
    InMemoryStream& stream;
    void close(boost::system::error_code&) { stream.close(); }
    void shutdown(boost::asio::socket_base::shutdown_type, boost::system::error_code&) { stream.close(); }
  };
  Socket socket() { return Socket{*this}; }
  void expires_after(std::chrono::steady_clock::duration) {}
  void expires_at(std::chrono::steady_clock::time_point) {}
  void expires_never() {}
};

// A WebSocket's closing handshake ends with these; Beast's own for its test stream are not found
// through the derived type.
inline void teardown(boost::beast::role_type role, InMemoryStream& stream, boost::system::error_code& ec) {
  teardown(role, static_cast<InMemoryStream::Base&>(stream), ec);
}
template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, InMemoryStream& stream, TeardownHandler&& handler) {
  async_teardown(role, static_cast<InMemoryStream::Base&>(stream), std::forward<TeardownHandler>(handler));
}

struct HttpServerTesting {
  // Serves `stream` on the server's io_context until the connection ends.
  static void serve(HttpServer& server, InMemoryStream stream);
};

}  // namespace trainyard::net
