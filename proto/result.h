#pragma once
// Expected failures as values (proto/errors.h has the policy): an operation that can fail at run
// time for reasons that are not bugs (a store write that did not commit, a checkpoint that does not
// verify, a peer that refused) returns `Result<T>`, the value or an `Error`. The error carries one
// of the API's problem codes, so a handler answers any error with `ApiCall::fail(error)`, the one
// place that maps a code to an HTTP status.
#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace trainyard::inline proto {

// The API's problem codes (README "Errors"), as the `code` of its JSON error body.
enum class ErrorCode {
  invalid_input,     // 400: names the field
  unauthorized,      // 401
  forbidden,         // 403
  not_found,         // 404
  conflict,          // 409
  too_many_pending,  // 429: a per-user cap, not a rate
  unavailable,       // 503: try again later (the store did not commit, a service is not running)
  internal,          // 500
};

std::string_view to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
  std::string field;  // for invalid_input: the dotted path of the offending field

  static Error invalid_input(std::string field, std::string message) {
    return {ErrorCode::invalid_input, std::move(message), std::move(field)};
  }
  static Error unauthorized(std::string message) { return {ErrorCode::unauthorized, std::move(message), {}}; }
  static Error forbidden(std::string message, std::string field = {}) {
    return {ErrorCode::forbidden, std::move(message), std::move(field)};
  }
  static Error not_found(std::string message) { return {ErrorCode::not_found, std::move(message), {}}; }
  static Error conflict(std::string message) { return {ErrorCode::conflict, std::move(message), {}}; }
  static Error too_many_pending(std::string message) { return {ErrorCode::too_many_pending, std::move(message), {}}; }
  static Error unavailable(std::string message) { return {ErrorCode::unavailable, std::move(message), {}}; }
  static Error internal(std::string message) { return {ErrorCode::internal, std::move(message), {}}; }

  // The same error, its message prefixed with what was being done ("could not read jobs: ...").
  Error during(std::string_view doing) const { return {code, std::string(doing) + ": " + message, field}; }
  bool operator==(const Error&) const = default;
};

// The value, or why there is none. Reading the value of an error (or the error of a value) is a
// programming error: it throws std::bad_variant_access.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Success, or why not.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);  // reading the error of a success is a programming error
    return error_;
  }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace trainyard::proto
