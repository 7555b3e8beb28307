#include "net/http_wire.h"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>
#include <nlohmann/json.hpp>

#include "net/http_server.h"
#include "proto/text.h"

namespace trainyard::net {

std::string wire_format(const HttpResponse& resp, unsigned version, bool keep_alive) {
  std::string out;
  out.reserve(resp.body.size() + 192);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(resp.status);
  out += ' ';
  out += boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(resp.status));
  out += "\r\nServer: trainyard\r\nContent-Type: ";
  out += resp.content_type;
  bool sniffing_refused = false;
  for (const auto& [name, value] : resp.headers) {
    out += "\r\n";
    out += name;
    out += ": ";
    out += value;
    sniffing_refused = sniffing_refused || boost::beast::iequals(name, "X-Content-Type-Options");
  }
  // Every answer is of the type it says: a browser must not run a JSON answer that looks like HTML.
  if (!sniffing_refused) out += "\r\nX-Content-Type-Options: nosniff";
  // HTTP/1.1 keeps connections alive unless told otherwise, HTTP/1.0 closes them unless told.
  if (version == 10 && keep_alive) out += "\r\nConnection: keep-alive";
  if (version != 10 && !keep_alive) out += "\r\nConnection: close";
  // A stream's body runs until the connection closes.
  if (!resp.stream) {
    out += "\r\nContent-Length: ";
    out += std::to_string(resp.body.size());
  }
  out += "\r\n\r\n";
  out += resp.body;
  return out;
}

HttpResponse error_response(int status, const std::string& code, const std::string& message, const std::string& field) {
  nlohmann::json err = {{"code", code}, {"message", message}};
  if (!field.empty()) err["field"] = field;
  return HttpResponse{status, "application/json", json_text(nlohmann::json{{"error", err}}), {}};
}

}  // namespace trainyard::net
