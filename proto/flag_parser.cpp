#include "proto/flag_parser.h"

#include <charconv>

namespace trainyard {

FlagParser::FlagParser(std::string program, std::string summary) : program_(std::move(program)), summary_(std::move(summary)) {}

void FlagParser::add_string(const std::string& name, const std::string& help, std::string* target, bool required) {
  flags_.push_back(Flag{name, help, required ? "required" : "default \"" + *target + "\"", required, false, false,
                        [target](const std::string& v) { *target = v; }});
}

void FlagParser::add_int(const std::string& name, const std::string& help, std::int64_t* target, std::int64_t min,
                         std::int64_t max) {
  flags_.push_back(Flag{name, help, "default " + std::to_string(*target), false, false, false, [name, target, min, max](const std::string& v) {
                          std::int64_t parsed = 0;
                          const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
                          if (ec != std::errc() || ptr != v.data() + v.size() || parsed < min || parsed > max) {
                            throw InvalidInput("--" + name, "must be an integer from " + std::to_string(min) + " to " +
                                                                std::to_string(max) + ", got \"" + v + "\"");
                          }
                          *target = parsed;
                        }});
}

void FlagParser::add_list(const std::string& name, const std::string& help, std::vector<std::string>* target) {
  flags_.push_back(
      Flag{name, help, "repeatable", false, false, false, [target](const std::string& v) { target->push_back(v); }});
}

void FlagParser::add_bool(const std::string& name, const std::string& help, bool* target) {
  flags_.push_back(
      Flag{name, help, "off unless given", false, false, true, [target](const std::string&) { *target = true; }});
}

FlagParser::Flag* FlagParser::find(const std::string& name) {
  for (auto& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool FlagParser::parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return false;
    if (arg.rfind("--", 0) != 0) throw InvalidInput(arg, "unexpected argument; flags look like --name value");
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    Flag* flag = find(name);
    if (!flag) throw InvalidInput("--" + name, "unknown flag (see --help)");
    if (flag->is_switch && has_value) throw InvalidInput("--" + name, "takes no value");
    if (!has_value && !flag->is_switch) {
      if (i + 1 >= argc) throw InvalidInput("--" + name, "needs a value");
      value = argv[++i];
    }
    flag->set(value);
    flag->seen = true;
  }
  for (const auto& f : flags_) {
    if (f.required && !f.seen) throw InvalidInput("--" + f.name, "is required");
  }
  return true;
}

std::string FlagParser::usage() const {
  std::string out = "Usage: " + program_ + " [flags]\n" + summary_ + "\n\nFlags:\n";
  for (const auto& f : flags_) out += "  --" + f.name + "\n      " + f.help + " (" + f.default_text + ")\n";
  out += "  --help\n      print this help\n";
  return out;
}

}  // namespace trainyard
