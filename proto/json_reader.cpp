#include "proto/json_reader.h"

#include "proto/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_set>
#include <vector>

namespace trainyard::inline proto {
namespace {

std::string type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::number_float: return "a number";
    default: return "an integer";
  }
}

// `field()` names the field; it is called only to throw, so a valid document builds no error text
// (a submission reads some thirty fields on the daemon's I/O thread).
template <class FieldName>
void check_length(const FieldName& field, const std::string& s, std::size_t min_len, std::size_t max_len) {
  if (s.size() < min_len) {
    throw InvalidInput(field(), min_len == 1 ? "must not be empty" : "must be at least " + std::to_string(min_len) + " characters");
  }
  if (s.size() > max_len) throw InvalidInput(field(), "must be at most " + std::to_string(max_len) + " characters");
}

}  // namespace

namespace {

// Watches the parser's events: refuses a container opened deeper than kMaxJsonDepth and a key that
// its object already has. One entry per open container; arrays hold no keys.
class JsonShapeGuard {
 public:
  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) {
          throw InvalidInput(path(), "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels of arrays and objects");
        }
        open_.push_back(Container{event == Json::parse_event_t::object_start, {}, {}});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end: open_.pop_back(); break;
      case Json::parse_event_t::key: {
        Container& object = open_.back();
        object.current_key = parsed.get<std::string>();
        if (!object.keys.insert(object.current_key).second) throw InvalidInput(path(), "is given twice");
        break;
      }
      case Json::parse_event_t::value: break;
    }
    return true;
  }

 private:
  struct Container {
    bool is_object;
    std::unordered_set<std::string> keys;
    std::string current_key;
  };

  // Where the parser is, for the error: object keys joined by '.', arrays as "[]". Each key is cut
  // to kShownKeyBytes so a hostile document cannot make the error itself huge.
  std::string path() const {
    static constexpr std::size_t kShownKeyBytes = 64;
    std::string out;
    for (const Container& c : open_) {
      if (!c.is_object) {
        out += "[]";
      } else if (!c.current_key.empty()) {
        if (!out.empty()) out += '.';
        out += c.current_key.size() > kShownKeyBytes ? c.current_key.substr(0, kShownKeyBytes) + "..." : c.current_key;
      }
    }
    return out;
  }

  std::vector<Container> open_;
};

Json parse_guarded(std::string_view text, bool allow_comments) {
  try {
    return Json::parse(text, JsonShapeGuard{}, /*allow_exceptions=*/true, allow_comments);
  } catch (const Json::parse_error& e) {
    throw InvalidInput("", std::string("malformed JSON at byte ") + std::to_string(e.byte));
  } catch (const Json::out_of_range&) {
    // The grammar allows numbers like 1e999 that no double holds; nlohmann refuses them this way.
    throw InvalidInput("", "malformed JSON: a number is out of range");
  }
}

}  // namespace

Json parse_json_text(std::string_view text) { return parse_guarded(text, /*allow_comments=*/false); }

Json parse_commented_json_text(std::string_view text) { return parse_guarded(text, /*allow_comments=*/true); }

ObjectReader::ObjectReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) throw InvalidInput(path_, "must be a JSON object, got " + type_name(object_));
}

std::string ObjectReader::field_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool ObjectReader::has(std::string_view key) const {
  auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const Json* ObjectReader::find(std::string_view key) {
  read_.emplace(key);
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

const Json& ObjectReader::require(std::string_view key) {
  const Json* j = find(key);
  if (!j) throw InvalidInput(field_path(key), "is required");
  return *j;
}

const Json* ObjectReader::child(std::string_view key) { return find(key); }

std::string ObjectReader::string(std::string_view key, std::size_t min_len, std::size_t max_len) {
  const Json& j = require(key);
  if (!j.is_string()) throw InvalidInput(field_path(key), "must be a string, got " + type_name(j));
  std::string s = j.get<std::string>();
  check_length([&] { return field_path(key); }, s, min_len, max_len);
  return s;
}

std::optional<std::string> ObjectReader::opt_string(std::string_view key, std::size_t min_len, std::size_t max_len) {
  if (!has(key)) {
    read_.emplace(key);
    return std::nullopt;
  }
  return string(key, min_len, max_len);
}

std::int64_t ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const Json& j = require(key);
  const auto range = [&] { return "must be an integer from " + std::to_string(min) + " to " + std::to_string(max); };
  std::int64_t v;
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      throw InvalidInput(field_path(key), range());
    }
    v = j.get<std::int64_t>();
  } else if (j.is_number_float()) {
    const double d = j.get<double>();
    if (std::floor(d) != d || d < -9.2e18 || d > 9.2e18) throw InvalidInput(field_path(key), range());
    v = static_cast<std::int64_t>(d);
  } else {
    throw InvalidInput(field_path(key), range() + ", got " + type_name(j));
  }
  if (v < min || v > max) throw InvalidInput(field_path(key), range() + ", got " + std::to_string(v));
  return v;
}

