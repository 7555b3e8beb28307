#pragma once
// What every command struct (cli/commands.h) is written with: the input reader, the replies it
// renders, the render context and the --watch flags.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "proto/flag_parser.h"
#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard::cli {

// Reads a local input file named on the command line ("-" is stdin); throws InvalidInput naming
// the path when it cannot. Injected so that building requests stays a pure function in tests.
using InputReader = std::function<std::string(const std::string& path)>;

// The decoded JSON bodies of a command's successful replies, in the order of its requests.
using Replies = std::vector<Json>;

// Bounds of a number flag whose range the server checks (a submission, a PATCH is validated as
// one): the CLI checks only that it is an integer that fits an int.
inline constexpr std::int64_t kAnyInt = std::numeric_limits<int>::max();
inline constexpr std::int64_t kAnyIntMin = std::numeric_limits<int>::min();

struct RenderContext {
  TimePoint now;  // ages ("3m") are relative to this
};

// `--watch [--interval SECONDS]` of the list and show commands: run again every interval, redrawn
// in place on a terminal. Never faster than once a second: each round costs the daemon a query.
inline constexpr std::int64_t kMinWatchIntervalS = 1;
inline constexpr std::int64_t kDefaultWatchIntervalS = 2;
std::vector<FlagSpec> watch_flags();
// The interval in seconds when --watch was given; throws naming --interval when it is unusable.
std::optional<std::int64_t> parse_watch(const ParsedArgs& args);

}  // namespace trainyard::cli
