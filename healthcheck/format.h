#pragma once
// Numbers in health reasons, short enough for a table cell and exact enough to compare with the
// stated bound: "1.52", "6.1e-05", "95.2 MB/s".
#include <string>

namespace trainyard::healthcheck {

std::string short_number(double value);          // three significant digits
std::string millis_text(double milliseconds);  // whole milliseconds: "312 ms"
std::string rate_text(double bytes_per_second);  // decimal MB/s, as network rates are quoted

}  // namespace trainyard::healthcheck
