// Settings given from Python as the engine's values, by the engine's rules.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "disttune/deadline.hpp"
#include "disttune/error.hpp"
#include "disttune/measurement.hpp"

namespace disttune::python {

/// nullopt stays nullopt (the engine's default deadline); seconds become the engine's timeout
/// (inf: no deadline); under 1 ms, NaN or -inf is InvalidSetting naming collective_timeout_s.
inline std::optional<std::chrono::milliseconds> collective_timeout_from_seconds(
    std::optional<double> seconds) {
  if (!seconds) return std::nullopt;
  return timeout_from_seconds(*seconds, "collective_timeout_s");
}

/// A Python int as a run count in [least, kMostRuns]; any other int, however large, is
/// InvalidSetting naming `setting` (not nanobind's "incompatible function arguments").
inline int run_count(const nanobind::int_& value, std::string_view setting, int least) {
  int overflow = 0;
  long long count = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0) count = overflow > 0 ? LLONG_MAX : LLONG_MIN;
  validate_run_count(count, setting, least);
  return static_cast<int>(count);
}

/// A directory given from Python (str, bytes or os.PathLike; str encoded as os.fsencode
/// does); None and "" are nullopt. A NUL byte, which no path can hold, is InvalidSetting
/// naming `setting`; what is not a path at all is a TypeError.
inline std::optional<std::filesystem::path> directory_setting(nanobind::handle value,
                                                             std::string_view setting) {
  namespace nb = nanobind;
  if (value.is_none()) return std::nullopt;
  nb::object path = nb::steal(PyOS_FSPath(value.ptr()));
  if (!path.is_valid()) throw nb::python_error();
  if (PyUnicode_Check(path.ptr())) path = nb::steal(PyUnicode_EncodeFSDefault(path.ptr()));
  if (!path.is_valid()) throw nb::python_error();
  const std::string bytes(PyBytes_AS_STRING(path.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(path.ptr())));
  if (bytes.find('\0') != std::string::npos) {
    throw InvalidSetting("disttune: " + std::string(setting) + " " +
                         nb::cast<std::string>(nb::repr(value)) + " holds a NUL byte, which no path can");
  }
  if (bytes.empty()) return std::nullopt;
  return std::filesystem::path(bytes);
}

/// The disk store root given from Python: None and "" both mean the default
/// (cache_root_setting(): TRITON_DIST_AUTOTUNE_CACHE_DIR, else kDefaultCacheRoot).
inline std::optional<std::filesystem::path> cache_dir_from_python(nanobind::handle cache_dir) {
  return directory_setting(cache_dir, "cache_dir");
}

}  // namespace disttune::python
