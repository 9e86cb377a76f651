// UTC time stamps for records and file names.
#include "util/utc_time.hpp"

#include <chrono>
#include <ctime>
#include <cstdio>

namespace disttune::detail {
namespace {

std::tm utc_at(std::chrono::system_clock::time_point now, long& microseconds) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  microseconds = static_cast<long>(
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  return parts;
}

std::tm utc_now(long& microseconds) { return utc_at(std::chrono::system_clock::now(), microseconds); }

std::string iso(const std::tm& parts) {
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace

std::string utc_iso_now() { return utc_iso(std::chrono::system_clock::now()); }

std::string utc_iso(std::chrono::system_clock::time_point at) {
  long microseconds = 0;
  return iso(utc_at(at, microseconds));
}

std::string utc_iso_in(std::chrono::seconds offset) {
  long microseconds = 0;
  return iso(utc_at(std::chrono::system_clock::now() + offset, microseconds));
}

std::string utc_file_stamp_now() {
  long microseconds = 0;
  const std::tm parts = utc_now(microseconds);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%S", &parts);
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "%s.%06ldZ", text, microseconds);
  return stamp;
}

}  // namespace disttune::detail
