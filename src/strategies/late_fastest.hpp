// The search's stopping rule: a fastest config found late is polished before the race.
#pragma once

#include <cstddef>

namespace disttune::detail {

/// `after_fastest`: candidates the search names after its fastest so far before it stops
/// (16: four rounds of 4; on the recorded tables it puts as many seeds within 1.05x as none
/// or more on every one, docs/strategies.md).
inline constexpr long long kDefaultAfterFastest = 16;

/// The search's budget (candidates to measure before the race) once `named` candidates are
/// named, the fastest so far being the `fastest_named_at`-th of them: while the budget is not
/// spent (named < budget), `budget`; once it is, at least `fastest_named_at + after_fastest`
/// (the search goes on while its fastest was found among the last `after_fastest` named, so
/// that the fastest's neighbours are measured before the race), but never more than `most`
/// nor less than `budget`.
std::size_t budget_after_fastest(std::size_t budget, std::size_t named,
                                 std::size_t fastest_named_at, std::size_t after_fastest,
                                 std::size_t most);

}  // namespace disttune::detail
