#pragma once
// SHA-256 over OpenSSL's EVP interface, in lowercase hex: token hashes, spec digests, checkpoint
// manifests. Streaming for files too large to hold; one call for a string.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace trainyard::inline proto {

class Sha256 {
 public:
  Sha256();  // throws std::runtime_error when OpenSSL cannot start a digest
  void update(std::span<const std::byte> bytes);
  void update(std::string_view text);
  std::string hex();  // once, at the end

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> ctx_;
};

std::string sha256_hex(std::string_view data);
std::string sha256_hex(std::span<const std::byte> bytes);

}  // namespace trainyard::proto
