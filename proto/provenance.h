#pragma once
// Provenance (docs/DESIGN.md "Provenance"): the parts both sides of the link
// need. The agent masks the environment it gives a command job's processes before it leaves the node,
// and validates the facts a job wrote to $TRAINYARD_PROVENANCE_FILE; the daemon validates the same
// facts again when they arrive.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "proto/json_reader.h"

namespace trainyard::inline proto {

inline constexpr std::string_view kMaskedValue = "<masked>";

// A variable whose name, upper-cased, contains TOKEN, SECRET, PASSW (PASSWORD, PASSWD), KEY,
// CREDENTIAL, AUTH, PRIVATE, COOKIE, SESSION or SIGNATURE. Errs on the side of masking (MONKEY is
// masked too): a masked value costs a reader little, a leaked one cannot be taken back.
bool looks_secret(std::string_view variable_name);
// The environment with the value of every variable that looks secret replaced by kMaskedValue.
std::map<std::string, std::string> mask_secrets(std::map<std::string, std::string> environment);

// The facts a job may add about itself: a JSON object of at most this many bytes as text, nested
// at most this deep, valid UTF-8.
inline constexpr std::size_t kMaxUserFactsBytes = 64 * 1024;
inline constexpr int kMaxUserFactsDepth = 16;

// Parses what a job wrote. Throws InvalidInput (field "provenance") saying what is wrong. The
// depth is checked on the text before parsing, so a megabyte of '[' costs a scan, not a stack.
Json parse_user_facts(std::string_view text);
// Checks facts that arrive already parsed (the agent's message): an object within the limits.
void check_user_facts(const Json& facts);

}  // namespace trainyard::proto
