#include "cli/settings.h"

#include <vector>

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

// One place a server and a token may come from, and how the user names each there.
struct Source {
  std::string server_from;
  std::string token_from;
  std::optional<std::string> server;
  std::optional<std::string> token;
};

Source flags(const GlobalOptions& global, const FileLookup& read_file) {
  Source source{"--server", "--token-file", std::nullopt, std::nullopt};
  if (global.server) {
    source.server = non_empty(global.server);
    if (!source.server) throw InvalidInput("--server", "must not be empty");
  }
  if (global.token_file) {
    auto text = read_file(*global.token_file);
    if (!text) throw InvalidInput("--token-file", "cannot read \"" + *global.token_file + "\"");
    source.token = non_empty(text);
    if (!source.token) throw InvalidInput("--token-file", "\"" + *global.token_file + "\" is empty");
  }
  return source;
}

Source environment(const Environment& env) {
  return Source{"$" + std::string(kServerEnv), "$" + std::string(kTokenEnv), non_empty(env.server), non_empty(env.token)};
}

Source local_files(const FileLookup& read_file) {
  return Source{std::string(kLocalAddrFile), std::string(kLocalTokenFile),
                non_empty(read_file(std::string(kLocalAddrFile))), non_empty(read_file(std::string(kLocalTokenFile)))};
}

// Why a source that gives one piece is refused, naming the later source that holds the other.
std::string one_sided(const std::string& given, const std::string& missing, const std::string& elsewhere) {
  std::string message = given + " is set but " + missing + " is not";
  if (!elsewhere.empty()) {
    message += "; " + elsewhere + " is not used with " + given + ": a token is only sent to the server named with it";
  }
  return message + "; set " + missing + " too";
}

// `local`: the server came from the local cluster's files, whose CA may lie beside them.
void choose_ca(const GlobalOptions& global, const Environment& env, const FileLookup& read_file, bool local,
               Connection& connection) {
  if (global.ca_file) {
    if (global.ca_file->empty()) throw InvalidInput("--ca-file", "must not be empty");
    connection.ca_file = *global.ca_file;
    connection.ca_from = "--ca-file";
  } else if (auto ca = non_empty(env.ca_file)) {
    connection.ca_file = *ca;
    connection.ca_from = "$" + std::string(kCaEnv);
  } else if (local && read_file(std::string(kLocalCaFile))) {
    connection.ca_file = kLocalCaFile;
    connection.ca_from = kLocalCaFile;
  }
}

}  // namespace

Connection resolve_connection(const GlobalOptions& global, const Environment& env, const FileLookup& read_file) {
  const std::vector<Source> sources = {flags(global, read_file), environment(env), local_files(read_file)};
  for (auto it = sources.begin(); it != sources.end(); ++it) {
    if (it->server && it->token) {
      Connection connection{*it->server, *it->token, "", ""};
      choose_ca(global, env, read_file, it == sources.end() - 1, connection);
      return connection;
    }
    if (!it->server && !it->token) continue;
    const bool has_server = it->server.has_value();
    std::string elsewhere;
    for (auto later = it + 1; later != sources.end() && elsewhere.empty(); ++later) {
      if (has_server ? later->token : later->server) elsewhere = has_server ? later->token_from : later->server_from;
    }
    if (has_server) throw InvalidInput("--token-file", one_sided(it->server_from, it->token_from, elsewhere));
    throw InvalidInput("--server", one_sided(it->token_from, it->server_from, elsewhere));
  }
  throw InvalidInput("--server", "no daemon address: pass --server URL and --token-file FILE, set " +
                                     std::string(kServerEnv) + " and " + std::string(kTokenEnv) +
                                     ", or run from the directory holding " + std::string(kLocalAddrFile) + " and " +
                                     std::string(kLocalTokenFile));
}

}  // namespace trainyard::cli
