// Redis URL parsing: scheme, optional login, host (or [IPv6]), port and database number.
#include "store/redis/url.hpp"

#include <charconv>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "store/store_url.hpp"

namespace disttune::detail {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw std::invalid_argument("disttune: Redis URL: " + why +
                              " (expected redis://[[user]:password@]host[:port][/db])");
}

int parse_number(std::string_view text, int low, int high, const char* what) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < low ||
      value > high) {
    refuse(std::string(what) + " '" + std::string(text) + "' is not a number from " +
           std::to_string(low) + " to " + std::to_string(high));
  }
  return value;
}

std::string decoded(std::string_view text, const char* what) {
  std::optional<std::string> plain = percent_decoded(text);
  if (!plain) refuse(std::string("bad %-escape in ") + what);
  return std::move(*plain);
}

}  // namespace

std::string RedisEndpoint::display() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return std::string(tls ? "rediss://" : "redis://") + (ipv6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port) + "/" + std::to_string(database);
}

RedisEndpoint parse_redis_url(const std::string& url) {
  RedisEndpoint endpoint;
  std::string_view rest(url);
  if (rest.starts_with("redis://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("rediss://")) {
    rest.remove_prefix(9);
    endpoint.tls = true;
  } else {
    refuse("the scheme must be redis:// or rediss://");
  }

  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) endpoint.database = parse_number(db, 0, 1 << 20, "database");
  }

  std::string_view host_port = authority;
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view login = authority.substr(0, at);
    host_port = authority.substr(at + 1);
    const std::size_t colon = login.find(':');
    if (colon == std::string_view::npos) {
      // redis://secret@host: a lone login part is the password, as in redis-cli -u.
      endpoint.password = decoded(login, "the password");
    } else {
      endpoint.user = decoded(login.substr(0, colon), "the user");
      endpoint.password = decoded(login.substr(colon + 1), "the password");
    }
  }

  std::string_view port;
  if (host_port.starts_with("[")) {
    const std::size_t close = host_port.find(']');
    if (close == std::string_view::npos) refuse("an IPv6 host lacks its ']'");
    endpoint.host = std::string(host_port.substr(1, close - 1));
    const std::string_view after = host_port.substr(close + 1);
    if (!after.empty()) {
      if (!after.starts_with(":")) refuse("unexpected text after the IPv6 host");
      port = after.substr(1);
      if (port.empty()) refuse("empty port");
    }
  } else {
    const std::size_t colon = host_port.rfind(':');
    endpoint.host = std::string(host_port.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = host_port.substr(colon + 1);
      if (port.empty()) refuse("empty port");
    }
  }
  if (endpoint.host.empty()) refuse("no host");
  if (!port.empty()) endpoint.port = parse_number(port, 1, 65535, "port");
  return endpoint;
}

}  // namespace disttune::detail
