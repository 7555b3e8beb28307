#include "proto/text.h"

#include <cstdint>

namespace trainyard::inline proto {

std::string json_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string_view drop_partial_utf8_prefix(std::string_view text) {
  // A character is at most 4 bytes, so at most 3 continuation bytes can belong to a cut one; more
  // than that is invalid text, which the encoder replaces anyway.
  std::size_t skip = 0;
  while (skip < text.size() && skip < 3 && (static_cast<unsigned char>(text[skip]) & 0xC0) == 0x80) ++skip;
  return text.substr(skip);
}

std::size_t printable_utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = byte(i);
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) {
    len = 2;
    cp = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    len = 3;
    cp = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    len = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr std::uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  // C1 controls (U+0080..U+009F) are two-byte sequences C2 80..C2 9F.
  if (len == 2 && cp < 0xA0) return 0;
  return len;
}

std::string_view utf8_tail(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  return drop_partial_utf8_prefix(text.substr(text.size() - max_bytes));
}

}  // namespace trainyard::proto
