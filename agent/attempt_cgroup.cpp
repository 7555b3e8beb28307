#include "agent/attempt_cgroup.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace trainyard::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The v1 hierarchies an attempt's cgroup spans, in the order of `Cgroups::parents()`.
constexpr std::array<std::string_view, 4> kV1Controllers = {"cpu", "memory", "pids", "freezer"};
constexpr std::size_t kV1Cpu = 0, kV1Memory = 1, kV1Pids = 2, kV1Freezer = 3;
// The v2 controllers enabled down to the attempts.
constexpr std::string_view kV2Controllers = "+cpu +memory +pids";
constexpr std::int64_t kCpuPeriodUs = 100000;
constexpr std::string_view kAttemptPrefix = "attempt-";

std::optional<std::string> read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text(64 * 1024, '\0');
  std::size_t used = 0;
  while (used < text.size()) {
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    used += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(used);
  return text;
}

// 0, or the errno of the open or the write (the kernel refuses a bad cgroup write at write time).
int write_small(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int error = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return error;
}

void write_or_throw(const std::string& path, std::string_view text) {
  if (const int error = write_small(path, text); error != 0) {
    throw std::runtime_error(fmt::format("cannot write \"{}\" to {}: {}", text, path, std::strerror(error)));
  }
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::optional<std::int64_t> parse_int(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<pid_t> members(const std::string& dir) {
  return parse_pid_list(read_small(dir + "/cgroup.procs").value_or(""));
}

void kill_each(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) ::kill(pid, SIGKILL);
}

// Waits, briefly, until `done` holds: the kernel takes a moment to freeze a cgroup, or to let the
// processes it was told to kill go.
template <typename Done>
bool wait_for(Done done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Makes `dir` and the parents it lacks below an existing cgroup directory.
void make_dirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir + ": " + ec.message());
}

void enable_v2_controllers(const std::string& dir) { write_or_throw(dir + "/cgroup.subtree_control", kV2Controllers); }

// The agent's parent in each v1 hierarchy: HIERARCHY/<its own cgroup there>/trainyard/NAME.
std::vector<std::string> v1_parents(const std::string& root, const std::string& self, const std::string& name) {
  std::vector<std::string> parents;
  for (const auto controller : kV1Controllers) {
    const std::string hierarchy = root + "/" + std::string(controller);
    if (!exists(hierarchy + "/cgroup.procs")) throw std::runtime_error("no v1 " + std::string(controller) + " hierarchy at " + hierarchy);
    const auto own = cgroup_of(self, controller);
    if (!own) throw std::runtime_error("/proc/self/cgroup names no " + std::string(controller) + " cgroup");
    parents.push_back((fs::path(hierarchy) / fs::path(*own).relative_path() / "trainyard" / name).lexically_normal());
  }
  return parents;
}

// The agent's own v2 cgroup: ROOT/<its path in /proc/self/cgroup>.
std::string v2_base(const std::string& root, const std::string& self) {
  const auto own = cgroup_of(self, "");
  if (!own) throw std::runtime_error("/proc/self/cgroup has no v2 (0::) line");
  return (fs::path(root) / fs::path(*own).relative_path()).lexically_normal();
}

std::string set_up_v2(const std::string& base, const std::string& name) {
  const std::string offered = read_small(base + "/cgroup.controllers").value_or("");
  for (const std::string_view wanted : {"cpu", "memory", "pids"}) {
    if (offered.find(wanted) == std::string::npos) {
      throw std::runtime_error(fmt::format("the {} controller is not delegated to {}", wanted, base));
    }
  }
  // v2 lets only leaves hold processes: an agent that is its cgroup's only process (a systemd
  // unit with Delegate=yes) moves to a leaf of its own before enabling controllers below it.
  if (write_small(base + "/cgroup.subtree_control", kV2Controllers) == EBUSY) {
    make_dirs(base + "/agent");
    write_or_throw(base + "/agent/cgroup.procs", "0");
    enable_v2_controllers(base);
  }
  make_dirs(base + "/trainyard");
  enable_v2_controllers(base + "/trainyard");
  const std::string parent = base + "/trainyard/" + name;
  make_dirs(parent);
  enable_v2_controllers(parent);
  return parent;
}

bool is_cgroup2(const std::string& root) {
  struct statfs fs_info {};
  if (::statfs(root.c_str(), &fs_info) != 0) throw std::runtime_error(root + ": " + std::strerror(errno));
  return fs_info.f_type == CGROUP2_SUPER_MAGIC;
}

std::string read_self() {
  const auto self = read_small("/proc/self/cgroup");
  if (!self) throw std::runtime_error("cannot read /proc/self/cgroup");
  return *self;
}

}  // namespace

