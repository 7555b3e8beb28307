#pragma once
// The pure parts of `trainyard history`: its columns, how a span of time reads (sacct's
// [D-]HH:MM:SS) and CSV fields.
#include <string>
#include <string_view>
#include <vector>

#include "proto/json_reader.h"

namespace trainyard::cli {

struct HistoryColumn {
  std::string_view name;    // as --format takes it: "elapsed"
  std::string_view header;  // "ELAPSED"
  std::string (*cell)(const Json& job);
};

const std::vector<HistoryColumn>& history_columns();
inline constexpr std::string_view kDefaultHistoryColumns =
    "id,name,user,state,elapsed,wait,cores,corehours,exit,class,attempts,goodput";

// "id,name,state" to the columns' names, validated; throws InvalidInput("--format") naming the
// columns there are.
std::vector<std::string> parse_history_columns(std::string_view text);

// Seconds as sacct shows them: "00:00:07", "01:02:03", "3-04:05:06"; negative reads as zero.
std::string format_elapsed(double seconds);

// One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, quotes doubled.
std::string csv_field(std::string_view text);

// The jobs as rows of `columns`: an aligned table, or CSV with a header line.
std::string history_table(const Json& jobs, const std::vector<std::string>& columns);
std::string history_csv(const Json& jobs, const std::vector<std::string>& columns);

}  // namespace trainyard::cli
