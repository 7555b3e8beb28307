#include "neuron/trainer.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <type_traits>

#include "neuron/mlp.h"
#include "neuron/optimizer.h"
#include "neuron/spike_detector.h"

namespace trainyard::neuron {
namespace {

using checkpoint::CheckpointWriter;
using checkpoint::TrainingState;
static_assert(std::is_same_v<RngState, decltype(TrainingState::rounding_rng)>, "a checkpoint holds the rounding stream");

constexpr std::uint64_t kRoundingStream = 3;  // the parameter-store rounding stream of a seed
constexpr double kMaxGradNorm = 1.0;

using Clock = std::chrono::steady_clock;

// Matmul operands are bf16 casts (nearest even) in both bf16 precisions; see trainer.h.
Rounding operand_rounding(Precision p) { return p == Precision::fp32 ? Rounding::none : Rounding::nearest_even; }

TrainingState fresh_state(const WorkloadSpec& w, const ParameterLayout& layout, int world_size) {
  TrainingState s;
  s.dims = layout.dims();
  s.world_size = world_size;
  s.params = init_student(layout, w.seed);
  s.adam_m.assign(s.params.size(), 0.0f);
  s.adam_v.assign(s.params.size(), 0.0f);
  Rng rounding(w.seed, kRoundingStream);
  round_bf16(s.params, operand_rounding(w.precision), rounding);
  s.rounding_rng = rounding.state();
  return s;
}

// Fills dy with dLoss/dout scaled by `scale` and returns the scaled sum of per-sample losses
// (mean squared error over the outputs).
double scaled_loss_and_gradient(ConstMatrixView out, const std::vector<float>& target, double scale,
                                std::vector<float>& dy) {
  const std::size_t size = static_cast<std::size_t>(out.rows) * out.cols;
  dy.resize(size);
  const auto per_output = static_cast<float>(scale * 2.0 / out.cols);
  double loss_sum = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const float error = out.data[i] - target[i];
    loss_sum += static_cast<double>(error) * error;
    dy[i] = per_output * error;
  }
  return loss_sum * scale / out.cols;
}

// Weights decay, biases do not (the usual AdamW parameter groups).
void apply_adamw(TrainingState& s, const ParameterLayout& layout, std::span<const float> grads, double lr) {
  const std::span<float> params(s.params), m(s.adam_m), v(s.adam_v);
  const AdamWConfig config;
  for (const LayerSlice& layer : layout.layers()) {
    const std::size_t weights = static_cast<std::size_t>(layer.in) * layer.out;
    const std::size_t bias = static_cast<std::size_t>(layer.out);
    adamw_update(params.subspan(layer.weights, weights), grads.subspan(layer.weights, weights),
                 m.subspan(layer.weights, weights), v.subspan(layer.weights, weights), lr, s.step + 1,
                 config.weight_decay, config);
    adamw_update(params.subspan(layer.bias, bias), grads.subspan(layer.bias, bias), m.subspan(layer.bias, bias),
                 v.subspan(layer.bias, bias), lr, s.step + 1, 0.0, config);
  }
}

// Stretches a step's computation to `step_ms` times the core's slowdown, the device time of a
// step on real hardware, before the all-reduce, so a slow rank's peers wait for it there as they
// would in a real gang; returns early when stopped.
void pace(Clock::time_point step_start, int step_ms, double slowdown, const std::stop_token& stop) {
  if (step_ms <= 0) return;
  std::mutex mutex;
  std::condition_variable_any never_notified;
  std::unique_lock lock(mutex);
  const auto device_time = std::chrono::duration<double, std::milli>(step_ms * slowdown);
  never_notified.wait_until(lock, stop, step_start + std::chrono::duration_cast<Clock::duration>(device_time),
                            [] { return false; });
}

// A fresh run's state, or the checkpoint's when resuming; a checkpoint that does not verify or
// does not fit the workload's model is refused with the reason.
Result<TrainingState> initial_state(const WorkloadSpec& w, const ParameterLayout& layout, int world_size,
                                    const std::optional<std::filesystem::path>& resume_from) {
  if (!resume_from) return fresh_state(w, layout, world_size);
  Result<TrainingState> loaded = checkpoint::load_checkpoint(*resume_from);
  if (loaded && loaded->dims != layout.dims()) return Error::invalid_input("", "model shape differs from the workload");
  return loaded;
}

// Forward and backward of one rank's shard: fills `reduced` with the rank's share of the
// global-mean gradient followed by its share of the global-mean loss (see trainer.h).
class ShardStep {
 public:
  ShardStep(const WorkloadSpec& w, const ParameterLayout& layout, int world, int rank)
      : w_(w),
        layout_(layout),
        teacher_(w),
        pass_(layout),
        shard_begin_(chunk_begin(static_cast<std::size_t>(w.global_batch), world, rank)),
        shard_(static_cast<int>(chunk_begin(static_cast<std::size_t>(w.global_batch), world, rank + 1) - shard_begin_)),
        gradient_scale_(static_cast<double>(world) / w.global_batch) {}

