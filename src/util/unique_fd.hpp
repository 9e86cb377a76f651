// UniqueFd: an owned POSIX file descriptor that closes itself.
#pragma once

#include <unistd.h>

#include <utility>

namespace disttune::detail {

/// Owns one file descriptor (or none, -1) and closes it when destroyed. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  /// The descriptor, or -1.
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

  /// Closes the descriptor now (if any); returns close()'s result so that a late write
  /// error can be reported.
  int reset() {
    if (fd_ < 0) return 0;
    return ::close(std::exchange(fd_, -1));
  }

 private:
  int fd_ = -1;
};

}  // namespace disttune::detail