std::optional<std::string> cgroup_of(std::string_view proc_cgroup, std::string_view controller) {
  while (!proc_cgroup.empty()) {
    const auto end = proc_cgroup.find('\n');
    const std::string_view line = proc_cgroup.substr(0, end);
    proc_cgroup = end == std::string_view::npos ? std::string_view() : proc_cgroup.substr(end + 1);
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view names = line.substr(first + 1, second - first - 1);
    const std::string path(line.substr(second + 1));
    if (controller.empty()) {
      if (names.empty() && line.substr(0, first) == "0") return path;
      continue;
    }
    while (!names.empty()) {
      const auto comma = names.find(',');
      if (names.substr(0, comma) == controller) return path;
      names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    }
  }
  return std::nullopt;
}

std::optional<std::int64_t> keyed_value(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ') {
      return parse_int(line.substr(key.size() + 1));
    }
  }
  return std::nullopt;
}

std::vector<pid_t> parse_pid_list(std::string_view text) {
  std::vector<pid_t> pids;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (const auto pid = parse_int(text.substr(0, end)); pid && *pid > 0) pids.push_back(static_cast<pid_t>(*pid));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return pids;
}

std::string agent_cgroup_name(const std::string& node_name, const std::string& work_dir) {
  std::uint32_t hash = 2166136261u;  // FNV-1a: stable across builds, so a restarted agent finds its leftovers
  for (const unsigned char c : work_dir) hash = (hash ^ c) * 16777619u;
  return fmt::format("{}-{:08x}", node_name, hash);
}

Cgroups Cgroups::set_up(const std::string& root, const std::string& agent_name, std::int64_t pids_max) {
  Cgroups cgroups;
  cgroups.pids_max_ = pids_max;
  try {
    const std::string self = read_self();
    if (is_cgroup2(root)) {
      cgroups.version_ = CgroupVersion::v2;
      cgroups.parents_ = {set_up_v2(v2_base(root, self), agent_name)};
    } else {
      cgroups.version_ = CgroupVersion::v1;
      const auto parents = v1_parents(root, self, agent_name);
      for (const auto& parent : parents) make_dirs(parent);
      cgroups.parents_ = parents;
    }
    cgroups.why_unavailable_.clear();
  } catch (const std::exception& e) {
    cgroups.parents_.clear();
    cgroups.why_unavailable_ = e.what();
  }
  return cgroups;
}

Cgroups Cgroups::find(const std::string& root, const std::string& agent_name) {
  Cgroups cgroups;
  try {
    const std::string self = read_self();
    cgroups.version_ = is_cgroup2(root) ? CgroupVersion::v2 : CgroupVersion::v1;
    auto parents = cgroups.version_ == CgroupVersion::v2
                       ? std::vector<std::string>{v2_base(root, self) + "/trainyard/" + agent_name}
                       : v1_parents(root, self, agent_name);
    if (std::all_of(parents.begin(), parents.end(), [](const std::string& p) { return exists(p); })) {
      cgroups.parents_ = std::move(parents);
      cgroups.why_unavailable_.clear();
    }
  } catch (const std::exception& e) {
    cgroups.why_unavailable_ = e.what();
  }
  return cgroups;
}

std::string Cgroups::describe() const {
  if (!available()) return "unavailable: " + why_unavailable_;
  return version_ == CgroupVersion::v2 ? "v2" : "v1";
}

int Cgroups::remove_leftovers() const {
  if (!available()) return 0;
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parents_.front(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || !name.starts_with(kAttemptPrefix)) continue;
    std::vector<std::string> dirs;
    for (const auto& parent : parents_) dirs.push_back(parent + "/" + name);
    AttemptCgroup leftover(version_, std::move(dirs));
    ++removed;
  }
  return removed;
}

int Cgroups::attempt_cgroups_left() const {
  int left = 0;
  std::error_code ec;
  for (const auto& parent : parents_) {
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
      if (entry.is_directory(ec) && entry.path().filename().string().starts_with(kAttemptPrefix)) ++left;
    }
  }
  return left;
}

void Cgroups::remove_all() const {
  remove_leftovers();
  for (const auto& parent : parents_) {
    if (::rmdir(parent.c_str()) != 0 && errno != ENOENT) {
      spdlog::warn("event=cgroup_not_removed path={} error=\"{}\"", parent, std::strerror(errno));
    }
  }
}

AttemptCgroup::AttemptCgroup(CgroupVersion version, std::vector<std::string> dirs)
    : version_(version), dirs_(std::move(dirs)) {}

