#include "proto/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace trainyard::inline proto {
namespace {

TEST(Result, HoldsTheValueOrTheError) {
  Result<int> seven = 7;
  ASSERT_TRUE(seven.ok());
  EXPECT_EQ(*seven, 7);

  Result<int> missing = Error::not_found("job 3 does not exist");
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  EXPECT_EQ(missing.error().message, "job 3 does not exist");
}

TEST(Result, ReadingTheValueOfAnErrorIsAProgrammingErrorThatThrows) {
  Result<std::string> failed = Error::internal("disk");
  EXPECT_THROW(static_cast<void>(failed.value()), std::bad_variant_access);
  Result<std::string> text = std::string("ok");
  EXPECT_THROW(static_cast<void>(text.error()), std::bad_variant_access);
}

TEST(Result, MovesAValueThatCannotBeCopied) {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(5);
  std::unique_ptr<int> taken = std::move(owned).value();
  ASSERT_TRUE(taken);
  EXPECT_EQ(*taken, 5);
}

TEST(Result, VoidIsSuccessOrWhyNot) {
  Result<void> done;
  EXPECT_TRUE(done.ok());
  Result<void> refused = Error::invalid_input("share", "share gpu does not exist");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::invalid_input);
  EXPECT_EQ(refused.error().field, "share");
}

TEST(Result, DuringPrefixesWhatWasBeingDoneAndKeepsTheCodeAndField) {
  const Error read = Error{ErrorCode::unavailable, "database is locked", "x"}.during("could not read jobs");
  EXPECT_EQ(read.code, ErrorCode::unavailable);
  EXPECT_EQ(read.message, "could not read jobs: database is locked");
  EXPECT_EQ(read.field, "x");
}

TEST(ErrorCode, NamesAreTheApisProblemCodes) {
  EXPECT_EQ(to_string(ErrorCode::invalid_input), "invalid_field");
  EXPECT_EQ(to_string(ErrorCode::not_found), "not_found");
  EXPECT_EQ(to_string(ErrorCode::conflict), "conflict");
  EXPECT_EQ(to_string(ErrorCode::forbidden), "forbidden");
  EXPECT_EQ(to_string(ErrorCode::unauthorized), "unauthorized");
  EXPECT_EQ(to_string(ErrorCode::too_many_pending), "too_many_pending");
  EXPECT_EQ(to_string(ErrorCode::unavailable), "unavailable");
  EXPECT_EQ(to_string(ErrorCode::internal), "internal");
}

}  // namespace
}  // namespace trainyard::inline proto
