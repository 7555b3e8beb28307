#include "healthcheck/format.h"

#include <cstdio>

namespace trainyard::healthcheck {

std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string millis_text(double milliseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f ms", milliseconds);
  return text;
}

std::string rate_text(double bytes_per_second) { return short_number(bytes_per_second / 1e6) + " MB/s"; }

}  // namespace trainyard::healthcheck
