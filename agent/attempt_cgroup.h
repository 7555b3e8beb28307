#pragma once
// A cgroup per attempt (docs/DESIGN.md "Job accounts"): what a command job's processes may use, and the handle that
// ends all of them. A process group is not enough: `setsid` leaves it, and nothing in it bounds
// CPU, memory or the number of processes.
//
// Where: under the agent's own cgroup (as /proc/self/cgroup names it, so a systemd unit with
// Delegate=yes holds its jobs), `trainyard/<node>-<hash of the work dir>/attempt-<id>`; the hash
// keeps two agents of one node name on a host (integration tests) from touching each other's.
// Both cgroup versions, as Slurm's cgroup plugin: v2 when /sys/fs/cgroup is cgroup2 (one
// hierarchy; the controllers are enabled down the path, and an agent alone in its own cgroup moves
// itself to a leaf `agent` beside `trainyard`, since v2 lets only leaves hold processes), else v1,
// with the cpu, memory, pids and freezer hierarchies mounted at /sys/fs/cgroup/<controller>.
//
// Limits: CPU time of `cores_per_node` CPUs (a quota, not a cpuset: NeuronCores are not CPUs, and
// a quota needs no bookkeeping of which CPUs concurrent attempts hold), the job's memory_mb for
// RAM and swap together (no limit without one), and --job-pids-max processes and threads.
//
// The child joins before exec: the agent opens each cgroup.procs and the child writes "0" (itself)
// to it while still root (agent/process_spawn.h), so no process of the job ever runs outside.
// At the attempt's end every process in it is killed (v2: cgroup.kill; v1: freeze, SIGKILL each
// process, thaw, until none is left, so none forks meanwhile), its peak memory and OOM kills are
// read, and it is removed.
//
// Without permission (not root, a read-only or absent cgroupfs, a controller missing) the agent
// runs jobs as before, in process groups, and says why once at start and to the daemon
// (GET /v1/nodes/NAME "cgroups").
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::agent {

enum class CgroupVersion { v1, v2 };

struct CgroupLimits {
  int cpus = 0;                   // CPU time of this many CPUs; 0: no limit
  std::int64_t memory_bytes = 0;  // RAM and swap together; 0: no limit
  std::int64_t pids = 0;          // processes and threads; 0: no limit
};

struct CgroupUsage {
  std::optional<std::int64_t> peak_memory_bytes;  // nullopt: the kernel does not say
  std::int64_t oom_kills = 0;
};

// The cgroup path of `controller` in a /proc/PID/cgroup text ("4:memory:/a/b" -> "/a/b"; a line
// may name several controllers, "3:cpu,cpuacct:/"); the empty controller names v2's "0::/path".
// nullopt when no line has it.
std::optional<std::string> cgroup_of(std::string_view proc_cgroup, std::string_view controller);
// The value of `key` in a flat-keyed file ("key value" lines: memory.events, memory.oom_control).
std::optional<std::int64_t> keyed_value(std::string_view text, std::string_view key);
// The pids of a cgroup.procs text, one per line; lines that are not a pid are skipped.
std::vector<pid_t> parse_pid_list(std::string_view text);
// The agent's parent cgroup's name under `trainyard/`: the node's name and a hash of its work dir.
std::string agent_cgroup_name(const std::string& node_name, const std::string& work_dir);

// The agent's cgroup parent(s), made at start; or why attempts cannot have cgroups here.
class Cgroups {
 public:
  // Detects the version under `root` (normally /sys/fs/cgroup), makes the parent(s) and enables the
  // controllers. Never throws: failing, the result is unavailable and says why.
  static Cgroups set_up(const std::string& root, const std::string& agent_name, std::int64_t pids_max);
  // The parent(s) an agent of that cgroup name made under `root`, changing nothing; unavailable
  // when there are none (for whoever cleans up after an agent: tests).
  static Cgroups find(const std::string& root, const std::string& agent_name);
  Cgroups() = default;  // unavailable: nobody set them up

  bool available() const { return !parents_.empty(); }
  // "v1", "v2" or "unavailable: <why>", for the log and the node's view.
  std::string describe() const;
  CgroupVersion version() const { return version_; }
  // The parent in each hierarchy (v1: one per controller; v2: one).
  const std::vector<std::string>& parents() const { return parents_; }
  std::int64_t pids_max() const { return pids_max_; }
  // Kills what a previous life of this agent left in its attempt cgroups and removes them;
  // returns how many cgroups that was.
  int remove_leftovers() const;
  // How many attempt cgroups are left in any hierarchy. A cgroup is removed only once none of its
  // processes runs, so none left proves every attempt's processes gone (the fence keeper's proof).
  int attempt_cgroups_left() const;
  // remove_leftovers, then the parents themselves (an agent stopping cleanly).
  void remove_all() const;

 private:
  CgroupVersion version_ = CgroupVersion::v1;
  std::vector<std::string> parents_;
  std::string why_unavailable_ = "not set up";
  std::int64_t pids_max_ = 0;
};

class AttemptCgroup {
 public:
  // Makes the attempt's cgroup(s) with `limits` and opens their cgroup.procs for the child.
  // Throws std::runtime_error saying what failed (what it made is removed).
  AttemptCgroup(const Cgroups& cgroups, std::int64_t attempt_id, const CgroupLimits& limits);
  ~AttemptCgroup();  // kills what is left and removes the cgroup(s)
  AttemptCgroup(const AttemptCgroup&) = delete;
  AttemptCgroup& operator=(const AttemptCgroup&) = delete;

  // Descriptors of cgroup.procs (O_CLOEXEC) the child writes "0" to before exec; closed by
  // `close_join_fds` once it has been spawned.
  const std::vector<int>& join_fds() const { return join_fds_; }
  void close_join_fds();
  // SIGKILLs every process in it until none is left, for at most about a second; false when some
  // outlived that.
  bool kill_all();
  CgroupUsage usage() const;
  std::vector<pid_t> processes() const;  // the processes in it now

 private:
  friend class Cgroups;
  // One that exists already (a previous life's leftover), to kill and remove.
  AttemptCgroup(CgroupVersion version, std::vector<std::string> dirs);
  void remove();

  CgroupVersion version_;
  std::vector<std::string> dirs_;  // one per hierarchy, in the order of the parents
  std::vector<int> join_fds_;
  bool removed_ = false;
};

}  // namespace trainyard::agent