  void compute(NeuronCore& core, const TrainingState& state, std::span<float> reduced, std::atomic<Phase>& phase,
               const std::stop_token& stop) {
    phase = Phase::forward;
    teacher_.make_batch(state.data_position + shard_begin_, shard_, x_, y_);
    const ConstMatrixView out = pass_.forward(core, state.params, {x_.data(), shard_, layout_.input_dim()},
                                              operand_rounding(w_.precision), stop);
    reduced.back() = static_cast<float>(scaled_loss_and_gradient(out, y_, gradient_scale_, dy_));

    phase = Phase::backward;
    pass_.backward(core, state.params, dy_, reduced.first(layout_.size()), operand_rounding(w_.precision), stop);
  }

 private:
  const WorkloadSpec& w_;
  const ParameterLayout& layout_;
  const Teacher teacher_;
  StudentPass pass_;
  const std::size_t shard_begin_;
  const int shard_;
  const double gradient_scale_;
  std::vector<float> x_, y_, dy_;
};

RunResult ended(RunOutcome outcome, std::int64_t step, std::string failure_class, std::string reason) {
  return {outcome, step, std::move(failure_class), std::move(reason)};
}

}  // namespace

std::string to_string(Phase p) {
  switch (p) {
    case Phase::starting: return "starting";
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::all_reduce: return "all-reduce";
    case Phase::optimizer: return "optimizer";
    case Phase::checkpoint: return "checkpoint";
    case Phase::finished: return "finished";
  }
  return "starting";
}

Trainer::Trainer(WorkloadSpec workload, Communicator& comm, NeuronCore& core, TrainerOptions options)
    : workload_(std::move(workload)), comm_(comm), core_(core), options_(std::move(options)) {}

RunResult Trainer::run(std::stop_token stop) {
  RunResult result;
  try {
    result = train(stop);
  } catch (const OperationCancelled&) {
    result = ended(RunOutcome::cancelled, step(), "cancelled", "cancelled inside a device operation in phase " + to_string(phase()));
  } catch (const CoreCrashed& e) {
    result = ended(RunOutcome::failed, step(), "device_error", e.what());
  } catch (const CollectiveError& e) {
    result = ended(RunOutcome::failed, step(), "collective_timeout", e.what());
    if (e.peer_closed()) result.peer_closed_rank = e.peer_rank();
  }
  phase_ = Phase::finished;
  spdlog::info("event=training_ended rank={} step={} outcome={} reason=\"{}\"", comm_.rank(), result.steps_completed,
               result.failure_class.empty() ? "completed" : result.failure_class, result.reason);
  return result;
}

