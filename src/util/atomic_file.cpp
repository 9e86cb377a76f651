// AtomicFile: temp file in the same directory, fsync, rename, fsync of the directory.
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <system_error>
#include <utility>

namespace disttune::detail {
namespace {

constexpr int kCreateAttempts = 100;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::string random_suffix() {
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  thread_local std::mt19937_64 engine{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, sizeof kAlphabet - 2);
  std::string suffix(8, '0');
  for (char& c : suffix) c = kAlphabet[pick(engine)];
  return suffix;
}

}  // namespace

AtomicFile::AtomicFile(int dir_fd, std::string name) : dir_fd_(dir_fd), name_(std::move(name)) {
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    std::string temp_name = name_ + ".tmp-" + random_suffix();
    UniqueFd fd(openat(dir_fd_, temp_name.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd) {
      fd_ = std::move(fd);
      temp_name_ = std::move(temp_name);
      return;
    }
    if (errno != EEXIST) throw_errno("cannot create temporary file " + temp_name);
  }
  throw std::system_error(EEXIST, std::generic_category(),
                          "cannot find a free temporary name for " + name_);
}

AtomicFile::~AtomicFile() {
  discard();
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : dir_fd_(other.dir_fd_),
      name_(std::move(other.name_)),
      temp_name_(std::exchange(other.temp_name_, {})),
      fd_(std::move(other.fd_)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    dir_fd_ = other.dir_fd_;
    name_ = std::move(other.name_);
    temp_name_ = std::exchange(other.temp_name_, {});
    fd_ = std::move(other.fd_);
  }
  return *this;
}

void AtomicFile::discard() noexcept {
  fd_.reset();
  if (!temp_name_.empty()) unlinkat(dir_fd_, temp_name_.c_str(), 0);
  temp_name_.clear();
}

void AtomicFile::write(std::string_view bytes) {
  if (!fd_)
    throw std::system_error(EBADF, std::generic_category(), "write after commit of " + name_);
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_.get(), bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw_errno("cannot write " + temp_name_);
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
}

void AtomicFile::commit() {
  if (!fd_) throw std::system_error(EBADF, std::generic_category(), "commit twice of " + name_);
  if (fsync(fd_.get()) != 0) throw_errno("cannot fsync " + temp_name_);
  if (fd_.reset() != 0) throw_errno("cannot close " + temp_name_);
  if (renameat(dir_fd_, temp_name_.c_str(), dir_fd_, name_.c_str()) != 0) {
    throw_errno("cannot rename " + temp_name_ + " to " + name_);
  }
  temp_name_.clear();
  if (fsync(dir_fd_) != 0) throw_errno("cannot fsync the directory of " + name_);
}

}  // namespace disttune::detail
