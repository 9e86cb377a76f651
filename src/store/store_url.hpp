// Store URLs: the scheme, the query's name=value pairs and %-escapes, read alike for every scheme.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace disttune::detail {

/// The scheme of `url` (the text before "://" when that text is a scheme: a letter, then
/// letters, digits, '+', '-', '.'), lower-cased; nullopt for a plain path.
std::optional<std::string> url_scheme(std::string_view url);

/// `text` with each %XY replaced by the byte it encodes; nullopt for a bad escape.
std::optional<std::string> percent_decoded(std::string_view text);

/// A URL split at its first '?': what comes before it, and the query's name=value pairs
/// (%-decoded), in order.
struct UrlQuery {
  std::string base;
  std::vector<std::pair<std::string, std::string>> parameters;
};

/// Splits `url`; throws std::invalid_argument, with `what` first, for a pair without '=' or
/// a bad %-escape.
UrlQuery split_url_query(std::string_view url, const std::string& what);

}  // namespace disttune::detail
