// UTC time stamps for records ("2026-11-29T09:30:00Z") and file names ("20261129T093000Z").
#pragma once

#include <chrono>
#include <string>

namespace disttune::detail {

/// Now, ISO 8601 in UTC, seconds: "2026-11-29T09:30:00Z".
std::string utc_iso_now();

/// `at`, in the same form as utc_iso_now().
std::string utc_iso(std::chrono::system_clock::time_point at);

/// Now plus `offset`, in the same form as utc_iso_now().
std::string utc_iso_in(std::chrono::seconds offset);

/// Now, for file names, in UTC with microseconds so that names made in one second differ:
/// "20261129T093000.123456Z".
std::string utc_file_stamp_now();

}  // namespace disttune::detail
