#include "proto/job_array.h"

#include <algorithm>
#include <charconv>

#include "proto/errors.h"

namespace trainyard::inline proto {
namespace {

// A whole, unsigned decimal number; nullopt for anything else (signs, spaces, overflow, empty).
std::optional<std::int64_t> whole_number(std::string_view s) {
  if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

int array_index(std::string_view s, const std::string& field) {
  const auto n = whole_number(s);
  if (!n || *n > kMaxArrayIndex) {
    throw InvalidInput(field, "\"" + std::string(s) + "\" is not an index from 0 to " + std::to_string(kMaxArrayIndex));
  }
  return static_cast<int>(*n);
}

// Appends the indices of one comma-separated part: "7", "0-99" or "0-99:4", stopping at `cap`.
void add_part(std::string_view part, std::vector<int>& out, int cap, const std::string& field) {
  const auto dash = part.find('-');
  if (dash == std::string_view::npos) {
    out.push_back(array_index(part, field));
  } else {
    std::string_view rest = part.substr(dash + 1);
    int step = 1;
    if (const auto colon = rest.find(':'); colon != std::string_view::npos) {
      const auto n = whole_number(rest.substr(colon + 1));
      if (!n || *n < 1 || *n > kMaxArrayIndex) throw InvalidInput(field, "the step after ':' must be a whole number from 1");
      step = static_cast<int>(*n);
      rest = rest.substr(0, colon);
    }
    const int first = array_index(part.substr(0, dash), field);
    const int last = array_index(rest, field);
    if (last < first) throw InvalidInput(field, "range " + std::string(part) + " ends before it starts");
    for (std::int64_t i = first; i <= last; i += step) {
      // Checked as it grows, so "0-999999" is refused before it allocates a million indices.
      if (static_cast<int>(out.size()) >= cap) break;
      out.push_back(static_cast<int>(i));
    }
  }
}

}  // namespace

ArraySpec parse_array_spec(std::string_view text, int max_size, const std::string& field) {
  if (text.empty() || text.size() > 4096) throw InvalidInput(field, "must be 1 to 4096 characters, like \"0-99\", \"0-99:4\", \"1,5,9\" or \"0-99%4\"");
  // No array has more tasks than there are indices, so a larger limit (INT_MAX: "none", for a spec
  // already accepted) means that many; it also keeps the growth cap below from overflowing.
  max_size = std::min(max_size, kMaxArrayIndex + 1);
  ArraySpec spec;
  if (const auto percent = text.find('%'); percent != std::string_view::npos) {
    const auto k = whole_number(text.substr(percent + 1));
    if (!k || *k < 1 || *k > kMaxArrayIndex + 1) throw InvalidInput(field, "the limit after '%' must be a whole number from 1");
    spec.limit = static_cast<int>(*k);
    text = text.substr(0, percent);
  }
  std::size_t at = 0;
  for (;;) {
    const auto comma = std::min(text.find(',', at), text.size());
    const std::string_view part = text.substr(at, comma - at);
    if (part.empty()) throw InvalidInput(field, "has an empty part; write ranges like \"0-99\" separated by commas");
    add_part(part, spec.indices, max_size + 1, field);
    if (static_cast<int>(spec.indices.size()) > max_size) {
      throw InvalidInput(field, too_many_tasks(max_size));
    }
    if (comma == text.size()) break;
    at = comma + 1;
  }
  std::sort(spec.indices.begin(), spec.indices.end());
  if (const auto repeated = std::adjacent_find(spec.indices.begin(), spec.indices.end()); repeated != spec.indices.end()) {
    throw InvalidInput(field, "lists index " + std::to_string(*repeated) + " more than once");
  }
  return spec;
}

std::string too_many_tasks(int max_size) {
  return "has more than " + std::to_string(max_size) +
         " tasks, the daemon's --max-array-size; split it or ask an admin to raise the limit";
}

std::string to_string(const ArraySpec& spec) {
  std::string out;
  const auto& ix = spec.indices;
  for (std::size_t i = 0; i < ix.size();) {
    std::size_t j = i + 1;
    const int step = j < ix.size() ? ix[j] - ix[i] : 1;
    while (j < ix.size() && ix[j] - ix[j - 1] == step) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 3 || (j - i == 2 && step == 1)) {
      out += std::to_string(ix[i]) + '-' + std::to_string(ix[j - 1]);
      if (step != 1) out += ':' + std::to_string(step);
      i = j;
    } else {
      out += std::to_string(ix[i]);
      ++i;
    }
  }
  if (spec.limit) out += '%' + std::to_string(*spec.limit);
  return out;
}

JobRef parse_job_ref(std::string_view text, const std::string& field) {
  const auto underscore = text.find('_');
  const auto job = whole_number(text.substr(0, underscore));
  if (!job || *job < 1) throw InvalidInput(field, "must be a job id like 12, or an array task like 12_3");
  JobRef ref{*job, std::nullopt};
  if (underscore != std::string_view::npos) ref.task = array_index(text.substr(underscore + 1), field);
  return ref;
}

std::string to_string(DependencyCondition c) {
  switch (c) {
    case DependencyCondition::afterok: return "afterok";
    case DependencyCondition::afterany: return "afterany";
    case DependencyCondition::afternotok: return "afternotok";
    case DependencyCondition::aftercorr: return "aftercorr";
  }
  return "afterok";
}

std::optional<DependencyCondition> parse_dependency_condition(std::string_view s) {
  for (auto c : {DependencyCondition::afterok, DependencyCondition::afterany, DependencyCondition::afternotok,
                 DependencyCondition::aftercorr}) {
    if (s == to_string(c)) return c;
  }
  return std::nullopt;
}

std::vector<Dependency> parse_dependency_flag(std::string_view text, const std::string& field) {
  std::vector<Dependency> out;
  std::size_t at = 0;
  for (;;) {
    const auto comma = std::min(text.find(',', at), text.size());
    const std::string_view part = text.substr(at, comma - at);
    const auto colon = part.find(':');
    const auto condition = parse_dependency_condition(part.substr(0, colon));
    if (!condition || colon == std::string_view::npos) {
      throw InvalidInput(field, "\"" + std::string(part) +
                                    "\" must be CONDITION:ID[:ID...], CONDITION one of afterok, afterany, afternotok, aftercorr");
    }
    std::string_view ids = part.substr(colon + 1);
    for (;;) {
      const auto next = std::min(ids.find(':'), ids.size());
      const auto id = whole_number(ids.substr(0, next));
      if (!id || *id < 1) throw InvalidInput(field, "\"" + std::string(ids.substr(0, next)) + "\" is not a job id");
      out.push_back(Dependency{*id, *condition});
      if (next == ids.size()) break;
      ids = ids.substr(next + 1);
    }
    if (comma == text.size()) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace trainyard::proto
