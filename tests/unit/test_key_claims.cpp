// Tests of the key claims sweeps share (src/store/key_claims): on each board, a live claim
// keeps other holders out, its holder renews it, a release frees it, and an expired one is
// taken over; KeyClaims holds a name only when every board grants it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/key_claims.hpp"
#include "store_test_support.hpp"
#ifdef DISTTUNE_REDIS_SERVER
#include "redis_server.hpp"
#endif

namespace disttune::detail {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

constexpr std::chrono::milliseconds kLong = 60s;
constexpr std::chrono::milliseconds kShort = 1s;

// The board's rules, the same for every board.
void expect_claim_rules(ClaimBoard& board) {
  EXPECT_TRUE(board.claim("f key 1", "sweep-a", kLong));
  EXPECT_FALSE(board.claim("f key 1", "sweep-b", kLong));  // a live claim keeps others out
  EXPECT_TRUE(board.claim("f key 1", "sweep-a", kLong));   // its holder renews it
  EXPECT_TRUE(board.claim("f key 2", "sweep-b", kLong));   // another name is free
  board.release("f key 1", "sweep-b");                     // not b's: left alone
  EXPECT_FALSE(board.claim("f key 1", "sweep-b", kLong));
  board.release("f key 1", "sweep-a");
  EXPECT_TRUE(board.claim("f key 1", "sweep-b", kLong));  // released: free
  // A claim not renewed for its lease is taken over (its holder died).
  EXPECT_TRUE(board.claim("f key 3", "dead-sweep", kShort));
  EXPECT_FALSE(board.claim("f key 3", "sweep-a", kShort));
  std::this_thread::sleep_for(kShort + 300ms);
  EXPECT_TRUE(board.claim("f key 3", "sweep-a", kShort));
  EXPECT_FALSE(board.claim("f key 3", "dead-sweep", kShort));
}

TEST(DirectoryClaimBoard, FollowsTheClaimRules) {
  const TempDir root;
  const std::unique_ptr<ClaimBoard> board = directory_claim_board(root.path());
  expect_claim_rules(*board);
  EXPECT_TRUE(std::filesystem::is_directory(root.path() / ".claims"));
}

#ifdef DISTTUNE_REDIS_SERVER
TEST(RedisClaimBoard, FollowsTheClaimRules) {
  const testing::RedisServer server;
  RedisOptions options;
  options.url = server.url();
  const std::unique_ptr<ClaimBoard> board = redis_claim_board(options);
  expect_claim_rules(*board);
}
#endif

TEST(KeyClaims, HoldsANameWhileItsClaimIsRenewedAndReleasesItWhenDestroyed) {
  const TempDir root;
  const auto boards = [&] {
    std::vector<std::unique_ptr<ClaimBoard>> made;
    made.push_back(directory_claim_board(root.path()));
    return made;
  };
  auto first = std::make_unique<KeyClaims>(boards(), kShort);
  KeyClaims second(boards(), kShort);
  EXPECT_NE(first->holder(), second.holder());
  EXPECT_TRUE(first->claim("key"));
  std::this_thread::sleep_for(2 * kShort);  // renewed meanwhile, every third of the lease
  EXPECT_FALSE(second.claim("key"));
  first.reset();  // released
  EXPECT_TRUE(second.claim("key"));
}

}  // namespace
}  // namespace disttune::detail
