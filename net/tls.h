#pragma once
// TLS for the daemon's port, the agent's link and the CLI, as plain values and pure decisions;
// OpenSSL contexts are built in tls_context.cpp and used by net's Beast translation units
// (http_server.cpp, ws_client.cpp), so no file outside net/ compiles Asio's SSL headers.
#include <memory>
#include <optional>
#include <string>

#include "net/http_types.h"
#include "proto/result.h"

namespace boost::asio::ssl {
class context;
}
struct ssl_st;      // OpenSSL's SSL
struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace trainyard::net {

using TlsContext = std::shared_ptr<boost::asio::ssl::context>;

// The daemon's side. Empty cert and key: plain HTTP. `client_ca_file`: agents must present a
// certificate from that CA (mutual TLS); API clients are asked for none.
struct TlsServerFiles {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  bool enabled() const { return !cert_file.empty(); }
};

// A client's side: whom to trust (empty: the system's trust store) and, optionally, the
// certificate to present. `ca_from` names where the CA came from ("--ca-file", "$TRAINYARD_CA").
struct TlsClientFiles {
  std::string ca_file;
  std::string ca_from = "--ca-file";
  std::string cert_file;
  std::string key_file;
};

// TLS 1.2 or later, the certificate chain and key checked to belong together. Throws
// InvalidInput naming the flag (--tls-cert, --tls-key, --agent-client-ca) and the file's problem.
TlsContext make_server_tls_context(const TlsServerFiles& files);
// Verifies the server against the CA (the host name is checked per connection). Throws
// InvalidInput naming the flag (ca_from, --tls-cert, --tls-key).
TlsContext make_client_tls_context(const TlsClientFiles& files);

// Offers TLS 1.2 only AEAD cipher suites with forward secrecy (ECDHE or DHE with AES-GCM or
// ChaCha20-Poly1305): CBC suites are open to padding-oracle attacks. TLS 1.3's suites are all AEAD.
void use_aead_ciphers_only(ssl_ctx_st* context);

// Makes the handshake check that the server's certificate is issued to `host` (a DNS name, or an
// IP address among its IP subject alternative names), and names `host` to the server (SNI).
void expect_server_name(ssl_st* ssl, const std::string& host);

// Whether an address the daemon listens on is reachable only from this machine (127.0.0.0/8,
// ::1, ::ffff:127.x). Anything else, names included, is not.
bool is_loopback_address(const std::string& host);

// Whether a WebSocket upgrade's client certificate may be used: a refusal (forbidden) says why.
Result<void> check_client_certificate(const std::optional<PeerCertificate>& peer);
// Whether the certificate is issued to `node`: a DNS name among its subject alternative names
// equals it; when it has no DNS names, its subject's common name does (RFC 6125's rule). Exact,
// case-sensitive comparison: node names are.
bool certificate_names(const PeerCertificate& peer, const std::string& node);
// What the certificate is issued to, for messages: "CN=a, DNS:b, DNS:c".
std::string certificate_subject(const PeerCertificate& peer);

// A sentence for a failed TLS handshake towards `host`, in place of OpenSSL's codes: an
// untrusted or expired certificate, one naming another host, a server that does not speak TLS.
// `verify_result` is OpenSSL's X509 verification result (0: none failed), `error` the handshake's
// error text.
std::string describe_handshake_failure(long verify_result, const std::string& error, const std::string& host,
                                       const std::string& ca_hint);

}  // namespace trainyard::net
