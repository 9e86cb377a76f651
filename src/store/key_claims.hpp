// KeyClaims: sweeps that share a store claim each key before tuning it, so that they split
// the keys; a claim lives for a lease its holder renews, so a dead sweep's keys are taken
// over once its lease runs out.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "disttune/redis_store.hpp"

namespace disttune::detail {

/// Where claims are written: the cache directory or Redis. Every holder of one store sees
/// the same board.
class ClaimBoard {
 public:
  virtual ~ClaimBoard() = default;
  /// Claims `name` for `holder` for `lease`: true when `holder` holds it now (it was free,
  /// its claim had expired, or `holder` held it already and the lease is renewed); false
  /// while another holder's claim lives.
  virtual bool claim(const std::string& name, const std::string& holder,
                     std::chrono::milliseconds lease) = 0;
  /// Drops `holder`'s claim on `name`; another holder's claim is left alone.
  virtual void release(const std::string& name, const std::string& holder) = 0;
};

/// Claims as files <root>/.claims/<SHA-256 of the name>.claim holding the holder's name,
/// created exclusively; a claim whose file was not touched for its lease has expired. The
/// cache listing skips the directory (its name starts with '.').
std::unique_ptr<ClaimBoard> directory_claim_board(const std::filesystem::path& root);

/// Claims as Redis keys <prefix>claim:<SHA-256 of the name> holding the holder's name, with
/// the lease as their time to live (one Lua script claims or renews, one releases). A Redis
/// that fails gives one warning and then grants every claim (the sweep goes on alone).
std::unique_ptr<ClaimBoard> redis_claim_board(const RedisOptions& options);

/// This process's claims on its boards (a claim holds when every board grants it), renewed
/// by a thread every third of the lease until released; all released when destroyed.
class KeyClaims {
 public:
  KeyClaims(std::vector<std::unique_ptr<ClaimBoard>> boards, std::chrono::milliseconds lease);
  ~KeyClaims();
  KeyClaims(const KeyClaims&) = delete;
  KeyClaims& operator=(const KeyClaims&) = delete;

  /// Whether this process holds `name` now (claimed, or held already); false while another
  /// holder's live claim has it.
  bool claim(const std::string& name);
  /// Gives `name` up (nothing if not held).
  void release(const std::string& name);
  /// This process's name on the boards: host, process id and a random part.
  const std::string& holder() const { return holder_; }

 private:
  void renew_until_stopped();

  std::vector<std::unique_ptr<ClaimBoard>> boards_;
  std::chrono::milliseconds lease_;
  std::string holder_;
  std::mutex mutex_;
  std::condition_variable stopping_changed_;
  std::set<std::string> held_;
  bool stopping_ = false;
  std::thread renewer_;
};

}  // namespace disttune::detail
