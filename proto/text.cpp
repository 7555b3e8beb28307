#include "proto/text.h"

namespace trainyard {

std::string json_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string_view drop_partial_utf8_prefix(std::string_view text) {
  // A character is at most 4 bytes, so at most 3 continuation bytes can belong to a cut one; more
  // than that is invalid text, which the encoder replaces anyway.
  std::size_t skip = 0;
  while (skip < text.size() && skip < 3 && (static_cast<unsigned char>(text[skip]) & 0xC0) == 0x80) ++skip;
  return text.substr(skip);
}

std::string_view utf8_tail(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  return drop_partial_utf8_prefix(text.substr(text.size() - max_bytes));
}

}  // namespace trainyard
