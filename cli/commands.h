#pragma once
// The CLI's commands as typed values. Each command is one struct that carries, in one place,
// everything the rest of the CLI needs to know about it:
//   kPath, kSynopsis, kSummary, flags()   -> the registry, the parser and the help text;
//   parse(ParsedArgs)                     -> the typed command from its arguments (pure);
//   requests(InputReader)                 -> the REST calls to make, in order (pure);
//   render(replies, RenderContext)        -> the table or description people read (pure);
//   optional to_json(replies)             -> what `--json` prints when that is not simply the
//                                            one reply the server sent.
// The registry (command_line.h) is generated from the `Command` variant, so adding a command
// (`shares`, `drain NODE`, `health run`, ...) is one struct here plus its name in the variant.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/api_request.h"
#include "cli/command_base.h"
#include "cli/webhook_commands.h"
#include "proto/flag_parser.h"
#include "proto/job.h"
#include "proto/json_reader.h"
#include "proto/node.h"
#include "proto/time.h"

namespace trainyard::cli {

// A job as a command names it: "12", or task 3 of array 12 as "12_3". The daemon resolves both;
// an array's own id acts on all its tasks (cancel, hold, release, requeue, update).
struct JobTarget {
  JobId id = 0;
  std::optional<int> task;
  std::string text() const;  // "12" or "12_3"
  std::string path() const;  // "/v1/jobs/12_3"
  bool operator==(const JobTarget&) const = default;
};
JobTarget parse_job_target(std::string_view text, std::string_view field = "ID");

struct SubmitJob {
  static constexpr std::string_view kPath = "submit";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis =
      "submit FILE.json | -\n"
      "       trainyard submit [flags below] SCRIPT [ARGS...]   (a batch script with #SBATCH lines)\n"
      "       trainyard submit [--hold] [--name N] [--nodes K] [--share S] [--priority P] [--cores-per-node C]\n"
      "                        [--ntasks-per-node P]\n"
      "                        [--retries R] [--time T] [--mem SIZE] [--env K=V]... [--array SPEC] [--depend DEP]\n"
      "                        -- PROGRAM ARGS...\n"
      "       (either form) [--chdir DIR] [--wait]";
  static constexpr std::string_view kSummary =
      "Submit a job from a JSON job spec (\"-\" reads stdin), or a command job built from flags\n"
      "(like sbatch --wrap); sbatch's -J, -N, -t, -a, -d and -D mean --name, --nodes, --time,\n"
      "--array, --depend and --chdir. --name defaults to the program's file name; --retries R allows R\n"
      "retries after the first attempt. --array 0-99%4 makes a job array (tasks ID_N, at most 4\n"
      "running); --depend afterok:ID[:ID],afternotok:ID... waits for other jobs (both also with a file).\n"
      "Every rank starts in the directory submit ran from (--chdir DIR for another; a spec file's\n"
      "command.workdir, else the attempt's own directory, unless --chdir is given), with PATH\n"
      "/usr/local/bin:/usr/bin:/bin unless --env PATH=... sets it.\n"
      "A batch script (first line #!, as sbatch takes one) runs as every rank, as 'srun SCRIPT' would;\n"
      "its #SBATCH lines before the first command take the flags above and sbatch's spellings\n"
      "(-N, -t, -J, --mem, --ntasks-per-node, -a, -d, -D, -o, -e), the command line's winning. An\n"
      "option we do not take (-p, ...) is refused naming its line. ARGS after the script are given to it\n"
      "(after '--' when one begins with '-').\n"
      "--wait follows the job to its end, prints its final state and exits with the job's exit code:\n"
      "0 when it SUCCEEDED, its exit code when it FAILED with one, 3 when it FAILED without one (a\n"
      "signal, a lost node, a time limit), 4 when it was CANCELLED, 125 when the server refused or\n"
      "could not be reached. A job that did not succeed is printed with its failure class and reason.";
  static std::vector<FlagSpec> flags();
  static SubmitJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string spec_file;  // the JSON spec's or batch script's file ("-": stdin); empty for the quick form
  std::vector<std::string> script_args;  // the arguments after a batch script, given to it
  ParsedArgs command_line;               // laid over a batch script's #SBATCH options
  Json spec;              // the quick form's spec, already validated
  Json array_and_dependencies = Json::object();  // --array and --depend, laid over a spec file
  std::optional<std::string> workdir;  // --chdir, laid over a spec file's command
  bool wait = false;
  bool hold = false;      // --hold: submitted held (either form)
  bool operator==(const SubmitJob&) const = default;
};

// Runs as a loop in the runner (cli/runner.cpp); `requests` are the first look at each job.
struct WaitJobs {
  static constexpr std::string_view kPath = "wait";
  static constexpr std::string_view kSynopsis = "wait ID|ID_N... [--for ended|succeeded] [--timeout T]";
  static constexpr std::string_view kSummary =
      "Wait for jobs already submitted to end (like kubectl wait, or submit --wait after the fact), and\n"
      "exit as submit --wait does: 0 when every job SUCCEEDED, else the highest of their statuses (an\n"
      "array's ID waits for all its tasks). --for succeeded stops at the first job that ended otherwise.\n"
      "--timeout gives up after T (90s, 45m, 12h, or seconds), exiting 124 as timeout(1) does; 125\n"
      "when the server refused or could not be reached (not a job's status).";
  static std::vector<FlagSpec> flags();
  static WaitJobs parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::vector<JobTarget> jobs;
  bool until_succeeded = false;  // --for succeeded
  std::optional<std::int64_t> timeout_s;
  bool operator==(const WaitJobs&) const = default;
};

struct ListJobs {
  static constexpr std::string_view kPath = "jobs";
  static constexpr std::string_view kSynopsis =
      "jobs [--state S[,S...] | --all] [--share S] [--user U] [--limit N] [--before ID] [--array ID]\n"
      "              [--cursor NEXT] [--watch [--interval SECONDS]]";
  static constexpr std::string_view kSummary =
      "List jobs, newest first, a page at a time: like squeue, the jobs not yet ended (PENDING,\n"
      "STARTING, RUNNING) unless --all or --state says otherwise. A job array is one row with its\n"
      "tasks counted by state, and --array ID lists its tasks (all of them, ended ones too).";
  static std::vector<FlagSpec> flags();
  static ListJobs parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::vector<JobState> states;  // empty: every state
  std::optional<std::string> share;
  std::optional<std::string> user;
  std::optional<std::int64_t> limit;
  std::optional<JobId> before;  // only jobs older than this one
  std::optional<JobId> array;   // the tasks of this array
  std::optional<std::string> cursor;  // the next page: the daemon's `next` of the previous one
  std::optional<std::int64_t> watch_s;
  bool operator==(const ListJobs&) const = default;
};

struct ShowJob {
  static constexpr std::string_view kPath = "job";
  static constexpr std::string_view kSynopsis =
      "job ID|ID_N [--provenance [--attempt N]] [--watch [--interval SECONDS]]";
  static constexpr std::string_view kSummary =
      "Describe a job and its attempts. With --json: {\"job\": JOB, \"attempts\": [ATTEMPT...]}.\n"
      "--provenance prints what an attempt (the latest unless --attempt N) depended on instead.";
  static std::vector<FlagSpec> flags();
  static ShowJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  Json to_json(const Replies& replies) const;

