#include "agent/health_task.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "agent/accelerator_suite.h"
#include "agent/collective_suite.h"
#include "healthcheck/health_json.h"
#include "neuron/tcp_communicator.h"

namespace trainyard::agent {
namespace {
// Health tests meet on their own data-plane channel, so they never mix with an attempt's traffic.
constexpr int kHealthChannel = 1;
// A health check's ranks are asked at once, so their ring forms within this unless a peer is not
// what it claims (a data address that another service answers): then the check fails naming it.
constexpr std::chrono::milliseconds kHealthRingFormTimeout{10'000};
}  // namespace

HealthTask::HealthTask(HealthCheckMsg request, HealthTaskContext context, PostToIo post, Done done)
    : request_(std::move(request)), context_(context) {
  thread_ = std::jthread([this, post = std::move(post), done = std::move(done)](std::stop_token) {
    HealthResultMsg result = run();
    post([done, result = std::move(result)]() mutable { done(std::move(result)); });
  });
}

HealthTask::~HealthTask() {
  if (thread_.joinable()) thread_.join();
}

HealthResultMsg HealthTask::run() const {
  HealthResultMsg out;
  out.task_id = request_.task_id;
  try {
    if (request_.suite == HealthSuite::accelerator) {
      const auto options = healthcheck::accelerator_suite_options_from_json(request_.options, "options");
      out.result = healthcheck::to_json(run_accelerator_suite(context_.device, options));
    } else {
      const auto options = healthcheck::collective_suite_options_from_json(request_.options, "options");
      neuron::TcpCommunicatorOptions comm;
      comm.attempt_id = request_.session;
      comm.rank = request_.rank;
      comm.peers = request_.peers;
      comm.timeout = context_.collective_timeout;
      comm.connect_timeout = std::min(context_.collective_timeout, kHealthRingFormTimeout);
      comm.link = context_.device.faults().link;
      comm.channel = kHealthChannel;
      comm.secret = request_.session_secret;
      // Every refusal while the suite runs counts: an attempt's stale rank is as foreign to the
      // check as a flood, and either makes a transport failure say nothing about this node.
      const std::size_t refused_before = context_.data_plane.rejected_connections();
      healthcheck::RankCollectiveResult result;
      {
        neuron::TcpCommunicator communicator(comm, context_.data_plane);
        result = run_collective_suite(communicator, options);
      }
      result.refused_connections = context_.data_plane.rejected_connections() - refused_before;
      out.result = healthcheck::to_json(result);
    }
  } catch (const std::exception& e) {
    out.result = nullptr;
    out.error = std::string("the ") + to_string(request_.suite) + " suite could not run: " + e.what();
    spdlog::warn("event=health_task_failed task={} suite={} error=\"{}\"", request_.task_id, to_string(request_.suite),
                 e.what());
  }
  return out;
}

}  // namespace trainyard::agent
