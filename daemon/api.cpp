#include "daemon/api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <set>

#include "checkpoint/checkpoint.h"
#include "daemon/audit.h"
#include "daemon/canary.h"
#include "daemon/goodput.h"
#include "daemon/job_checkpoints.h"
#include "daemon/join_token.h"
#include "daemon/metric_series.h"
#include "daemon/share_access.h"
#include "daemon/node_credentials.h"
#include "daemon/prometheus.h"
#include "proto/faults.h"
#include "proto/text.h"

#include "scheduler/types.h"

namespace trainyard {

struct Api::Call {
  net::HttpRequest request;
  Principal who;
  std::shared_ptr<net::HttpResponder> respond;

  void reply(int status, const Json& body) const { (*respond)(net::HttpResponse{status, "application/json", json_text(body), {}}); }
  void fail(int status, const std::string& code, const std::string& message, const std::string& field = "") const {
    (*respond)(net::error_response(status, code, message, field));
  }
  void invalid(const InvalidInput& e, const std::string& code = "invalid_field") const {
    fail(400, code, e.what(), e.field());
  }
  std::string route() const { return request.method + " " + request.path; }
  // The caller's role does not allow `what` (daemon/roles.h).
  void forbid(const std::string& what) const { fail(403, "forbidden", "role " + to_string(who.role) + " may not " + what); }
};

namespace {

// Parses a whole integer in [min, max]; throws InvalidInput(field) otherwise.
std::int64_t parse_int(const std::string& text, const std::string& field, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < min || v > max) {
    throw InvalidInput(field, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                                  ", got \"" + text + "\"");
  }
  return v;
}

std::int64_t parse_positive(const std::string& text, const std::string& field) {
  return parse_int(text, field, 1, INT64_MAX);
}

std::optional<std::int64_t> query_int(const net::HttpRequest& req, const std::string& name, std::int64_t min,
                                      std::int64_t max) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return std::nullopt;
  return parse_int(it->second, name, min, max);
}

bool can_see(const Principal& who, const Job& job) { return who.may(Action::read_all_jobs) || who.user == job.user; }

bool can_cancel(const Principal& who, const Job& job) {
  return who.may(Action::cancel_any_job) || (who.may(Action::submit_jobs) && who.user == job.user);
}

// The text of a JSON object with `fields` (an object) added, without parsing the text again.
std::string with_fields(std::string object_text, const Json& fields) {
  if (fields.empty()) return object_text;
  const std::string extra = json_text(fields);
  object_text.back() = ',';  // was the closing brace
  object_text.append(extra, 1);
  return object_text;
}

net::HttpResponse rate_limited(const RateLimit& limit, std::int64_t retry_after_s) {
  auto resp = net::error_response(
      429, "rate_limited",
      "rate limit exceeded: " + fmt::format("{}", limit.per_second) + " requests/s per user with bursts of " +
          fmt::format("{}", limit.burst) + " (--rate-limit-rps, --rate-limit-burst); retry in " +
          std::to_string(retry_after_s) + " s");
  resp.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return resp;
}

// The route a request matched, with ids and names as placeholders ("/v1/jobs/{id}/logs"), for the
// request observer; any other path is "other", so requests for made-up paths add no series.
std::string route_pattern(const std::vector<std::string>& parts) {
  static const std::map<std::string, std::string> kParameterOf = {
      {"jobs", "{id}"}, {"nodes", "{name}"}, {"healthchecks", "{id}"}, {"tokens", "{id}"}, {"shares", "{name}"},
      {"goodput", ""},  {"canaries", ""},    {"audit", ""}};
  static const std::set<std::string> kActions = {"cancel", "attempts", "logs",       "checkpoints", "metrics",
                                                 "drain",  "undrain",  "credential", "health",      "faults"};
  if (parts.size() == 1 && (parts[0] == "healthz" || parts[0] == "metrics")) return "/" + parts[0];
  if (parts.size() < 2 || parts.size() > 4 || parts[0] != "v1") return "other";
  if (parts.size() == 4 && parts[1] == "tokens" && parts[2] == "join" && parts[3] == "rotate") return "/v1/tokens/join/rotate";
  const auto resource = kParameterOf.find(parts[1]);
  if (resource == kParameterOf.end()) return "other";
  std::string route = "/v1/" + parts[1];
  if (parts.size() >= 3) {
    if (resource->second.empty()) return "other";
    route += "/" + resource->second;
  }
  if (parts.size() == 4) {
    if (!kActions.contains(parts[3])) return "other";
    route += "/" + parts[3];
  }
  return route;
}

// The methods the API knows by name; others are "other", for the same reason.
std::string method_label(const std::string& method) {
  static const std::set<std::string> kKnown = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"};
  return kKnown.contains(method) ? method : "other";
}

// A token as listed: never its secret nor its hash.
Json token_json(const TokenRecord& t) {
  return {{"id", t.id},
          {"user", t.user},
          {"role", to_string(t.role)},
          {"created_at", format_time(t.created_at)},
          {"expires_at", t.expires_at ? Json(format_time(*t.expires_at)) : Json(nullptr)},
          {"last_used_at", t.last_used_at ? Json(format_time(*t.last_used_at)) : Json(nullptr)}};
}

Json checkpoint_json(const CheckpointStatus& s) {
  return {{"step", s.step},
          {"path", s.path},
          {"recorded_by_attempt", s.recorded_by ? Json(*s.recorded_by) : Json(nullptr)},
          {"valid", s.valid},
          {"problem", s.problem}};
}

}  // namespace

