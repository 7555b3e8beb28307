// The daemon's and the agent's config file (--config FILE) on arbitrary bytes: it is read or refused
// with InvalidInput, and what --print-config then shows reads back as the very same settings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "proto/flag_parser.h"

using namespace trainyard;

namespace {

// One setting of each kind, with the agent's names and ranges.
struct Settings {
  std::string server;
  std::string work_dir = "/var/lib/trainyard-agent";
  std::int64_t cores = 32;
  std::int64_t memory_mb = 0;
  std::vector<std::string> labels;
  bool allow_root_jobs = false;

  bool operator==(const Settings&) const = default;
};

// Parses `text` as the config file; the printed effective settings when it was accepted, else "".
std::string read_config(const std::string& text, Settings& s) {
  FlagParser flags("trainyard-agent", "", "TRAINYARD_AGENT_");
  flags.add_string("server", "", &s.server, true);
  flags.add_string("work-dir", "", &s.work_dir);
  flags.add_int("cores", "", &s.cores, 1, 4096);
  flags.add_int("memory-mb", "", &s.memory_mb, 0, 1LL << 40);
  flags.add_list("label", "", &s.labels);
  flags.add_bool("allow-root-jobs", "", &s.allow_root_jobs);
  const SettingSources sources{{}, [&](const std::string&) { return text; }};
  const char* argv[] = {"trainyard-agent", "--config", "fuzz.json", "--print-config"};
  try {
    flags.parse(4, argv, sources);
  } catch (const InvalidInput&) {
    return "";
  }
  return flags.output();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Settings first;
  const std::string printed = read_config(std::string(reinterpret_cast<const char*>(data), size), first);
  if (printed.empty()) return 0;
  Settings again;
  if (read_config(printed, again).empty() || !(again == first)) std::abort();
  return 0;
}
