// Store URLs: scheme detection, %-decoding and the query of name=value pairs.
#include "store/store_url.hpp"

#include <cctype>
#include <stdexcept>

namespace disttune::detail {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> url_scheme(std::string_view url) {
  const std::size_t end = url.find("://");
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  std::string scheme;
  for (std::size_t i = 0; i < end; ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    const bool fits =
        std::isalpha(c) || (i > 0 && (std::isdigit(c) || c == '+' || c == '-' || c == '.'));
    if (!fits) return std::nullopt;
    scheme += static_cast<char>(std::tolower(c));
  }
  return scheme;
}

std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]);
    const int low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

UrlQuery split_url_query(std::string_view url, const std::string& what) {
  UrlQuery split;
  const std::size_t mark = url.find('?');
  split.base = std::string(url.substr(0, mark));
  if (mark == std::string_view::npos) return split;
  std::string_view rest = url.substr(mark + 1);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) {
      throw std::invalid_argument(what + ": the query part '" + std::string(pair) +
                                  "' is not name=value");
    }
    const std::optional<std::string> name = percent_decoded(pair.substr(0, equals));
    const std::optional<std::string> value = percent_decoded(pair.substr(equals + 1));
    if (!name || !value) throw std::invalid_argument(what + ": bad %-escape in the query");
    split.parameters.emplace_back(*name, *value);
  }
  return split;
}

}  // namespace disttune::detail
