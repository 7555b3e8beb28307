#pragma once
// A job's time limit as people type it: Slurm's forms (`--time 90` is 90 minutes, `30:00`,
// `1:30:00`, `2-00`, `2-00:00:00`), durations with a unit (`90s`, `45m`, `12h`, `2d`), and
// `UNLIMITED` / `INFINITE` (no limit). Used by `submit` and `update`, so both take the same text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/flag_parser.h"
#include "proto/json_reader.h"

namespace trainyard::cli {

// What a number without a unit or colon counts: sbatch's --time counts minutes, our --timeout seconds.
enum class BareNumber { minutes, seconds };

// Seconds, or nullopt for no limit. Throws InvalidInput(field) naming the forms it accepts.
std::optional<std::int64_t> parse_time_limit(std::string_view text, std::string_view field, BareNumber bare);

// Seconds as squeue and scontrol show a time limit, which parse_time_limit reads back: `30:00`,
// `1:30:00`, `2-00:00:00`.
std::string format_time_limit(std::int64_t seconds);

// The `timeout_s` of a command's `--time T` (minutes when bare) or `--timeout T` (seconds when
// bare): seconds, JSON null for UNLIMITED, nullopt when neither flag was given. Both at once is a
// mistake.
std::optional<Json> time_limit_flags(const ParsedArgs& args);

}  // namespace trainyard::cli
