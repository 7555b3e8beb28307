#include "agent/agent_deps.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "agent/command_run.h"
#include "agent/simulated_run.h"

namespace trainyard::agent {
namespace {

class SteadyTimer final : public Timer {
 public:
  explicit SteadyTimer(boost::asio::io_context& io) : timer_(io) {}
  void start(std::chrono::milliseconds after, std::function<void()> fire) override {
    timer_.expires_after(after);
    timer_.async_wait([fire = std::move(fire)](const boost::system::error_code& ec) {
      if (!ec) fire();
    });
  }
  void cancel() override { timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
};

}  // namespace

WebSocketDaemonLinks::WebSocketDaemonLinks(boost::asio::io_context& io, net::TlsContext tls)
    : io_(io), tls_(std::move(tls)) {}

std::shared_ptr<net::WebSocketPeer> WebSocketDaemonLinks::connect(const std::string& server,
                                                                  const std::string& bearer_token,
                                                                  net::WebSocketClientHandlers handlers) {
  return net::WebSocketClient::connect(io_, server + "/v1/agent/connect",
                                       {{"Authorization", "Bearer " + bearer_token}}, std::move(handlers), tls_);
}

std::unique_ptr<Timer> SteadyTimers::make() { return std::make_unique<SteadyTimer>(io_); }

LocalWorkloads::LocalWorkloads(boost::asio::io_context& io, neuron::NeuronDevice& device,
                               neuron::DataPlaneServer& data_plane, ProcessRegistry& processes,
                               JobAccounts job_accounts, Cgroups cgroups, std::chrono::milliseconds collective_timeout)
    : io_(io),
      device_(device),
      data_plane_(data_plane),
      processes_(processes),
      job_accounts_(std::move(job_accounts)),
      cgroups_(std::move(cgroups)),
      collective_timeout_(collective_timeout) {}

LocalWorkloads::~LocalWorkloads() { cgroups_.remove_all(); }

PostToIo LocalWorkloads::post_to_io() {
  return [this](std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); };
}

std::unique_ptr<AttemptRun> LocalWorkloads::start_run(const LaunchMsg& launch, const std::string& attempt_dir,
                                                      int core, ExitCallback on_exit) {
  if (launch.kind == JobKind::command) {
    return std::make_unique<CommandRun>(launch, attempt_dir,
                                        job_accounts_.account_for(launch.user, launch.job_id, attempt_dir), cgroups_,
                                        processes_, io_, std::move(on_exit));
  }
  SimulatedRunContext context{device_, data_plane_, device_.faults().link, core, collective_timeout_};
  return std::make_unique<SimulatedRun>(launch, attempt_dir, context, post_to_io(), std::move(on_exit));
}

std::unique_ptr<HealthTask> LocalWorkloads::start_health_check(const HealthCheckMsg& request, HealthTask::Done done) {
  return std::make_unique<HealthTask>(request, HealthTaskContext{device_, data_plane_, collective_timeout_},
                                      post_to_io(), std::move(done));
}

}  // namespace trainyard::agent
