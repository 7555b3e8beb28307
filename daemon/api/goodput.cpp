// Goodput: of the newest jobs and their total, or of the cluster over a fixed window of time.
#include <memory>

#include "daemon/api/call.h"
#include "daemon/api/cluster.h"
#include "daemon/api/query.h"
#include "daemon/base/store_worker.h"
#include "daemon/telemetry/goodput.h"
#include "daemon/telemetry/goodput_window.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

constexpr std::chrono::hours kLongestWindow{30 * 24};

// Reads the window's pages one store task at a time, replying after the last.
void read_window(StoreWorker& worker, ApiCall call, std::shared_ptr<WindowedGoodput> window) {
  worker.read(
      [&worker, call, window](store::Store& store) {
        const bool more = window->read_page(store);
        return std::function<void()>([&worker, call, window, more] {
          if (more) return read_window(worker, call, window);
          call.reply(200, window->body());
        });
      },
      [call](const Error& error) { call.fail(error.during("could not compute goodput")); });
}

}  // namespace

void ClusterApi::cluster_goodput(ApiCall call) {
  const auto limit = static_cast<std::size_t>(query_int(call.request, "limit").value_or(1000));
  const std::optional<std::string> only_user =
      call.who.may(Action::read_all_jobs) ? std::nullopt : std::optional(call.who.user);
  const TimePoint now = clock_.system_now();
  if (call.request.query.contains("window")) {
    const TimePoint from = now - query_window(call.request, kLongestWindow, kLongestWindow);
    read_window(store_, std::move(call), std::make_shared<WindowedGoodput>(from, now, only_user, limit));
    return;
  }
  store::JobQuery query;
  query.limit = static_cast<int>(limit);
  query.user = only_user;
  store_.read(
      [call, query, now](store::Store& store) {
        Goodput cluster;
        Json jobs = Json::array();
        for (const Job& job : store.jobs(query)) {
          const Goodput g = job_goodput(store.attempts_of(job.id), now);
          cluster += g;
          jobs.push_back(goodput_job_row(job, g));
        }
        Json body = {{"cluster", to_json(cluster)}, {"jobs", jobs}};
        return std::function<void()>([call, body = std::move(body)] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not compute goodput")); });
}

}  // namespace trainyard::daemon