  JobTarget job;
  bool provenance = false;
  std::optional<std::int64_t> attempt;  // with provenance; nullopt: the latest
  std::optional<std::int64_t> watch_s;
  bool operator==(const ShowJob&) const = default;
};

// What a command says besides its output, on stderr: that the output was cut, that part of it
// could not be had. `failed` makes the command exit non-zero even though it printed something.
struct Notices {
  std::vector<std::string> lines;
  bool failed = false;
};

struct ShowLogs {
  static constexpr std::string_view kPath = "logs";
  static constexpr std::string_view kSynopsis = "logs ID|ID_N [--rank R] [--tail LINES] [--attempt N | --follow]";
  static constexpr std::string_view kSummary =
      "Print a job's output (stdout and stderr), every rank unless --rank is given. --follow keeps\n"
      "printing what the newest attempt writes, every rank's lines interleaved with a \"[rank N] \"\n"
      "prefix (none with --rank), until the job ends.";
  // The job's own bytes: passed on raw to a pipe, made safe only for a terminal.
  static constexpr bool kRawOutput = true;
  static std::vector<FlagSpec> flags();
  static ShowLogs parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  Notices notices(const Replies& replies) const;

  JobTarget job;
  std::optional<std::int64_t> rank;
  std::optional<std::int64_t> tail;
  std::optional<std::int64_t> attempt;
  bool follow = false;
  bool operator==(const ShowLogs&) const = default;
};

struct CancelJob {
  static constexpr std::string_view kPath = "cancel";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "cancel ID|ID_N [ID|ID_N ...]";
  static constexpr std::string_view kSummary =
      "Cancel jobs (their processes get SIGTERM, then SIGKILL); an array job's ID cancels all its\n"
      "tasks, ID_N only task N. Several are cancelled in order, up to the first the server refuses.";
  static std::vector<FlagSpec> flags();
  static CancelJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::vector<JobTarget> jobs;  // each ID_N: task N of array ID; else the job, or the whole array
  bool operator==(const CancelJob&) const = default;
};

// hold, release and requeue: one job, one POST, the job back.
struct HoldJob {
  static constexpr std::string_view kPath = "hold";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "hold ID | ID_N";
  static constexpr std::string_view kSummary =
      "Hold a pending job: it is never scheduled until released; an array job's ID holds all its pending tasks.";
  static std::vector<FlagSpec> flags();
  static HoldJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  JobTarget job;
  bool operator==(const HoldJob&) const = default;
};

struct ReleaseJob {
  static constexpr std::string_view kPath = "release";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "release ID | ID_N";
  static constexpr std::string_view kSummary =
      "Release a held job to the queue; an array job's ID releases all its held tasks.";
  static std::vector<FlagSpec> flags();
  static ReleaseJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  JobTarget job;
  bool operator==(const ReleaseJob&) const = default;
};

struct RequeueJob {
  static constexpr std::string_view kPath = "requeue";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "requeue ID | ID_N";
  static constexpr std::string_view kSummary =
      "Stop a running job and queue it again without using an attempt (a simulated job checkpoints first);\n"
      "an array job's ID requeues all its running tasks.";
  static std::vector<FlagSpec> flags();
  static RequeueJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  JobTarget job;
  bool operator==(const RequeueJob&) const = default;
};

struct UpdateJob {
  static constexpr std::string_view kPath = "update";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "update ID|ID_N [--priority P] [--time T | --timeout SECONDS] [--nodes K]";
  static constexpr std::string_view kSummary =
      "Change a pending job (like scontrol update): an owner may only lower its priority and shorten its time limit;\n"
      "an array job's ID changes all its pending tasks.";
  static std::vector<FlagSpec> flags();
  static UpdateJob parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  JobTarget job;
  Json changes;  // the PATCH body
  bool operator==(const UpdateJob&) const = default;
};

struct ListNodes {
  static constexpr std::string_view kPath = "nodes";
  static constexpr std::string_view kSynopsis = "nodes [--state S[,S...]] [--watch [--interval SECONDS]]";
  static constexpr std::string_view kSummary = "List the cluster's nodes (like sinfo -N), or those in the given states.";
  static std::vector<FlagSpec> flags();
  static ListNodes parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::vector<NodeState> states;  // empty: every state
  std::optional<std::int64_t> watch_s;
  bool operator==(const ListNodes&) const = default;
};

struct ShowNode {
  static constexpr std::string_view kPath = "node";
  static constexpr std::string_view kSynopsis = "node NAME";
  static constexpr std::string_view kSummary =
      "Describe a node (like scontrol show node): its state and why, cores and memory in use, the jobs on it, "
      "its latest health check, disks, and how its agent contains and isolates attempts.";
  static std::vector<FlagSpec> flags();
  static ShowNode parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  std::string name;
  bool operator==(const ShowNode&) const = default;
};

struct ListShares {
  static constexpr std::string_view kPath = "shares";
  static constexpr std::string_view kSynopsis = "shares";
  static constexpr std::string_view kSummary = "Show the fair-share table: weight, usage, factor, running and pending work.";
  static std::vector<FlagSpec> flags();
  static ListShares parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  bool operator==(const ListShares&) const = default;
};

struct DeleteShare {
  static constexpr std::string_view kPath = "share delete";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "share delete NAME";
  static constexpr std::string_view kSummary =
      "Delete a share made by mistake (admins), with its settings, members and usage; refused while a\n"
      "job is pending or running in it. Jobs that ended in it keep its name.";
  static std::vector<FlagSpec> flags();
  static DeleteShare parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string name;
  bool operator==(const DeleteShare&) const = default;
};

struct CreateToken {
  static constexpr std::string_view kPath = "token create";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "token create USER [--role admin|operator|user|viewer] [--ttl 30d]";
  static constexpr std::string_view kSummary =
      "Create an API token for USER (admin only) and print it. --role defaults to user; --ttl\n"
      "(seconds, or with s, m, h or d) makes it expire.";
  static std::vector<FlagSpec> flags();
  static CreateToken parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string user;
  std::string role = "user";
  std::optional<std::int64_t> ttl_s;
  bool operator==(const CreateToken&) const = default;
};

struct ListTokens {
  static constexpr std::string_view kPath = "token list";
  static constexpr std::string_view kSynopsis = "token list";
  static constexpr std::string_view kSummary = "List tokens (admins: all; others: their own), never their secrets.";
  static std::vector<FlagSpec> flags();
  static ListTokens parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  bool operator==(const ListTokens&) const = default;
};

struct RevokeToken {
  static constexpr std::string_view kPath = "token revoke";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "token revoke ID";
  static constexpr std::string_view kSummary =
      "Revoke a token by its id (see token list) at once; an agent connected with it is disconnected.";
  static std::vector<FlagSpec> flags();
  static RevokeToken parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string id;
  bool operator==(const RevokeToken&) const = default;
};

struct RotateJoinToken {
  static constexpr std::string_view kPath = "token rotate-join";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "token rotate-join";
  static constexpr std::string_view kSummary =
      "Replace the agents' join token (admin only) and print the new one; the daemon rewrites its\n"
      "join.token file. Nodes that joined keep their own credentials and stay connected.";
  static std::vector<FlagSpec> flags();
  static RotateJoinToken parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  bool operator==(const RotateJoinToken&) const = default;
};

struct ShowMetrics {
  static constexpr std::string_view kPath = "metrics";
  static constexpr std::string_view kSynopsis = "metrics ID|ID_N [--max-points N]";
  static constexpr std::string_view kSummary =
      "Print a training job's per-step metrics (loss, gradient norm, parameter norm, learning rate,\n"
      "samples/s), downsampled to at most N rows (default 50), then its gradient-norm spikes.";
  static std::vector<FlagSpec> flags();
  static ShowMetrics parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  JobTarget job;
  std::int64_t max_points = 50;
  bool operator==(const ShowMetrics&) const = default;
};

struct SetFaults {
  static constexpr std::string_view kPath = "fault";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "fault NODE SPEC... | fault NODE --clear";
  static constexpr std::string_view kSummary =
      "Inject faults into a node's simulated device (admin or operator), replacing the ones it has:\n"
      "core:N=corrupt|hang|crash|slow:K, node=slow:K (K times slower), link=throttle:RATE (e.g. 50MB), "
      "link=drop. --clear removes all.";
  static std::vector<FlagSpec> flags();
  static SetFaults parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string node;
  std::vector<std::string> specs;  // empty: clear
  bool operator==(const SetFaults&) const = default;
};

struct DrainNode {
  static constexpr std::string_view kPath = "drain";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "drain NODE [--reason TEXT] [--now]";
  static constexpr std::string_view kSummary =
      "Stop giving NODE new work (admin or operator). Running attempts finish, unless --now stops them;\n"
      "stopped attempts are retried elsewhere without using the job's retries.";
  static std::vector<FlagSpec> flags();
  static DrainNode parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string node;
  std::optional<std::string> reason;
  bool now = false;
  bool operator==(const DrainNode&) const = default;
};

struct UndrainNode {
  static constexpr std::string_view kPath = "undrain";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "undrain NODE";
  static constexpr std::string_view kSummary =
      "Return NODE to service (admin or operator): a DRAINED node at once, an UNHEALTHY or SUSPECT one after\n"
      "it passes a health check.";
  static std::vector<FlagSpec> flags();
  static UndrainNode parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::string node;
  bool operator==(const UndrainNode&) const = default;
};

struct RunHealthCheck {
  static constexpr std::string_view kPath = "health run";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "health run NODE... [--suite accelerator|collective]...";
  static constexpr std::string_view kSummary =
      "Health-check nodes now (admin or operator): the accelerator suite on every core and the collective\n"
      "suite over the set (both unless --suite says otherwise). Prints the check's id.";
  static std::vector<FlagSpec> flags();
  static RunHealthCheck parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::vector<std::string> nodes;
  std::vector<std::string> suites;  // empty: both
  bool operator==(const RunHealthCheck&) const = default;
};

struct ShowHealthCheck {
  static constexpr std::string_view kPath = "health show";
  static constexpr std::string_view kSynopsis = "health show ID";
  static constexpr std::string_view kSummary = "Show a health check: its state, each node's verdict, and the busbw measured.";
  static std::vector<FlagSpec> flags();
  static ShowHealthCheck parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::int64_t id = 0;
  bool operator==(const ShowHealthCheck&) const = default;
};

struct ListHealthChecks {
  static constexpr std::string_view kPath = "health list";
  static constexpr std::string_view kSynopsis = "health list [--limit N]";
  static constexpr std::string_view kSummary =
      "List the latest health checks, newest first: registration, periodic, pre-flight, after a hang,\n"
      "and on demand, with the nodes each failed.";
  static std::vector<FlagSpec> flags();
  static ListHealthChecks parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::optional<std::int64_t> limit;
  bool operator==(const ListHealthChecks&) const = default;
};

struct ListCanaries {
  static constexpr std::string_view kPath = "canaries";
  static constexpr std::string_view kSynopsis = "canaries [--limit N]";
  static constexpr std::string_view kSummary =
      "List the canary jobs the daemon ran in the system share, newest first; a failed one is a\n"
      "system problem.";
  static std::vector<FlagSpec> flags();
  static ListCanaries parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::optional<std::int64_t> limit;
  bool operator==(const ListCanaries&) const = default;
};

struct RunCanary {
  static constexpr std::string_view kPath = "canary run";
  static constexpr std::string_view kSynopsis = "canary run";
  static constexpr std::string_view kSummary =
      "Run a canary job now, as the daemon's schedule would (operators and admins); `canaries`\n"
      "shows how it ends and when the next scheduled one is due.";
  static std::vector<FlagSpec> flags();
  static RunCanary parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  bool operator==(const RunCanary&) const = default;
};

// `trainyard history`, like sacct: finished jobs (or any state) with their accounting, as a table
// of the columns asked for, CSV or JSON.
struct ShowHistory {
  static constexpr std::string_view kPath = "history";
  static constexpr std::string_view kSynopsis =
      "history [--since 1d|2h|TIME] [--until 1d|2h|TIME] [--state S[,S...]] [--user U] [--share S]\n"
      "                  [--limit N] [--before ID] [--array ID] [--cursor NEXT] [--format COLUMN,...] [--csv]";
  static constexpr std::string_view kSummary =
      "Finished jobs, newest first, with their elapsed time, wait, cores, core-hours, exit code,\n"
      "failure class, attempts and goodput (like sacct). --since and --until bound the submit time:\n"
      "a span back from now (90s, 45m, 12h, 1d), an RFC 3339 time or a date (2026-11-24). --state\n"
      "defaults to SUCCEEDED,FAILED,CANCELLED. A job array is one row, its tasks' use summed (elapsed\n"
      "from the first task's start to the last one's end); --array ID lists its tasks instead.\n"
      "--format picks the columns (see --help); --csv prints them as CSV; --json prints the daemon's reply.";
  static std::vector<FlagSpec> flags();
  static ShowHistory parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  Notices notices(const Replies& replies) const;

