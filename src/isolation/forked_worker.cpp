// ForkedWorker: a fork()ed process that runs one tuning's candidates, over a socket pair.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "disttune/isolation.hpp"
#include "isolation/process_group.hpp"
#include "util/exception_text.hpp"

namespace disttune {
namespace {

// A request is a kind byte and a candidate index; a reply an ok byte, a duration and an
// error text (length, bytes).
constexpr char kCheck = 'c';
constexpr char kRun = 'r';

/// Writes all of `size` bytes; false if the peer is gone.
bool write_all(int socket, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t sent = ::send(socket, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return true;
}

/// Reads all of `size` bytes; false on end of stream or error.
bool read_all(int socket, void* data, std::size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t got = ::recv(socket, bytes, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

std::string exit_reason(int status) {
  if (WIFSIGNALED(status)) {
    const int number = WTERMSIG(status);
    const char* name = ::sigabbrev_np(number);
    return "crashed (signal " + (name ? "SIG" + std::string(name) : std::to_string(number)) + ")";
  }
  if (WIFEXITED(status)) return "the worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "the worker ended";
}

std::string seconds_text(std::chrono::milliseconds duration) {
  std::ostringstream text;
  text << static_cast<double>(duration.count()) / 1000.0;
  return text.str();
}

}  // namespace

ForkedWorker::ForkedWorker(std::function<std::optional<std::string>(std::size_t)> check,
                           std::function<void()> restore, std::function<void(std::size_t)> run,
                           IsolationOptions options)
    : check_(std::move(check)), restore_(std::move(restore)), run_(std::move(run)), options_(options) {
  if (options_.candidate_timeout.count() <= 0) {
    throw std::invalid_argument("disttune: the candidate timeout of isolated runs must be positive");
  }
}

ForkedWorker::~ForkedWorker() { stop(); }

void ForkedWorker::start() {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw std::system_error(errno, std::generic_category(), "disttune: socketpair for the worker");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(sockets[0]);
    ::close(sockets[1]);
    throw std::system_error(error, std::generic_category(), "disttune: fork of the worker");
  }
  if (pid == 0) {
    ::close(sockets[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the caller
    // A group of its own: what its configs start is killed with it (stop()).
    ::setpgid(0, 0);
    serve(sockets[1]);
  }
  ::setpgid(pid, pid);  // also here, so that it holds before the first request
  ::close(sockets[1]);
  pid_ = pid;
  socket_ = sockets[0];
}

void ForkedWorker::stop() {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  if (pid_ > 0) {
    detail::kill_process_group(pid_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

void ForkedWorker::serve(int socket) {
  const pid_t worker = ::getpid();
  while (true) {
    char kind = 0;
    std::uint64_t candidate = 0;
    if (!read_all(socket, &kind, 1) || !read_all(socket, &candidate, sizeof candidate)) ::_exit(0);
    char ok = 1;
    double ms = 0.0;
    std::string error;
    try {
      if (kind == kCheck) {
        if (std::optional<std::string> failure = check_(candidate)) {
          ok = 0;
          error = std::move(*failure);
        }
      } else {
        restore_();
        const auto began = std::chrono::steady_clock::now();
        run_(candidate);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began).count();
      }
    } catch (...) {
      ok = 0;
      error = detail::exception_text(std::current_exception());
    }
    // A process the config forked that returned here is not the worker: it never answers.
    if (::getpid() != worker) ::_exit(0);
    const std::uint32_t length = static_cast<std::uint32_t>(error.size());
    if (!write_all(socket, &ok, 1) || !write_all(socket, &ms, sizeof ms) ||
        !write_all(socket, &length, sizeof length) || !write_all(socket, error.data(), length)) {
      ::_exit(0);
    }
  }
}

ForkedWorker::Reply ForkedWorker::request(char kind, std::size_t c) {
  if (pid_ <= 0) start();
  const std::uint64_t candidate = c;
  Reply reply;
  pollfd ready{socket_, POLLIN, 0};
  int polled = -1;
  const auto deadline = std::chrono::steady_clock::now() + options_.candidate_timeout;
  if (write_all(socket_, &kind, 1) && write_all(socket_, &candidate, sizeof candidate)) {
    do {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      polled = ::poll(&ready, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    } while (polled < 0 && errno == EINTR);
    if (polled == 0) {
      stop();
      throw std::runtime_error("disttune: timed out after " + seconds_text(options_.candidate_timeout) +
                               " s; the worker is restarted");
    }
    char ok = 0;
    std::uint32_t length = 0;
    if (read_all(socket_, &ok, 1) && read_all(socket_, &reply.ms, sizeof reply.ms) &&
        read_all(socket_, &length, sizeof length)) {
      reply.error.resize(length);
      if (read_all(socket_, reply.error.data(), length)) {
        reply.ok = ok != 0;
        if (detail::live_processes_in_group(pid_, detail::kMaxWorkerProcesses) >
            detail::kMaxWorkerProcesses) {
          stop();
          throw std::runtime_error("disttune: the config started more than " +
                                   std::to_string(detail::kMaxWorkerProcesses) +
                                   " processes; they are killed and the worker is restarted");
        }
        return reply;
      }
    }
  }
  // The worker is gone: say how it ended, and kill what it left in its group.
  ::close(socket_);
  socket_ = -1;
  detail::kill_process_group(pid_);  // the worker's zombie keeps its group id taken
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  throw std::runtime_error("disttune: " + exit_reason(status));
}

void ForkedWorker::check(std::size_t c) {
  Reply reply = request(kCheck, c);
  if (!reply.ok) throw std::runtime_error(reply.error);
}

double ForkedWorker::run(std::size_t c) {
  Reply reply = request(kRun, c);
  if (!reply.ok) throw std::runtime_error(reply.error);
  return reply.ms;
}

std::vector<double> WorkerTimer::collect() { return std::exchange(samples_, {}); }

}  // namespace disttune
