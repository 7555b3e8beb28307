#include "cli/settings.h"

namespace trainyard::cli {
namespace {

// Files written by scripts and editors end in a newline; tokens and addresses never contain space.
std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::optional<std::string> non_empty(std::optional<std::string> text) {
  if (!text) return std::nullopt;
  std::string t = trimmed(*text);
  return t.empty() ? std::nullopt : std::optional(std::move(t));
}

std::string resolve_server(const GlobalOptions& global, const Environment& env, const FileLookup& read_file) {
  if (global.server) {
    if (auto server = non_empty(global.server)) return *server;
    throw InvalidInput("--server", "must not be empty");
  }
  if (auto server = non_empty(env.server)) return *server;
  if (auto server = non_empty(read_file(std::string(kLocalAddrFile)))) return *server;
  throw InvalidInput("--server", "no daemon address: pass --server URL, set " + std::string(kServerEnv) +
                                     ", or run from the directory holding " + std::string(kLocalAddrFile));
}

std::string resolve_token(const GlobalOptions& global, const Environment& env, const FileLookup& read_file) {
  if (global.token_file) {
    auto text = read_file(*global.token_file);
    if (!text) throw InvalidInput("--token-file", "cannot read \"" + *global.token_file + "\"");
    if (auto token = non_empty(text)) return *token;
    throw InvalidInput("--token-file", "\"" + *global.token_file + "\" is empty");
  }
  if (auto token = non_empty(env.token)) return *token;
  if (auto token = non_empty(read_file(std::string(kLocalTokenFile)))) return *token;
  throw InvalidInput("--token-file", "no API token: pass --token-file FILE, set " + std::string(kTokenEnv) +
                                         ", or run from the directory holding " + std::string(kLocalTokenFile));
}

}  // namespace

Connection resolve_connection(const GlobalOptions& global, const Environment& env, const FileLookup& read_file) {
  return Connection{resolve_server(global, env, read_file), resolve_token(global, env, read_file)};
}

}  // namespace trainyard::cli