  std::optional<std::string> since;
  std::optional<std::string> until;
  std::string states = "SUCCEEDED,FAILED,CANCELLED";
  std::optional<std::string> user;
  std::optional<std::string> share;
  std::optional<std::int64_t> limit;
  std::optional<JobId> before;
  std::optional<JobId> array;  // the tasks of this array, each its own row
  std::optional<std::string> cursor;
  std::vector<std::string> columns;
  bool csv = false;
  bool operator==(const ShowHistory&) const = default;
};

struct ShowGoodput {
  static constexpr std::string_view kPath = "goodput";
  static constexpr std::string_view kSynopsis = "goodput [--limit N]";
  static constexpr std::string_view kSummary =
      "Goodput: the share of allocated core-time that produced kept training steps, for the newest N\n"
      "jobs (default 1000; yours unless you are an admin) and in total, with the time lost by cause.";
  static std::vector<FlagSpec> flags();
  static ShowGoodput parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  std::optional<std::int64_t> limit;
  bool operator==(const ShowGoodput&) const = default;
};

// One attempt's provenance record named on the command line: "JOB" (its latest attempt) or
// "JOB/ATTEMPT", JOB an id or an array task ID_N.
struct AttemptRef {
  JobTarget job;
  std::optional<std::int64_t> attempt;
  bool operator==(const AttemptRef&) const = default;
};
AttemptRef parse_attempt_ref(std::string_view text, std::string_view field);
// GET /v1/jobs/{id}/attempts/{n|last}/provenance
ApiRequest provenance_request(const AttemptRef& ref);

struct DiffProvenance {
  static constexpr std::string_view kPath = "diff";
  static constexpr std::string_view kSynopsis = "diff A B";
  static constexpr std::string_view kSummary =
      "What changed between two runs: A and B are JOB (its latest attempt) or JOB/ATTEMPT. Prints\n"
      "their provenance records' differences key by key (spec, versions, kernel, checkpoint, nodes,\n"
      "environment, the jobs' own facts): \"+\" added in B, \"-\" gone from A, \"~\" changed.\n"
      "With --json: {\"a\": RECORD, \"b\": RECORD, \"changes\": [{\"key\", \"before\", \"after\"}...]}.";
  static std::vector<FlagSpec> flags();
  static DiffProvenance parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  Json to_json(const Replies& replies) const;

