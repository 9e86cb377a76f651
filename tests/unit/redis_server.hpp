// Test fixture: a real redis-server on 127.0.0.1, on a free port, stopped on destruction.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "store/redis/connection.hpp"

#ifndef DISTTUNE_REDIS_SERVER
#error "DISTTUNE_REDIS_SERVER must name the redis-server executable"
#endif

namespace disttune::testing {

/// A port on 127.0.0.1 that nothing listened on a moment ago.
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("no free port");
  }
  close(fd);
  return ntohs(address.sin_port);
}

/// redis-server without persistence, started in the constructor (ready to answer when it
/// returns) and killed in the destructor. `arguments` are added to its command line.
class RedisServer {
 public:
  explicit RedisServer(std::vector<std::string> arguments = {}) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      start(arguments);
      if (wait_until_ready()) return;
      stop();
    }
    throw std::runtime_error("redis-server did not start");
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& login = "", int database = 0) const {
    return "redis://" + login + "127.0.0.1:" + std::to_string(port_) + "/" +
           std::to_string(database);
  }
  /// Kills the server at once (SIGKILL), as a crash would.
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGCONT);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  /// Stops the server from answering (SIGSTOP) until resume(): a server that is too slow.
  void pause() { kill(pid_, SIGSTOP); }
  void resume() { kill(pid_, SIGCONT); }

  /// A command from a client of its own, e.g. to plant a value.
  detail::RedisReply command(std::initializer_list<std::string_view> arguments) const {
    detail::RedisEndpoint endpoint{"127.0.0.1", port_, 0, "", "", false};
    detail::RedisConnection connection(endpoint, std::chrono::seconds(10));
    return connection.command(arguments);
  }

 private:
  void start(const std::vector<std::string>& extra) {
    std::vector<std::string> words = {DISTTUNE_REDIS_SERVER, "--port", std::to_string(port_),
                                      "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                      "--loglevel", "warning", "--dir", "/tmp"};
    words.insert(words.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (std::string& word : words) argv.push_back(word.data());
      argv.push_back(nullptr);
      const int quiet = open("/dev/null", O_WRONLY);  // its start-up banner and warnings
      dup2(quiet, STDOUT_FILENO);
      dup2(quiet, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }

  bool wait_until_ready() {
    for (int i = 0; i < 200; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      try {
        detail::RedisEndpoint endpoint{"127.0.0.1", port_, 0, "", "", false};
        detail::RedisConnection probe(endpoint, std::chrono::milliseconds(500));
        probe.command({"PING"});  // any answer, NOAUTH included, means it is up
        return true;
      } catch (const detail::RedisFault&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    return false;
  }

  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace disttune::testing
