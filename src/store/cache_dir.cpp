// CacheDir: opening cache directories without following symlinks, and checking them.
#include "store/cache_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace disttune::detail {
namespace {

constexpr int kOpenDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::string error_text(int error) {
  return std::strerror(error);
}

// Why opening `name` (relative to `at`) as a directory failed, in words.
std::string describe_open_failure(int at, const char* name, int error) {
  if (error == ELOOP || error == ENOTDIR) {
    struct stat status {};
    if (fstatat(at, name, &status, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(status.st_mode)) return "is a symbolic link (never followed)";
      if (!S_ISDIR(status.st_mode)) return "is not a directory";
    }
  }
  return "cannot be opened: " + error_text(error);
}

void check_directory(int fd, const std::filesystem::path& path) {
  struct stat status {};
  if (fstat(fd, &status) != 0)
    throw CacheDirError(path, "cannot be inspected: " + error_text(errno));
  if (!S_ISDIR(status.st_mode)) throw CacheDirError(path, "is not a directory");
  const uid_t me = geteuid();
  if (status.st_uid != me) {
    throw CacheDirError(path, "is owned by uid " + std::to_string(status.st_uid) +
                                  ", not by this user (uid " + std::to_string(me) + ")");
  }
  if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    std::ostringstream mode;
    mode << std::oct << (status.st_mode & 07777);
    throw CacheDirError(path, "is writable by group or others (mode 0" + mode.str() + ")");
  }
}

// mkdir -p with mode 0700 for every missing component of `path`.
void make_directories(const std::filesystem::path& path) {
  std::filesystem::path prefix;
  for (const auto& part : path) {
    prefix /= part;
    if (prefix == prefix.root_path()) continue;
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      throw CacheDirError(prefix, "cannot be created: " + error_text(errno));
    }
  }
}

}  // namespace

CacheDirError::CacheDirError(std::filesystem::path path, const std::string& reason)
    : std::runtime_error(path.string() + " " + reason), path_(std::move(path)) {}

CacheDir::CacheDir(UniqueFd fd, std::filesystem::path path)
    : fd_(std::move(fd)), path_(std::move(path)) {}

std::optional<CacheDir> CacheDir::open(const std::filesystem::path& path, bool create) {
  if (create) make_directories(path);
  UniqueFd fd(::open(path.c_str(), kOpenDirFlags));
  if (!fd) {
    const int error = errno;
    if (error == ENOENT && !create) return std::nullopt;
    throw CacheDirError(path, describe_open_failure(AT_FDCWD, path.c_str(), error));
  }
  check_directory(fd.get(), path);
  return CacheDir(std::move(fd), path);
}

std::optional<CacheDir> CacheDir::open_child(const std::string& name, bool create) const {
  const std::filesystem::path child_path = path_ / name;
  if (create && mkdirat(fd(), name.c_str(), 0700) != 0 && errno != EEXIST) {
    throw CacheDirError(child_path, "cannot be created: " + error_text(errno));
  }
  UniqueFd child(openat(fd(), name.c_str(), kOpenDirFlags));
  if (!child) {
    const int error = errno;
    if (error == ENOENT && !create) return std::nullopt;
    throw CacheDirError(child_path, describe_open_failure(fd(), name.c_str(), error));
  }
  check_directory(child.get(), child_path);
  return CacheDir(std::move(child), child_path);
}

}  // namespace disttune::detail
