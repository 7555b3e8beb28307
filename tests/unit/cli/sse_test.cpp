// The SSE framing `trainyard events --follow` reads: events cut anywhere between pieces, CRLF
// lines, comments, multi-line data, and an id or type that is not repeated.
#include "cli/sse.h"

#include <gtest/gtest.h>

namespace trainyard::cli {
namespace {

TEST(SseParser, AssemblesEventsCutAnywhere) {
  const std::string stream =
      ": keep-alive\n\nid: 7\nevent: job.failed\ndata: {\"id\":7}\n\nid: 8\r\ndata: a\r\ndata: b\r\n\r\n";
  const std::vector<SseEvent> expected = {{"7", "job.failed", "{\"id\":7}"}, {"8", "", "a\nb"}};
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser parser;
    std::vector<SseEvent> got = parser.feed(stream.substr(0, cut));
    for (SseEvent& e : parser.feed(stream.substr(cut))) got.push_back(std::move(e));
    EXPECT_EQ(got, expected) << "cut at " << cut;
  }
}

TEST(SseParser, AnEventIsDispatchedOnlyAtItsBlankLine) {
  SseParser parser;
  EXPECT_TRUE(parser.feed("id: 1\ndata: x\n").empty());
  EXPECT_TRUE(parser.feed(": comment\n").empty());
  EXPECT_EQ(parser.feed("\n"), (std::vector<SseEvent>{{"1", "", "x"}}));
  EXPECT_TRUE(parser.feed("id: 2\n\n").empty()) << "no data, no event";
}

}  // namespace
}  // namespace trainyard::cli
