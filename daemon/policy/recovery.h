#pragma once
// Recovery in seconds, pure: when the node of a rank whose agent went away counts
// as lost, which nodes a resume must pre-flight, and which idle nodes are kept warm as spares. No
// I/O and no clock reads: the job manager passes the times in and acts on the answers.
//
// Why: a killed agent's WebSocket and data-plane connections close at once, while its heartbeats
// merely stop; waiting for the node timeout left the surviving ranks stalled for most of the time a
// fault cost (bench/chaos). A closed connection is a strong signal but not proof (a daemon-side
// network blip closes it too), so it is trusted after a short grace, or at once when a rank of the
// same attempt saw the node's data-plane connection close as well, and in either case only once the
// dead agent's attempts are surely stopped: when its fence keeper says so, or after the time the
// keeper may take.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/time.h"

namespace trainyard::daemon {

struct RecoveryConfig {
  // A node whose agent's connection closed is lost once this passes without a reconnect; one that
  // reconnects within it, still running its attempts, changes nothing.
  Millis disconnect_grace{2000};
  int warm_spares = 0;  // idle HEALTHY nodes kept freshly tested, so a resume needs no pre-flight on them
  // A node whose latest health check passed within this is warm: a resume does not pre-flight it.
  Millis warm_for{300'000};
  // How long after its connection closed a dead agent's attempts are surely stopped: its rank
  // leaders die with it, and its fence keeper gives the rest of their process groups SIGTERM, the
  // kill grace and SIGKILL at once (agent/fence_keeper.h). The daemon sets it to its kill grace and
  // a margin; before it has passed, nothing but the keeper's own report that they stopped says a
  // replacement would not run beside them.
  Millis stopped_within{0};
};

// What the daemon knows of a rank whose node may be gone.
struct NodeLossSignals {
  std::optional<MonoTime> disconnected_at;  // its agent's connection closed then, and stays closed
  bool peer_saw_close = false;              // a peer rank saw its data-plane connection close
  // The node's fence keeper reported that the agent died and every process of the rank's attempt
  // on the node is gone (agent/fence_keeper.h): what `stopped_within` otherwise waits for.
  bool stopped_by_keeper = false;
};
// Why a node's rank is lost now, if it is.
enum class NodeLoss {
  none,
  peer_saw_close,  // closed, a peer saw its data plane close, and its attempt is surely stopped
  grace_over,      // closed for the grace, and its attempt is surely stopped
};
// A connected node's rank never is. A disconnected one's is once its attempt is surely stopped (its
// keeper said so, or `stopped_within` has passed since the close) and the agent is surely gone for
// good (a peer saw its data plane close, or the grace has passed). The keeper's word settles only
// the first: waiting for the second lets a surviving rank see its peer's close and save its state
// at the loss (neuron/trainer.h) before the daemon stops it.
NodeLoss node_loss(const NodeLossSignals& signals, MonoTime now, const RecoveryConfig& config);

// Whether a lost node's rank, rather than the rank that failed first, explains an attempt's end:
// the node had already gone quiet when that failure was heard (its agent's connection had closed,
// or a heartbeat was overdue), so the survivor most likely failed because its peer vanished (a
// real job's collective sees only "connection reset"). Without a failure heard first, it does.
bool lost_node_went_first(std::optional<MonoTime> disconnected_at, MonoTime heard_at, Millis heartbeat_interval,
                          std::optional<MonoTime> first_failure_heard_at);

// The margin `stopped_within` adds to the kill grace: the keeper's signals and the kernel's
// teardown of what they killed.
Millis stopped_within_after(Millis kill_grace);

// One node of a resume (a retry after an infrastructure failure), as its pre-flight judges it.
struct ResumeNode {
  std::string name;
  bool survivor = false;  // ran the job's previous attempt and did not fail it
  std::optional<TimePoint> passed_check_at;  // its latest health check, if that passed
};
// The nodes a resume has not proven: neither survivors nor warm. Empty: it launches without a
// pre-flight; otherwise the pre-flight runs, in parallel with the choice of the checkpoint.
std::vector<std::string> unproven_nodes(const std::vector<ResumeNode>& nodes, TimePoint now, Millis warm_for);

// The nodes a resume on spares starts on, rank by rank: the survivors that can still hold a rank,
// then spares, each node once (a survivor whose rank ended before the loss was found is idle, and
// may have been made a spare meanwhile: two ranks on one node would share its attempt's slot on
// the agent, and the second would never start). Nullopt when they are fewer than `needed`.
std::optional<std::vector<std::string>> resume_nodes(const std::vector<std::string>& survivors,
                                                     const std::vector<std::string>& spares, int needed,
                                                     const std::function<bool(const std::string&)>& usable);

// An idle node that could be a spare: HEALTHY, connected, holding no attempt.
struct SpareCandidate {
  std::string_view name;  // the registry's: every idle node is a candidate before every pass
  std::optional<TimePoint> passed_check_at;
  bool under_test = false;  // its check runs: it stays a spare, and is not tested twice
};
struct SparePlan {
  std::vector<std::string> spares;   // held for resumes, the most recently checked first
  std::vector<std::string> to_test;  // those of them to test now
};
// Up to `count` candidates are spares, the most recently checked first (ties by name): they take
// no new work, only resumes (a resume after an infrastructure failure starts at once on the nodes
// that survived it and spares). A spare is tested again once half of `warm_for` has passed since
// its check, so it is still warm when a resume takes it.
SparePlan plan_warm_spares(std::vector<SpareCandidate> candidates, int count, TimePoint now, Millis warm_for);

}  // namespace trainyard::daemon
