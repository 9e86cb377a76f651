// One warning per TRITON_DIST_AUTOTUNE_* variable that is no setting.
#include "report/unknown_settings.hpp"

#include "disttune/settings.hpp"
#include "report/warning.hpp"

namespace disttune::detail {

void warn_unknown_settings() {
  for (const UnknownSetting& unknown : unknown_settings()) {
    warn_once("unknown setting " + unknown.name,
              unknown.name + " is not a disttune setting and is ignored; did you mean " + unknown.closest +
                  "? (docs/settings.md lists them)");
  }
}

}  // namespace disttune::detail
