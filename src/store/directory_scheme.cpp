// The directory store's scheme: file:///path or a plain path names a DiskStore at that root.
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "store/key_claims.hpp"
#include "store/store_schemes.hpp"
#include "store/store_url.hpp"

namespace disttune::detail {
namespace {

/// The directory of a file:// URL or a plain path, made absolute; throws
/// std::invalid_argument for a URL that names a host or an empty path.
std::filesystem::path directory_of_url(const std::string& url) {
  std::string path = url;
  if (url_scheme(url)) {
    std::string_view rest = std::string_view(url).substr(url.find("://") + 3);
    if (rest.starts_with("localhost/")) rest.remove_prefix(std::string_view("localhost").size());
    if (!rest.starts_with("/")) {
      throw std::invalid_argument(
          "disttune: file URL '" + url +
          "' names a host; a directory is file:///absolute/path or a plain path");
    }
    std::optional<std::string> decoded = percent_decoded(rest);
    if (!decoded) throw std::invalid_argument("disttune: file URL '" + url + "': bad %-escape");
    path = std::move(*decoded);
  }
  if (path.empty()) throw std::invalid_argument("disttune: a directory store needs a path");
  return std::filesystem::absolute(path);
}

}  // namespace

SchemeEntry directory_scheme() {
  return SchemeEntry{
      .scheme = StoreScheme{.name = "file",
                            .source = DiskStore::kSource,
                            .reach = StoreReach::node,
                            .make = [](const std::string& url) -> std::shared_ptr<Store> {
                              return std::make_shared<DiskStore>(directory_of_url(url));
                            }},
      .claim_board =
          [](const std::string& url) { return directory_claim_board(directory_of_url(url)); },
  };
}

}  // namespace disttune::detail