Api::Api(JobManager& jobs, StoreWorker& store, FileWorker& files, TokenRegistry& tokens, const TimeSource& clock,
         std::string version, std::string checkpoint_root, UserLimits limits,
         std::filesystem::path join_token_file)
    : jobs_(jobs),
      store_(store),
      files_(files),
      tokens_(tokens),
      clock_(clock),
      version_(std::move(version)),
      checkpoint_root_(std::move(checkpoint_root)),
      rate_limiter_(limits.rate),
      max_pending_per_user_(limits.max_pending_per_user),
      join_token_file_(std::move(join_token_file)) {}

void Api::set_metrics_exposition(std::function<std::string()> render, bool public_access) {
  render_metrics_ = std::move(render);
  metrics_public_ = public_access;
}

void Api::set_request_observer(RequestObserver observe) { observe_request_ = std::move(observe); }

void Api::handle(net::HttpRequest request, net::HttpResponder respond) {
  if (observe_request_) {
    respond = [observe = observe_request_, method = method_label(request.method), route = route_pattern(request.segments),
               began = std::chrono::steady_clock::now(), respond = std::move(respond)](net::HttpResponse response) {
      observe(method, route, response.status, std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
      respond(std::move(response));
    };
  }
  Call call{std::move(request), {}, std::make_shared<net::HttpResponder>(std::move(respond))};
  const auto& parts = call.request.segments;
  const std::string& method = call.request.method;
  auto method_not_allowed = [&](const std::string& allowed) {
    auto resp = net::error_response(405, "method_not_allowed",
                                    method + " is not allowed on " + call.request.path + "; use " + allowed);
    resp.headers.emplace_back("Allow", allowed);
    (*call.respond)(resp);
  };

  if (parts.size() == 1 && parts[0] == "healthz") {
    if (method != "GET") return method_not_allowed("GET");
    return call.reply(200, {{"status", "ok"}, {"version", version_}});
  }
  if (parts.size() == 1 && parts[0] == "metrics" && render_metrics_) {
    return method == "GET" ? serve_metrics(call) : method_not_allowed("GET");
  }
  if (parts.empty() || parts[0] != "v1") {
    return call.fail(404, "not_found", "no such endpoint: " + call.request.path);
  }
  auto who = tokens_.authenticate_header(call.request.header("authorization"), clock_.now());
  if (!who || !who->may(Action::use_api)) {
    return call.fail(401, "unauthorized",
                     call.request.header("authorization").empty() ? "missing bearer token (Authorization: Bearer <token>)"
                                                                  : "token is not valid (unknown, revoked or expired)");
  }
  call.who = *who;
  if (const auto retry_after_s = rate_limiter_.admit(call.who, clock_.now())) {
    return (*call.respond)(rate_limited(rate_limiter_.limit(), *retry_after_s));
  }

  try {
    const std::size_t n = parts.size();
    if (n == 2 && parts[1] == "jobs") {
      if (method == "POST") return submit_job(call);
      if (method == "GET") return list_jobs(call);
      return method_not_allowed("GET, POST");
    }
    if (n >= 3 && parts[1] == "jobs") {
      const JobId id = parse_positive(parts[2], "id");
      if (n == 3) return method == "GET" ? get_job(call, id) : method_not_allowed("GET");
      if (n == 4 && parts[3] == "cancel") return method == "POST" ? cancel_job(call, id) : method_not_allowed("POST");
      if (n == 4 && parts[3] == "attempts") return method == "GET" ? job_attempts(call, id) : method_not_allowed("GET");
      if (n == 4 && parts[3] == "logs") return method == "GET" ? job_logs(call, id) : method_not_allowed("GET");
      if (n == 4 && parts[3] == "checkpoints") return method == "GET" ? job_checkpoints(call, id) : method_not_allowed("GET");
      if (n == 4 && parts[3] == "metrics") return method == "GET" ? job_metrics(call, id) : method_not_allowed("GET");
    }
    if (n == 2 && parts[1] == "nodes") return method == "GET" ? list_nodes(call) : method_not_allowed("GET");
    if (n == 3 && parts[1] == "nodes") return method == "GET" ? get_node(call, parts[2]) : method_not_allowed("GET");
    if (n == 4 && parts[1] == "nodes" && parts[3] == "drain") return method == "POST" ? drain_node(call, parts[2]) : method_not_allowed("POST");
    if (n == 4 && parts[1] == "nodes" && parts[3] == "undrain") {
      return method == "POST" ? undrain_node(call, parts[2]) : method_not_allowed("POST");
    }
    if (n == 4 && parts[1] == "nodes" && parts[3] == "credential") {
      return method == "DELETE" ? forget_node_credential(call, parts[2]) : method_not_allowed("DELETE");
    }
    if (n == 4 && parts[1] == "nodes" && parts[3] == "health") return method == "GET" ? node_health(call, parts[2]) : method_not_allowed("GET");
    if (n == 2 && parts[1] == "goodput") return method == "GET" ? cluster_goodput(call) : method_not_allowed("GET");
    if (n == 2 && parts[1] == "canaries") return method == "GET" ? list_canaries(call) : method_not_allowed("GET");
    if (n == 2 && parts[1] == "healthchecks") return method == "POST" ? start_health_check(call) : method_not_allowed("POST");
    if (n == 3 && parts[1] == "healthchecks") {
      const std::int64_t id = parse_positive(parts[2], "id");
      return method == "GET" ? get_health_check(call, id) : method_not_allowed("GET");
    }
    if (n == 4 && parts[1] == "nodes" && parts[3] == "faults") {
      if (method == "PUT") return set_node_faults(call, parts[2], false);
      if (method == "DELETE") return set_node_faults(call, parts[2], true);
      return method_not_allowed("PUT, DELETE");
    }
    if (n == 2 && parts[1] == "tokens") {
      if (method == "POST") return create_token(call);
      if (method == "GET") return list_tokens(call);
      return method_not_allowed("GET, POST");
    }
    if (n == 4 && parts[1] == "tokens" && parts[2] == "join" && parts[3] == "rotate") {
      return method == "POST" ? rotate_join_token(call) : method_not_allowed("POST");
    }
    if (n == 3 && parts[1] == "tokens") return method == "DELETE" ? revoke_token(call, parts[2]) : method_not_allowed("DELETE");
    if (n == 2 && parts[1] == "shares") return method == "GET" ? list_shares(call) : method_not_allowed("GET");
    if (n == 3 && parts[1] == "shares") return method == "PUT" ? put_share(call, parts[2]) : method_not_allowed("PUT");
    if (n == 2 && parts[1] == "audit") return method == "GET" ? list_audit(call) : method_not_allowed("GET");
  } catch (const InvalidInput& e) {
    return call.invalid(e, "invalid_" + (e.field() == "id" ? std::string("id") : std::string("query")));
  }
  call.fail(404, "not_found", "no such endpoint: " + method + " " + call.request.path);
}

void Api::serve_metrics(Call call) {
  if (!metrics_public_) {
    auto who = tokens_.authenticate_header(call.request.header("authorization"), clock_.now());
    if (!who) {
      return call.fail(401, "unauthorized",
                       "/metrics needs a bearer token of an admin, operator or viewer (or the daemon's --metrics-public)");
    }
    call.who = *who;
    if (!call.who.may(Action::read_metrics)) return call.forbid("read metrics");
  }
  (*call.respond)(net::HttpResponse{200, prom::kContentType, render_metrics_(), {}});
}

Json Api::live_fields(const Job& job) const {
  Json j = Json::object();
  if (job.state == JobState::pending) {
    if (auto reason = jobs_.scheduler().why_pending(job.id)) {
      j["pending_reason"] = {{"code", scheduler::to_string(reason->code)}, {"message", reason->message}};
    }
    if (auto pos = jobs_.scheduler().queue_position(job.id)) j["queue_position"] = *pos;
  }
  return j;
}

Json Api::job_json(const Job& job) const {
  Json j = to_json(job);
  j.update(live_fields(job));
  return j;
}

void Api::submit_job(Call call) {
  if (!call.who.may(Action::submit_jobs)) return call.forbid("submit jobs");
  JobSpec spec;
  try {
    spec = parse_job_spec(parse_json_text(call.request.body));
  } catch (const InvalidInput& e) {
    return call.invalid(e, e.field().empty() ? "invalid_json" : "invalid_field");
  }
  const std::string& share = spec.share;
  if (auto refused = submit_refusal(call.who, share, jobs_.share_created(share), jobs_.share_members(share))) {
    return call.fail(refused->status, refused->status == 403 ? "forbidden" : "invalid_field", refused->message, "share");
  }
  if (auto refused = pending_cap_refusal(call.who, max_pending_per_user_,
                                         [&] { return jobs_.pending_count(call.who.user); })) {
    return call.fail(429, "too_many_pending", *refused);
  }
  const std::string user = call.who.user;
  const Json audited = {{"name", spec.name}, {"share", spec.share}};
  try {
    jobs_.submit(std::move(spec), user,
                 [this, call, audited](const Job* job, std::string record, std::string error) {
                   const auto& respond = call.respond;
                   if (!job) return (*respond)(net::error_response(503, "unavailable", error));
                   audit(call, {"job.submitted", call.route(), std::to_string(job->id), audited});
                   // The stored text plus the live fields, rather than rendering the job again on this
                   // thread (the store worker rendered it): the live fields come last, not in key order.
                   (*respond)(net::HttpResponse{201, "application/json", with_fields(std::move(record), live_fields(*job)),
                                                {{"Location", "/v1/jobs/" + std::to_string(job->id)}}});
                 });
  } catch (const InvalidInput& e) {
    call.invalid(e);  // a job that could never start
  }
}

void Api::list_jobs(Call call) {
  JobQuery query;
  const auto& q = call.request.query;
  for (const auto& [key, value] : q) {
    if (key != "state" && key != "share" && key != "user" && key != "limit" && key != "before") {
      throw InvalidInput(key, "unknown query parameter; use state, share, user, limit, before");
    }
  }
  if (auto it = q.find("state"); it != q.end()) {
    query.state = parse_job_state(it->second);
    if (!query.state) throw InvalidInput("state", "must be one of PENDING, STARTING, RUNNING, SUCCEEDED, FAILED, CANCELLED");
  }
  if (auto it = q.find("share"); it != q.end()) query.share = it->second;
  if (auto it = q.find("user"); it != q.end()) query.user = it->second;
  query.limit = static_cast<int>(query_int(call.request, "limit", 1, 1000).value_or(100));
  query.before_id = query_int(call.request, "before", 1, INT64_MAX);
  if (!call.who.may(Action::read_all_jobs)) {
    if (query.user && *query.user != call.who.user) {
      return call.fail(403, "forbidden", "role " + to_string(call.who.role) + " may not list other users' jobs", "user");
    }
    query.user = call.who.user;
  }
  store_.read(
      [this, call, query](Store& store) {
        auto found = store.jobs(query);
        return std::function<void()>([this, call, query, found = std::move(found)] {
          Json list = Json::array();
          for (const auto& stored : found) {
            const Job* active = jobs_.active_job(stored.id);
            list.push_back(job_json(active ? *active : stored));
          }
          Json next = nullptr;
          if (static_cast<int>(found.size()) == query.limit && !found.empty()) next = std::to_string(found.back().id);
          call.reply(200, {{"jobs", list}, {"next", next}});
        });
      },
      [call](const std::string& error) { call.fail(500, "internal", "could not read jobs: " + error); });
}

void Api::with_job(Call call, JobId id, std::function<void(Call, Job)> then) {
  auto check = [call, id, then](const std::optional<Job>& job) {
    // Another user's job answers as a missing one does: a 403 would tell which ids exist.
    if (!job || !can_see(call.who, *job)) {
      return call.fail(404, "not_found", "job " + std::to_string(id) + " does not exist");
    }
    then(call, *job);
  };
  if (const Job* active = jobs_.active_job(id)) return check(*active);
  store_.read([id, check](Store& store) { return std::function<void()>([job = store.job(id), check] { check(job); }); },
              [call](const std::string& error) { call.fail(500, "internal", "could not read the job: " + error); });
}

void Api::get_job(Call call, JobId id) {
  with_job(call, id, [this](Call c, Job job) {
    store_.read(
        [this, c, job](Store& store) {
          return std::function<void()>([this, c, job, attempts = store.attempts_of(job.id)]() mutable {
            // Running attempts are fresher in memory than in the store.
            for (auto& a : attempts) {
              if (auto active = jobs_.active_attempt(a.id)) a = *active;
            }
            const Job* active = jobs_.active_job(job.id);
            Json body = job_json(active ? *active : job);
            body["goodput"] = to_json(job_goodput(attempts, clock_.now()));
            c.reply(200, body);
          });
        },
        [c](const std::string& error) { c.fail(500, "internal", "could not read attempts: " + error); });
  });
}

void Api::cancel_job(Call call, JobId id) {
  with_job(call, id, [this](Call c, Job job) {
    if (!can_cancel(c.who, job)) return c.forbid("cancel job " + std::to_string(job.id));
    jobs_.cancel(job.id, [this, c, job](JobManager::CancelResult result, std::optional<Job> updated) {
      if (result == JobManager::CancelResult::not_active) {
        return c.fail(409, "conflict", "job " + std::to_string(job.id) + " already ended as " + to_string(job.state));
      }
      audit(c, {"job.cancelled", c.route(), std::to_string(job.id), {{"job_user", job.user}}});
      c.reply(200, job_json(*updated));
    });
  });
}

void Api::job_attempts(Call call, JobId id) {
  with_job(call, id, [this](Call c, Job job) {
    store_.read(
        [this, c, job](Store& store) {
          return std::function<void()>([this, c, attempts = store.attempts_of(job.id)] {
            Json list = Json::array();
            for (const auto& stored : attempts) {
              const auto active = jobs_.active_attempt(stored.id);
              list.push_back(to_json(active ? *active : stored));
            }
            c.reply(200, {{"attempts", list}});
          });
        },
        [c](const std::string& error) { c.fail(500, "internal", "could not read attempts: " + error); });
  });
}

void Api::job_logs(Call call, JobId id) {
  for (const auto& [key, value] : call.request.query) {
    if (key != "rank" && key != "tail" && key != "attempt") throw InvalidInput(key, "unknown query parameter; use rank, tail, attempt");
  }
  const auto rank_value = query_int(call.request, "rank", 0, 1023);
  const std::optional<int> rank = rank_value ? std::optional<int>(static_cast<int>(*rank_value)) : std::nullopt;
  // Lines, like tail -n; each rank's reply is capped at kMaxLogReplyBytes and says when it was cut.
  const auto tail = query_int(call.request, "tail", 1, kMaxLogLines).value_or(1000);
  const auto number = query_int(call.request, "attempt", 1, 1 << 20);
  with_job(call, id, [this, rank, tail, number](Call c, Job job) {
    store_.read(
        [this, c, job, rank, tail, number](Store& store) {
          return std::function<void()>([this, c, job, rank, tail, number, attempts = store.attempts_of(job.id)] {
            const Attempt* chosen = nullptr;
            for (const auto& a : attempts) {
              if (number ? a.number == *number : (!chosen || a.number > chosen->number)) chosen = &a;
            }
            if (!chosen) {
              return c.fail(404, "not_found", number ? "job " + std::to_string(job.id) + " has no attempt " + std::to_string(*number)
                                                     : "job " + std::to_string(job.id) + " has not started yet, so it has no logs");
            }
            if (rank && *rank >= static_cast<int>(chosen->nodes.size())) {
              return c.fail(400, "invalid_query", "rank: attempt has ranks 0.." + std::to_string(chosen->nodes.size() - 1), "rank");
            }
            const Attempt attempt = *chosen;
            jobs_.fetch_logs(attempt, rank, tail, [c, job, attempt](std::vector<RankLog> logs) {
              Json list = Json::array();
              for (const auto& l : logs) {
                list.push_back({{"rank", l.rank},           {"node", l.node},
                                {"text", l.text},           {"error", l.error},
                                {"log_bytes", l.log_bytes}, {"truncated", l.truncated}});
              }
              c.reply(200, {{"job_id", job.id}, {"attempt_id", attempt.id}, {"attempt", attempt.number}, {"logs", list}});
            });
          });
        },
        [c](const std::string& error) { c.fail(500, "internal", "could not read attempts: " + error); });
  });
}

void Api::job_checkpoints(Call call, JobId id) {
  with_job(call, id, [this](Call c, Job job) {
    const std::filesystem::path dir = checkpoint::job_checkpoint_dir(checkpoint_root_, job.id);
    // The records come from the store; the job's files are read on the file worker, never on the
    // store's thread, so a hostile directory cannot hold up other requests.
    store_.read(
        [this, c, dir, job](Store& store) {
          return StoreWorker::Continuation([this, c, dir, kind = job.spec.kind, recorded = store.checkpoints_of(job.id)] {
            files_.run(
                [c, dir, kind, recorded] {
                  Json list = Json::array();
                  for (const auto& s : inspect_checkpoints(dir, recorded, kind)) list.push_back(checkpoint_json(s));
                  return FileWorker::Continuation([c, list] { c.reply(200, {{"checkpoints", list}}); });
                },
                [c](const std::string& error) { c.fail(500, "internal", "could not list checkpoints: " + error); });
          });
        },
        [c](const std::string& error) { c.fail(500, "internal", "could not read recorded checkpoints: " + error); });
  });
}

void Api::job_metrics(Call call, JobId id) {
  for (const auto& [key, value] : call.request.query) {
    if (key != "max_points") throw InvalidInput(key, "unknown query parameter; use max_points");
  }
  const auto max_points = query_int(call.request, "max_points", 1, 100'000).value_or(500);
  with_job(call, id, [this, max_points](Call c, Job job) {
    // Summarizing can touch every step of a long run: done on the worker thread with the read.
    store_.read(
        [c, job, max_points](Store& store) {
          Json body = to_json(summarize_metrics(store.metrics_of(job.id), max_points));
          body["job_id"] = job.id;
          return std::function<void()>([c, body = std::move(body)] { c.reply(200, body); });
        },
        [c](const std::string& error) { c.fail(500, "internal", "could not read metrics: " + error); });
  });
}

Json Api::node_json(const NodeView& view, const Principal& who) const {
  Json j = to_json(view.node);
  j["free_cores"] = view.free_cores;
  if (who.may(Action::read_all_jobs)) {
    j["attempts"] = view.attempts;
    return j;
  }
  // A user sees where their own work runs, not the data plane's address nor whose else runs there.
  j.erase("data_addr");
  std::vector<AttemptId> own;
  for (const AttemptId id : view.attempts) {
    const auto attempt = jobs_.active_attempt(id);
    const Job* job = attempt ? jobs_.active_job(attempt->job_id) : nullptr;
    if (job && can_see(who, *job)) own.push_back(id);
  }
  j["attempts"] = own;
  j["other_attempts"] = view.attempts.size() - own.size();
  return j;
}

void Api::list_nodes(Call call) {
  Json list = Json::array();
  for (const auto& view : jobs_.nodes()) list.push_back(node_json(view, call.who));
  call.reply(200, {{"nodes", list}});
}

void Api::get_node(Call call, const std::string& name) {
  auto view = jobs_.node(name);
  if (!view) return call.fail(404, "not_found", "node " + name + " is not registered");
  call.reply(200, node_json(*view, call.who));
}

void Api::set_node_faults(Call call, const std::string& name, bool clear) {
  if (!call.who.may(Action::operate_nodes)) return call.forbid("inject faults");
  const auto view = jobs_.node(name);
  if (!view) return call.fail(404, "not_found", "node " + name + " is not registered");
  FaultPlan plan;
  try {
    if (!clear) {
      const Json body = parse_json_text(call.request.body);
      ObjectReader r(body, "");
      const auto specs = r.string_list("faults", 4096, 256);
      r.finish();
      for (std::size_t i = 0; i < specs.size(); ++i) {
        try {
          apply_fault_spec(plan, specs[i], view->node.cores);
        } catch (const InvalidInput& e) {
          throw InvalidInput("faults[" + std::to_string(i) + "]", e.message());
        }
      }
    }
  } catch (const InvalidInput& e) {
    return call.invalid(e, e.field().empty() ? "invalid_json" : "invalid_field");
  }
  // The canonical form: what the node will list once its agent has applied them.
  std::vector<std::string> specs = fault_specs(plan);
  if (!jobs_.set_faults(name, specs)) {
    return call.fail(409, "conflict", "node " + name + " is not connected; faults are applied by its agent");
  }
  spdlog::info("event=faults_requested node={} by={} faults=\"{}\"", name, call.who.user, join_node_names(specs));
  audit(call, {clear ? "node.faults_cleared" : "node.faults_set", call.route(), name, {{"faults", specs}}});
  call.reply(202, {{"node", name},
                   {"faults", specs},
                   {"message", "sent to the agent; GET /v1/nodes/" + name + " lists the faults once it applied them"}});
}

void Api::drain_node(Call call, const std::string& name) {
  if (!call.who.may(Action::operate_nodes)) return call.forbid("drain nodes");
  if (!jobs_.node(name)) return call.fail(404, "not_found", "node " + name + " is not registered");
  std::string reason = "drained by " + call.who.user;
  bool stop_attempts = false;
  try {
    if (!call.request.body.empty()) {
      const Json body = parse_json_text(call.request.body);
      ObjectReader r(body, "");
      if (auto given = r.opt_string("reason", 1, 1024)) reason = *given + " (drained by " + call.who.user + ")";
      stop_attempts = r.opt_boolean("stop_attempts").value_or(false);
      r.finish();
    }
  } catch (const InvalidInput& e) {
    return call.invalid(e, e.field().empty() ? "invalid_json" : "invalid_field");
  }
  jobs_.drain(name, reason, stop_attempts, [this, call, name, reason, stop_attempts](Node node) {
    audit(call, {"node.drained", call.route(), name, {{"reason", reason}, {"stop_attempts", stop_attempts}}});
    call.reply(200, to_json(node));
  });
}

// A node whose credential is lost (a reinstalled machine) can join again with the join token.
void Api::forget_node_credential(Call call, const std::string& name) {
  if (!call.who.may(Action::manage_tokens)) return call.forbid("forget a node's credential");
  const auto view = jobs_.node(name);
  if (view && view->node.connected) {
    return call.fail(409, "conflict", "node " + name + " is connected; stop its agent before forgetting its credential");
  }
  const auto done = [this, call, name](bool forgotten, const std::string& error) {
    if (!error.empty()) return call.fail(503, "unavailable", error);
    if (!forgotten) return call.fail(404, "not_found", "node " + name + " has no credential");
    audit(call, {"node.credential_forgotten", call.route(), name, Json::object()});
    call.reply(200, {{"node", name}, {"credential", "forgotten"}});
  };
  trainyard::forget_node_credential(tokens_, store_, name, call.who.user, done);
}

void Api::undrain_node(Call call, const std::string& name) {
  if (!call.who.may(Action::operate_nodes)) return call.forbid("undrain nodes");
  const auto view = jobs_.node(name);
  if (!view) return call.fail(404, "not_found", "node " + name + " is not registered");
  const NodeState state = view->node.state;
  if (state == NodeState::healthy) return call.fail(409, "conflict", "node " + name + " is already HEALTHY");
  if (state == NodeState::down) return call.fail(409, "conflict", "node " + name + " is DOWN; it returns when its agent reconnects");
  if (state != NodeState::drained && (!view->attempts.empty() || !view->node.connected)) {
    return call.fail(409, "conflict", "node " + name + " is " + to_string(state) +
                                          " and returns to service only by passing its health check, which needs it "
                                          "connected and idle");
  }
  jobs_.undrain(name, call.who.user, [this, call, name](Node node, std::optional<std::int64_t> check) {
    Json body = to_json(node);
    if (check) body["health_check_id"] = *check;
    audit(call, {"node.undrained", call.route(), name, {{"health_check_id", check ? Json(*check) : Json(nullptr)}}});
    call.reply(200, body);
  });
}

void Api::node_health(Call call, const std::string& name) {
  for (const auto& [key, value] : call.request.query) {
    if (key != "limit") throw InvalidInput(key, "unknown query parameter; use limit");
  }
  const int limit = static_cast<int>(query_int(call.request, "limit", 1, 1000).value_or(50));
  if (!jobs_.node(name)) return call.fail(404, "not_found", "node " + name + " is not registered");
  store_.read(
      [call, name, limit](Store& store) {
        Json list = Json::array();
        for (const auto& row : store.node_health(name, limit)) {
          Json j = row.record;
          j["at"] = format_time(row.at);
          list.push_back(std::move(j));
        }
        return std::function<void()>([call, name, list] { call.reply(200, {{"node", name}, {"checks", list}}); });
      },
      [call](const std::string& error) { call.fail(500, "internal", "could not read health history: " + error); });
}

void Api::start_health_check(Call call) {
  if (!call.who.may(Action::operate_nodes)) return call.forbid("start health checks");
  HealthCheckRequest request;
  request.kind = HealthCheckKind::on_demand;
  request.requested_by = call.who.user;
  try {
    const Json body = parse_json_text(call.request.body);
    ObjectReader r(body, "");
    request.nodes = r.string_list("nodes", 1024, 64);
    std::vector<std::string> suites = {"accelerator", "collective"};
    if (r.has("suites")) suites = r.string_list("suites", 2, 32);
    r.finish();
    if (request.nodes.empty()) throw InvalidInput("nodes", "must name at least one node");
    if (suites.empty()) throw InvalidInput("suites", "must name at least one suite");
    request.accelerator = request.collective = false;
    for (std::size_t i = 0; i < suites.size(); ++i) {
      const auto suite = parse_health_suite(suites[i]);
      if (!suite) throw InvalidInput("suites[" + std::to_string(i) + "]", "must be \"accelerator\" or \"collective\"");
      (*suite == HealthSuite::accelerator ? request.accelerator : request.collective) = true;
    }
    for (std::size_t i = 0; i < request.nodes.size(); ++i) {
      const std::string field = "nodes[" + std::to_string(i) + "]";
      const std::string& name = request.nodes[i];
      if (std::count(request.nodes.begin(), request.nodes.end(), name) > 1) throw InvalidInput(field, "names " + name + " twice");
      const auto view = jobs_.node(name);
      if (!view) throw InvalidInput(field, "node " + name + " is not registered");
      if (!view->node.connected) throw InvalidInput(field, "node " + name + " is not connected");
      if (request.accelerator && !view->attempts.empty()) {
        throw InvalidInput(field, "node " + name + " is running attempts; the accelerator suite needs idle nodes (run "
                                  "only the collective suite, or drain it first)");
      }
    }
    if (request.collective && !request.accelerator && request.nodes.size() < 2) {
      throw InvalidInput("nodes", "the collective suite needs at least 2 nodes");
    }
  } catch (const InvalidInput& e) {
    return call.invalid(e, e.field().empty() ? "invalid_json" : "invalid_field");
  }
  const Json audited = {{"nodes", request.nodes}, {"accelerator", request.accelerator}, {"collective", request.collective}};
  const std::int64_t id = jobs_.start_health_check(std::move(request));
  audit(call, {"healthcheck.started", call.route(), std::to_string(id), audited});
  const HealthCheckResult* result = jobs_.health().find(id);
  net::HttpResponse resp{202, "application/json", json_text(to_json(*result)), {{"Location", "/v1/healthchecks/" + std::to_string(id)}}};
  (*call.respond)(resp);
}

void Api::get_health_check(Call call, std::int64_t id) {
  if (const HealthCheckResult* result = jobs_.health().find(id)) return call.reply(200, to_json(*result));
  store_.read(
      [call, id](Store& store) {
        return std::function<void()>([call, id, row = store.health_check(id)] {
          if (!row) return call.fail(404, "not_found", "health check " + std::to_string(id) + " does not exist");
          call.reply(200, row->record);
        });
      },
      [call](const std::string& error) { call.fail(500, "internal", "could not read the health check: " + error); });
}

void Api::list_canaries(Call call) {
  for (const auto& [key, value] : call.request.query) {
    if (key != "limit") throw InvalidInput(key, "unknown query parameter; use limit");
  }
  JobQuery query;
  query.user = kCanaryUser;
  query.limit = static_cast<int>(query_int(call.request, "limit", 1, 1000).value_or(50));
  store_.read(
      [this, call, query](Store& store) {
        return std::function<void()>([this, call, found = store.jobs(query)] {
          Json list = Json::array();
          for (const auto& stored : found) {
            const Job* active = jobs_.active_job(stored.id);
            list.push_back(job_json(active ? *active : stored));
          }
          call.reply(200, {{"canaries", list}});
        });
      },
      [call](const std::string& error) { call.fail(500, "internal", "could not read canaries: " + error); });
}

void Api::cluster_goodput(Call call) {
  for (const auto& [key, value] : call.request.query) {
    if (key != "limit") throw InvalidInput(key, "unknown query parameter; use limit");
  }
  JobQuery query;
  query.limit = static_cast<int>(query_int(call.request, "limit", 1, 10'000).value_or(1000));
  if (!call.who.may(Action::read_all_jobs)) query.user = call.who.user;
  const TimePoint now = clock_.now();
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
      [call](const std::string& error) { call.fail(500, "internal", "could not compute goodput: " + error); });
}

void Api::create_token(Call call) {
  if (!call.who.may(Action::manage_tokens)) return call.forbid("create tokens");
  TokenRecord record;
  try {
    const Json body = parse_json_text(call.request.body);
    ObjectReader r(body, "");
    record.user = r.string("user", 1, 64);
    check_name("user", record.user);
    if (record.user == kCanaryUser) {
      throw InvalidInput("user", "\"" + record.user + "\" is the daemon's own user (its canaries)");
    }
    const auto role = parse_role(r.opt_string("role", 1, 16).value_or("user"));
    if (!role || *role == Role::agent) {
      throw InvalidInput("role", "must be \"admin\", \"operator\", \"user\" or \"viewer\"");
    }
    record.role = *role;
    if (auto ttl = r.opt_integer("ttl_s", 1, kMaxTokenTtlS)) record.expires_at = clock_.now() + std::chrono::seconds(*ttl);
    r.finish();
  } catch (const InvalidInput& e) {
    return call.invalid(e, e.field().empty() ? "invalid_json" : "invalid_field");
  }
  const std::string secret = generate_token_secret();
  const auto expires_at = record.expires_at;
  record = new_token_record(secret, record.user, record.role, clock_.now());
  record.expires_at = expires_at;
  Change change;
  change.tokens.push_back(record);
  change.events.push_back(audit_event(call, {"token.created", call.route(), record.id,
                                             {{"user", record.user},
                                              {"role", to_string(record.role)},
                                              {"expires_at", expires_at ? Json(format_time(*expires_at)) : Json(nullptr)}}}));
  store_.write(std::move(change), [this, call, record, secret](std::exception_ptr error, Change&) {
    if (error) return call.fail(503, "unavailable", "the token could not be stored");
    tokens_.add(record);
    spdlog::info("event=token_created id={} user={} role={} by={}", record.id, record.user, to_string(record.role),
                 call.who.user);
    Json body = token_json(record);
    body["token"] = secret;
    call.reply(201, body);
  });
}

void Api::list_tokens(Call call) {
  const bool all = call.who.may(Action::manage_tokens);
  Json list = Json::array();
  for (const TokenRecord& token : tokens_.list()) {
    if (all || token.user == call.who.user) list.push_back(token_json(token));
  }
  call.reply(200, {{"tokens", list}});
}

// Anyone may revoke their own tokens (giving up access changes nothing else); only token managers
// others'. Another user's token answers as a missing one does.
void Api::revoke_token(Call call, const std::string& id) {
  const auto token = tokens_.find_by_id(id);
  if (!token || (!call.who.may(Action::manage_tokens) && token->user != call.who.user)) {
    return call.fail(404, "not_found", "token " + id + " does not exist");
  }
  // Gone from memory at once: its next request is refused, and an agent it connected is closed.
  tokens_.remove(token->hash);
  spdlog::warn("event=token_revoked id={} user={} role={} by={}", token->id, token->user, to_string(token->role),
               call.who.user);
  Change change;
  change.revoked_tokens.push_back(token->hash);
  change.events.push_back(audit_event(call, {"token.revoked", call.route(), token->id,
                                             {{"user", token->user}, {"role", to_string(token->role)}}}));
  store_.write(std::move(change), [call, id](std::exception_ptr error, Change&) {
    if (error) {
      return call.fail(503, "unavailable", "token " + id + " is revoked until the daemon restarts, but could not be "
                                           "deleted from the store; revoke it again");
    }
    call.reply(200, {{"id", id}, {"revoked", true}});
  });
}

void Api::rotate_join_token(Call call) {
  if (!call.who.may(Action::manage_tokens)) return call.forbid("rotate the join token");
  trainyard::rotate_join_token(tokens_, store_, join_token_file_, clock_.now(),
                               [this, call, by = call.who.user](const std::string& secret, const std::string& error) {
                                 if (!error.empty()) return call.fail(503, "unavailable", error);
                                 spdlog::info("event=join_token_rotated_by user={}", by);
                                 audit(call, {"token.join_rotated", call.route(), "join", Json::object()});
                                 call.reply(200, {{"token", secret}});
                               });
}

void Api::list_shares(Call call) {
  Json list = Json::array();
  for (const auto& row : jobs_.scheduler().shares(clock_.now())) {
    Json j = {{"name", row.name},
              {"weight", row.weight},
              {"usage_core_s", row.usage},
              {"expected_usage_core_s", row.expected_usage},
              {"normalized_usage", row.normalized_usage},
              {"fair_share_factor", row.fair_share_factor},
              {"running_cores", row.running_cores},
              {"pending_jobs", row.pending_jobs}};
    if (row.max_running_cores) j["max_running_cores"] = *row.max_running_cores;
    if (call.who.may(Action::manage_shares)) {
      const auto* members = jobs_.share_members(row.name);
      j["members"] = members ? Json(*members) : Json(nullptr);
    }
    list.push_back(j);
  }
  call.reply(200, {{"shares", list}});
}

void Api::put_share(Call call, const std::string& name) {
  if (!call.who.may(Action::manage_shares)) return call.forbid("change shares");
  scheduler::ShareSettings settings;
  std::optional<std::vector<std::string>> members;
  try {
    check_name("name", name);
    const Json body = parse_json_text(call.request.body);
    ObjectReader r(body, "");
    settings.weight = r.number("weight", 1e-6, 1e6);
    if (auto cap = r.opt_integer("max_running_cores", 1, 1 << 30)) settings.max_running_cores = static_cast<int>(*cap);
    if (r.has("members")) {
      members = r.string_list("members", 10'000, 64);
      for (std::size_t i = 0; i < members->size(); ++i) check_name("members[" + std::to_string(i) + "]", (*members)[i]);
    }
    r.finish();
    scheduler::validate(settings);
  } catch (const InvalidInput& e) {
    return call.invalid(e, e.field().empty() ? "invalid_json" : "invalid_field");
  }
  if (auto refused = put_refusal(name, members)) {
    return call.fail(refused->status, refused->status == 403 ? "forbidden" : "invalid_field", refused->message,
                     refused->status == 403 ? "name" : "members");
  }
  jobs_.set_share(name, settings, members, [this, call, name, settings, members] {
    Json j = {{"name", name}, {"weight", settings.weight}, {"members", members ? Json(*members) : Json(nullptr)}};
    if (settings.max_running_cores) j["max_running_cores"] = *settings.max_running_cores;
    audit(call, {"share.changed", call.route(), name, j});
    call.reply(200, j);
  });
}

Event Api::audit_event(const Call& call, AuditRecord what) const {
  return trainyard::audit_event(call.who, call.request.remote, clock_.now(), std::move(what));
}

void Api::audit(const Call& call, AuditRecord what) {
  Change change;
  change.events.push_back(audit_event(call, std::move(what)));
  const std::string kind = change.events.back().kind;
  store_.write(std::move(change), [kind, by = call.who.user](std::exception_ptr error, Change&) {
    // The change itself is done and answered; only its record is missing.
    if (error) spdlog::error("event=audit_write_failed kind={} by={}", kind, by);
  });
}

void Api::list_audit(Call call) {
  if (!call.who.may(Action::read_audit)) return call.forbid("read the audit log");
  for (const auto& [key, value] : call.request.query) {
    if (key != "after" && key != "limit") throw InvalidInput(key, "unknown query parameter; use after, limit");
  }
  const std::int64_t after = query_int(call.request, "after", 0, INT64_MAX).value_or(0);
  const int limit = static_cast<int>(query_int(call.request, "limit", 1, 1000).value_or(100));
  store_.read(
      [call, after, limit](Store& store) {
        const auto found = store.events_of_kind(kAuditKindPrefix, after, limit);
        Json list = Json::array();
        for (const Event& e : found) list.push_back(audit_json(e));
        Json next = nullptr;
        if (static_cast<int>(found.size()) == limit) next = std::to_string(found.back().seq);
        return std::function<void()>([call, body = Json{{"events", list}, {"next", next}}] { call.reply(200, body); });
      },
      [call](const std::string& error) { call.fail(500, "internal", "could not read the audit log: " + error); });
}

}  // namespace trainyard