AttemptCgroup::AttemptCgroup(const Cgroups& cgroups, std::int64_t attempt_id, const CgroupLimits& limits)
    : version_(cgroups.version()) {
  const std::string name = std::string(kAttemptPrefix) + std::to_string(attempt_id);
  try {
    for (const auto& parent : cgroups.parents()) {
      const std::string dir = parent + "/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
      dirs_.push_back(dir);
    }
    const bool v2 = version_ == CgroupVersion::v2;
    const std::string& cpu = dirs_[v2 ? 0 : kV1Cpu];
    const std::string& memory = dirs_[v2 ? 0 : kV1Memory];
    const std::string& pids = dirs_[v2 ? 0 : kV1Pids];
    if (limits.cpus > 0) {
      const std::int64_t quota = limits.cpus * kCpuPeriodUs;
      if (v2) {
        write_or_throw(cpu + "/cpu.max", fmt::format("{} {}", quota, kCpuPeriodUs));
      } else {
        write_or_throw(cpu + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
        write_or_throw(cpu + "/cpu.cfs_quota_us", std::to_string(quota));
      }
    }
    if (limits.memory_bytes > 0) {
      const std::string bytes = std::to_string(limits.memory_bytes);
      // Swap counts in the limit: with it free, a job past its memory would swap instead of stopping.
      if (v2) {
        write_or_throw(memory + "/memory.max", bytes);
        if (exists(memory + "/memory.swap.max")) write_or_throw(memory + "/memory.swap.max", "0");
      } else {
        write_or_throw(memory + "/memory.limit_in_bytes", bytes);
        if (exists(memory + "/memory.memsw.limit_in_bytes")) write_or_throw(memory + "/memory.memsw.limit_in_bytes", bytes);
      }
    }
    if (limits.pids > 0) write_or_throw(pids + "/pids.max", std::to_string(limits.pids));
    for (const auto& dir : dirs_) {
      const std::string procs = dir + "/cgroup.procs";
      const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) throw std::runtime_error("cannot open " + procs + ": " + std::strerror(errno));
      join_fds_.push_back(fd);
    }
  } catch (...) {
    close_join_fds();
    remove();
    throw;
  }
}

AttemptCgroup::~AttemptCgroup() {
  close_join_fds();
  remove();
}

void AttemptCgroup::close_join_fds() {
  for (const int fd : join_fds_) ::close(fd);
  join_fds_.clear();
}

bool AttemptCgroup::kill_all() {
  if (dirs_.empty()) return true;
  const bool v2 = version_ == CgroupVersion::v2;
  const std::string& dir = dirs_[v2 ? 0 : kV1Freezer];
  const auto deadline = std::chrono::steady_clock::now() + 1s;
  for (auto pids = members(dir); !pids.empty(); pids = members(dir)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (v2 && write_small(dir + "/cgroup.kill", "1") == 0) {
      // The kernel kills every member, and whatever they fork meanwhile.
    } else if (v2) {
      kill_each(pids);  // before 5.14 there is no cgroup.kill
    } else {
      // Frozen, no member can fork a new one between reading the list and the kills.
      if (write_small(dir + "/freezer.state", "FROZEN") == 0) {
        wait_for([&] { return read_small(dir + "/freezer.state").value_or("").starts_with("FROZEN"); }, 100ms);
      }
      kill_each(members(dir));
      write_small(dir + "/freezer.state", "THAWED");
    }
    wait_for([&] { return members(dir).empty(); }, 50ms);
  }
  return true;
}

std::vector<pid_t> AttemptCgroup::processes() const {
  return dirs_.empty() ? std::vector<pid_t>() : members(dirs_[0]);
}

CgroupUsage AttemptCgroup::usage() const {
  CgroupUsage usage;
  if (dirs_.empty()) return usage;
  if (version_ == CgroupVersion::v2) {
    usage.peak_memory_bytes = parse_int(read_small(dirs_[0] + "/memory.peak").value_or(""));
    usage.oom_kills = keyed_value(read_small(dirs_[0] + "/memory.events").value_or(""), "oom_kill").value_or(0);
  } else {
    usage.peak_memory_bytes = parse_int(read_small(dirs_[kV1Memory] + "/memory.max_usage_in_bytes").value_or(""));
    usage.oom_kills = keyed_value(read_small(dirs_[kV1Memory] + "/memory.oom_control").value_or(""), "oom_kill").value_or(0);
  }
  return usage;
}

void AttemptCgroup::remove() {
  if (removed_) return;
  removed_ = true;
  if (!kill_all()) spdlog::warn("event=cgroup_not_emptied path={}", dirs_.empty() ? "" : dirs_.front());
  for (const auto& dir : dirs_) {
    // The last member's exit may lag its leaving the list by a moment.
    if (!wait_for([&] { return ::rmdir(dir.c_str()) == 0 || errno == ENOENT; }, 500ms)) {
      spdlog::warn("event=cgroup_not_removed path={} error=\"{}\"", dir, std::strerror(errno));
    }
  }
}

}  // namespace trainyard::agent
