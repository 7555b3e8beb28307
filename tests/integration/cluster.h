#pragma once
// A real local cluster for integration tests: the daemon and agents as processes on ephemeral
// loopback ports (or on hosts of a HostNetwork), in a temporary directory, all stopped (SIGKILL)
// when the Cluster goes away.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/job_account.h"
#include "cli/http_client.h"

namespace trainyard::testing {

using Json = nlohmann::json;

// A child process with its output in a log file. Killed and reaped on destruction.
class Process {
 public:
  // `netns_path`: the network namespace it runs in (HostNetwork::netns_path); empty: the test's.
  Process(const std::vector<std::string>& argv, const std::string& log_path, const std::string& netns_path = "");
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const;
  // Waits for the exit up to `timeout`; returns the raw wait status, or nullopt if still running.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

struct ApiResult {
  int status = 0;
  Json body;
};

struct AgentSpec {
  int cores = 4;
  std::vector<std::string> extra_flags;  // e.g. {"--label", "rack=r1"}
  std::string join_token_file;           // default: the daemon's join.token
  std::string server;                    // --server; default: the daemon's URL
  std::string job_uid_registry;          // --job-uid-registry; default: one of this cluster's own
};

// Passed as the token: send no Authorization header at all.
inline constexpr const char* kNoToken = "-";

// Polls `condition` until it holds or `timeout` passes (the only waiting the tests do).
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

class HostNetwork;

class Cluster {
 public:
  Cluster();
  // Its directory (daemon's data, agents' work dirs) in `parent_dir` rather than /tmp.
  explicit Cluster(const std::string& parent_dir);
  // On hosts of `network` rather than loopback: the test itself is on host "client", the daemon on
  // host "daemon" and each agent on the host of its name, which the test adds before starting it.
  explicit Cluster(HostNetwork& network);
  ~Cluster();

  // The CA the test's own API client verifies an https:// daemon with (set before start_daemon).
  void trust_ca(const std::string& ca_file) { ca_file_ = ca_file; }
  void start_daemon(const std::vector<std::string>& extra_flags = {});
  void kill_daemon(int sig);
  Process& daemon() { return *daemon_; }
  void start_agent(const std::string& name, const AgentSpec& spec = {});
  Process& agent(const std::string& name) { return *agents_.at(name); }
  void stop_agent(const std::string& name, int sig);
  // Waits until `count` nodes are HEALTHY and connected.
  void wait_for_nodes(int count);

  ApiResult api(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& token = "");
  // GET /healthz's "role" ("active" or "standby"), or "" while the daemon does not answer (a standby
  // closes its port to listen again as the active daemon): for polling, without failing the test.
  std::string daemon_role();
  // Submits a spec and returns the new job id (asserts 201).
  std::int64_t submit(const Json& spec, const std::string& token = "");
  // Waits until the job is in `state`; returns it (fails the test with the job's JSON on timeout).
  Json wait_job_state(std::int64_t id, const std::string& state, std::chrono::milliseconds timeout);

  const std::string& dir() const { return dir_; }
  // World-writable (sticky): where a job, running as another account, leaves files for the test.
  std::string shared_dir() const { return dir_ + "/shared"; }
  const std::string& url() const { return url_; }
  const std::string& admin_token() const { return admin_token_; }
  std::string daemon_log() const;
  // The name the running daemon's database gave the cluster (its log's event=cluster), "" for none.
  std::string cluster_name() const;
  // Where node `node`'s agent keeps attempt `attempt` (agent/launch_paths.h).
  std::string attempt_dir(const std::string& node, std::int64_t attempt) const;
  // Job `job`'s checkpoint directory under the daemon's checkpoint root (default: DATA_DIR/checkpoints).
  std::string checkpoint_dir(std::int64_t job, const std::string& root = "") const;
  // The account attempt `attempt` of job `job` runs as by default (agent/job_account.h).
  agent::JobAccount job_account(std::int64_t job, std::int64_t attempt = 0) const;

 private:
  std::string dir_;
  std::string url_;
  std::string admin_token_;
  std::unique_ptr<Process> daemon_;
  std::map<std::string, std::unique_ptr<Process>> agents_;
  std::set<std::string> agent_names_;  // every agent ever started, whose cgroups go at the end
  std::unique_ptr<cli::HttpClient> client_;
  std::string ca_file_;
  int daemon_starts_ = 0;
  HostNetwork* network_ = nullptr;
  // The daemon's --master-ports: a window no other cluster on this machine holds while this one
  // lives (a lock on a file per window), so real jobs of tests run side by side never rendezvous
  // on each other's MASTER_PORT.
  std::string master_ports();
  std::string master_ports_;
  int master_ports_lock_ = -1;
};

std::string read_text(const std::string& path);

// `text` without its trailing newlines and spaces.
std::string trimmed(std::string text);

// A one-node job spec (or `nodes` nodes) of one command: `/bin/sh -c script`, or `argv` as given.
Json shell_job(const std::string& name, const std::string& script, int nodes = 1);
Json argv_job(const std::string& name, const std::vector<std::string>& argv, int nodes = 1);

std::string job_path(std::int64_t id);

// A loopback port free now: a daemon's URL must be known before it starts (the lease advertises it).
int unused_loopback_port();
// GET /v1/jobs/{id}/attempts as the admin reads it: the attempts, oldest first.
Json attempts_of(Cluster& cluster, std::int64_t id);

}  // namespace trainyard::testing
