#pragma once
// What a CLI command asks of the REST API, as plain values: built by pure functions, compared in
// tests, and only turned into bytes by the HTTP client.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/json_reader.h"

namespace trainyard::cli {

struct ApiRequest {
  std::string method;        // "GET", "POST"
  std::string target;        // path plus percent-encoded query, e.g. "/v1/jobs?state=PENDING"
  std::optional<Json> body;  // sent as application/json when present

  bool operator==(const ApiRequest&) const = default;
};

// Builds "path?k=v&k2=v2" from the parameters that are set, in the order they were added, each
// percent-encoded (net::percent_encode) so any value is safe in a query.
class Target {
 public:
  explicit Target(std::string path) : path_(std::move(path)) {}
  Target& param(std::string_view key, const std::optional<std::string>& value);
  std::string str() const;

 private:
  std::string path_;
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace trainyard::cli
