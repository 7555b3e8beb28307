#pragma once
// Whether the store's commits are failing, since when and why: what /healthz says while they fail,
// and how long it lasted once one succeeds again (issue 53). Pure: fed each commit's outcome with
// the time, it reads no clock.
//
// Threading contract: I/O thread only.
#include <optional>
#include <string>

#include "proto/time.h"

namespace trainyard::daemon {

struct StoreWritesFailing {
  TimePoint since;
  std::string error;  // the store's words for the latest failure
};

class StoreOutage {
 public:
  // The first failure opens the outage; later ones only update the store's words.
  void commit_failed(TimePoint at, MonoTime mono, std::string error);
  // Ends an open outage, answering how long it lasted; nullopt when none was open.
  std::optional<Millis> commit_succeeded(MonoTime now);
  // Since when and why, as GET /v1/cluster says it; nullopt while commits succeed.
  std::optional<StoreWritesFailing> failing() const;
  // "store writes failing since 2026-03-01T10:00:00Z: database or disk is full", as /healthz and
  // refusals say it; nullopt while commits succeed.
  std::optional<std::string> problem() const;

 private:
  std::optional<TimePoint> since_;
  MonoTime since_mono_{};
  std::string error_;
};

}  // namespace trainyard::daemon
