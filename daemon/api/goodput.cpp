// Goodput of the newest jobs and their total.
#include "daemon/api.h"
#include "daemon/api/call.h"
#include "daemon/api/query.h"
#include "daemon/goodput.h"

namespace trainyard {

void Api::cluster_goodput(ApiCall call) {
  JobQuery query;
  query.limit = static_cast<int>(query_int(call.request, "limit", 1, 10'000).value_or(1000));
  if (!call.who.may(Action::read_all_jobs)) query.user = call.who.user;
  const TimePoint now = clock_.system_now();
  store_.read(
      [call, query, now](Store& store) {
        Goodput cluster;
        Json jobs = Json::array();
        for (const Job& job : store.jobs(query)) {
          const Goodput g = job_goodput(store.attempts_of(job.id), now);
          cluster += g;
          Json row = to_json(g);
          row["job_id"] = job.id;
          row["name"] = job.spec.name;
          row["state"] = to_string(job.state);
          jobs.push_back(std::move(row));
        }
        Json body = {{"cluster", to_json(cluster)}, {"jobs", jobs}};
        return std::function<void()>([call, body = std::move(body)] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not compute goodput")); });
}

}  // namespace trainyard
