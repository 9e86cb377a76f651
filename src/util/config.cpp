// Canonical JSON text and SHA-256 digests of values.
#include "disttune/config.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>

#include <openssl/evp.h>

namespace disttune {
namespace {

void require_finite(const Value& value) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    throw std::invalid_argument("disttune: a config or key holds a non-finite float (" +
                                std::to_string(value.get<double>()) +
                                "), which has no canonical form");
  }
  if (value.is_structured()) {
    for (const auto& item : value) require_finite(item);
  }
}

}  // namespace

std::string canonical_json(const Value& value) {
  require_finite(value);
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
