// Canonical JSON text and SHA-256 digests of values.
#include "disttune/config.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <openssl/evp.h>

namespace disttune {
namespace {

// Checks that `value` has a canonical form: no non-finite float and at most
// kMaxValueDepth levels of nesting. Walks with an explicit stack, so no input can exhaust
// the call stack.
void require_canonical_form(const Value& value) {
  std::vector<std::pair<const Value*, std::size_t>> pending{{&value, 0}};
  while (!pending.empty()) {
    const auto [item, depth] = pending.back();
    pending.pop_back();
    if (item->is_number_float() && !std::isfinite(item->get<double>())) {
      throw std::invalid_argument("disttune: a config or key holds a non-finite float (" +
                                  std::to_string(item->get<double>()) +
                                  "), which has no canonical form");
    }
    if (!item->is_structured()) continue;
    if (depth + 1 > kMaxValueDepth) {
      throw std::invalid_argument("disttune: a config or key nests deeper than " +
                                  std::to_string(kMaxValueDepth) + " levels");
    }
    for (const auto& child : *item) pending.emplace_back(&child, depth + 1);
  }
}

}  // namespace

std::string canonical_json(const Value& value) {
  require_canonical_form(value);
  return value.dump(-1, ' ', false, Value::error_handler_t::strict);
}

std::string sha256_hex(std::string_view bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), hash.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("disttune: OpenSSL SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(static_cast<std::size_t>(length) * 2, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kHex[hash[i] >> 4];
    hex[2 * i + 1] = kHex[hash[i] & 0xF];
  }
  return hex;
}

std::string digest(const Value& value) { return sha256_hex(canonical_json(value)); }

std::string digest_of_parts(const std::vector<std::string>& parts) {
  std::string joined;
  for (const auto& part : parts) {
    joined += std::to_string(part.size());
    joined += ':';
    joined += part;
  }
  return sha256_hex(joined);
}

}  // namespace disttune
