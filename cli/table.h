#pragma once
// Text output for people: aligned tables (squeue/kubectl style), "key: value" descriptions, ages,
// and lenient reading of fields from the daemon's JSON. Renderers must never fail on a field that
// is missing or of an unexpected type (an older or newer daemon): such a field shows as "-".
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard::cli {

// Columns separated by three spaces, each padded to its widest cell except the last.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells);
  std::string str() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// "key:  value" lines with the values aligned; an empty value shows as "-".
class Description {
 public:
  void add(std::string key, std::string value);
  std::string str() const;

 private:
  std::vector<std::pair<std::string, std::string>> lines_;
};

inline constexpr std::string_view kAbsent = "-";

// The field as display text: strings as they are, numbers and booleans printed, anything else "-".
std::string text_of(const Json& object, std::string_view key);
// The member `key` of `object`, or null when `object` is not an object or lacks it.
const Json& field_or_null(const Json& object, std::string_view key);
// A number field with `significant` significant digits ("%.*g"); "-" when absent or not a number.
std::string number_of(const Json& object, std::string_view key, int significant = 4);
// Comma-joined strings of an array field; "-" when absent or empty.
std::string list_of(const Json& object, std::string_view key);
// "k=v,k2=v2" of an object field; "-" when absent or empty.
std::string labels_of(const Json& object, std::string_view key);

// Compact age like kubectl: "42s", "7m", "3h", "12d"; negative spans (clock skew) read "0s".
std::string format_age(Millis age);
// Age of a timestamp field at `now`; "-" when the field is absent or unparseable.
std::string age_of(const Json& object, std::string_view key, TimePoint now);
// A byte count for people: "812 B", "5.3 KiB", "12.0 MiB"; "-" when not a number.
std::string format_bytes(const Json& bytes);
// Text from the daemon made safe for a terminal: control characters other than newline and tab
// (an escape sequence in a job name or a job's output could rewrite the screen, the title or the
// clipboard), C1 controls and bytes that are not UTF-8 are shown as \xNN.
std::string terminal_safe(std::string_view text);
// Cuts `text` to at most `max` characters, marking the cut with "...".
std::string truncate(std::string text, std::size_t max);

}  // namespace trainyard::cli
