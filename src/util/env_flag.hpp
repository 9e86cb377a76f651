// Boolean environment switches (TRITON_DIST_AUTOTUNE_ALWAYS_TUNE, ..._VERSION_CHECK).
#pragma once

namespace disttune::detail {

/// True for "1", "true", "yes", "on"; false when unset or "", "0", "false", "no", "off"
/// (any case). Anything else throws std::invalid_argument naming the variable.
bool env_flag(const char* name);

}  // namespace disttune::detail
