// KeyClaims and the directory's claim board: exclusive creation, the file's time as the
// lease's start, an expired claim moved aside by one taker.
#include "store/key_claims.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <random>
#include <system_error>

#include "disttune/config.hpp"
#include "util/unique_fd.hpp"

namespace disttune::detail {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& doing, const fs::path& path) {
  throw std::system_error(errno, std::generic_category(),
                          "disttune: cannot " + doing + " the claim " + path.string());
}

// The holder written in the claim file at `path` ("" if it is gone or empty).
std::string holder_in(const fs::path& path) {
  const UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return "";
  std::array<char, 512> buffer{};
  const ssize_t got = read(fd.get(), buffer.data(), buffer.size());
  return got > 0 ? std::string(buffer.data(), static_cast<std::size_t>(got)) : "";
}

bool expired(const struct stat& status, std::chrono::milliseconds lease) {
  const auto touched = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(status.st_mtim.tv_sec) +
          std::chrono::nanoseconds(status.st_mtim.tv_nsec)));
  return std::chrono::system_clock::now() - touched > lease;
}

class DirectoryClaimBoard : public ClaimBoard {
 public:
  explicit DirectoryClaimBoard(fs::path root) : dir_(std::move(root) / ".claims") {}

  bool claim(const std::string& name, const std::string& holder,
             std::chrono::milliseconds lease) override {
    std::error_code ignored;
    fs::create_directories(dir_, ignored);
    const fs::path path = path_of(name);
    // A few rounds: the claim may be released or moved aside between two steps.
    for (int round = 0; round < 4; ++round) {
      const UniqueFd created(
          open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
      if (created) {
        if (write(created.get(), holder.data(), holder.size()) !=
            static_cast<ssize_t>(holder.size())) {
          fail("write", path);
        }
        return true;
      }
      if (errno != EEXIST) fail("create", path);
      struct stat status {};
      if (lstat(path.c_str(), &status) != 0) {
        if (errno == ENOENT) continue;
        fail("inspect", path);
      }
      if (holder_in(path) == holder) {
        if (utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW) != 0)
          fail("renew", path);
        return true;
      }
      if (!expired(status, lease)) return false;
      // Expired: one taker's rename moves it aside; the others find it gone and race to
      // create it afresh, which one of them wins.
      const fs::path aside = path.string() + "." + sha256_hex(holder).substr(0, 16) + ".expired";
      if (rename(path.c_str(), aside.c_str()) != 0) {
        if (errno == ENOENT) continue;
        fail("take over", path);
      }
      unlink(aside.c_str());
    }
    return false;
  }

  void release(const std::string& name, const std::string& holder) override {
    const fs::path path = path_of(name);
    if (holder_in(path) == holder) unlink(path.c_str());
  }

 private:
  fs::path path_of(const std::string& name) const { return dir_ / (sha256_hex(name) + ".claim"); }

  fs::path dir_;
};

std::string new_holder() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::random_device random;
  return std::string(host.data()) + ":" + std::to_string(getpid()) + ":" + std::to_string(random());
}

}  // namespace

std::unique_ptr<ClaimBoard> directory_claim_board(const fs::path& root) {
  return std::make_unique<DirectoryClaimBoard>(root);
}

KeyClaims::KeyClaims(std::vector<std::unique_ptr<ClaimBoard>> boards,
                     std::chrono::milliseconds lease)
    : boards_(std::move(boards)), lease_(lease), holder_(new_holder()) {
  renewer_ = std::thread([this] { renew_until_stopped(); });
}

KeyClaims::~KeyClaims() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stopping_changed_.notify_all();
  renewer_.join();
  for (const std::string& name : held_) {
    for (const auto& board : boards_) board->release(name, holder_);
  }
}

bool KeyClaims::claim(const std::string& name) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < boards_.size(); ++i) {
    if (!boards_[i]->claim(name, holder_, lease_)) {
      for (std::size_t granted = 0; granted < i; ++granted)
        boards_[granted]->release(name, holder_);
      return false;
    }
  }
  held_.insert(name);
  return true;
}

void KeyClaims::release(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (held_.erase(name) == 0) return;
  for (const auto& board : boards_) board->release(name, holder_);
}

void KeyClaims::renew_until_stopped() {
  std::unique_lock lock(mutex_);
  while (!stopping_changed_.wait_for(lock, lease_ / 3, [this] { return stopping_; })) {
    for (const std::string& name : held_) {
      for (const auto& board : boards_) {
        try {
          board->claim(name, holder_, lease_);
        } catch (const std::system_error&) {
          // The next renewal tries again; a claim that lapses is only tuned twice.
        }
      }
    }
  }
}

}  // namespace disttune::detail
