#pragma once
// A job's memory as sbatch's --mem takes it: a number of MiB (`4096`), or with a unit `K`, `M`,
// `G` or `T` (`500M`, `2G`, `1T`; case ignored, a trailing `B` allowed: `2GB`). Used by `submit`.
#include <cstdint>
#include <string_view>

namespace trainyard::cli {

// MiB, at least 1 (kibibytes round up). Throws InvalidInput(field) naming the forms it accepts.
std::int64_t parse_memory_mb(std::string_view text, std::string_view field);

}  // namespace trainyard::cli
