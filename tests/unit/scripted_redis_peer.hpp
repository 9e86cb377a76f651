// Test fixture: a fake Redis server on 127.0.0.1 that answers the first command with a script.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>

namespace disttune::testing {

/// Listens on a free port of 127.0.0.1, accepts one client, reads its first command and
/// then sends `reply` `chunk` bytes at a time, `pause` apart (a peer that trickles), and
/// finally holds the connection open until the client closes it. sent() says how many
/// bytes went out before the client hung up.
class ScriptedRedisPeer {
 public:
  ScriptedRedisPeer(std::string reply, std::size_t chunk, std::chrono::milliseconds pause)
      : reply_(std::move(reply)), chunk_(chunk), pause_(pause) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(listener_, 1) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      throw std::runtime_error("the scripted peer cannot listen");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedRedisPeer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  ScriptedRedisPeer(const ScriptedRedisPeer&) = delete;
  ScriptedRedisPeer& operator=(const ScriptedRedisPeer&) = delete;

  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  /// Bytes of the reply sent before the client closed the connection (all of them if not).
  std::size_t sent() const { return sent_; }
  std::size_t size() const { return reply_.size(); }

 private:
  // Waits up to `ms` for `events` on `fd`; false once the test ends.
  bool ready(int fd, short events, int ms) {
    pollfd wanted{fd, events, 0};
    while (!stop_) {
      if (::poll(&wanted, 1, std::min(ms, 100)) > 0) return true;
      if ((ms -= 100) <= 0) return false;
    }
    return false;
  }

  void serve() {
    if (!ready(listener_, POLLIN, 60000)) return;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    char request[4096];
    if (ready(client, POLLIN, 60000) && ::recv(client, request, sizeof request, 0) > 0) {
      for (std::size_t at = 0; at < reply_.size() && !stop_; at += chunk_) {
        const std::size_t n = std::min(chunk_, reply_.size() - at);
        if (::send(client, reply_.data() + at, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) break;
        sent_ = at + n;
        if (at + n < reply_.size()) {
          // A closed client shows as readable (end of stream) during the pause.
          char byte = 0;
          if (ready(client, POLLIN, static_cast<int>(pause_.count())) &&
              ::recv(client, &byte, 1, MSG_DONTWAIT) <= 0) {
            break;
          }
        }
      }
      char byte = 0;
      while (ready(client, POLLIN, 60000) && ::recv(client, &byte, 1, 0) > 0) {
      }
    }
    ::close(client);
  }

  std::string reply_;
  std::size_t chunk_;
  std::chrono::milliseconds pause_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> sent_{0};
  std::thread thread_;
};

}  // namespace disttune::testing
