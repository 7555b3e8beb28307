// `trainyard`: the command-line client. Wires the real environment into the CLI library.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/runner.h"

namespace {

std::optional<std::string> env_var(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trainyard::cli;
  const trainyard::SystemTimeSource clock;
  const CliHost host{
      .env = {.server = env_var(kServerEnv.data()),
              .token = env_var(kTokenEnv.data()),
              .ca_file = env_var(kCaEnv.data())},
      .read_file = read_local_file,
      .read_input = read_input_file,
      .connect = [](const ServerUrl& url) { return make_http_client(url); },
      .clock = clock,
      .out = std::cout,
      .err = std::cerr,
      .out_is_terminal = ::isatty(STDOUT_FILENO) == 1,
      .pause =
          [](trainyard::Millis interval) {
            std::this_thread::sleep_for(interval);
            return true;  // following ends with the job, or with Ctrl-C
          },
  };
  return run_cli(std::vector<std::string>(argv + 1, argv + argc), host);
}
