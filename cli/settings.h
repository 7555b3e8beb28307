#pragma once
// Which daemon to talk to and with which token. Three sources, most specific first: the flags
// (--server, --token-file), the environment ($TRAINYARD_SERVER, $TRAINYARD_TOKEN), then the files
// the local quick-start cluster writes into `.trainyard/` of the directory it was started from (so
// `trainyard jobs` just works there). Server and token come from one source, the first that gives
// either: a token is only ever sent to the server it came with (a `.trainyard/daemon.addr` planted
// in a directory must not receive $TRAINYARD_TOKEN). The CA that verifies an https:// server:
// --ca-file, else $TRAINYARD_CA, else (for the local cluster's server) `.trainyard/ca.pem` when it
// exists, else the system's trust store.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command_line.h"

namespace trainyard::cli {

inline constexpr std::string_view kServerEnv = "TRAINYARD_SERVER";
inline constexpr std::string_view kTokenEnv = "TRAINYARD_TOKEN";
inline constexpr std::string_view kCaEnv = "TRAINYARD_CA";
inline constexpr std::string_view kLocalCaFile = ".trainyard/ca.pem";
inline constexpr std::string_view kLocalAddrFile = ".trainyard/daemon.addr";
inline constexpr std::string_view kLocalTokenFile = ".trainyard/admin.token";

struct Environment {
  std::optional<std::string> server;  // $TRAINYARD_SERVER
  std::optional<std::string> token;   // $TRAINYARD_TOKEN, the token itself
  std::optional<std::string> ca_file; // $TRAINYARD_CA
};

// Contents of a file, or nullopt when it does not exist or cannot be read.
using FileLookup = std::function<std::optional<std::string>(const std::string& path)>;

struct Connection {
  std::string server;  // as given, e.g. "http://127.0.0.1:8080"
  std::string token;
  std::string ca_file;  // empty: the system's trust store
  std::string ca_from;  // how the user named it: "--ca-file", "$TRAINYARD_CA", ".trainyard/ca.pem"
  bool operator==(const Connection&) const = default;
};

// Throws InvalidInput naming the flag ("--server", "--token-file") when nothing usable is found,
// or when the first source gives only one of the two (the message names where the other was).
Connection resolve_connection(const GlobalOptions& global, const Environment& env, const FileLookup& read_file);

}  // namespace trainyard::cli
