// Time limits as sbatch and people write them, and the mistakes each form can hold.
#include <gtest/gtest.h>

#include "cli/time_limit.h"

namespace trainyard::cli {
namespace {

std::optional<std::int64_t> minutes_form(std::string_view text) {
  return parse_time_limit(text, "--time", BareNumber::minutes);
}

TEST(TimeLimit, SlurmForms) {
  EXPECT_EQ(minutes_form("90"), 90 * 60);
  EXPECT_EQ(minutes_form("30:15"), 30 * 60 + 15);     // minutes:seconds
  EXPECT_EQ(minutes_form("600:00"), 600 * 60);        // the first field may be large
  EXPECT_EQ(minutes_form("1:30:00"), 5400);           // hours:minutes:seconds
  EXPECT_EQ(minutes_form("2-00"), 2 * 86400);         // days-hours
  EXPECT_EQ(minutes_form("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);
  EXPECT_EQ(minutes_form("1-02:03:04"), 86400 + 2 * 3600 + 3 * 60 + 4);
  EXPECT_EQ(minutes_form("UNLIMITED"), std::nullopt);
  EXPECT_EQ(minutes_form("infinite"), std::nullopt);
}

TEST(TimeLimit, DurationsWithAUnitMeanTheSameUnderEitherFlag) {
  for (BareNumber bare : {BareNumber::minutes, BareNumber::seconds}) {
    EXPECT_EQ(parse_time_limit("90s", "f", bare), 90);
    EXPECT_EQ(parse_time_limit("45m", "f", bare), 45 * 60);
    EXPECT_EQ(parse_time_limit("12h", "f", bare), 12 * 3600);
    EXPECT_EQ(parse_time_limit("2d", "f", bare), 2 * 86400);
  }
  EXPECT_EQ(parse_time_limit("90", "--timeout", BareNumber::seconds), 90);
}

TEST(TimeLimit, IsShownAsSqueueShowsItAndReadsBack) {
  for (const auto& [seconds, text] : std::vector<std::pair<std::int64_t, std::string>>{
           {59, "0:59"}, {1800, "30:00"}, {5400, "1:30:00"}, {86400, "1-00:00:00"}, {2 * 86400 + 3661, "2-01:01:01"}}) {
    EXPECT_EQ(format_time_limit(seconds), text);
    EXPECT_EQ(parse_time_limit(text, "--time", BareNumber::minutes), seconds) << text;
  }
}

TEST(TimeLimit, MistakesNameTheFlagAndTheForms) {
  for (const char* bad : {"", "0", "0:00", "abc", "1:60", "1:2:3:4", "2-24", "2-1:60", "-5", "1-", "5:", "1.5h", "45x",
                          "99999999999999999999"}) {
    try {
      minutes_form(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--time");
      EXPECT_NE(std::string(e.what()).find("D-HH:MM:SS"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace trainyard::cli
