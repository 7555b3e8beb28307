#pragma once
// Text that came from outside (a job's output, a reason a process printed, a name in an old record)
// is bytes, not necessarily UTF-8. JSON must be UTF-8, and nlohmann's default `dump()` throws on
// an invalid byte: one `printf '\377'` in a job's log took an agent down inside the encoder. Every
// JSON document the project writes therefore goes through `json_text`, which replaces invalid
// sequences with U+FFFD, and every tail of a longer text is cut on a character boundary.
#include <cstddef>
#include <string>
#include <string_view>

#include "proto/json_reader.h"

namespace trainyard::inline proto {

// The length of the UTF-8 character starting at text[i] if it is valid and printable, else 0:
// 0 for a byte that does not start a valid sequence (overlong forms, surrogates and code points
// past U+10FFFF included) and for the C1 controls U+0080..U+009F. ASCII controls are 1: the
// caller decides about those.
std::size_t printable_utf8_length(std::string_view text, std::size_t i);

// Compact JSON text; invalid UTF-8 in strings becomes U+FFFD instead of an exception.
std::string json_text(const Json& value);

// The last `max_bytes` of `text`, starting on a UTF-8 character boundary (the bytes of a character
// cut by the limit are dropped, never half of it kept).
std::string_view utf8_tail(std::string_view text, std::size_t max_bytes);

// Drops continuation bytes (10xxxxxx) at the start of `text`: the rest of a character whose first
// byte was cut off.
std::string_view drop_partial_utf8_prefix(std::string_view text);

}  // namespace trainyard::proto
