#pragma once
// The data-parallel training kernel (docs/DESIGN.md "The simulated node"). Each rank of an
// attempt runs one `Trainer` on one NeuronCore; ranks meet only in the gradient all-reduce.
//
// One step, with B the global batch and n the data-parallel degree (the communicator's world
// size: one rank per node, however many cores the node has):
// 1. forward: rank r takes global samples [pos + chunk_begin(B,n,r), pos + chunk_begin(B,n,r+1))
//    and runs the student; the per-sample loss is the mean squared error over outputs;
// 2. backward: the rank's gradient of (n / B) * (sum of its samples' losses); the loss sum, scaled
//    the same way, rides in one extra element of the gradient buffer;
// 3. all-reduce (sum), then divide by n: sum_r (n/B) * S_r / n = (1/B) * sum of all B samples, the
//    exact global-batch mean even when B is not divisible by n. (With equal shards, each rank's term
//    is simply the mean over its own shard.)
// 4. optimizer: clip to global norm 1.0, AdamW with the cosine schedule; every rank does the same
//    update on the same replicated state, so parameters stay identical across ranks.
//
// Precision (what is rounded where):
// - fp32: nothing.
// - bf16 / bf16_sr: parameters are STORED in bf16 (no fp32 master copy): the initial values and
//   the result of every AdamW update are rounded to bf16, to nearest even (bf16) or stochastically
//   (bf16_sr, from a generator seeded by the workload seed that every rank advances identically and
//   checkpoints save). Every matmul operand (weights, activations, back-propagated gradients) is
//   cast to bf16 with round-to-nearest-even, accumulation is fp32, and bias adds, ReLU, the loss,
//   gradients, the all-reduce and AdamW moments are fp32. With small learning rates most AdamW
//   updates are below half a bf16 ulp of the weight, so round-to-nearest drops them and training
//   stalls, while stochastic rounding keeps them in expectation.
//
// Failure as values: `run` returns how the run ended; the attempt maps `failure_class` onto its
// classification. Threading contract: `run` blocks the calling (training) thread; `phase`, `step`
// may be read from any thread; `on_step` runs on the training thread, `on_checkpoint` on the
// checkpoint writer's thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "checkpoint/checkpoint.h"
#include "neuron/communicator.h"
#include "neuron/device.h"
#include "proto/job.h"

namespace trainyard::neuron {

enum class Phase { starting, forward, backward, all_reduce, optimizer, checkpoint, finished };
std::string to_string(Phase p);

struct StepMetrics {
  std::int64_t step = 0;  // 1-based: updates completed including this one
  double loss = 0;        // global-batch mean, before this step's update
  double grad_norm = 0;   // before clipping
  double param_norm = 0;  // after the update
  double lr = 0;
  double samples_per_s = 0;
  // The device time of this run's steps so far: each step's forward and backward, paced to the
  // workload's step time (times the core's slowdown), not the wait in the all-reduce for slower
  // ranks. Ranks in lockstep share their step time; this is what tells a straggler apart.
  std::int64_t busy_ms = 0;
  bool spike = false;                                  // this step started a grad-norm spike
  std::optional<std::int64_t> spike_steps_to_return;  // this step ended one after that many steps
};

enum class RunOutcome { completed, cancelled, nan_loss, failed };

struct RunResult {
  RunOutcome outcome = RunOutcome::completed;
  std::int64_t steps_completed = 0;  // absolute step reached (a resumed run starts past 0)
  std::string failure_class;         // "", "cancelled", "nan_loss", "device_error", "collective_timeout", "checkpoint_invalid"
  std::string reason;
  std::optional<int> peer_closed_rank;  // a collective failed because this rank's connection closed
};

// Whether `rank` writes a checkpoint of its last completed step when a collective fails because
// `closed_peer`'s connection closed (its process is likely gone): the surviving ranks hold the
// whole replicated state, so one write saves the steps since the last periodic checkpoint. The
// writer is rank 0, or rank 1 when rank 0 is the peer that closed; a rank that sees a close later
// in the cascade (a neighbour that gave up) is not, so one rank writes in the usual case, and a
// second writer of the same step (rank 1 seeing rank 0 exit after rank 0 wrote) writes the same
// replicated bytes.
inline bool saves_at_peer_loss(int rank, int closed_peer) { return rank == (closed_peer == 0 ? 1 : 0); }

struct TrainerOptions {
  std::filesystem::path checkpoint_root;              // empty: no checkpoints
  std::optional<std::filesystem::path> resume_from;   // a checkpoint directory
  std::function<void(const StepMetrics&)> on_step;
  std::function<void(const checkpoint::CheckpointWriteResult&)> on_checkpoint;
  std::int64_t checkpoint_owner = 0;  // the attempt id checkpoint writes are fenced by (checkpoint.h); 0: none
  // When set by the time a stop is requested, rank 0 writes (and waits for) a checkpoint of the
  // last step it completed before it returns: the run is being requeued or preempted, not failed.
  // (A peer's loss makes one surviving rank write one as well: saves_at_peer_loss.)
  const std::atomic<bool>* checkpoint_at_stop = nullptr;
};

class Trainer {
 public:
  Trainer(WorkloadSpec workload, Communicator& comm, NeuronCore& core, TrainerOptions options);

  RunResult run(std::stop_token stop);

  Phase phase() const { return phase_.load(); }
  std::int64_t step() const { return step_.load(); }
  // How long checkpoint writes have held up training so far: the hand-off of each snapshot to the
  // writer (a copy, or a wait while the previous write is pending), and the wait for the last write.
  std::int64_t checkpoint_ms() const { return checkpoint_us_.load() / 1000; }

 private:
  RunResult train(const std::stop_token& stop);
  void add_checkpoint_time(std::chrono::steady_clock::duration d) {
    checkpoint_us_ += std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  }

  const WorkloadSpec workload_;
  Communicator& comm_;
  NeuronCore& core_;
  const TrainerOptions options_;
  std::atomic<Phase> phase_{Phase::starting};
  std::atomic<std::int64_t> step_{0};
  std::atomic<std::int64_t> checkpoint_us_{0};
};

}  // namespace trainyard::neuron
