#include "proto/flag_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "proto/version.h"

extern char** environ;  // POSIX; <unistd.h> declares it only under _GNU_SOURCE

namespace trainyard {
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
  std::set<std::string> keys;
  const auto refuse_duplicates = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !keys.insert(parsed.get<std::string>()).second) {
      throw InvalidInput(path + ": " + parsed.get<std::string>(), "given twice");
    }
    return true;
  };
  json config;
  try {
    config = json::parse(text, refuse_duplicates, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    throw InvalidInput(path, std::string("not valid JSON: ") + e.what());
  }
  if (!config.is_object()) throw InvalidInput(path, "must hold one JSON object of settings");
  return config;
}

}  // namespace

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

void FlagParser::add_int(const std::string& name, const std::string& help, std::int64_t* target, std::int64_t min,
                         std::int64_t max) {
  add(Flag{.name = name,
           .help = help,
           .default_text = "default " + std::to_string(*target),
           .kind = Kind::integer,
           .set = [target, min, max](const std::string& v, const std::string& key) {
             std::int64_t parsed = 0;
             const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
             if (ec != std::errc() || ptr != v.data() + v.size() || parsed < min || parsed > max) {
               throw InvalidInput(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                                           ", got \"" + v + "\"");
             }
             *target = parsed;
           },
           .clear = [] {},
           .show = [target] { return std::to_string(*target); }});
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

std::string FlagParser::env_name(const std::string& flag_name) const {
  std::string name = env_prefix_;
  for (const char c : flag_name) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

bool FlagParser::parse(int argc, const char* const* argv) { return parse(argc, argv, SettingSources::of_process()); }

bool FlagParser::parse(int argc, const char* const* argv, const SettingSources& sources) {
  bool print_config = false;
  std::string config_flag;
  std::vector<Given> flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      output_ = usage();
      return false;
    }
    if (arg == "--version") {
      output_ = version_line(program_) + "\n";
      return false;
    }
    if (arg == "--print-config") {
      print_config = true;
      continue;
    }
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
    if (!flag && name != "config") throw InvalidInput("--" + name, "unknown flag (see --help)");
    if (flag && flag->kind == Kind::boolean) {
      if (has_value) throw InvalidInput("--" + name, "takes no value");
      value = "true";
    } else if (!has_value) {
      if (i + 1 >= argc) throw InvalidInput("--" + name, "needs a value");
      value = argv[++i];
    }
    if (!flag) {
      config_flag = value;
      continue;
    }
    auto given = std::find_if(flags.begin(), flags.end(), [&](const Given& g) { return g.flag == flag; });
    if (given == flags.end()) given = flags.insert(flags.end(), Given{flag, "--" + name, {}});
    given->values.push_back(value);
  }

  std::string config_env;
  const std::vector<Given> environment = from_environment(sources, config_env);
  config_path_ = !config_flag.empty() ? config_flag : config_env;
  if (!config_path_.empty()) apply(from_file(config_path_, sources.read_file(config_path_)), Source::file);
  apply(environment, Source::environment);
  apply(flags, Source::flag);

  for (const auto& f : flags_) {
    if (f.required && f.source == Source::default_value) {
      throw InvalidInput("--" + f.name, "is required (as a flag, \"" + f.name + "\" in the --config file" +
                                            (env_prefix_.empty() ? "" : ", or " + env_name(f.name)) + ")");
    }
  }
  if (print_config) {
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

}  // namespace trainyard
