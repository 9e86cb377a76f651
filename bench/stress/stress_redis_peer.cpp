// Stress of the Redis store against hostile peers: rounds of a fake server (on 127.0.0.1)
// that answers the store's first command with a random reply at a random pace (one to
// eight bytes every 0 to 100 ms): a well-formed record trickled, junk, a reply announcing
// far more than a command may receive, or a reply cut short and then silence. Each round's
// store has a 300 ms deadline per command. Reports, per kind, the rounds whose lookup
// ended as it must (a miss and a store that gave up, the peer cut before it finished
// whenever its drip takes twice the deadline) and fails on any other outcome.
//   usage: stress_redis_peer [rounds=40] [seed=1]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include "disttune/redis_store.hpp"
#include "scripted_redis_peer.hpp"  // tests/unit
#include "store/redis/store.hpp"
#include "store_test_support.hpp"   // tests/unit

namespace {

using namespace disttune;
using testing::ScriptedRedisPeer;

struct Round {
  std::string kind;
  std::string reply;
};

Round random_round(std::mt19937& random) {
  const std::string record = record_to_json(testing::sample_record()).dump();
  switch (random() % 4) {
    case 0:
      return {"trickled record", "$" + std::to_string(record.size()) + "\r\n" + record + "\r\n"};
    case 1: {
      std::string junk(64 + random() % 512, '\0');
      for (char& byte : junk) byte = static_cast<char>(random());
      return {"junk", junk};
    }
    case 2:
      return {"announces too much", random() % 2 ? "*2147483648\r\n" : "$1099511627776\r\n"};
    default:
      return {"cut short", "$" + std::to_string(record.size()) + "\r\n" + record.substr(0, record.size() / 2)};
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  std::mt19937 random(argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1u);
  std::map<std::string, std::pair<int, int>> tally;  // kind -> (as expected, rounds)
  int wrong = 0;
  for (int round = 0; round < rounds; ++round) {
    const Round chosen = random_round(random);
    const std::size_t pace = 1 + random() % 8;
    const auto pause = std::chrono::milliseconds(random() % 101);
    ScriptedRedisPeer peer(chosen.reply, pace, pause);
    RedisOptions options;
    options.url = peer.url();
    options.prefix = "stress:";
    options.timeout = std::chrono::milliseconds(300);
    const detail::RedisStore store(options);
    const bool found = store.load(testing::sample_record().id).has_value();
    // The peer's whole drip takes (chunks - 1) pauses. Twice the deadline or more: it must be
    // cut. Shorter: a hit, or a miss after a time-out on a loaded machine.
    const std::size_t chunks = (chosen.reply.size() + pace - 1) / pace;
    const bool outlasts = static_cast<long long>(chunks - 1) * pause.count() >= 600;
    const bool cut = peer.sent() < peer.size();
    bool expected = true;
    if (chosen.kind == "trickled record") {
      expected = outlasts ? !found && cut && store.gave_up() : found || store.gave_up();
    }
    if (chosen.kind == "announces too much" || chosen.kind == "cut short") {
      expected = !found && store.gave_up();
    }
    if (chosen.kind == "junk") expected = !found;
    auto& [good, all] = tally[chosen.kind];
    ++all;
    if (expected) {
      ++good;
    } else {
      ++wrong;
      std::fprintf(stderr, "round %d (%s, %zu bytes every %lld ms): found=%d cut=%d gave_up=%d\n",
                   round, chosen.kind.c_str(), pace, static_cast<long long>(pause.count()), found, cut,
                   store.gave_up());
    }
  }
  for (const auto& [kind, counts] : tally) {
    std::printf("%-20s %d of %d rounds as expected\n", kind.c_str(), counts.first, counts.second);
  }
  std::printf("%s\n", wrong == 0 ? "stress_redis_peer: every round as expected" : "stress_redis_peer: FAILED");
  return wrong == 0 ? 0 : 1;
}
