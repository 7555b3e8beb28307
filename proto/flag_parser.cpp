#include "proto/flag_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "proto/json_reader.h"
#include "proto/version.h"

extern char** environ;  // POSIX; <unistd.h> declares it only under _GNU_SOURCE

namespace trainyard::inline proto {
namespace {

using nlohmann::json;

std::string as_json(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

// Settings whose values may be credentials themselves; --print-config never shows them.
bool is_secret(const std::string& name) {
  static constexpr const char* kSecretWords[] = {"token", "key", "secret", "password"};
  return std::any_of(std::begin(kSecretWords), std::end(kSecretWords),
                     [&](const char* word) { return name.find(word) != std::string::npos; });
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

json parse_config_object(const std::string& path, const std::string& text) {
  json config;
  try {
    config = parse_commented_json_text(text);
  } catch (const InvalidInput& e) {
    throw InvalidInput(e.field().empty() ? path : path + ": " + e.field(), e.message());
  }
  if (!config.is_object()) throw InvalidInput(path, "must hold one JSON object of settings");
  return config;
}

const FlagSpec* find_flag(const std::vector<FlagSpec>& flags, std::string_view name) {
  auto it = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) {
    return f.name == name || std::ranges::find(f.aliases, name) != f.aliases.end();
  });
  return it == flags.end() ? nullptr : &*it;
}

bool looks_like_flag(std::string_view arg) { return arg.size() > 1 && arg.front() == '-' && arg != "-"; }

}  // namespace

std::int64_t parse_integer(std::string_view field, std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    throw InvalidInput(std::string(field), "must be an integer from " + std::to_string(min) + " to " +
                                               std::to_string(max) + ", got \"" + std::string(text) + "\"");
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
    if (!spec) throw InvalidInput(name, "unknown flag for '" + std::string(context) + "' (see --help)");
    std::string value;
    if (spec->value_name.empty()) {
      if (eq != std::string::npos) throw InvalidInput(name, "takes no value");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw InvalidInput(name, "needs a value " + spec->value_name);
    }
    auto& slot = parsed.values[spec->name];
    if (!slot.empty() && !spec->repeatable) throw InvalidInput(spec->name, "given more than once");
    slot.push_back(std::move(value));
  }
  return parsed;
}

std::string format_flag_help(const std::vector<FlagSpec>& flags) {
  std::vector<std::string> heads;
  std::size_t width = 0;
  for (const FlagSpec& f : flags) {
    std::string head = f.name;
    for (const std::string& alias : f.aliases) {
      head += ", ";
      head += alias;
    }
    if (!f.value_name.empty()) {
      head += ' ';  // not `" " + std::string(...)`: g++ 12 warns -Wrestrict on that at -O3
      head += f.value_name;
    }
    width = std::max(width, head.size());
    heads.push_back(std::move(head));
  }
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    out += "  " + heads[i] + std::string(width - heads[i].size() + 2, ' ') + flags[i].help;
    if (flags[i].repeatable) out += " (repeatable)";
    out += "\n";
  }
  return out;
}

SettingSources SettingSources::of_process() {
  SettingSources sources;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string text = *entry;
    const auto eq = text.find('=');
    if (eq != std::string::npos) sources.environment.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  }
  sources.read_file = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidInput("--config", "cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  };
  return sources;
}

FlagParser::FlagParser(std::string program, std::string summary, std::string env_prefix)
    : program_(std::move(program)), summary_(std::move(summary)), env_prefix_(std::move(env_prefix)) {}

void FlagParser::add(Flag flag) { flags_.push_back(std::move(flag)); }

void FlagParser::add_string(const std::string& name, const std::string& help, std::string* target, bool required) {
  add(Flag{.name = name,
           .help = help,
           .default_text = required ? "required" : "default \"" + *target + "\"",
           .kind = Kind::string,
           .required = required,
           .set = [target](const std::string& v, const std::string&) { *target = v; },
           .clear = [] {},
           .show = [target] { return as_json(*target); }});
}

void FlagParser::add_string(const std::string& name, const std::string& help, std::function<std::string()> get,
                            std::function<void(const std::string&)> set) {
  add(Flag{.name = name,
           .help = help,
           .default_text = "default \"" + get() + "\"",
           .kind = Kind::string,
           .set = [set](const std::string& v, const std::string&) { set(v); },
           .clear = [] {},
           .show = [get] { return as_json(get()); }});
}

