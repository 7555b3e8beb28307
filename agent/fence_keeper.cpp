#include "agent/fence_keeper.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <spdlog/spdlog.h>

#include "agent/fence_keeper_process.h"
#include "agent/process_spawn.h"
#include "agent/rank_channel.h"

namespace trainyard::agent {

ProcessFenceKeeper::ProcessFenceKeeper(boost::asio::io_context& io, const FenceKeeperPlace& place) : exit_watch_(io) {
  auto [agent_end, keeper_end] = make_rank_channel();
  channel_ = std::move(agent_end);
  std::string exe = "/proc/self/exe";
  std::string flag = kFenceKeeperFlag;
  char* argv[] = {exe.data(), flag.data(), nullptr};
  std::string path = "PATH=/usr/bin:/bin";
  char* envp[] = {path.data(), nullptr};
  SpawnPlan plan{argv, envp, STDERR_FILENO, "/", nullptr};
  plan.channel_fd = keeper_end.fd();
  plan.outlives_agent = true;  // a dead agent's attempts are what it is for
  SpawnFailure failure;
  const pid_t pid = spawn_process(plan, failure);
  if (pid < 0) throw std::runtime_error(std::string("cannot start the fence keeper: ") + std::strerror(-pid));
  if (failure.stage != SpawnStage::none) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error(std::string("cannot start the fence keeper: ") + failure.what + ": " +
                             std::strerror(failure.error));
  }
  pid_ = pid;
  const StopReportTarget& daemons = place.daemons;
  send({{"start",
         {{"node", place.node},
          {"processes_dir", place.processes_dir},
          {"cgroup_root", place.cgroup_root},
          {"cgroup_name", place.cgroup_name},
          {"daemons",
           {{"servers", daemons.servers},
            {"ca_file", daemons.tls.ca_file},
            {"cert_file", daemons.tls.cert_file},
            {"key_file", daemons.tls.key_file},
            {"credential_file", daemons.credential_file}}}}}});
  spdlog::info("event=fence_keeper_started node={} pid={}", place.node, pid_);
  watch_exit();
}

ProcessFenceKeeper::~ProcessFenceKeeper() {
  if (exited_) return;
  send({{"stand_down", Json::object()}});
  exit_watch_.cancel();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void ProcessFenceKeeper::send(const Json& message) {
  // Never waits on the keeper: it reads at once, and a message it missed is followed by the next ack's.
  if (!exited_ && !send_channel_message(channel_.fd(), message, -1, true)) {
    spdlog::warn("event=fence_keeper_unreachable pid={}", pid_);
  }
}

void ProcessFenceKeeper::running(const std::vector<AttemptId>& attempts, std::chrono::milliseconds grace) {
  send({{"running", {{"attempts", attempts}, {"grace_ms", grace.count()}}}});
}

void ProcessFenceKeeper::keep_until(std::chrono::steady_clock::time_point deadline) {
  const auto at = std::chrono::duration_cast<std::chrono::milliseconds>(deadline.time_since_epoch()).count();
  send({{"deadline", {{"at_steady_ms", at}}}});
}

void ProcessFenceKeeper::clear() { send({{"clear", Json::object()}}); }

void ProcessFenceKeeper::watch_exit() {
  const int pidfd = open_pidfd(pid_);
  if (pidfd < 0) return;  // reaped by the destructor instead
  exit_watch_.assign(pidfd);
  exit_watch_.async_wait(boost::asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    exited_ = true;
    // The agent still fences itself; only a frozen or dead agent's attempts are now unguarded.
    spdlog::error("event=fence_keeper_exited pid={} status={} effect=\"a frozen or dead agent's attempts are not "
                  "stopped by the fence\"",
                  pid_, status);
  });
}

}  // namespace trainyard::agent
