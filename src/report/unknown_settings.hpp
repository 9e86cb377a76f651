// One warning per TRITON_DIST_AUTOTUNE_* variable that is no setting, naming the closest one.
#pragma once

namespace disttune::detail {

/// Warns, once per process and name, of each TRITON_DIST_AUTOTUNE_* variable in the
/// environment that disttune does not read (unknown_settings()): "NAME is not a disttune
/// setting and is ignored; did you mean CLOSEST? (docs/settings.md lists them)".
void warn_unknown_settings();

}  // namespace disttune::detail
