#pragma once
// The agent service: registers the node with the daemon over one WebSocket, heartbeats, runs the
// attempts it is told to launch and reports their exits.
//
// The daemon may go away at any time: the agent then reconnects with exponential backoff and
// keeps its attempts running; after reconnecting, its hello lists them and it resends the exits
// the daemon may have missed (the daemon ignores ones it already has or that are stale).
// With several daemons (active / standby, `--server URL1,URL2`), a lost or refused link moves on
// to the next URL of the list, or to the active daemon a standby redirects to when it is listed
// (net/server_list.h), with the same backoff.
// A refused join (bad token, incompatible protocol) is final: the agent stops with the reason.
//
// Fencing: the daemon replaces the attempts of a node it has not heard from for its node timeout.
// So that they never run twice, an agent none of whose heartbeats the daemon acknowledged for the
// fence time it learned at welcome stops its attempts itself (SIGTERM, the kill grace, SIGKILL),
// whether the link is down, cut without a close, or the daemon paused. The fence time counts from
// when the newest acknowledged heartbeat (or hello) was sent: its ack proves the daemon heard the
// node after that (daemon/policy/fence_timing.h says why the node timeout is then always later).
//
// A daemon that stops answering (paused, or cut off without the connection closing) is left: a link
// on which nothing was answered for the answer deadline (a welcome after connecting, an ack after
// the last one) is dropped and the next URL tried, so the agent reaches a standby that took over
// before its fence time runs out. The deadline is half the fence time (a quarter for the welcome,
// which a live daemon sends at once), never under one and a half heartbeat intervals; without a
// fence time, three heartbeat intervals and at least 5 s. A miss is confirmed after one more short
// wait (a heartbeat interval, at most a quarter of the deadline), so an agent that was itself
// stalled reads an answer that arrived meanwhile before it gives up on the daemon.
//
// A frozen or dead agent cannot fence: the fence keeper, a process beside it, is told what runs
// and each new deadline, and stops the attempts when one passes unrenewed or the agent dies; a dead
// agent's keeper then tells the daemon they stopped (agent/fence_keeper.h).
//
// It acts through `AgentDeps` (agent/agent_deps.h): the daemon link, the workloads, the timers and
// the fence keeper.
//
// Threading contract: I/O thread only; runs post their exits to it.
#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/agent_deps.h"
#include "agent/job_disk_floor.h"
#include "net/server_list.h"
#include "proto/backoff.h"

namespace trainyard::agent {

// The agent process's settings; `tls`, `collective_timeout` and `job_accounts` configure the
// production links and workloads (agent/main.cpp).
struct AgentConfig {
  // The daemons, in the order tried (not empty): http://host:port, or https://host:port (wss,
  // verified with `tls`).
  std::vector<std::string> servers;
  net::TlsContext tls;  // for https: whom to trust, and the client certificate to present
  std::string join_token;
  std::string name;
  int cores = 32;
  std::int64_t memory_mb = 0;
  std::map<std::string, std::string> labels;
  std::string work_dir;
  std::string checkpoint_root;  // launches naming a checkpoint elsewhere are refused; empty: any
  std::string data_addr;  // host:port other agents reach our data plane at
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5000};
  // Spreads the returns of a fleet that lost its daemon together over the second half of each wait.
  Jitter reconnect_jitter = Jitter::equal;
  std::chrono::milliseconds collective_timeout{30000};
  // Free MiB of the filesystems jobs write to (work, checkpoint directories) that they may not write
  // below (agent/job_disk_floor.h); 0: none.
  std::int64_t job_disk_floor_mb = 512;
  JobAccounts job_accounts;  // who command jobs run as
  std::string cgroups;       // how attempts are contained, for the hello (Cgroups::describe)
  std::string job_network;   // whether attempts can have a network of their own (JobNetworkHost::support)
};

class Agent {
 public:
  // `io` runs the agent's callbacks and the destruction of finished runs; `shutdown` stops it.
  Agent(boost::asio::io_context& io, AgentConfig config, neuron::NeuronDevice& device, AgentDeps deps);
  ~Agent();

  void start();
  // Stops every run (SIGTERM, then SIGKILL after `grace`) and closes the link.
  void shutdown(std::chrono::milliseconds grace);
  // Set when the daemon refused us for good; the process should exit non-zero with it.
  const std::string& fatal_error() const { return fatal_error_; }

