// Goodput: of the newest jobs and their total, or of the cluster over a fixed window of time.
#include <map>

#include "daemon/api.h"
#include "daemon/api/call.h"
#include "daemon/api/query.h"
#include "daemon/goodput.h"
#include "daemon/store_worker.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

constexpr std::int64_t kMaxWindowHours = 30 * 24;

// "24h" or "7d": a whole number of hours or days, up to 30 days.
std::chrono::hours parse_window(const std::string& text) {
  const char unit = text.empty() ? '\0' : text.back();
  if (unit != 'h' && unit != 'd') throw InvalidInput("window", "must be a number of hours or days, e.g. 24h or 7d");
  const std::int64_t per_unit = unit == 'd' ? 24 : 1;
  const std::int64_t count = parse_int(text.substr(0, text.size() - 1), "window", 1, kMaxWindowHours / per_unit);
  return std::chrono::hours(count * per_unit);
}

Json job_row(const Job& job, const Goodput& g) {
  Json row = to_json(g);
  row["job_id"] = job.id;
  row["name"] = job.spec.name;
  row["state"] = to_string(job.state);
  return row;
}

// Every attempt that ran in [from, to] counts its share of the window, whichever job it belongs to
// and however old; `jobs` lists the newest `limit` of them.
void windowed_goodput(StoreWorker& worker, ApiCall call, std::optional<std::string> only_user, TimePoint from,
                      TimePoint to, std::size_t limit) {
  worker.read(
      [call, only_user, from, to, limit](store::Store& store) {
        std::map<JobId, std::vector<Attempt>, std::greater<>> by_job;
        for (Attempt& a : store.attempts_running_since(from)) by_job[a.job_id].push_back(std::move(a));
        Goodput cluster;
        Json jobs = Json::array();
        for (const auto& [job_id, attempts] : by_job) {
          const std::optional<Job> job = store.job(job_id);
          if (!job || (only_user && job->user != *only_user)) continue;
          const Goodput g = job_goodput_in(attempts, from, to);
          cluster += g;
          if (jobs.size() < limit) jobs.push_back(job_row(*job, g));
        }
        Json body = {{"window", {{"from", format_time(from)}, {"to", format_time(to)}}},
                     {"cluster", to_json(cluster)},
                     {"jobs", jobs}};
        return std::function<void()>([call, body = std::move(body)] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not compute goodput")); });
}

}  // namespace

void Api::cluster_goodput(ApiCall call) {
  const auto limit = static_cast<std::size_t>(query_int(call.request, "limit", 1, 10'000).value_or(1000));
  const std::optional<std::string> only_user =
      call.who.may(Action::read_all_jobs) ? std::nullopt : std::optional(call.who.user);
  const TimePoint now = clock_.system_now();
  const auto window = call.request.query.find("window");
  if (window != call.request.query.end()) {
    windowed_goodput(store_, std::move(call), only_user, now - parse_window(window->second), now, limit);
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
          jobs.push_back(job_row(job, g));
        }
        Json body = {{"cluster", to_json(cluster)}, {"jobs", jobs}};
        return std::function<void()>([call, body = std::move(body)] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not compute goodput")); });
}

}  // namespace trainyard::daemon
