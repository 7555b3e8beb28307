#pragma once
// Goodput of the cluster over a window of time (GET /v1/goodput?window=), read in pages: every
// attempt that ran in the window counts its share of it, whichever job it belongs to and however
// old, and a 30-day window of a busy cluster holds hundreds of thousands of them. Each page is one
// bounded store task, and the store worker serves other requests between pages, so one reader of
// a long window never stalls the control plane (docs/DESIGN.md "Goodput").
#include <cstddef>
#include <optional>
#include <string>

#include "daemon/telemetry/goodput.h"
#include "store/store.h"

namespace trainyard::daemon {

// One row of the goodput table: a job and its figures.
Json goodput_job_row(const Job& job, const Goodput& g);

class WindowedGoodput {
 public:
  static constexpr int kPageRows = 2000;

  // Over [from, to]; `only_user`: that user's jobs only; the body lists the newest `job_rows` jobs.
  WindowedGoodput(TimePoint from, TimePoint to, std::optional<std::string> only_user, std::size_t job_rows,
                  int page_rows = kPageRows);

  // Reads and counts the next page (store thread); false once the window is read whole. A job is
  // counted once, from all its attempts in the window, unless a single job has more of them than a
  // page holds: then its newest page of them.
  bool read_page(store::Store& store);

  // {"window": {from, to}, "cluster": GOODPUT, "jobs": [ROW...]}, newest job first.
  Json body() const;

 private:
  TimePoint from_, to_;
  std::optional<std::string> only_user_;
  std::size_t job_rows_;
  int page_rows_;
  JobId before_job_ = INT64_MAX;  // the next page reads jobs below this
  Goodput cluster_;
  Json jobs_ = Json::array();
};

}  // namespace trainyard::daemon
