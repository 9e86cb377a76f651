// The search's stopping rule: its budget grows while its fastest so far is recent.
#include "strategies/late_fastest.hpp"

#include <algorithm>

namespace disttune::detail {

std::size_t budget_after_fastest(std::size_t budget, std::size_t named,
                                 std::size_t fastest_named_at, std::size_t after_fastest,
                                 std::size_t most) {
  if (named < budget) return budget;
  return std::max(budget, std::min(most, fastest_named_at + after_fastest));
}

}  // namespace disttune::detail
