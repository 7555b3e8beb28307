#include "cli/flags.h"

#include <algorithm>
#include <charconv>

namespace trainyard::cli {
namespace {

const FlagSpec* find_flag(const std::vector<FlagSpec>& flags, std::string_view name) {
  auto it = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name; });
  return it == flags.end() ? nullptr : &*it;
}

bool looks_like_flag(std::string_view arg) { return arg.size() > 1 && arg.front() == '-' && arg != "-"; }

}  // namespace

std::int64_t parse_integer(std::string_view field, std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw InvalidInput(std::string(field), "must be an integer " + range + ", got \"" + std::string(text) + "\"");
  }
  if (value < min || value > max) {
    throw InvalidInput(std::string(field), "must be " + range + ", got " + std::string(text));
  }
  return value;
}

std::optional<std::string> ParsedArgs::opt_string(std::string_view flag) const {
  auto it = values.find(flag);
  if (it == values.end()) return std::nullopt;
  return it->second.back();
}

const std::vector<std::string>& ParsedArgs::all(std::string_view flag) const {
  static const std::vector<std::string> none;
  auto it = values.find(flag);
  return it == values.end() ? none : it->second;
}

std::optional<std::int64_t> ParsedArgs::opt_integer(std::string_view flag, std::int64_t min, std::int64_t max) const {
  const auto text = opt_string(flag);
  if (!text) return std::nullopt;
  return parse_integer(flag, *text, min, max);
}

ParsedArgs parse_flags(const std::vector<std::string>& args, const std::vector<FlagSpec>& flags,
                       std::string_view context) {
  ParsedArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.trailing.emplace(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
      continue;
    }
    if (!looks_like_flag(arg)) {
      parsed.positionals.push_back(arg);
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const FlagSpec* spec = find_flag(flags, name);
    if (!spec) throw InvalidInput(name, "unknown flag for '" + std::string(context) + "'");
    std::string value;
    if (spec->value_name.empty()) {
      if (eq != std::string::npos) throw InvalidInput(name, "takes no value");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw InvalidInput(name, "needs a value " + std::string(spec->value_name));
    }
    auto& slot = parsed.values[name];
    if (!slot.empty() && !spec->repeatable) throw InvalidInput(name, "given more than once");
    slot.push_back(std::move(value));
  }
  return parsed;
}

std::string format_flag_help(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> heads;
  std::size_t width = 0;
  for (const FlagSpec& f : flags) {
    std::string head(f.name);
    if (!f.value_name.empty()) {
      head += ' ';  // not `" " + std::string(...)`: g++ 12 warns -Wrestrict on that at -O3
      head += f.value_name;
    }
    width = std::max(width, head.size());
    heads.push_back(std::move(head));
  }
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    out += "  " + heads[i] + std::string(width - heads[i].size() + 2, ' ') + std::string(flags[i].help);
    if (flags[i].repeatable) out += " (repeatable)";
    out += "\n";
  }
  return out;
}

}  // namespace trainyard::cli