RunResult Trainer::train(const std::stop_token& stop) {
  const WorkloadSpec& w = workload_;
  const ParameterLayout layout = student_layout(w);
  const int world = comm_.world_size();
  const int rank = comm_.rank();

  Result<TrainingState> initial = initial_state(w, layout, world, options_.resume_from);
  if (!initial) {
    return ended(RunOutcome::failed, 0, "checkpoint_invalid",
                 options_.resume_from->string() + ": " + initial.error().message);
  }
  TrainingState& state = *initial;
  spdlog::info("event=training_started rank={} world={} step={} steps={} precision={} resumed_from=\"{}\" written_by_world={}",
               rank, world, state.step, w.steps, to_string(w.precision),
               options_.resume_from ? options_.resume_from->string() : "", state.world_size);
  state.world_size = world;
  step_ = state.step;

  const bool checkpoints = w.checkpoint_every > 0 && !options_.checkpoint_root.empty();
  std::unique_ptr<CheckpointWriter> writer;
  const auto make_writer = [&] {
    writer = std::make_unique<CheckpointWriter>(options_.checkpoint_root, w.keep_checkpoints, options_.on_checkpoint,
                                                options_.checkpoint_owner);
  };
  if (rank == 0 && checkpoints) make_writer();  // the periodic writer; other ranks write only at a peer's loss

  ShardStep shard_step(w, layout, world, rank);
  Rng rounding = Rng::from_state(state.rounding_rng);
  SpikeDetector spikes(w.spike_threshold);
  std::vector<float> reduced(layout.size() + 1);  // gradients, then the loss
  const std::span<float> grads(reduced.data(), layout.size());

  std::int64_t last_saved_step = state.step;
  Clock::duration busy{};
  // Stopped or broken between or inside a step, the state is still that of the last completed step:
  // writes it and waits. False when none is configured or that step is saved already.
  const auto save_now = [&] {
    if (!checkpoints || state.step == last_saved_step) return false;
    if (!writer) make_writer();
    phase_ = Phase::checkpoint;
    state.rounding_rng = rounding.state();
    const Clock::time_point before = Clock::now();
    writer->submit(state);
    writer->wait_idle();
    add_checkpoint_time(Clock::now() - before);
    last_saved_step = state.step;
    return true;
  };
  const auto save_at_stop = [&] {
    if (rank == 0 && options_.checkpoint_at_stop && options_.checkpoint_at_stop->load()) save_now();
  };

  while (state.step < w.steps) {
    if (stop.stop_requested()) {
      save_at_stop();
      return ended(RunOutcome::cancelled, state.step, "cancelled", "stop requested");
    }
    const Clock::time_point started = Clock::now();

    try {
      shard_step.compute(core_, state, reduced, phase_, stop);
      pace(started, w.step_ms, core_.slowdown(), stop);
      if (stop.stop_requested()) {
        save_at_stop();
        return ended(RunOutcome::cancelled, state.step, "cancelled", "stop requested");
      }
      busy += Clock::now() - started;
      phase_ = Phase::all_reduce;
      comm_.all_reduce_sum(reduced);
    } catch (const CollectiveError& e) {
      if (stop.stop_requested()) {
        save_at_stop();
      } else if (e.peer_closed() && saves_at_peer_loss(rank, e.peer_rank()) && save_now()) {
        spdlog::info("event=checkpoint_at_peer_loss rank={} peer={} step={}", rank, e.peer_rank(), state.step);
      }
      throw;
    } catch (...) {
      if (stop.stop_requested()) save_at_stop();
      throw;
    }
    for (float& value : reduced) value /= static_cast<float>(world);

    const double loss = reduced.back();
    if (!std::isfinite(loss)) {
      return ended(RunOutcome::nan_loss, state.step, "nan_loss", "loss is " + std::to_string(loss) + " at step " + std::to_string(state.step + 1));
    }

    phase_ = Phase::optimizer;
    StepMetrics metrics;
    metrics.loss = loss;
    metrics.grad_norm = clip_global_norm(grads, kMaxGradNorm);
    if (!std::isfinite(metrics.grad_norm)) {
      return ended(RunOutcome::nan_loss, state.step, "nan_loss", "gradient norm is not finite at step " + std::to_string(state.step + 1));
    }
    metrics.lr = learning_rate(w, state.step);
    apply_adamw(state, layout, grads, metrics.lr);
    round_bf16(state.params, storage_rounding(w.precision), rounding);
    metrics.param_norm = l2_norm(state.params);
    step_ = ++state.step;
    state.data_position += static_cast<std::uint64_t>(w.global_batch);

    Clock::duration handing_off{};
    if (writer && state.step % w.checkpoint_every == 0) {
      phase_ = Phase::checkpoint;
      state.rounding_rng = rounding.state();
      const Clock::time_point before = Clock::now();
      writer->submit(state);  // a copy: training goes on while it is written (it waits if one is still pending)
      handing_off = Clock::now() - before;
      last_saved_step = state.step;
    }
    add_checkpoint_time(handing_off);

    metrics.step = state.step;
    metrics.busy_ms = std::chrono::duration_cast<std::chrono::milliseconds>(busy).count();
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    metrics.samples_per_s = seconds > 0 ? w.global_batch / seconds : 0;
    const SpikeObservation spike = spikes.observe(state.step, metrics.grad_norm);
    metrics.spike = spike.spike_started;
    metrics.spike_steps_to_return = spike.steps_to_return;
    if (options_.on_step) options_.on_step(metrics);
  }
  if (writer) {
    phase_ = Phase::checkpoint;
    const Clock::time_point before = Clock::now();
    writer->wait_idle();  // the last checkpoint is durable before the run reports success
    add_checkpoint_time(Clock::now() - before);
  }
  return ended(RunOutcome::completed, state.step, "", "");
}

}  // namespace trainyard::neuron