  AttemptRef a;
  AttemptRef b;
  bool operator==(const DiffProvenance&) const = default;
};

struct ListEvents {
  static constexpr std::string_view kPath = "events";
  static constexpr std::string_view kSynopsis =
      "events [--type GLOB] [--job ID] [--node N] [--since 10m | --last N | --after ID] [--limit N] [--cursor NEXT]\n"
      "       trainyard events --follow [--type GLOB] [--job ID] [--node N] [--after ID]";
  static constexpr std::string_view kSummary =
      "List events newest first (GET /v1/events?order=newest), a page at a time (--cursor NEXT for the\n"
      "next, older page); --after ID lists oldest first from event ID on. Audit events (audit.*) show\n"
      "only when --type names them. --follow prints events as they happen, one a line (with --json one\n"
      "JSON object a line), from the newest on (or after event ID), resuming where it was after a lost\n"
      "connection, until Ctrl-C.";
  static std::vector<FlagSpec> flags();
  static ListEvents parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  // --follow: the stream's request (a resume adds Last-Event-ID, which overrides `after`).
  ApiRequest stream_request() const;
  // --follow: one event (its JSON as the stream sends it) as one line.
  static std::string render_line(const Json& event);

  std::optional<std::string> type;
  std::optional<JobId> job;
  std::optional<std::string> node;
  std::optional<std::int64_t> after;
  std::optional<std::string> since;  // a span back (10m) or a time, as the daemon parses it
  std::optional<std::int64_t> limit;  // --limit N or --last N
  std::optional<std::string> cursor;
  bool follow = false;
  bool operator==(const ListEvents&) const = default;
};

using Command =
    std::variant<SubmitJob, ListJobs, ShowJob, ShowLogs, WaitJobs, CancelJob, HoldJob, ReleaseJob, RequeueJob,
                 UpdateJob, ShowHistory, ShowMetrics, ShowGoodput, ListNodes, ShowNode, ListShares, DeleteShare, SetFaults, DrainNode, UndrainNode,
                 RunHealthCheck, ShowHealthCheck, ListHealthChecks, ListCanaries, RunCanary, CreateToken, ListTokens, RevokeToken, RotateJoinToken,
                 DiffProvenance, ListEvents, AddWebhook, ListWebhooks, ShowWebhook, RemoveWebhook, TestWebhook,
                 ListWebhookDeliveries>;

std::vector<ApiRequest> requests_for(const Command& command, const InputReader& read);
Notices notices_of(const Command& command, const Replies& replies);
// Whether the command's text output is data to pass on as it is (when not to a terminal).
bool raw_output(const Command& command);
// The --watch interval in seconds of a command that has one and was given it.
std::optional<std::int64_t> watch_interval(const Command& command);
std::string render_text(const Command& command, const Replies& replies, const RenderContext& ctx);
// What `--json` prints: the server's one reply, or the command's own combination of several.
Json render_json(const Command& command, const Replies& replies);

// Helpers shared by the command files.
// The single positional a command takes (e.g. "ID"); throws naming it when missing or extra.
std::string only_positional(const ParsedArgs& args, std::string_view name);
JobId parse_job_id(std::string_view text, std::string_view field = "ID");
// A time bound flag (--since 10m, an RFC 3339 time or a date) as typed, checked here so the error
// names the flag; the daemon reads it against its own clock.
std::optional<std::string> time_bound(const ParsedArgs& args, std::string_view flag);
// A job list row's id as squeue shows it: "12", a task "12_3", or a whole array "12_[0-99%4]".
std::string id_cell(const Json& job);
// A folded array's tasks by state: "3 RUNNING, 17 PENDING".
std::string task_counts(const Json& array);
// Every attempt a job ran: those counted against its retries, its requeues and preemptions, and
// its retries for a node's fault.
std::int64_t attempts_run(const Json& job);

}  // namespace trainyard::cli
