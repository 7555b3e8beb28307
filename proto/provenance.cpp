#include "proto/provenance.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "proto/errors.h"
#include "proto/json_reader.h"
#include "proto/text.h"

namespace trainyard::inline proto {
namespace {

constexpr std::array<std::string_view, 10> kSecretMarkers = {"TOKEN", "SECRET",  "PASSW",  "KEY",     "CREDENTIAL",
                                                             "AUTH",  "PRIVATE", "COOKIE", "SESSION", "SIGNATURE"};

InvalidInput bad_facts(const std::string& why) { return InvalidInput("provenance", why); }

// The deepest nesting of arrays and objects in JSON text, brackets inside strings not counted.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      in_string = escaped || c != '"';
      escaped = !escaped && c == '\\';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

int nesting_depth(const Json& value) {
  if (!value.is_structured()) return 0;
  int deepest = 0;
  for (const auto& child : value) deepest = std::max(deepest, nesting_depth(child));
  return deepest + 1;
}

const std::string kLimits = "a JSON object of at most " + std::to_string(kMaxUserFactsBytes / 1024) +
                            " KiB nested at most " + std::to_string(kMaxUserFactsDepth) + " deep";

}  // namespace

bool looks_secret(std::string_view variable_name) {
  std::string upper(variable_name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return std::any_of(kSecretMarkers.begin(), kSecretMarkers.end(),
                     [&](std::string_view marker) { return upper.find(marker) != std::string::npos; });
}

std::map<std::string, std::string> mask_secrets(std::map<std::string, std::string> environment) {
  for (auto& [name, value] : environment) {
    if (looks_secret(name)) value = kMaskedValue;
  }
  return environment;
}

Json parse_user_facts(std::string_view text) {
  if (text.size() > kMaxUserFactsBytes) throw bad_facts("larger than " + kLimits);
  if (nesting_depth(text) > kMaxUserFactsDepth) throw bad_facts("nested deeper than " + kLimits);
  Json facts;
  try {
    facts = parse_json_text(text);  // refuses invalid UTF-8 in strings
  } catch (const InvalidInput& e) {
    throw bad_facts(std::string("not valid JSON (must be ") + kLimits + "): " + e.what());
  }
  check_user_facts(facts);
  return facts;
}

void check_user_facts(const Json& facts) {
  if (!facts.is_object()) throw bad_facts("must be " + kLimits);
  if (nesting_depth(facts) > kMaxUserFactsDepth) throw bad_facts("nested deeper than " + kLimits);
  if (json_text(facts).size() > kMaxUserFactsBytes) throw bad_facts("larger than " + kLimits);
}

}  // namespace trainyard::proto
