#include "daemon/base/auth.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace trainyard::daemon {
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

store::TokenRecord new_token_record(std::string_view secret, std::string user, store::Role role, TimePoint now) {
  return store::TokenRecord{sha256_hex(secret), std::move(user), role, now, "tok_" + random_hex(8)};
}

std::optional<std::string> Principal::bound_node() const {
  if (role != store::Role::agent || !user.starts_with(kNodeTokenPrefix)) return std::nullopt;
  return user.substr(kNodeTokenPrefix.size());
}

std::string node_token_user(std::string_view node) { return std::string(kNodeTokenPrefix) + std::string(node); }

void TokenRegistry::add(const store::TokenRecord& record) {
  erase(record.hash);
  by_hash_[record.hash] = record;
  if (auto node = Principal{record.user, record.role}.bound_node()) node_credentials_[*node] = record.hash;
  verified_.clear();
}

std::optional<store::TokenRecord> TokenRegistry::erase(const std::string& hash) {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  store::TokenRecord erased = std::move(it->second);
  if (auto node = Principal{erased.user, erased.role}.bound_node()) node_credentials_.erase(*node);
  by_hash_.erase(it);
  written_uses_.erase(hash);
  verified_.clear();
  return erased;
}

void TokenRegistry::remove(const std::string& hash) {
  const auto removed = erase(hash);
  if (removed && on_removed_) on_removed_(*removed);
}

std::optional<store::TokenRecord> TokenRegistry::find_by_id(const std::string& id) const {
  for (const auto& [hash, record] : by_hash_) {
    if (record.id == id) return record;
  }
  return std::nullopt;
}

std::vector<store::TokenRecord> TokenRegistry::list() const {
  std::vector<store::TokenRecord> out;
  out.reserve(by_hash_.size());
  for (const auto& [hash, record] : by_hash_) out.push_back(record);
  std::sort(out.begin(), out.end(), [](const store::TokenRecord& a, const store::TokenRecord& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
  return out;
}

std::vector<std::pair<std::string, TimePoint>> TokenRegistry::take_uses_to_persist(MonoTime now) {
  std::vector<std::pair<std::string, TimePoint>> out;
  for (const auto& [hash, record] : by_hash_) {
    if (!record.last_used_at) continue;
    auto written = written_uses_.find(hash);
    if (written != written_uses_.end() &&
        (written->second.used_at == *record.last_used_at || now - written->second.written_at < kTokenUsePersistInterval)) {
      continue;
    }
    out.emplace_back(hash, *record.last_used_at);
    written_uses_.insert_or_assign(hash, WrittenUse{*record.last_used_at, now});
  }
  return out;
}

std::optional<std::string> TokenRegistry::node_credential(const std::string& node) const {
  auto it = node_credentials_.find(node);
  if (it == node_credentials_.end()) return std::nullopt;
  return it->second;
}

std::optional<Principal> TokenRegistry::authenticate(std::string_view secret, TimePoint now) {
  if (secret.empty() || secret.size() > 256) return std::nullopt;
  const std::size_t key = std::hash<std::string_view>{}(secret);
  auto cached = verified_.find(key);
  // Compared in constant time, as comparing hashes was: a guess must not learn how much of it matched.
  const bool verified = cached != verified_.end() && cached->second.secret.size() == secret.size() &&
                        CRYPTO_memcmp(cached->second.secret.data(), secret.data(), secret.size()) == 0;
  const std::string hash = verified ? cached->second.hash : sha256_hex(secret);
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  store::TokenRecord& record = it->second;
  if (record.expires_at && *record.expires_at <= now) return std::nullopt;
  if (!verified) verified_.insert_or_assign(key, Verified{std::string(secret), hash});
  record.last_used_at = now;
  return Principal{record.user, record.role, record.id};
}

std::optional<Principal> TokenRegistry::authenticate_header(std::string_view value, TimePoint now) {
  constexpr std::string_view prefix = "Bearer ";
  if (value.size() <= prefix.size() || value.substr(0, prefix.size()) != prefix) return std::nullopt;
  return authenticate(value.substr(prefix.size()), now);
}

}  // namespace trainyard::daemon
