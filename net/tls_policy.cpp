// The half of net/tls.h that needs no Asio: pure decisions, and the server name a client expects.
#include <arpa/inet.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "net/tls.h"

namespace trainyard::net {

void expect_server_name(ssl_st* ssl, const std::string& host) {
  std::array<unsigned char, 16> bytes{};
  const bool ip = ::inet_pton(AF_INET, host.c_str(), bytes.data()) == 1 || ::inet_pton(AF_INET6, host.c_str(), bytes.data()) == 1;
  if (ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    return;
  }
  SSL_set_tlsext_host_name(ssl, host.c_str());
  SSL_set1_host(ssl, host.c_str());
}

void use_aead_ciphers_only(ssl_ctx_st* context) {
  static constexpr const char* kAeadTls12 =
      "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
      "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
      "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305";
  SSL_CTX_set_cipher_list(context, kAeadTls12);
}

bool is_loopback_address(const std::string& host) {
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
  std::array<unsigned char, 16> bytes{};
  if (::inet_pton(AF_INET, bare.c_str(), bytes.data()) == 1) return bytes[0] == 127;
  if (::inet_pton(AF_INET6, bare.c_str(), bytes.data()) != 1) return false;
  constexpr std::array<unsigned char, 16> kLoopback6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  constexpr std::array<unsigned char, 12> kMappedPrefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (bytes == kLoopback6) return true;
  return std::equal(kMappedPrefix.begin(), kMappedPrefix.end(), bytes.begin()) && bytes[12] == 127;
}

Result<void> check_client_certificate(const std::optional<PeerCertificate>& peer) {
  if (!peer) {
    return Error::forbidden("no client certificate: this gateway requires agents to present one issued by its "
                            "--agent-client-ca");
  }
  if (!peer->verified) {
    return Error::forbidden("client certificate (" + certificate_subject(*peer) + ") is not accepted: " +
                            peer->verify_error + "; it must be issued by the daemon's --agent-client-ca");
  }
  return {};
}

bool certificate_names(const PeerCertificate& peer, const std::string& node) {
  if (node.empty()) return false;
  if (!peer.dns_names.empty()) return std::find(peer.dns_names.begin(), peer.dns_names.end(), node) != peer.dns_names.end();
  return peer.common_name == node;
}

std::string certificate_subject(const PeerCertificate& peer) {
  std::string out = "CN=" + peer.common_name;
  for (const auto& name : peer.dns_names) out += ", DNS:" + name;
  return out;
}

std::string describe_handshake_failure(long verify_result, const std::string& error, const std::string& host,
                                       const std::string& ca_hint) {
  const auto says = [&](const char* text) { return error.find(text) != std::string::npos; };
  switch (verify_result) {
    case X509_V_OK:
      break;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "the server's certificate is not issued to " + host +
             " (it names another host): connect by a name or address the certificate holds";
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the server's certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the server's certificate is not valid yet (check the clocks)";
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_UNTRUSTED:
      return "the server's certificate is not signed by a CA this client trusts (" +
             std::string(X509_verify_cert_error_string(verify_result)) + "): pass the CA that signed it with " + ca_hint;
    default:
      return "the server's certificate could not be verified: " +
             std::string(X509_verify_cert_error_string(verify_result));
  }
  if (says("wrong version number") || says("packet length too long") || says("record layer failure")) {
    return host + " does not speak TLS on this port (a plain http:// server?)";
  }
  if (says("unknown ca") || says("bad certificate") || says("certificate required") || says("certificate unknown")) {
    return "the server refused this client's certificate (" + error + ")";
  }
  return "TLS handshake failed: " + error;
}

}  // namespace trainyard::net
