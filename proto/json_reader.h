#pragma once
// Strict reading of untrusted JSON objects: every getter checks type and range and names the
// field in its error; `finish()` rejects any field nobody asked for, so a typo in a job spec is an
// error rather than a silently ignored setting.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "proto/errors.h"

namespace trainyard::inline proto {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects that JSON from outside may have. Copying, comparing and
// printing a nlohmann value recurse once per level, so a deeper document is refused while it is
// read, before anything is built that could overflow the stack.
inline constexpr int kMaxJsonDepth = 64;

// The one reader of JSON from outside (REST bodies, protocol messages, config, rules, manifests,
// provenance files). Throws InvalidInput naming the problem for a syntax error, nesting deeper than
// kMaxJsonDepth, or a key given twice in one object (which would otherwise keep one value silently).
Json parse_json_text(std::string_view text);
// The same reader for files people write by hand (the daemon's config): `//` and `/* */` comments
// are allowed.
Json parse_commented_json_text(std::string_view text);

class ObjectReader {
 public:
  // `path` is the dotted location of this object in the document ("" for the root).
  ObjectReader(const Json& object, std::string path);

  bool has(std::string_view key) const;
  std::string field_path(std::string_view key) const;

  std::string string(std::string_view key, std::size_t min_len = 0, std::size_t max_len = 4096);
  std::optional<std::string> opt_string(std::string_view key, std::size_t min_len = 0, std::size_t max_len = 4096);
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<std::int64_t> opt_integer(std::string_view key, std::int64_t min, std::int64_t max);
  double number(std::string_view key, double min, double max);
  std::optional<double> opt_number(std::string_view key, double min, double max);
  bool boolean(std::string_view key);
  std::optional<bool> opt_boolean(std::string_view key);
  std::vector<std::string> string_list(std::string_view key, std::size_t max_items, std::size_t max_len = 4096);
  std::map<std::string, std::string> string_map(std::string_view key, std::size_t max_items,
                                                std::size_t max_len = 4096);
  // The raw child, marked as read; nullptr when absent. The caller validates it.
  const Json* child(std::string_view key);

  // Throws for the first field that no getter read.
  void finish() const;

 private:
  const Json& require(std::string_view key);
  const Json* find(std::string_view key);

  const Json& object_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
};

// Checks that `text` is a usable name: 1..max characters of [A-Za-z0-9._-], starting alphanumeric.
void check_name(const std::string& field, const std::string& text, std::size_t max_len = 64);
// Text people read in tables and terminals (job names, label values): valid UTF-8 with no control
// character (C0, DEL, C1), so an escape sequence in a name cannot rewrite an operator's terminal.
void check_printable(const std::string& field, std::string_view text);
// Text handed to exec (argv, environment values): anything but NUL, which exec would cut at.
void check_no_nul(const std::string& field, std::string_view text);
// Label keys are names; values are printable. Errors name `field.key`.
void check_labels(const std::string& field, const std::map<std::string, std::string>& labels);
// An environment variable name: [A-Za-z_][A-Za-z0-9_]*.
void check_env_name(const std::string& field, std::string_view name);

}  // namespace trainyard::proto
