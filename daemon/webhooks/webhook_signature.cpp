#include "daemon/webhooks/webhook_signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <stdexcept>

#include "daemon/base/auth.h"

namespace trainyard::daemon {

std::string webhook_signature(std::string_view secret, std::string_view timestamp, std::string_view body) {
  const std::string base = "v0:" + std::string(timestamp) + ":" + std::string(body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(base.data()),
           base.size(), digest.data(), &length) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string signature = "v0=";
  for (unsigned int i = 0; i < length; ++i) {
    signature += kHex[digest[i] >> 4];
    signature += kHex[digest[i] & 0xf];
  }
  return signature;
}

std::string webhook_signature(std::string_view secret, std::int64_t unix_seconds, std::string_view body) {
  return webhook_signature(secret, std::to_string(unix_seconds), body);
}

std::string generate_webhook_secret() { return "whsec_" + random_hex(32); }

}  // namespace trainyard::daemon
