#include "proto/result.h"

namespace trainyard::inline proto {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_input:
      return "invalid_field";
    case ErrorCode::unauthorized:
      return "unauthorized";
    case ErrorCode::forbidden:
      return "forbidden";
    case ErrorCode::not_found:
      return "not_found";
    case ErrorCode::conflict:
      return "conflict";
    case ErrorCode::too_many_pending:
      return "too_many_pending";
    case ErrorCode::unavailable:
      return "unavailable";
    case ErrorCode::internal:
      return "internal";
  }
  return "internal";
}

}  // namespace trainyard::proto
