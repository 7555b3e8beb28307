#include "daemon/store_outage.h"

#include <utility>

namespace trainyard::daemon {

void StoreOutage::commit_failed(TimePoint at, MonoTime mono, std::string error) {
  if (!since_) {
    since_ = at;
    since_mono_ = mono;
  }
  error_ = std::move(error);
}

std::optional<Millis> StoreOutage::commit_succeeded(MonoTime now) {
  if (!since_) return std::nullopt;
  since_.reset();
  return std::chrono::duration_cast<Millis>(now - since_mono_);
}

std::optional<StoreWritesFailing> StoreOutage::failing() const {
  if (!since_) return std::nullopt;
  return StoreWritesFailing{*since_, error_};
}

std::optional<std::string> StoreOutage::problem() const {
  if (!since_) return std::nullopt;
  return "store writes failing since " + format_time(*since_) + ": " + error_;
}

}  // namespace trainyard::daemon
