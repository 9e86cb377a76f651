// CacheDir: an open cache directory that passed the safety checks (real directory, ours,
// not writable by group or others).
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "util/unique_fd.hpp"

namespace disttune::detail {

/// A directory that cannot be used as a cache directory; path() names it, what() says why.
class CacheDirError : public std::runtime_error {
 public:
  CacheDirError(std::filesystem::path path, const std::string& reason);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// An open directory that is a real directory (the last component is never a symlink),
/// owned by this user and not writable by group or others. Entries are reached through
/// its descriptor (openat and friends), so it cannot be swapped after the check.
/// Move-only; closes itself.
class CacheDir {
 public:
  /// Opens `path`. When `create` is true, it and its missing parents are created with
  /// mode 0700 first; otherwise an absent directory gives nullopt. Throws CacheDirError
  /// when it cannot be opened or fails the checks.
  static std::optional<CacheDir> open(const std::filesystem::path& path, bool create);

  /// The child directory `name` (one path component), by the same rules.
  std::optional<CacheDir> open_child(const std::string& name, bool create) const;

  int fd() const { return fd_.get(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  CacheDir(UniqueFd fd, std::filesystem::path path);
  UniqueFd fd_;
  std::filesystem::path path_;
};

}  // namespace disttune::detail