 private:
  void connect();
  void on_open();
  void on_message(const std::string& text);
  void on_closed(const std::string& reason);
  void schedule_heartbeat();
  // (Re)starts the deadline for the daemon's next answer; `unanswered` drops the link when it passes.
  void expect_answer(std::chrono::milliseconds within);
  void unanswered(std::chrono::milliseconds waited);
  std::chrono::milliseconds answer_deadline() const;
  // Numbers a heartbeat or hello about to be sent and starts its fence deadline.
  std::int64_t next_heartbeat_seq();
  void acknowledged(std::int64_t seq);
  void fence(std::int64_t seq);
  // Tells the fence keeper (agent/fence_keeper.h) what runs, and the newest acknowledged deadline or
  // that there is none.
  void update_fence_keeper();
  void tell_keeper_what_runs();
  void send(const AgentMessage& message);
  // Presents `secret` from now on and saves it for later lives (agent/node_credential.h).
  void keep_node_credential(const std::string& secret);

  void launch(const LaunchMsg& launch);
  void refuse_launch(const LaunchMsg& launch, const std::string& reason);
  std::filesystem::path log_dir_of(AttemptId id) const;
  void kill(const KillMsg& kill);
  // Stops the attempt filling a filesystem jobs write to (the work filesystem, a checkpoint
  // directory's) once it is below the job disk floor (agent/job_disk_floor.h), from the
  // measurements of the heartbeat `hb`.
  void keep_job_disk_floor(const HeartbeatMsg& hb);
  // Each filesystem the running attempts write to, with each one's bytes there: `work_bytes` (its
  // logs and work directory, as measured) on the work filesystem, its job's checkpoint directory on
  // that one's. `remember`: these become the bytes the next heartbeat compares with.
  std::vector<FilesystemWrites> job_writes(const std::map<AttemptId, std::int64_t>& work_bytes, bool remember);
  // The floor's reason when attempt `id`, ending now, is the one that wrote a filesystem below it.
  std::optional<std::string> disk_floor_reason_at_exit(AttemptId id);
  void send_log(const LogRequestMsg& request);
  void run_exited(AttemptId id, AttemptExit exit);
  void set_faults(const SetFaultsMsg& msg);
  void run_health_check(const HealthCheckMsg& msg);
  // Sends the run's new step metrics now, or keeps them for after the reconnect.
  void send_metrics(AttemptId id, AttemptRun& run);
  int take_core(int wanted);

  boost::asio::io_context& io_;
  AgentConfig config_;
  neuron::NeuronDevice& device_;
  AgentDeps deps_;
  std::string node_credential_;  // the node's own bearer secret, once the daemon issued it
  std::shared_ptr<net::WebSocketPeer> link_;
  bool welcomed_ = false;
  std::string cluster_;  // the daemon's, from its welcome: attempt directories and job uids are made from it
  bool stopping_ = false;
  std::string fatal_error_;
  net::Failover failover_;  // which daemon to dial
  Backoff backoff_;
  std::chrono::milliseconds heartbeat_interval_{5000};
  std::unique_ptr<Timer> heartbeat_timer_;
  std::unique_ptr<Timer> reconnect_timer_;
  std::unique_ptr<Timer> answer_timer_;
  std::uint64_t answer_generation_ = 0;  // raised by every answer and link end: older deadlines are void
  std::chrono::milliseconds fence_after_{0};  // from the welcome; 0: never fence
  std::int64_t heartbeat_seq_ = 0;            // never reset: an old link's ack names an old number
  std::int64_t acked_seq_ = 0;
  std::int64_t hello_seq_ = 0;  // the welcome acknowledges it
  // The fence deadline of each heartbeat not yet superseded by a newer acknowledged one: the
  // newest acknowledged heartbeat's deadline fences the node when it passes.
  struct FenceDeadline {
    std::chrono::steady_clock::time_point sent_at;  // of the heartbeat (or hello)
    std::unique_ptr<Timer> timer;
  };
  std::map<std::int64_t, FenceDeadline> fence_deadlines_;
  bool keeper_clear_ = false;  // the fence keeper was last told there is no deadline
  std::vector<AttemptId> keeper_attempts_;  // what the fence keeper was last told runs
  struct Running {
    std::unique_ptr<AttemptRun> run;
    LaunchMsg launch;
    std::filesystem::path dir;  // its attempt directory, named when it was launched
    int core = 0;
    std::map<dev_t, std::int64_t> bytes_at_last_heartbeat;  // on each filesystem it writes to
    bool stopped_for_disk_floor = false;
  };
  std::map<AttemptId, Running> runs_;
  std::map<std::int64_t, std::unique_ptr<HealthTask>> health_tasks_;
  std::set<int> busy_cores_;
  std::deque<AttemptExitedMsg> recent_exits_;  // resent after a reconnect
  std::deque<MetricsMsg> unsent_metrics_;      // of runs that ended while the daemon was away
};

}  // namespace trainyard::agent
