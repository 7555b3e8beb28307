#include "daemon/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <functional>
#include <stdexcept>
#include <vector>

namespace trainyard {
namespace {

constexpr std::string_view kNodeTokenPrefix = "node:";

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

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> data(bytes);
  if (RAND_bytes(data.data(), static_cast<int>(data.size())) != 1) throw std::runtime_error("RAND_bytes failed");
  return to_hex(data.data(), data.size());
}

std::string generate_token_secret() { return "ty_" + random_hex(32); }

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  return to_hex(digest, len);
}

std::optional<std::string> Principal::bound_node() const {
  if (role != Role::agent || !user.starts_with(kNodeTokenPrefix)) return std::nullopt;
  return user.substr(kNodeTokenPrefix.size());
}

std::string node_token_user(std::string_view node) { return std::string(kNodeTokenPrefix) + std::string(node); }

void TokenRegistry::add(const TokenRecord& record) {
  remove(record.hash);
  by_hash_[record.hash] = record;
  if (auto node = Principal{record.user, record.role}.bound_node()) node_credentials_[*node] = record.hash;
  verified_.clear();
}

void TokenRegistry::remove(const std::string& hash) {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return;
  if (auto node = Principal{it->second.user, it->second.role}.bound_node()) node_credentials_.erase(*node);
  by_hash_.erase(it);
  verified_.clear();
}

std::optional<std::string> TokenRegistry::node_credential(const std::string& node) const {
  auto it = node_credentials_.find(node);
  if (it == node_credentials_.end()) return std::nullopt;
  return it->second;
}

std::optional<Principal> TokenRegistry::authenticate(std::string_view secret) const {
  if (secret.empty() || secret.size() > 256) return std::nullopt;
  const std::size_t key = std::hash<std::string_view>{}(secret);
  auto cached = verified_.find(key);
  // Compared in constant time, as comparing hashes was: a guess must not learn how much of it matched.
  if (cached != verified_.end() && cached->second.secret.size() == secret.size() &&
      CRYPTO_memcmp(cached->second.secret.data(), secret.data(), secret.size()) == 0) {
    return cached->second.who;
  }
  auto it = by_hash_.find(sha256_hex(secret));
  if (it == by_hash_.end()) return std::nullopt;
  Principal who{it->second.user, it->second.role};
  verified_.insert_or_assign(key, Verified{std::string(secret), who});
  return who;
}

std::optional<Principal> TokenRegistry::authenticate_header(std::string_view value) const {
  constexpr std::string_view prefix = "Bearer ";
  if (value.size() <= prefix.size() || value.substr(0, prefix.size()) != prefix) return std::nullopt;
  return authenticate(value.substr(prefix.size()));
}

}  // namespace trainyard
