#include "agent/agent_deps.h"

#include <boost/asio/post.hpp>
#include <charconv>
#include <system_error>

#include "agent/command_run.h"
#include "agent/simulated_run.h"

namespace trainyard::agent {

WebSocketDaemonLinks::WebSocketDaemonLinks(boost::asio::io_context& io, net::TlsContext tls)
    : io_(io), tls_(std::move(tls)) {}

std::shared_ptr<net::WebSocketPeer> WebSocketDaemonLinks::connect(const std::string& server,
                                                                  const std::string& bearer_token,
                                                                  net::WebSocketClientHandlers handlers) {
  return net::WebSocketClient::connect(io_, server + "/v1/agent/connect",
                                       {{"Authorization", "Bearer " + bearer_token}}, std::move(handlers), tls_);
}

LocalWorkloads::LocalWorkloads(boost::asio::io_context& io, neuron::NeuronDevice& device,
                               neuron::DataPlaneServer& data_plane, ProcessRegistry& processes,
                               JobAccounts job_accounts, Cgroups cgroups, std::chrono::milliseconds collective_timeout,
                               std::string job_python_dir, JobNetworkHost network_host)
    : io_(io),
      device_(device),
      data_plane_(data_plane),
      processes_(processes),
      job_accounts_(std::move(job_accounts)),
      cgroups_(std::move(cgroups)),
      collective_timeout_(collective_timeout),
      job_python_dir_(std::move(job_python_dir)),
      network_host_(std::move(network_host)) {}

LocalWorkloads::~LocalWorkloads() { cgroups_.remove_all(); }

PostToIo LocalWorkloads::post_to_io() {
  return [this](std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); };
}

namespace {

// Whose account a job's ranks run under by default: an array's tasks share the array's (the id of
// its task 0, which the daemon sets as TRAINYARD_ARRAY_JOB_ID on every task and on no other launch),
// so the tasks of one submission can share files; every other job has its own.
std::int64_t account_job_of(const LaunchMsg& launch) {
  const auto it = launch.command.env.find("TRAINYARD_ARRAY_JOB_ID");
  if (it == launch.command.env.end()) return launch.job_id;
  std::int64_t array_job = 0;
  const auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), array_job);
  const bool whole = error == std::errc() && end == it->second.data() + it->second.size();
  return whole && array_job > 0 && array_job <= launch.job_id ? array_job : launch.job_id;
}

}  // namespace

std::unique_ptr<AttemptRun> LocalWorkloads::start_run(const LaunchMsg& launch, const std::string& cluster,
                                                      const std::string& attempt_dir, int core, ExitCallback on_exit) {
  const std::int64_t account_job = account_job_of(launch);
  auto account = job_accounts_.account_for(launch.user, cluster, account_job, launch.attempt_id, attempt_dir);
  if (account) job_accounts_.claim(*account, cluster, account_job);
  if (launch.kind == JobKind::command) {
    return std::make_unique<CommandRun>(launch, attempt_dir, job_python_dir_, std::move(account), cgroups_,
                                        &network_host_, processes_, io_, std::move(on_exit));
  }
  SimulatedRunContext context{device_,  data_plane_, core, collective_timeout_, std::move(account),
                              cgroups_, processes_,  io_};
  return std::make_unique<SimulatedRun>(launch, attempt_dir, std::move(context), std::move(on_exit));
}

std::unique_ptr<HealthTask> LocalWorkloads::start_health_check(const HealthCheckMsg& request, HealthTask::Done done) {
  return std::make_unique<HealthTask>(request, HealthTaskContext{device_, data_plane_, collective_timeout_},
                                      post_to_io(), std::move(done));
}

}  // namespace trainyard::agent
