// The processes of an isolated worker's process group: counted and killed as a whole.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace disttune::detail {

/// The most processes an isolated worker's group may hold (the worker, what its configs
/// started, and what those started); a candidate after which the group holds more fails
/// with "started more than N processes", and the group is killed.
inline constexpr std::size_t kMaxWorkerProcesses = 256;

/// How many live (not zombie) processes are in process group `group` (from /proc); stops
/// counting past `at_most`.
std::size_t live_processes_in_group(pid_t group, std::size_t at_most);

/// SIGKILL to every process of `group`, however many it forks meanwhile.
void kill_process_group(pid_t group);

}  // namespace disttune::detail
