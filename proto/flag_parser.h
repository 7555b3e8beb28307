#pragma once
// Strict command-line flags for the daemon and the agent: `--name value` or `--name=value`;
// an unknown flag, a missing value or a value out of range throws InvalidInput naming the flag.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proto/errors.h"

namespace trainyard {

class FlagParser {
 public:
  FlagParser(std::string program, std::string summary);

  void add_string(const std::string& name, const std::string& help, std::string* target, bool required = false);
  void add_int(const std::string& name, const std::string& help, std::int64_t* target, std::int64_t min, std::int64_t max);
  void add_list(const std::string& name, const std::string& help, std::vector<std::string>* target);  // repeatable
  // A switch: `--name` sets it; it takes no value.
  void add_bool(const std::string& name, const std::string& help, bool* target);

  // Returns false when --help was given (print usage() then). Throws InvalidInput for bad flags.
  bool parse(int argc, const char* const* argv);
  std::string usage() const;

 private:
  struct Flag {
    std::string name;
    std::string help;
    std::string default_text;
    bool required = false;
    bool seen = false;
    bool is_switch = false;
    std::function<void(const std::string&)> set;
  };
  Flag* find(const std::string& name);

  std::string program_;
  std::string summary_;
  std::vector<Flag> flags_;
};

}  // namespace trainyard
