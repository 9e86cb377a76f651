// Fuzz target: bytes of Redis replies, in the chunks a trickling peer sends, through the
// store's reply limits and hiredis's reader: no crash, no leak, and no reply past the limits.
#include <hiredis/hiredis.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "store/redis/reply_limits.hpp"

namespace {

constexpr std::size_t kElements = 16;
constexpr std::size_t kBytes = 4096;

// A reply the limits let through holds no more than they allow.
void check(const redisReply& reply) {
  if ((reply.type == REDIS_REPLY_STRING || reply.type == REDIS_REPLY_STATUS ||
       reply.type == REDIS_REPLY_ERROR) && reply.len > kBytes) {
    std::fprintf(stderr, "a string of %zu bytes passed the limits\n", reply.len);
    std::abort();
  }
  if (reply.type != REDIS_REPLY_ARRAY) return;
  if (reply.elements > kElements) {
    std::fprintf(stderr, "an array of %zu elements passed the limits\n", reply.elements);
    std::abort();
  }
  for (std::size_t i = 0; i < reply.elements; ++i) check(*reply.element[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t pace = data[0] % 16 + 1;  // the peer sends 1 to 16 bytes at a time
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  disttune::detail::RedisReplyLimits limits(kElements, kBytes);
  redisReader* reader = redisReaderCreate();
  bool open = true;
  while (open && !rest.empty()) {
    const std::string_view part = rest.substr(0, pace);
    rest.remove_prefix(part.size());
    // Refused: the connection closes, as RedisConnection does.
    if (!limits.take(part).empty() || redisReaderFeed(reader, part.data(), part.size()) != REDIS_OK) break;
    while (true) {
      void* reply = nullptr;
      if (redisReaderGetReply(reader, &reply) != REDIS_OK) {
        open = false;  // a protocol error: the connection closes
        break;
      }
      if (reply == nullptr) break;
      check(*static_cast<redisReply*>(reply));
      freeReplyObject(reply);
      limits.begin_command();  // the next reply is the next command's
    }
  }
  redisReaderFree(reader);
  return 0;
}
