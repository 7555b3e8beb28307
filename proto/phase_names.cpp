#include "proto/phase_names.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace trainyard::inline proto {

PhaseKind phase_kind(std::string_view name) {
  std::string phase(name);
  std::transform(phase.begin(), phase.end(), phase.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (phase.find("checkpoint") != std::string::npos || phase.find("ckpt") != std::string::npos) return PhaseKind::checkpoint;
  if (phase.find("eval") != std::string::npos || phase.find("valid") != std::string::npos) return PhaseKind::eval;
  if (phase.find("save") != std::string::npos) return PhaseKind::save;
  return PhaseKind::step;
}

}  // namespace trainyard::proto
