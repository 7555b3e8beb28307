#pragma once
// The HTTP server's settings as a program's flags and config-file keys: TLS files, connection caps,
// request size and time limits.
#include "net/http_server.h"
#include "proto/flag_parser.h"

namespace trainyard::net {

void add_server_flags(FlagParser& flags, HttpServerOptions& options);

}  // namespace trainyard::net
