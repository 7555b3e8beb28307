#include "net/server_flags.h"

namespace trainyard::net {

void add_server_flags(FlagParser& flags, HttpServerOptions& options) {
  flags.add_string("tls-cert",
                   "PEM certificate chain: serve the API and the agent gateway over TLS (HTTPS, wss); "
                   "reloaded with the key on SIGHUP",
                   &options.tls.cert_file);
  flags.add_string("tls-key", "PEM private key of --tls-cert (without a passphrase)", &options.tls.key_file);
  flags.add_string("agent-client-ca",
                   "PEM CA file: agents must present a client certificate from this CA whose "
                   "DNS name (else CN) is their node name; API clients need none",
                   &options.tls.client_ca_file);
  flags.add_int("body-limit-bytes", "largest accepted request body", &options.body_limit, 1024, 64 << 20);
  flags.add_int("max-connections", "open connections (API clients and agents) beyond which new ones are closed at once",
                &options.caps.total, 1, 10'000'000);
  flags.add_int("max-connections-per-ip",
                "open connections from one remote address that no credential has vouched for; at the cap its "
                "oldest silent one is closed for a new one (agents and authenticated callers are not counted here)",
                &options.caps.per_address, 1, 10'000'000);
  flags.add_int("max-connections-per-user",
                "open connections whose latest request authenticated as one user (all its tokens together; "
                "agents aside); beyond it a request is answered 429 and its connection closed",
                &options.caps.per_caller, 1, 10'000'000);
  flags.add_int("max-header-bytes", "largest request line and header fields; a larger header gets 431",
                &options.header_limit, 1024, 1 << 20);
  flags.add_duration<std::chrono::milliseconds>("header-timeout-ms",
                                                "a request whose header has not all arrived this "
                                                "long after its first byte is disconnected (slow clients cannot hold "
                                                "connections)",
                                                &options.header_timeout, 100, 3'600'000);
  flags.add_duration<std::chrono::milliseconds>("body-timeout-ms",
                                                "a request whose body has not all arrived this long "
                                                "after its header is disconnected",
                                                &options.body_timeout, 100, 3'600'000);
  flags.add_int("max-ws-message-bytes", "largest message accepted from an agent (a log reply may take 6 MiB)",
                &options.websocket_message_limit, 7 << 20, 1LL << 30);
}

}  // namespace trainyard::net
