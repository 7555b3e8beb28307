#include "cli/memory_size.h"

#include <cctype>
#include <charconv>
#include <string>

#include "proto/errors.h"

namespace trainyard::cli {
namespace {

// Far beyond any memory the daemon accepts (it names its own maximum), small enough never to overflow.
constexpr std::int64_t kMaxParsedMb = std::int64_t{1} << 40;

}  // namespace

std::int64_t parse_memory_mb(std::string_view text, std::string_view field) {
  const auto refuse = [&] {
    return InvalidInput(std::string(field), "must be MiB (4096) or a size with a unit K, M, G or T (500M, 2G, 1T): got '" +
                                                std::string(text) + "'");
  };
  std::string_view number = text;
  if (number.size() > 1 && (number.back() == 'B' || number.back() == 'b')) number.remove_suffix(1);
  std::int64_t kib_per_unit = 1024;  // bare numbers are MiB, as sbatch counts them
  if (!number.empty() && std::isalpha(static_cast<unsigned char>(number.back()))) {
    switch (std::toupper(static_cast<unsigned char>(number.back()))) {
      case 'K': kib_per_unit = 1; break;
      case 'M': kib_per_unit = 1024; break;
      case 'G': kib_per_unit = 1024 * 1024; break;
      case 'T': kib_per_unit = std::int64_t{1024} * 1024 * 1024; break;
      default: throw refuse();
    }
    number.remove_suffix(1);
  }
  std::int64_t count = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), count);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() || count < 1) throw refuse();
  if (count > kMaxParsedMb * 1024 / kib_per_unit) {
    throw InvalidInput(std::string(field), "is far more memory than any node has: got '" + std::string(text) + "'");
  }
  return (count * kib_per_unit + 1023) / 1024;
}

}  // namespace trainyard::cli
