#include "proto/sha256.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(Sha256, MatchesTheStandardsTestVectors) {
  // FIPS 180-2, appendix B.1 and the empty message.
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, AStreamInPiecesDigestsAsTheWholeAtOnce) {
  const std::string text(100'000, 'x');
  Sha256 streamed;
  for (std::size_t at = 0; at < text.size(); at += 4097) streamed.update(std::string_view(text).substr(at, 4097));
  EXPECT_EQ(streamed.hex(), sha256_hex(text));
  EXPECT_EQ(sha256_hex(std::as_bytes(std::span(text.data(), text.size()))), sha256_hex(text));
}

}  // namespace
}  // namespace trainyard
