#include "cli/table.h"

#include "proto/text.h"

#include <cstdio>

#include <algorithm>

namespace trainyard::cli {
namespace {

constexpr std::string_view kColumnGap = "   ";

std::string format_row(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    if (i + 1 < cells.size()) line += std::string(widths[i] - cells[i].size(), ' ') + std::string(kColumnGap);
  }
  return line + "\n";
}

const Json* field(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::str() const {
  std::vector<std::size_t> widths;
  for (const auto& h : headers_) widths.push_back(h.size());
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out = format_row(headers_, widths);
  for (const auto& row : rows_) out += format_row(row, widths);
  return out;
}

void Description::add(std::string key, std::string value) {
  lines_.emplace_back(std::move(key), value.empty() ? std::string(kAbsent) : std::move(value));
}

std::string Description::str() const {
  std::size_t width = 0;
  for (const auto& [key, value] : lines_) width = std::max(width, key.size());
  std::string out;
  for (const auto& [key, value] : lines_) out += key + ":" + std::string(width - key.size() + 2, ' ') + value + "\n";
  return out;
}

std::string text_of(const Json& object, std::string_view key) {
  const Json* v = field(object, key);
  if (!v) return std::string(kAbsent);
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number() || v->is_boolean()) return v->dump();
  return std::string(kAbsent);
}

std::string number_of(const Json& object, std::string_view key, int significant) {
  const Json* v = field(object, key);
  if (!v || !v->is_number()) return std::string(kAbsent);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v->get<double>());
  return buf;
}

std::string list_of(const Json& object, std::string_view key) {
  const Json* v = field(object, key);
  if (!v || !v->is_array() || v->empty()) return std::string(kAbsent);
  std::string out;
  for (const Json& item : *v) {
    if (!out.empty()) out += ",";
    out += item.is_string() ? item.get<std::string>() : item.dump();
  }
  return out;
}

std::string labels_of(const Json& object, std::string_view key) {
  const Json* v = field(object, key);
  if (!v || !v->is_object() || v->empty()) return std::string(kAbsent);
  std::string out;
  for (const auto& [k, value] : v->items()) {
    if (!out.empty()) out += ",";
    out += k + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

std::string format_bytes(const Json& bytes) {
  if (!bytes.is_number()) return std::string(kAbsent);
  const double value = bytes.get<double>();
  if (value < 1024) return std::to_string(static_cast<std::int64_t>(value)) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double scaled = value / 1024;
  std::size_t unit = 0;
  while (scaled >= 1024 && unit + 1 < std::size(kUnits)) {
    scaled /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", scaled, kUnits[unit]);
  return buf;
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto escape = [&out](unsigned char byte) {
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02x", byte);
    out += buf;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x80) {  // C0 controls and DEL
      escape(c);
      ++i;
      continue;
    }
    const std::size_t len = printable_utf8_length(text, i);
    if (len == 0) {
      escape(c);
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string format_age(Millis age) {
  const auto seconds = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(age).count());
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 120 * 60) return std::to_string(seconds / 60) + "m";
  if (seconds < 48 * 3600) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string age_of(const Json& object, std::string_view key, TimePoint now) {
  const Json* v = field(object, key);
  if (!v || !v->is_string()) return std::string(kAbsent);
  const auto when = parse_time(v->get<std::string>());
  return when ? format_age(now - *when) : std::string(kAbsent);
}

std::string truncate(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  text.resize(max > 3 ? max - 3 : 0);
  return text + "...";
}

const Json& field_or_null(const Json& object, std::string_view key) {
  static const Json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

}  // namespace trainyard::cli
