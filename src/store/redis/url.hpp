// Redis URL: redis://[[user]:password@]host[:port][/db] parsed into where and how to log in.
#pragma once

#include <string>

namespace disttune::detail {

/// One Redis server and the login on it.
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int database = 0;
  std::string user;      ///< empty: the default user
  std::string password;  ///< empty: no AUTH
  bool tls = false;      ///< rediss://
  /// redis://host:port/db, without user or password: safe for messages.
  std::string display() const;
};

/// Parses `url`; throws std::invalid_argument saying what is wrong (never quoting the
/// password). User and password may be percent-encoded.
RedisEndpoint parse_redis_url(const std::string& url);

}  // namespace disttune::detail
