// The metrics registry and the text exposition format 0.0.4, byte for byte.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

#include "daemon/base/prometheus.h"

namespace trainyard::daemon::prom {
namespace {

using ::testing::HasSubstr;

TEST(PrometheusText, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(escape_label_value(R"(a\b"c)" "\n" "d"), R"(a\\b\"c\nd)");
  EXPECT_EQ(escape_label_value("tab\tstays"), "tab\tstays");
  EXPECT_EQ(escape_label_value("n\xC3\xA9ud-\xE2\x82\xAC-\xF0\x9F\x9A\x80"), "n\xC3\xA9ud-\xE2\x82\xAC-\xF0\x9F\x9A\x80");
}

TEST(PrometheusText, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(escape_label_value("a\xFF" "b"), "a" + fffd + "b");
  EXPECT_EQ(escape_label_value("\xC3"), fffd);                         // truncated sequence
  EXPECT_EQ(escape_label_value("\xC0\xAF"), fffd + fffd);              // overlong '/'
  EXPECT_EQ(escape_label_value("\xED\xA0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(escape_label_value("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
}

TEST(PrometheusText, HelpEscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(escape_help("a \\ \"b\"\nc"), "a \\\\ \"b\"\\nc");
}

TEST(PrometheusText, ValuesAreIntegersWhenWholeAndSpellInfinityAndNaN) {
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(-2), "-2");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(PrometheusRegistry, CounterRendersHelpTypeAndOneLinePerLabelSet) {
  Registry r;
  Counter& c = r.counter("trainyard_things_total", "Things\nseen.", {"kind", "node"});
  c.inc({"a", "n\"1"});
  c.inc({"a", "n\"1"}, 2);
  c.inc({"b", "back\\slash"});
  EXPECT_EQ(c.value({"a", "n\"1"}), 3);
  EXPECT_EQ(r.render(),
            "# HELP trainyard_things_total Things\\nseen.\n"
            "# TYPE trainyard_things_total counter\n"
            "trainyard_things_total{kind=\"a\",node=\"n\\\"1\"} 3\n"
            "trainyard_things_total{kind=\"b\",node=\"back\\\\slash\"} 1\n");
}

TEST(PrometheusRegistry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry r;
  Histogram& h = r.histogram("trainyard_wait_seconds", "Waits.", {0.1, 1, 5}, {"share"});
  h.observe(0.05, {"a"});
  h.observe(0.1, {"a"});  // a bound is "less or equal"
  h.observe(2, {"a"});
  h.observe(7, {"a"});
  EXPECT_EQ(h.count({"a"}), 4u);
  EXPECT_DOUBLE_EQ(h.sum({"a"}), 9.15);
  EXPECT_EQ(r.render(),
            "# HELP trainyard_wait_seconds Waits.\n"
            "# TYPE trainyard_wait_seconds histogram\n"
            "trainyard_wait_seconds_bucket{share=\"a\",le=\"0.1\"} 2\n"
            "trainyard_wait_seconds_bucket{share=\"a\",le=\"1\"} 2\n"
            "trainyard_wait_seconds_bucket{share=\"a\",le=\"5\"} 3\n"
            "trainyard_wait_seconds_bucket{share=\"a\",le=\"+Inf\"} 4\n"
            "trainyard_wait_seconds_sum{share=\"a\"} 9.15\n"
            "trainyard_wait_seconds_count{share=\"a\"} 4\n");
}

TEST(PrometheusRegistry, UnlabelledFamiliesShowZeroBeforeTheFirstEvent) {
  Registry r;
  r.counter("trainyard_a_total", "A.");
  r.gauge("trainyard_b", "B.");
  r.histogram("trainyard_c_seconds", "C.", {1});
  r.counter("trainyard_d_total", "D, labelled: no series until there is one.", {"x"});
  const std::string text = r.render();
  EXPECT_THAT(text, HasSubstr("\ntrainyard_a_total 0\n"));
  EXPECT_THAT(text, HasSubstr("\ntrainyard_b 0\n"));
  EXPECT_THAT(text, HasSubstr("\ntrainyard_c_seconds_bucket{le=\"1\"} 0\ntrainyard_c_seconds_bucket{le=\"+Inf\"} 0\n"
                              "trainyard_c_seconds_sum 0\ntrainyard_c_seconds_count 0\n"));
  EXPECT_THAT(text, ::testing::EndsWith("# TYPE trainyard_d_total counter\n"));
}

TEST(PrometheusRegistry, CollectorsWriteAfterTheRecordedFamilies) {
  Registry r;
  r.gauge("trainyard_set", "Set.").set(4.5);
  r.add_collector([](TextWriter& out) {
    out.gauge("trainyard_live", "Live.", {"state"}, {{{"DOWN"}, 1}, {{"HEALTHY"}, 2}});
  });
  EXPECT_EQ(r.render(),
            "# HELP trainyard_set Set.\n# TYPE trainyard_set gauge\ntrainyard_set 4.5\n"
            "# HELP trainyard_live Live.\n# TYPE trainyard_live gauge\n"
            "trainyard_live{state=\"DOWN\"} 1\ntrainyard_live{state=\"HEALTHY\"} 2\n");
}

TEST(PrometheusRegistry, RefusesBadNamesDuplicatesWrongArityAndCountingDown) {
  Registry r;
  EXPECT_THROW(r.counter("1bad", "x"), std::invalid_argument);
  EXPECT_THROW(r.counter("bad-name", "x"), std::invalid_argument);
  EXPECT_THROW(r.counter("ok_total", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h_seconds", "x", {1}, {"le"}), std::invalid_argument);
  EXPECT_THROW(r.histogram("h2_seconds", "x", {1, 1}), std::invalid_argument);
  Counter& c = r.counter("c_total", "x", {"a"});
  EXPECT_THROW(r.gauge("c_total", "x"), std::invalid_argument);
  EXPECT_THROW(c.inc({}), std::invalid_argument);
  EXPECT_THROW(c.inc({"a", "b"}), std::invalid_argument);
  EXPECT_THROW(c.inc({"a"}, -1), std::invalid_argument);
}

TEST(PrometheusRegistry, RecordingFromTwoThreadsLosesNothing) {
  Registry r;
  Counter& c = r.counter("c_total", "x", {"t"});
  Histogram& h = r.histogram("h_seconds", "x", {0.5});
  auto record = [&] {
    for (int i = 0; i < 20'000; ++i) {
      c.inc({"same"});
      h.observe(1);
    }
  };
  std::thread other(record);
  record();
  other.join();
  EXPECT_EQ(c.value({"same"}), 40'000);
  EXPECT_EQ(h.count(), 40'000u);
}

}  // namespace
}  // namespace trainyard::daemon::prom
