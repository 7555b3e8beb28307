// TLS decisions as values: which listen addresses are loopback, which node names a client
// certificate admits, and what a failed handshake tells the user.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <string>
#include <vector>

#include "net/tls.h"

namespace trainyard::net {
namespace {

TEST(LoopbackAddress, OnlyAddressesThatNeverLeaveTheMachine) {
  for (const char* loopback : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_loopback_address(loopback)) << loopback;
  }
  for (const char* outside : {"0.0.0.0", "::", "10.0.0.5", "192.168.1.1", "128.0.0.1", "::ffff:10.0.0.1", "fe80::1",
                              "localhost", "daemon.example", ""}) {
    EXPECT_FALSE(is_loopback_address(outside)) << outside;
  }
}

TEST(TlsCiphers, OnlyAeadSuitesAreOffered) {
  const auto non_aead = [](SSL_CTX* context) {
    std::vector<std::string> found;
    STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(context);
    for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
      const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
      if (!SSL_CIPHER_is_aead(cipher)) found.emplace_back(SSL_CIPHER_get_name(cipher));
    }
    return found;
  };
  SSL_CTX* context = SSL_CTX_new(TLS_method());
  ASSERT_NE(context, nullptr);
  EXPECT_FALSE(non_aead(context).empty()) << "OpenSSL's default list offers CBC suites";
  use_aead_ciphers_only(context);
  EXPECT_EQ(non_aead(context), std::vector<std::string>{});
  EXPECT_GE(sk_SSL_CIPHER_num(SSL_CTX_get_ciphers(context)), 9) << "TLS 1.3's suites and the AEAD TLS 1.2 ones";
  SSL_CTX_free(context);
}

PeerCertificate certificate(std::string cn, std::vector<std::string> dns) {
  return PeerCertificate{.verified = true, .verify_error = "", .common_name = std::move(cn), .dns_names = std::move(dns)};
}

TEST(CertificateNames, ADnsNameWhenTheCertificateHasAnyElseTheCommonName) {
  EXPECT_TRUE(certificate_names(certificate("n1", {"n1"}), "n1"));
  EXPECT_TRUE(certificate_names(certificate("rack-a", {"n1", "n2"}), "n2"));
  EXPECT_FALSE(certificate_names(certificate("n3", {"n1", "n2"}), "n3")) << "with DNS names, the CN does not count";
  EXPECT_TRUE(certificate_names(certificate("n1", {}), "n1"));
  EXPECT_FALSE(certificate_names(certificate("n1", {}), "n2"));
  EXPECT_FALSE(certificate_names(certificate("N1", {}), "n1")) << "node names are case-sensitive";
  EXPECT_FALSE(certificate_names(certificate("n1", {"n1"}), "n1.example")) << "no suffix or wildcard matching";
  EXPECT_FALSE(certificate_names(certificate("", {}), ""));
  EXPECT_EQ(certificate_subject(certificate("n1", {"n1", "n1.example"})), "CN=n1, DNS:n1, DNS:n1.example");
}

TEST(ClientCertificateCheck, NoneOrAnUnverifiedOneIsRefusedSayingWhy) {
  const Result<void> none = check_client_certificate(std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::forbidden);
  EXPECT_NE(none.error().message.find("no client certificate"), std::string::npos);
  PeerCertificate foreign = certificate("n1", {"n1"});
  foreign.verified = false;
  foreign.verify_error = "unable to get local issuer certificate";
  const Result<void> refusal = check_client_certificate(foreign);
  ASSERT_FALSE(refusal.ok());
  const std::string& why = refusal.error().message;
  EXPECT_NE(why.find("CN=n1"), std::string::npos) << why;
  EXPECT_NE(why.find("unable to get local issuer certificate"), std::string::npos) << why;
  EXPECT_NE(why.find("--agent-client-ca"), std::string::npos) << why;
  EXPECT_TRUE(check_client_certificate(certificate("n1", {"n1"})).ok());
}

TEST(HandshakeFailure, SaysWhatIsWrongInWords) {
  const auto says = [](long verify, const std::string& error, const std::string& expected) {
    const std::string text = describe_handshake_failure(verify, error, "10.0.0.5", "--ca-file");
    EXPECT_NE(text.find(expected), std::string::npos) << text;
    EXPECT_EQ(text.find("SSL routines"), std::string::npos) << text;
  };
  says(X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, "certificate verify failed (SSL routines)",
       "not signed by a CA this client trusts");
  says(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, "certificate verify failed (SSL routines)", "--ca-file");
  says(X509_V_ERR_IP_ADDRESS_MISMATCH, "certificate verify failed (SSL routines)", "not issued to 10.0.0.5");
  says(X509_V_ERR_HOSTNAME_MISMATCH, "certificate verify failed (SSL routines)", "names another host");
  says(X509_V_ERR_CERT_HAS_EXPIRED, "certificate verify failed (SSL routines)", "expired");
  says(X509_V_OK, "wrong version number (SSL routines)", "does not speak TLS on this port");
  says(X509_V_OK, "tlsv1 alert unknown ca", "refused this client's certificate");
}

}  // namespace
}  // namespace trainyard::net
