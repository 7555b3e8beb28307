#pragma once
// The thin executor: command line -> typed command -> REST calls -> rendered output and an exit
// status. Everything it touches outside itself (environment, files, stdin, the network, the
// clock, the terminal) comes in through `CliHost`, so tests run it against a fake server.
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/http_client.h"
#include "cli/settings.h"
#include "proto/time.h"

namespace trainyard::cli {

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,  // the server refused, could not be reached, or a local input was unusable
  kExitUsage = 2,   // the command line was wrong
  // submit --wait also exits with the job's own exit code, or kExitFailedWithoutCode (3) or
  // kExitCancelled (4) from cli/follow.h.
  kExitTimedOut = 124,  // wait --timeout ran out first (as timeout(1) exits)
  // wait and submit --wait: the server refused or could not be reached, so how the job ended is not
  // known (kExitFailed would read as the job's own exit code 1; timeout(1) exits 125 when it fails).
  kExitNoAnswer = 125,
};

struct CliHost {
  Environment env;
  FileLookup read_file;    // the settings files (.trainyard/daemon.addr, token files)
  InputReader read_input;  // files named on the command line ("-": stdin)
  std::function<std::unique_ptr<HttpClient>(const ServerUrl&)> connect;
  const TimeSource& clock;
  std::ostream& out;
  std::ostream& err;
  // Whether `out` is a terminal: data commands (logs) pass a job's bytes on raw to a pipe or file.
  bool out_is_terminal = false;
  // Waits between the rounds of a command that follows the cluster (--watch, logs --follow, submit
  // --wait); false: stop following. The default stops at once (one round).
  std::function<bool(Millis)> pause = [](Millis) { return false; };
};

// `args` excludes the program name.
int run_cli(const std::vector<std::string>& args, const CliHost& host);

// What to tell the user about a non-2xx reply: the server's error message when the body is the
// API's error document, else the status and the start of the body.
std::string error_message(int status, const std::string& body);

// The real world's versions of CliHost's readers.
std::optional<std::string> read_local_file(const std::string& path);
std::string read_input_file(const std::string& path);

}  // namespace trainyard::cli
