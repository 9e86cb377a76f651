// The compile threads a first call is taken to have: how many compiles a strategy's names keep busy at once.
#pragma once

#include <cstddef>

namespace disttune::detail {

/// The compile threads a first call is taken to have (Python's `precompile_threads` default;
/// the process's compile pool on a 16-core host). A strategy that names candidates ahead of
/// its rounds names at most this many with the round it runs beside, so that no guess waits
/// for a thread and none queues before a later round's own candidates.
inline constexpr std::size_t kCompileThreads = 16;

}  // namespace disttune::detail