void FlagParser::add_int(const std::string& name, const std::string& help, std::int64_t min, std::int64_t max,
                         std::function<std::int64_t()> get, std::function<void(std::int64_t)> set) {
  add(Flag{
      .name = name,
      .help = help,
      .default_text = "default " + std::to_string(get()),
      .kind = Kind::integer,
      .set = [set, min, max](const std::string& v, const std::string& key) { set(parse_integer(key, v, min, max)); },
      .clear = [] {},
      .show = [get] { return std::to_string(get()); }});
}

void FlagParser::add_percent(const std::string& name, const std::string& help, double* fraction, std::int64_t min,
                             std::int64_t max) {
  add_int(
      name, help, min, max, [fraction] { return std::llround(*fraction * 100.0); },
      [fraction](std::int64_t percent) { *fraction = static_cast<double>(percent) / 100.0; });
}

void FlagParser::add_list(const std::string& name, const std::string& help, std::vector<std::string>* target) {
  add(Flag{.name = name,
           .help = help,
           .default_text = "repeatable",
           .kind = Kind::list,
           .set = [target](const std::string& v, const std::string&) { target->push_back(v); },
           .clear = [target] { target->clear(); },
           .show = [target] { return as_json(*target); }});
}

void FlagParser::add_bool(const std::string& name, const std::string& help, bool* target) {
  add(Flag{.name = name,
           .help = help,
           .default_text = "off unless given",
           .kind = Kind::boolean,
           .set =
               [target](const std::string& v, const std::string& key) {
                 if (v != "true" && v != "false") throw InvalidInput(key, "must be true or false, got \"" + v + "\"");
                 *target = v == "true";
               },
           .clear = [] {},
           .show = [target] { return std::string(*target ? "true" : "false"); }});
}

