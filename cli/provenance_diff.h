#pragma once
// Provenance records (GET /v1/jobs/{id}/attempts/{n}/provenance) as people read them: flattened to
// one "dotted.key: value" line per fact, grouped by what it is about, and the difference between
// two records key by key (`trainyard diff A B`). Pure.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/json_reader.h"

namespace trainyard::cli {

// Every leaf of the record by its dotted path ("spec.workload.lr", "ranks.0.environment.PATH");
// an empty object or array is a leaf of its own, so its presence is a fact too.
std::map<std::string, Json> flatten_record(const Json& record);

// What a fact is about: "spec", "versions", "kernel", "checkpoint", "nodes", "environment",
// "user facts", "identity" (which job and attempt: always differs, never compared) or "other".
std::string section_of(const std::string& key);

struct FactChange {
  std::string key;
  std::optional<Json> before;  // absent: added
  std::optional<Json> after;   // absent: removed
  bool operator==(const FactChange&) const = default;
};

// The facts that differ between `a` and `b`, identity left out, in key order.
std::vector<FactChange> diff_records(const Json& a, const Json& b);

// "job 5 attempt 2"
std::string record_title(const Json& record);
// The record as grouped "key: value" lines.
std::string render_record(const Json& record);
// The diff as grouped lines: "+ key: new", "- key: old", "~ key: old -> new"; or a line saying
// there is none.
std::string render_diff(const Json& a, const Json& b);

}  // namespace trainyard::cli