std::optional<std::int64_t> ObjectReader::opt_integer(std::string_view key, std::int64_t min, std::int64_t max) {
  if (!has(key)) {
    read_.emplace(key);
    return std::nullopt;
  }
  return integer(key, min, max);
}

double ObjectReader::number(std::string_view key, double min, double max) {
  const Json& j = require(key);
  if (!j.is_number()) throw InvalidInput(field_path(key), "must be a number, got " + type_name(j));
  const double v = j.get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    throw InvalidInput(field_path(key), "must be a number from " + Json(min).dump() + " to " + Json(max).dump());
  }
  return v;
}

std::optional<double> ObjectReader::opt_number(std::string_view key, double min, double max) {
  if (!has(key)) {
    read_.emplace(key);
    return std::nullopt;
  }
  return number(key, min, max);
}

bool ObjectReader::boolean(std::string_view key) {
  const Json& j = require(key);
  if (!j.is_boolean()) throw InvalidInput(field_path(key), "must be true or false, got " + type_name(j));
  return j.get<bool>();
}

std::optional<bool> ObjectReader::opt_boolean(std::string_view key) {
  if (!has(key)) {
    read_.emplace(key);
    return std::nullopt;
  }
  return boolean(key);
}

std::vector<std::string> ObjectReader::string_list(std::string_view key, std::size_t max_items, std::size_t max_len) {
  const Json& j = require(key);
  if (!j.is_array()) throw InvalidInput(field_path(key), "must be an array of strings, got " + type_name(j));
  if (j.size() > max_items) throw InvalidInput(field_path(key), "must have at most " + std::to_string(max_items) + " items");
  std::vector<std::string> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto item_path = [&] { return field_path(key) + "[" + std::to_string(i) + "]"; };
    if (!j[i].is_string()) throw InvalidInput(item_path(), "must be a string, got " + type_name(j[i]));
    out.push_back(j[i].get<std::string>());
    check_length(item_path, out.back(), 0, max_len);
  }
  return out;
}

std::map<std::string, std::string> ObjectReader::string_map(std::string_view key, std::size_t max_items,
                                                            std::size_t max_len) {
  const Json& j = require(key);
  if (!j.is_object()) throw InvalidInput(field_path(key), "must be an object of strings, got " + type_name(j));
  if (j.size() > max_items) throw InvalidInput(field_path(key), "must have at most " + std::to_string(max_items) + " entries");
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto item_path = [&] { return field_path(key) + "." + it.key(); };
    if (!it.value().is_string()) throw InvalidInput(item_path(), "must be a string, got " + type_name(it.value()));
    check_length(item_path, it.key(), 1, 256);
    out.emplace(it.key(), it.value().get<std::string>());
    check_length(item_path, out[it.key()], 0, max_len);
  }
  return out;
}

void ObjectReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (!read_.contains(it.key())) throw InvalidInput(field_path(it.key()), "unknown field");
  }
}

void check_printable(const std::string& field, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      throw InvalidInput(field, "must not contain control characters (byte " + std::to_string(c) + " at offset " +
                                    std::to_string(i) + ")");
    }
    const std::size_t len = printable_utf8_length(text, i);
    if (len == 0) {
      throw InvalidInput(field, "must be UTF-8 text without control characters (invalid at offset " +
                                    std::to_string(i) + ")");
    }
    i += len;
  }
}

void check_no_nul(const std::string& field, std::string_view text) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw InvalidInput(field, "must not contain a NUL byte (at offset " + std::to_string(nul) + ")");
  }
}

void check_labels(const std::string& field, const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : labels) {
    check_name(field + "." + (key.empty() ? std::string("\"\"") : key), key);
    check_printable(field + "." + key, value);
  }
}

void check_env_name(const std::string& field, std::string_view name) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || !std::all_of(name.begin(), name.end(), word)) {
    throw InvalidInput(field, "must be an environment variable name: letters, digits and '_', not starting with a digit");
  }
}

void check_name(const std::string& field, const std::string& text, std::size_t max_len) {
  check_length([&] { return field; }, text, 1, max_len);
  if (!std::isalnum(static_cast<unsigned char>(text[0]))) throw InvalidInput(field, "must start with a letter or digit");
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      throw InvalidInput(field, "may contain only letters, digits, '.', '_' and '-'");
    }
  }
}

}  // namespace trainyard::proto