FlagParser::Flag* FlagParser::find(const std::string& name) {
  for (auto& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool FlagParser::given(const std::string& name) const {
  for (const auto& f : flags_) {
    if (f.name == name) return f.source != Source::default_value;
  }
  return false;
}

std::string FlagParser::env_name(const std::string& flag_name) const {
  std::string name = env_prefix_;
  for (const char c : flag_name) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

bool FlagParser::parse(int argc, const char* const* argv) { return parse(argc, argv, SettingSources::of_process()); }

std::vector<FlagSpec> FlagParser::command_line_flags() const {
  // Repeatable: a list collects every value; any other flag given twice takes the last.
  std::vector<FlagSpec> specs;
  for (const auto& f : flags_) specs.push_back({"--" + f.name, f.kind == Kind::boolean ? "" : "VALUE", f.help, true});
  specs.push_back({"--config", "FILE", "", false});
  specs.push_back({"--print-config", "", "", false});
  specs.push_back({"--version", "", "", false});
  return specs;
}

bool FlagParser::parse(int argc, const char* const* argv, const SettingSources& sources) {
  const ParsedArgs args = parse_flags(std::vector<std::string>(argv + std::min(argc, 1), argv + argc),
                                      command_line_flags(), program_);
  if (args.help) {
    output_ = usage();
    return false;
  }
  if (args.has("--version")) {
    output_ = version_line(program_) + "\n";
    return false;
  }
  if (!args.positionals.empty()) {
    throw InvalidInput(args.positionals.front(), "unexpected argument; flags look like --name value");
  }
  if (args.trailing) throw InvalidInput("--", "unexpected argument; flags look like --name value");
  std::vector<Given> flags;
  for (auto& f : flags_) {
    const std::string key = "--" + f.name;
    if (!args.has(key)) continue;
    std::vector<std::string> values = args.all(key);
    if (f.kind == Kind::boolean) values = {"true"};
    flags.push_back(Given{&f, key, std::move(values)});
  }

  std::string config_env;
  const std::vector<Given> environment = from_environment(sources, config_env);
  config_path_ = args.opt_string("--config").value_or(config_env);
  if (!config_path_.empty()) apply(from_file(config_path_, sources.read_file(config_path_)), Source::file);
  apply(environment, Source::environment);
  apply(flags, Source::flag);

  for (const auto& f : flags_) {
    if (f.required && f.source == Source::default_value) {
      throw InvalidInput("--" + f.name, "is required (as a flag, \"" + f.name + "\" in the --config file" +
                                            (env_prefix_.empty() ? "" : ", or " + env_name(f.name)) + ")");
    }
  }
  if (args.has("--print-config")) {
    output_ = effective_config();
    return false;
  }
  return true;
}

std::vector<FlagParser::Given> FlagParser::from_environment(const SettingSources& sources, std::string& config_path) {
  std::vector<Given> given;
  if (env_prefix_.empty()) return given;
  for (const auto& variable : sources.environment) {
    const std::string& name = variable.first;  // not a structured binding: Clang 14 cannot capture those
    const std::string& value = variable.second;
    if (name.rfind(env_prefix_, 0) != 0) continue;
    if (name == env_prefix_ + "CONFIG") {
      config_path = value;
      continue;
    }
    const auto flag = std::find_if(flags_.begin(), flags_.end(), [&](const Flag& f) { return env_name(f.name) == name; });
    if (flag == flags_.end()) {
      throw InvalidInput(name, "unknown setting (variables starting " + env_prefix_ + " name flags; see --help)");
    }
    std::vector<std::string> values{value};
    if (flag->kind == Kind::list) values = split_list(value);
    if (flag->kind == Kind::boolean) {
      if (value == "1" || value == "true") {
        values = {"true"};
      } else if (value == "0" || value == "false") {
        values = {"false"};
      } else {
        throw InvalidInput(name, "must be 1, 0, true or false, got \"" + value + "\"");
      }
    }
    given.push_back(Given{&*flag, name, std::move(values)});
  }
  return given;
}

std::vector<FlagParser::Given> FlagParser::from_file(const std::string& path, const std::string& text) {
  std::vector<Given> given;
  const json config = parse_config_object(path, text);
  for (const auto& [name, value] : config.items()) {
    const std::string key = path + ": " + name;
    Flag* flag = find(name);
    if (!flag) throw InvalidInput(key, "unknown key (keys are the flags' names; see --help)");
    std::vector<std::string> values;
    switch (flag->kind) {
      case Kind::string:
        if (!value.is_string()) throw InvalidInput(key, "must be a string, got " + as_json(value));
        values.push_back(value.get<std::string>());
        break;
      case Kind::integer:
        if (!value.is_number_integer()) throw InvalidInput(key, "must be an integer, got " + as_json(value));
        values.push_back(as_json(value));
        break;
      case Kind::boolean:
        if (!value.is_boolean()) throw InvalidInput(key, "must be true or false, got " + as_json(value));
        values.push_back(as_json(value));
        break;
      case Kind::list:
        if (!value.is_array()) throw InvalidInput(key, "must be an array of strings, got " + as_json(value));
        for (const auto& item : value) {
          if (!item.is_string()) throw InvalidInput(key, "must be an array of strings, got " + as_json(item));
          values.push_back(item.get<std::string>());
        }
        break;
    }
    given.push_back(Given{flag, key, std::move(values)});
  }
  return given;
}

void FlagParser::apply(const std::vector<Given>& given, Source source) {
  for (const auto& g : given) {
    g.flag->clear();
    for (const auto& value : g.values) g.flag->set(value, g.key);
    g.flag->source = source;
    g.flag->origin = source == Source::file ? "file " + config_path_ : source == Source::environment ? "environment " + g.key : "flag " + g.key;
  }
}

std::string FlagParser::effective_config() const {
  std::vector<std::pair<std::string, std::string>> lines;  // "key": value, and where it came from
  std::size_t width = 0;
  for (std::size_t i = 0; i < flags_.size(); ++i) {
    const Flag& f = flags_[i];
    const bool redacted = is_secret(f.name) && f.source != Source::default_value;
    std::string entry = "  " + as_json(f.name) + ": " + (redacted ? "\"<redacted>\"" : f.show());
    if (i + 1 < flags_.size()) entry += ",";
    width = std::max(width, entry.size());
    lines.emplace_back(std::move(entry), f.source == Source::default_value ? "default" : f.origin);
  }
  std::string out = "// " + program_ + " settings (flag > environment > file > default); config file: " +
                    (config_path_.empty() ? "none" : config_path_) + "\n{\n";
  for (const auto& [entry, origin] : lines) out += entry + std::string(width - entry.size() + 2, ' ') + "// " + origin + "\n";
  return out + "}\n";
}

std::string FlagParser::usage() const {
  std::string out = "Usage: " + program_ + " [flags]\n" + summary_ + "\n\nFlags:\n";
  for (const auto& f : flags_) out += "  --" + f.name + "\n      " + f.help + " (" + f.default_text + ")\n";
  out += "  --config FILE\n      JSON settings file (comments allowed): {\"flag-name\": value, ...}\n";
  out += "  --print-config\n      print the effective settings and where each came from, then exit\n";
  out += "  --version\n      print the version and git commit\n";
  out += "  --help\n      print this help\n";
  out += "\nEvery flag is also a key of the --config file";
  if (!env_prefix_.empty() && !flags_.empty()) {
    out += " and an environment variable (" + env_name(flags_.front().name) + " for --" + flags_.front().name + ")";
  }
  out += ".\nPrecedence: flag > environment > file > default.\n";
  return out;
}

}  // namespace trainyard::proto
