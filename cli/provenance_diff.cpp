#include "cli/provenance_diff.h"

#include <array>
#include <string_view>

#include "proto/text.h"

namespace trainyard::cli {
namespace {

// Sections in the order they are printed.
constexpr std::array<std::string_view, 9> kSections = {"spec",        "versions",   "kernel", "checkpoint", "nodes",
                                                       "environment", "user facts", "user",   "other"};

// A key segment as it is printed: JSON-quoted when it holds a control character or a dot, so a
// job's own key can neither rewrite the terminal nor pass for a path.
std::string segment_text(const std::string& segment) {
  for (const unsigned char c : segment) {
    if (c < 0x20 || c == 0x7f || c == '.') return json_text(segment);
  }
  return segment;
}

void flatten_into(const Json& value, const std::string& path, std::map<std::string, Json>& out) {
  if (!value.is_structured() || value.empty()) {
    out[path] = value;
    return;
  }
  const std::string prefix = path.empty() ? "" : path + ".";
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) flatten_into(value[i], prefix + std::to_string(i), out);
    return;
  }
  for (const auto& [key, child] : value.items()) flatten_into(child, prefix + segment_text(key), out);
}

// "ranks.3.environment.X" -> "environment"; the part of a rank's record after "ranks.N.".
std::string rank_section(std::string_view rest) {
  if (rest.starts_with("agent_version")) return "versions";
  if (rest.starts_with("environment")) return "environment";
  if (rest.starts_with("user_facts")) return "user facts";
  return "nodes";  // node, rank, admitted_by
}

// The facts under their section titles, in section order, one line each.
std::string grouped(const std::vector<FactChange>& facts, std::string (*line_of)(const FactChange&)) {
  std::string out;
  for (const std::string_view section : kSections) {
    std::string lines;
    for (const FactChange& f : facts) {
      if (section_of(f.key) == section) lines += "  " + line_of(f) + "\n";
    }
    if (!lines.empty()) out += std::string(section) + ":\n" + lines;
  }
  return out;
}

std::string fact_line(const FactChange& f) { return f.key + ": " + json_text(*f.after); }

std::string change_line(const FactChange& c) {
  if (!c.before) return "+ " + c.key + ": " + json_text(*c.after);
  if (!c.after) return "- " + c.key + ": " + json_text(*c.before);
  return "~ " + c.key + ": " + json_text(*c.before) + " -> " + json_text(*c.after);
}

}  // namespace

std::map<std::string, Json> flatten_record(const Json& record) {
  std::map<std::string, Json> out;
  flatten_into(record, "", out);
  return out;
}

std::string section_of(const std::string& key) {
  const std::string_view k(key);
  const std::string_view top = k.substr(0, k.find('.'));
  if (top == "job" || top == "attempt" || top == "attempt_id") return "identity";
  if (top == "spec" || top == "spec_sha256" || top == "code_version") return "spec";
  if (top == "daemon") return "versions";
  if (top == "kernel" || top == "checkpoint" || top == "user") return std::string(top);
  if (top == "ranks") {
    const std::size_t index_end = k.find('.', top.size() + 1);
    return index_end == std::string_view::npos ? "nodes" : rank_section(k.substr(index_end + 1));
  }
  return "other";
}

std::vector<FactChange> diff_records(const Json& a, const Json& b) {
  const auto before = flatten_record(a);
  const auto after = flatten_record(b);
  std::vector<FactChange> changes;
  auto i = before.begin();
  auto j = after.begin();
  // A merge of the two sorted maps.
  while (i != before.end() || j != after.end()) {
    if (j == after.end() || (i != before.end() && i->first < j->first)) {
      changes.push_back({i->first, i->second, std::nullopt});
      ++i;
    } else if (i == before.end() || j->first < i->first) {
      changes.push_back({j->first, std::nullopt, j->second});
      ++j;
    } else {
      if (i->second != j->second) changes.push_back({i->first, i->second, j->second});
      ++i;
      ++j;
    }
  }
  std::erase_if(changes, [](const FactChange& c) { return section_of(c.key) == "identity"; });
  return changes;
}

std::string record_title(const Json& record) {
  const auto number = [&](const char* key) {
    return record.contains(key) && record[key].is_number_integer() ? std::to_string(record[key].get<std::int64_t>())
                                                                   : "?";
  };
  return "job " + number("job") + " attempt " + number("attempt");
}

std::string render_record(const Json& record) {
  std::vector<FactChange> facts;
  for (auto& [key, value] : flatten_record(record)) facts.push_back({key, std::nullopt, value});
  return "provenance of " + record_title(record) + "\n" + grouped(facts, fact_line);
}

std::string render_diff(const Json& a, const Json& b) {
  const std::string header = "--- " + record_title(a) + "\n+++ " + record_title(b) + "\n";
  const auto changes = diff_records(a, b);
  return header + (changes.empty() ? "no differences\n" : grouped(changes, change_line));
}

}  // namespace trainyard::cli
