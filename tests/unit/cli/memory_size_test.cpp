// Memory as sbatch's --mem takes it, and the mistakes each form can hold.
#include <gtest/gtest.h>

#include "cli/memory_size.h"
#include "proto/errors.h"

namespace trainyard::cli {
namespace {

TEST(MemorySize, BareNumbersAreMibAndUnitsAreSlurms) {
  EXPECT_EQ(parse_memory_mb("4096", "--mem"), 4096);
  EXPECT_EQ(parse_memory_mb("500M", "--mem"), 500);
  EXPECT_EQ(parse_memory_mb("2G", "--mem"), 2048);
  EXPECT_EQ(parse_memory_mb("2g", "--mem"), 2048);
  EXPECT_EQ(parse_memory_mb("2GB", "--mem"), 2048);
  EXPECT_EQ(parse_memory_mb("1T", "--mem"), 1024 * 1024);
  EXPECT_EQ(parse_memory_mb("1536K", "--mem"), 2) << "kibibytes round up to whole MiB";
}

TEST(MemorySize, MistakesNameTheFlagAndTheFormsItTakes) {
  for (const char* bad : {"", "G", "0", "-1", "2X", "2.5G", "2 G", "1e3", "99999999999999999999"}) {
    try {
      parse_memory_mb(bad, "--mem");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--mem") << bad;
      EXPECT_NE(e.message().find("500M, 2G"), std::string::npos) << e.message();
    }
  }
  try {
    parse_memory_mb("99999999T", "--mem");
    ADD_FAILURE() << "accepted an overflowing size";
  } catch (const InvalidInput& e) {
    EXPECT_NE(e.message().find("more memory than any node"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace trainyard::cli
