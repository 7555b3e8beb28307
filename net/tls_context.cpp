// OpenSSL contexts from the files the flags name (net/tls.h). Asio's SSL headers, without Beast.
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "net/tls.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

namespace asio = boost::asio;

// A file the TLS context is to load must be readable: OpenSSL's own message for a missing file
// is a stack of library codes.
void require_readable(const std::string& path, const std::string& flag) {
  if (!std::ifstream(path)) throw InvalidInput(flag, "cannot read \"" + path + "\": " + std::strerror(errno));
}

// The certificate and its key, checked to belong together; a key with a passphrase is refused
// rather than prompted for on a terminal a daemon does not have.
void use_certificate_and_key(asio::ssl::context& context, const std::string& cert_file, const std::string& key_file) {
  if (cert_file.empty() != key_file.empty()) {
    throw InvalidInput(cert_file.empty() ? "--tls-cert" : "--tls-key",
                       cert_file.empty() ? "is required with --tls-key" : "is required with --tls-cert");
  }
  if (cert_file.empty()) return;
  require_readable(cert_file, "--tls-cert");
  require_readable(key_file, "--tls-key");
  SSL_CTX_set_default_passwd_cb(context.native_handle(), [](char*, int, int, void*) { return 0; });
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert_file, ec);
  if (ec) throw InvalidInput("--tls-cert", "\"" + cert_file + "\" holds no usable PEM certificate: " + ec.message());
  context.use_private_key_file(key_file, asio::ssl::context::pem, ec);
  if (ec) {
    throw InvalidInput("--tls-key", "\"" + key_file + "\" holds no usable PEM private key (one without a passphrase): " +
                                        ec.message());
  }
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    ERR_clear_error();
    throw InvalidInput("--tls-key", "\"" + key_file + "\" is not the private key of the certificate in \"" + cert_file + "\"");
  }
}

std::shared_ptr<asio::ssl::context> tls12_or_later(asio::ssl::context::method method) {
  auto context = std::make_shared<asio::ssl::context>(method);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  use_aead_ciphers_only(context->native_handle());
  return context;
}

}  // namespace

TlsContext make_server_tls_context(const TlsServerFiles& files) {
  if (files.cert_file.empty() && files.key_file.empty()) throw InvalidInput("--tls-cert", "is required for TLS");
  auto context = tls12_or_later(asio::ssl::context::tls_server);
  use_certificate_and_key(*context, files.cert_file, files.key_file);
  if (!files.client_ca_file.empty()) {
    require_readable(files.client_ca_file, "--agent-client-ca");
    boost::system::error_code ec;
    context->load_verify_file(files.client_ca_file, ec);
    STACK_OF(X509_NAME)* issuers = ec ? nullptr : SSL_load_client_CA_file(files.client_ca_file.c_str());
    if (!issuers) {
      ERR_clear_error();
      throw InvalidInput("--agent-client-ca", "\"" + files.client_ca_file + "\" holds no usable PEM CA certificate");
    }
    SSL_CTX_set_client_CA_list(context->native_handle(), issuers);
    // Asks every client for a certificate but accepts the handshake without one, or with one
    // that does not verify (the verdict is kept): the gateway refuses such agents in words,
    // and API clients need none.
    SSL_CTX_set_verify(context->native_handle(), SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
  }
  return context;
}

TlsContext make_client_tls_context(const TlsClientFiles& files) {
  auto context = tls12_or_later(asio::ssl::context::tls_client);
  context->set_verify_mode(asio::ssl::verify_peer);
  boost::system::error_code ec;
  if (files.ca_file.empty()) {
    context->set_default_verify_paths(ec);
  } else {
    require_readable(files.ca_file, files.ca_from);
    context->load_verify_file(files.ca_file, ec);
  }
  if (ec) {
    throw InvalidInput(files.ca_from, files.ca_file.empty() ? "cannot load the system's trust store: " + ec.message()
                                                            : "\"" + files.ca_file + "\" holds no usable PEM CA certificate");
  }
  use_certificate_and_key(*context, files.cert_file, files.key_file);
  return context;
}

}  // namespace trainyard::net
