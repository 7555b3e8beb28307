#include "cli/commands.h"

#include <limits>

namespace trainyard::cli {

std::vector<ApiRequest> requests_for(const Command& command, const InputReader& read) {
  return std::visit([&](const auto& c) { return c.requests(read); }, command);
}

std::string render_text(const Command& command, const Replies& replies, const RenderContext& ctx) {
  return std::visit([&](const auto& c) { return c.render(replies, ctx); }, command);
}

Notices notices_of(const Command& command, const Replies& replies) {
  return std::visit(
      [&](const auto& c) -> Notices {
        if constexpr (requires { c.notices(replies); }) {
          return c.notices(replies);
        } else {
          return {};
        }
      },
      command);
}

bool raw_output(const Command& command) {
  return std::visit([](const auto& c) { return requires { std::decay_t<decltype(c)>::kRawOutput; }; }, command);
}

std::optional<std::int64_t> watch_interval(const Command& command) {
  return std::visit(
      [](const auto& c) -> std::optional<std::int64_t> {
        if constexpr (requires { c.watch_s; }) {
          return c.watch_s;
        } else {
          return std::nullopt;
        }
      },
      command);
}

Json render_json(const Command& command, const Replies& replies) {
  return std::visit(
      [&](const auto& c) -> Json {
        if constexpr (requires { c.to_json(replies); }) {
          return c.to_json(replies);
        } else {
          return replies.empty() ? Json() : replies.front();
        }
      },
      command);
}

std::vector<FlagSpec> watch_flags() {
  return {{"--watch", "", "run again every interval, redrawn in place on a terminal with changes highlighted"},
          {"--interval", "SECONDS", "with --watch: seconds between rounds, at least 1 (default 2)"}};
}

std::optional<std::int64_t> parse_watch(const ParsedArgs& args) {
  const auto interval = args.opt_integer("--interval", kMinWatchIntervalS, 24 * 3600);
  if (!args.has("--watch")) {
    if (interval) throw InvalidInput("--interval", "is only for --watch");
    return std::nullopt;
  }
  return interval.value_or(kDefaultWatchIntervalS);
}

std::string only_positional(const ParsedArgs& args, std::string_view name) {
  if (args.positionals.empty()) throw InvalidInput(std::string(name), "is required");
  if (args.positionals.size() > 1) {
    throw InvalidInput(std::string(name), "expected one, got an extra argument \"" + args.positionals[1] + "\"");
  }
  return args.positionals.front();
}

JobId parse_job_id(std::string_view text, std::string_view field) {
  try {
    return parse_integer(field, text, 1, std::numeric_limits<JobId>::max());
  } catch (const InvalidInput&) {
    throw InvalidInput(std::string(field), "must be a job id (a positive integer), got \"" + std::string(text) + "\"");
  }
}

std::string JobTarget::text() const { return std::to_string(id) + (task ? "_" + std::to_string(*task) : ""); }

std::string JobTarget::path() const { return "/v1/jobs/" + text(); }

JobTarget parse_job_target(std::string_view text, std::string_view field) {
  const JobRef ref = parse_job_ref(text, std::string(field));
  return {ref.job, ref.task};
}

}  // namespace trainyard::cli
