// Every answer the server writes tells browsers not to guess its type, once.
#include <gtest/gtest.h>

#include <string>

#include "net/http_wire.h"

namespace trainyard::net {
namespace {

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(HttpWire, AJsonAnswerRefusesContentSniffing) {
  const std::string wire = wire_format(HttpResponse{200, "application/json", R"({"a":1})", {}}, 11, true);
  EXPECT_EQ(occurrences(wire, "\r\nX-Content-Type-Options: nosniff\r\n"), 1u) << wire;
}

TEST(HttpWire, AnAnswerThatSaysItItselfCarriesTheHeaderOnce) {
  const std::string wire =
      wire_format(HttpResponse{200, "text/html", "<p>", {{"x-content-type-options", "nosniff"}}}, 11, true);
  EXPECT_EQ(occurrences(wire, "nosniff"), 1u) << wire;
}

}  // namespace
}  // namespace trainyard::net
