#include "daemon/auth.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace trainyard {
namespace {

std::string to_hex(const unsigned char* data, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[data[i] >> 4]);
    out.push_back(digits[data[i] & 15]);
  }
  return out;
}

}  // namespace

std::string generate_token_secret() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("RAND_bytes failed");
  return "ty_" + to_hex(bytes, sizeof bytes);
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  return to_hex(digest, len);
}

void TokenRegistry::add(const TokenRecord& record) { by_hash_[record.hash] = record; }

std::optional<Principal> TokenRegistry::authenticate(std::string_view secret) const {
  if (secret.empty() || secret.size() > 256) return std::nullopt;
  auto it = by_hash_.find(sha256_hex(secret));
  if (it == by_hash_.end()) return std::nullopt;
  return Principal{it->second.user, it->second.role};
}

std::optional<Principal> TokenRegistry::authenticate_header(std::string_view value) const {
  constexpr std::string_view prefix = "Bearer ";
  if (value.size() <= prefix.size() || value.substr(0, prefix.size()) != prefix) return std::nullopt;
  return authenticate(value.substr(prefix.size()));
}

}  // namespace trainyard
