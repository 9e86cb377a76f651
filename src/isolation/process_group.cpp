// Process groups from /proc/<pid>/stat: the group id is the fifth field, the state the third.
#include "isolation/process_group.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string_view>

namespace disttune::detail {
namespace {

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

// Whether /proc/<pid>/stat names a live process of `group`.
bool live_member(const char* pid, pid_t group) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone meanwhile
  char text[512];
  const ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return false;
  text[got] = '\0';
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')', so parse after the last ')'.
  const std::string_view stat(text, static_cast<std::size_t>(got));
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size()) return false;
  char state = 0;
  long ppid = 0;
  long pgrp = 0;
  if (std::sscanf(text + close + 2, "%c %ld %ld", &state, &ppid, &pgrp) != 3) return false;
  return pgrp == group && state != 'Z' && state != 'X';
}

}  // namespace

std::size_t live_processes_in_group(pid_t group, std::size_t at_most) {
  const std::unique_ptr<DIR, DirCloser> proc(::opendir("/proc"));
  if (!proc) return 0;
  std::size_t count = 0;
  while (const dirent* entry = ::readdir(proc.get())) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    if (live_member(entry->d_name, group) && ++count > at_most) break;
  }
  return count;
}

void kill_process_group(pid_t group) {
  // A member that forks between the signal's delivery to its parent and to itself leaves a
  // child in the group: signal until the group is empty (ESRCH), a bounded number of times.
  for (int round = 0; round < 100; ++round) {
    if (::kill(-group, SIGKILL) != 0 && errno == ESRCH) return;
    if (live_processes_in_group(group, 0) == 0) return;
    ::usleep(1000);
  }
}

}  // namespace disttune::detail
