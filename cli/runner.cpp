#include "cli/runner.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/command_line.h"
#include "cli/completion.h"
#include "cli/event_follow.h"
#include "cli/failover_client.h"
#include "cli/follow.h"
#include "cli/table.h"
#include "proto/json_reader.h"
#include "proto/messages.h"

namespace trainyard::cli {
namespace {

constexpr std::size_t kBodyExcerpt = 200;

bool is_success(int status) { return status >= 200 && status < 300; }

HttpRequest to_http(const ApiRequest& request, const std::string& token) {
  HttpRequest http{.method = request.method, .target = request.target};
  http.headers = {{"authorization", "Bearer " + token}, {"accept", "application/json"}};
  if (request.body) {
    http.headers.emplace("content-type", "application/json");
    http.body = request.body->dump();
  }
  return http;
}

int usage_error(const CliHost& host, const InvalidInput& e, const std::string& help_command) {
  host.err << "trainyard: " << terminal_safe(e.what()) << "\nRun '" << help_command << " --help' for usage.\n";
  return kExitUsage;
}

int failure(const CliHost& host, const std::string& message) {
  host.err << "trainyard: " << terminal_safe(message) << "\n";
  return kExitFailed;
}

// The daemons a command talks to (`--server URL1,URL2,...`), once resolved, as one client.
struct Session {
  std::string servers;  // as given, for messages
  std::string token;
  std::unique_ptr<HttpClient> client;
};

// A decoded reply, or the exit status of a failure already reported.
using Outcome = std::variant<Json, int>;
using Opened = std::variant<Session, int>;

Opened open_session(const GlobalOptions& global, const CliHost& host) {
  Session session;
  try {
    const Connection connection = resolve_connection(global, host.env, host.read_file);
    std::vector<ServerUrl> servers = parse_server_urls(connection.server);
    for (auto& url : servers) {
      url.trust.ca_file = connection.ca_file;
      if (!connection.ca_from.empty()) url.trust.ca_from = connection.ca_from;
    }
    session.servers = connection.server;
    session.token = connection.token;
    session.client = std::make_unique<FailoverClient>(std::move(servers), host.connect);
  } catch (const InvalidInput& e) {
    return usage_error(host, e, "trainyard");
  }
  return session;
}

// How long a following command (--watch, logs --follow, submit --wait) waits for the daemons to
// answer again: a failover (the active daemon died and a standby takes over once its lease runs
// out) or a restart takes seconds. One-shot commands report the failure at once.
constexpr std::chrono::seconds kFollowPatience{30};
constexpr Millis kFollowRetry{1000};

bool unavailable_now(const HttpResult& result) {
  return result ? result->status == 503 : result.error().code == ErrorCode::unavailable;
}

HttpResult exchange(Session& session, const ApiRequest& request, const CliHost& host, bool following) {
  HttpResult result = session.client->send(to_http(request, session.token));
  if (!following || !unavailable_now(result)) return result;
  host.err << "trainyard: "
           << terminal_safe(result ? error_message(result->status, result->body) : result.error().message)
           << "; trying again for up to " << kFollowPatience.count() << " s\n";
  const MonoTime give_up = host.clock.monotonic_now() + kFollowPatience;
  while (unavailable_now(result) && host.clock.monotonic_now() < give_up && host.pause(kFollowRetry)) {
    result = session.client->send(to_http(request, session.token));
  }
  return result;
}

// `following`: the command follows the cluster and rides out a failover (see kFollowPatience).
Outcome send(Session& session, const ApiRequest& request, const CliHost& host, bool following = false) {
  const HttpResult result = exchange(session, request, host, following);
  if (!result) return failure(host, result.error().message);
  const HttpResponse& response = *result;
  if (!is_success(response.status)) return failure(host, error_message(response.status, response.body));
  try {
    return parse_json_text(response.body);
  } catch (const InvalidInput& e) {
    return failure(host, "daemon at " + session.servers + " answered " + request.method + " " + request.target +
                             " with a body that is not JSON we accept (" + e.what() + ")");
  }
}

// Performs the requests in order; stops at the first that fails.
std::variant<Replies, int> send_all(Session& session, const std::vector<ApiRequest>& requests, const CliHost& host,
                                    bool following = false) {
  Replies replies;
  for (const ApiRequest& request : requests) {
    Outcome outcome = send(session, request, host, following);
    if (const int* status = std::get_if<int>(&outcome)) return *status;
    replies.push_back(std::move(std::get<Json>(outcome)));
  }
  return replies;
}

void print_json(const Json& value, const CliHost& host) {
  host.out << value.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

// A job's bytes go to a pipe as they are; a terminal gets them made safe.
std::string for_output(const Command& command, const std::string& text, const CliHost& host) {
  return raw_output(command) && !host.out_is_terminal ? text : terminal_safe(text);
}

int print(const Command& command, const Replies& replies, const GlobalOptions& global, const CliHost& host) {
  if (global.json) {
    print_json(render_json(command, replies), host);
    return kExitOk;
  }
  host.out << for_output(command, render_text(command, replies, RenderContext{host.clock.system_now()}), host);
  const Notices notices = notices_of(command, replies);
  for (const auto& line : notices.lines) host.err << "trainyard: " << terminal_safe(line) << "\n";
  return notices.failed ? kExitFailed : kExitOk;
}

// Runs the command every interval until stopped: in place with the changes highlighted on a
// terminal, one output after another to a pipe.
int watch(const Command& command, const std::vector<ApiRequest>& requests, std::int64_t interval_s,
          const std::string& label, const GlobalOptions& global, Session& session, const CliHost& host) {
  std::string previous;
  do {
    auto fetched = send_all(session, requests, host, true);
    if (const int* status = std::get_if<int>(&fetched)) return *status;
    const Replies& replies = std::get<Replies>(fetched);
    if (global.json) {
      print_json(render_json(command, replies), host);
    } else {
      const TimePoint now = host.clock.system_now();
      const std::string screen = terminal_safe(render_text(command, replies, RenderContext{now}));
      if (host.out_is_terminal) {
        const std::string header = "Every " + std::to_string(interval_s) + "s: " + label + "    " + format_time(now);
        host.out << redraw(header, previous.empty() ? screen : highlight_changes(previous, screen));
        previous = screen;
      } else {
        host.out << screen << "\n";
      }
    }
    host.out.flush();
  } while (host.pause(std::chrono::seconds(interval_s)));
  return kExitOk;
}

constexpr Millis kFollowInterval{1000};

ApiRequest job_request(const JobTarget& job) { return {"GET", job.path(), std::nullopt}; }

bool has_attempts(const Json& job) {
  const Json& attempts = field_or_null(job, "attempts");
  return attempts.is_number_integer() && attempts.get<std::int64_t>() > 0;
}

// logs --follow: the job's state, then (once it has an attempt) what its logs grew by, until the
// job has ended; the logs read after the end are complete.
int follow_logs(const ShowLogs& logs, Session& session, const CliHost& host) {
  LogFollower follower(!logs.rank.has_value());
  ShowLogs catch_up = logs;
  catch_up.tail = kMaxLogLines;  // after the first reply: enough of each tail to hold what grew
  bool first = true;
  for (;;) {
    Outcome job = send(session, job_request(logs.job), host, true);
    if (const int* status = std::get_if<int>(&job)) return *status;
    const bool ended = job_has_ended(std::get<Json>(job));
    if (has_attempts(std::get<Json>(job))) {
      Outcome reply = send(session, (first ? logs : catch_up).requests({}).front(), host, true);
      if (const int* status = std::get_if<int>(&reply)) return *status;
      host.out << for_output(logs, follower.take(std::get<Json>(reply)), host);
      first = false;
    }
    if (ended) break;
    host.out.flush();
    if (!host.pause(kFollowInterval)) break;
  }
  host.out << for_output(logs, follower.finish(), host);
  if (follower.skipped_bytes() > 0) {
    host.err << "trainyard: " << follower.skipped_bytes()
             << " bytes of output came faster than they could be followed and were not shown\n";
  }
  return kExitOk;
}

// Where a job a command waits for stands: an error already reported (its exit status), still
// running, or ended with the line to print, the exit status and what --json prints.
struct Ended {
  Json shown;  // the job's record, or an array's folded row
  Json json;   // the job's record, or an array's tasks
  int status = 0;
};
using Probe = std::variant<int, std::monostate, Ended>;

// An array has ended when its folded row (one row, its tasks counted by state) says so; then its
// tasks are read, a page at a time, for their exit statuses.
Probe probe_array(const SubmittedArray& array, Session& session, const CliHost& host) {
  Outcome page = send(session, folded_array_request(array), host, true);
  if (const int* status = std::get_if<int>(&page)) return *status;
  const Json& rows = field_or_null(std::get<Json>(page), "jobs");
  if (!rows.is_array() || rows.empty() || field_or_null(rows.front(), "id") != Json(array.array_job)) {
    return failure(host, "the daemon's job list has no row for array " + std::to_string(array.array_job));
  }
  const Json& row = rows.front();
  if (!job_has_ended(row)) return std::monostate{};
  std::vector<Json> tasks;
  std::optional<std::string> cursor;
  do {
    Outcome tasks_page = send(session, array_tasks_request(array, cursor), host, true);
    if (const int* status = std::get_if<int>(&tasks_page)) return *status;
    const Json& listed = field_or_null(std::get<Json>(tasks_page), "jobs");
    if (listed.is_array()) tasks.insert(tasks.end(), listed.begin(), listed.end());
    const Json& next = field_or_null(std::get<Json>(tasks_page), "next");
    cursor = next.is_string() ? std::optional(next.get<std::string>()) : std::nullopt;
  } while (cursor);
  const int status = exit_status_of_array(tasks);
  return Ended{row, Json(std::move(tasks)), status};
}

// A job named by its ID (an array's ID means the whole array) or as ID_N (that task alone).
Probe probe_job(const JobTarget& target, Session& session, const CliHost& host) {
  Outcome job = send(session, job_request(target), host, true);
  if (const int* status = std::get_if<int>(&job)) return *status;
  const Json& record = std::get<Json>(job);
  if (!target.task) {
    if (const auto array = submitted_array(record)) return probe_array(*array, session, host);
  }
  if (!job_has_ended(record)) return std::monostate{};
  return Ended{record, record, exit_status_of_job(record)};
}

void print_ended(const Ended& ended, const GlobalOptions& global, const CliHost& host) {
  if (global.json) {
    print_json(ended.json, host);
  } else {
    host.out << terminal_safe(ended_line(ended.shown));
  }
}

// A follower's failure to hear the server, told apart from a job's own exit status 1.
int no_answer(int status) { return status == kExitFailed ? kExitNoAnswer : status; }

// submit --wait: the submit's own output, then the job's (or array's) state until it ends; exits
// with its status.
int submit_and_wait(const SubmitJob& submit, const std::vector<ApiRequest>& requests, const GlobalOptions& global,
                    Session& session, const CliHost& host) {
  auto submitted = send_all(session, requests, host);
  if (const int* status = std::get_if<int>(&submitted)) return no_answer(*status);
  const Replies& replies = std::get<Replies>(submitted);
  if (!global.json) host.out << terminal_safe(submit.render(replies, RenderContext{host.clock.system_now()}));
  host.out.flush();
  const Json& id = field_or_null(replies.at(0), "id");
  if (!id.is_number_integer()) return no_answer(failure(host, "the daemon's reply to the submit has no job id"));
  const JobTarget target{id.get<JobId>()};
  for (;;) {
    const Probe probe = probe_job(target, session, host);
    if (const int* status = std::get_if<int>(&probe)) return no_answer(*status);
    if (const auto* ended = std::get_if<Ended>(&probe)) {
      print_ended(*ended, global, host);
      return ended->status;
    }
    if (!host.pause(kFollowInterval)) return failure(host, "stopped waiting for job " + target.text());
  }
}

// wait ID...: each job until it ends, printed as it does; exits with the highest status, at once
// with --for succeeded when one ends otherwise, or with kExitTimedOut when --timeout runs out.
int wait_for_jobs(const WaitJobs& wait, const GlobalOptions& global, Session& session, const CliHost& host) {
  const MonoTime deadline =
      wait.timeout_s ? host.clock.monotonic_now() + std::chrono::seconds(*wait.timeout_s) : MonoTime::max();
  std::vector<JobTarget> waiting = wait.jobs;
  Json all_ended = Json::array();
  int highest = kExitOk;
  for (;;) {
    bool condition_failed = false;
    for (auto it = waiting.begin(); it != waiting.end() && !condition_failed;) {
      const Probe probe = probe_job(*it, session, host);
      if (const int* status = std::get_if<int>(&probe)) return no_answer(*status);
      const auto* ended = std::get_if<Ended>(&probe);
      if (!ended) {
        ++it;
        continue;
      }
      if (global.json) {
        all_ended.push_back(ended->json);
      } else {
        print_ended(*ended, global, host);
        host.out.flush();
      }
      highest = std::max(highest, ended->status);
      it = waiting.erase(it);
      condition_failed = wait.until_succeeded && ended->status != kExitOk;
    }
    if (condition_failed) waiting.clear();
    if (waiting.empty()) {
      if (global.json) print_json(all_ended, host);
      return highest;
    }
    if (host.clock.monotonic_now() >= deadline) {
      host.err << "trainyard: timed out after " << *wait.timeout_s << " s waiting for job " << waiting.front().text()
               << (waiting.size() > 1 ? " and " + std::to_string(waiting.size() - 1) + " more" : "") << "\n";
      return kExitTimedOut;
    }
    if (!host.pause(kFollowInterval)) return failure(host, "stopped waiting for job " + waiting.front().text());
  }
}

int execute(const Command& command, const std::string& label, const GlobalOptions& global, const CliHost& host) {
  std::vector<ApiRequest> requests;
  try {
    requests = requests_for(command, host.read_input);
  } catch (const InvalidInput& e) {
    return failure(host, e.what());
  }
  Opened opened = open_session(global, host);
  if (const int* status = std::get_if<int>(&opened)) return *status;
  Session& session = std::get<Session>(opened);

  if (auto interval = watch_interval(command)) return watch(command, requests, *interval, label, global, session, host);
  if (const auto* logs = std::get_if<ShowLogs>(&command); logs && logs->follow)
    return follow_logs(*logs, session, host);
  if (const auto* submit = std::get_if<SubmitJob>(&command); submit && submit->wait) {
    return submit_and_wait(*submit, requests, global, session, host);
  }
  if (const auto* wait = std::get_if<WaitJobs>(&command)) return wait_for_jobs(*wait, global, session, host);
  if (const auto* events = std::get_if<ListEvents>(&command); events && events->follow) {
    return follow_events(*events, session.token, global.json, *session.client, host);
  }
  auto fetched = send_all(session, requests, host);
  if (const int* status = std::get_if<int>(&fetched)) return *status;
  return print(command, std::get<Replies>(fetched), global, host);
}

// `completion SHELL` and `__complete INDEX WORDS...`: no command of the daemon's, so not in the
// registry; __complete asks the server only for the names it completes, and stays silent on errors.
std::optional<int> run_local_command(const std::vector<std::string>& args, const CliHost& host) {
  if (args.empty()) return std::nullopt;
  if (args[0] == kCompletionCommand) {
    try {
      if (args.size() != 2) throw InvalidInput("SHELL", "expected one: bash or zsh");
      host.out << completion_script(args[1]);
      return kExitOk;
    } catch (const InvalidInput& e) {
      return usage_error(host, e, "trainyard completion");
    }
  }
  if (args[0] != kCompleteCommand || args.size() < 2) return std::nullopt;
  std::size_t index = 0;
  try {
    index = static_cast<std::size_t>(parse_integer("INDEX", args[1], 0, 1000));
  } catch (const InvalidInput&) {
    return kExitUsage;
  }
  const std::vector<std::string> words(args.begin() + 2, args.end());
  const auto names_from = [&](const std::string& target, const std::string& list, const std::string& key) {
    std::vector<std::string> names;
    std::ostringstream silenced;
    const CliHost quiet{host.env, host.read_file, host.read_input, host.connect, host.clock, host.out, silenced};
    Opened opened = open_session({}, quiet);
    if (auto* session = std::get_if<Session>(&opened)) {
      Outcome reply = send(*session, {"GET", target, std::nullopt}, quiet);
      if (const auto* body = std::get_if<Json>(&reply)) {
        const Json& items = field_or_null(*body, list);
        if (items.is_array()) {
          for (const Json& item : items) names.push_back(text_of(item, key));
        }
      }
    }
    return names;
  };
  const ServerNames names{[&] { return names_from("/v1/jobs?limit=200", "jobs", "id"); },
                          [&] { return names_from("/v1/nodes", "nodes", "name"); }};
  for (const auto& candidate : complete(words, index, names)) host.out << terminal_safe(candidate) << "\n";
  return kExitOk;
}

std::string label_of(const std::vector<std::string>& args) {
  std::string label = "trainyard";
  for (const auto& arg : args) label += " " + arg;
  return terminal_safe(label);
}

}  // namespace

std::string error_message(int status, const std::string& body) {
  const std::string http = "HTTP " + std::to_string(status);
  const std::string hint = status == 401 ? " (check --token-file or $TRAINYARD_TOKEN)" : "";
  Json document;
  try {
    document = parse_json_text(body);
  } catch (const InvalidInput&) {
    // not one of ours: the status line alone is the message
  }
  if (document.is_object() && document.contains("error") && document["error"].is_object()) {
    const Json& error = document["error"];
    const std::string message = text_of(error, "message");
    const std::string code = text_of(error, "code");
    if (message != kAbsent) return message + " (" + http + (code == kAbsent ? "" : ", " + code) + ")" + hint;
  }
  if (body.empty()) return http + hint;
  return http + ": " + truncate(body, kBodyExcerpt) + hint;
}

int run_cli(const std::vector<std::string>& args, const CliHost& host) {
  if (auto status = run_local_command(args, host)) return *status;
  Invocation invocation;
  try {
    invocation = parse_command_line(args);
  } catch (const UsageError& e) {
    return usage_error(host, e, e.help_command());
  }
  if (const auto* help = std::get_if<ShowHelp>(&invocation.action)) {
    host.out << help->text;
    return kExitOk;
  }
  return execute(std::get<Command>(invocation.action), label_of(args), invocation.global, host);
}

std::optional<std::string> read_local_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string read_input_file(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path, std::string("cannot read: ") + std::strerror(errno));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace trainyard::cli
