// The search strategy: measure a budgeted fraction of a large space chosen by a surrogate, then
// race a shortlist.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "disttune/strategy.hpp"
#include "strategies/compile_cost_model.hpp"
#include "strategies/config_features.hpp"
#include "strategies/feasibility_model.hpp"
#include "strategies/flat_knobs.hpp"
#include "strategies/gaussian_process_model.hpp"
#include "strategies/late_fastest.hpp"
#include "strategies/search_model.hpp"
#include "strategies/shortlist_race.hpp"
#include "strategies/strategy_options.hpp"

namespace disttune {
namespace {

using detail::CompileCost;
using detail::CompileCostModel;
using detail::Observation;

/// Runs of each candidate in an exploring round: one untimed (a kernel's first launch loads
/// its module), then a few timed, whose statistic the model learns from.
constexpr int kExploreWarmups = 1;
constexpr int kExploreTimed = 3;
/// Mitchell's best-candidate sampling: each space-filling pick is the farthest from those
/// already picked among this many random candidates.
constexpr int kBestCandidateTries = 8;
/// Candidates per exploring round: small rounds let the model learn from every few runs
/// (on the recorded tables 4 beat 8 and 16); ahead() names `ahead_rounds` rounds' worth more
/// for a front end to compile meanwhile, within the bound on speculation below (on the
/// recorded tables, under that bound, 2 gave a shorter first call than 4 and the same
/// choices; 0 compiles only what is measured).
constexpr long long kDefaultBatch = 4;
constexpr long long kDefaultAheadRounds = 2;
/// speculate()'s lie: a pick's time as this share of the fastest so far.
constexpr double kLieShare = 0.999;
/// The last share of the budget goes to neighbours (one level in one parameter) of the
/// fastest candidates so far, this many of them.
constexpr double kPolishShare = 0.30;
constexpr std::size_t kPolishCentres = 3;
/// `flat_knob`: polish takes neighbours along a knob whose measured pairs differ by less than
/// this share on average last, and flat twins of a centre are no centres (flat_knobs(); 1%
/// puts as many seeds within 1.05x as none or more on each of the 22 recorded tables, no worst
/// seed higher; 2% has fewer on two buckets; docs/strategies.md).
constexpr double kDefaultFlatKnob = 0.01;
/// Compiles named ahead and never measured are at most this share of the budget (so at the
/// default effort at most 4.5% x 1.6 = 7.2% of the space is compiled).
constexpr double kSpeculationShare = 0.6;
/// `prepared_window`: a round's picks come from this many rounds' worth of the best-ranked
/// candidates, those already prepared first (1: the best-ranked only; on the recorded tables
/// 1.5 shortens the simulated first call by 4-15% but chooses worse on split-K and on a
/// held-out bucket, docs/strategies.md) ...
constexpr double kDefaultPreparedWindow = 1.0;
/// ... and of those not prepared, one predicted to compile this many times longer than the
/// quickest of them, and this many seconds longer (a wait that matters to a first call; below
/// it, predictions of quick compiles only differ by noise), waits for a later round while
/// another can be taken.
constexpr double kSlowCompile = 2.0;
constexpr double kSlowCompileMargin_s = 0.5;
/// Compile cost in the round shape: each exploring round waits about one compile of its
/// picks. Once the first round's compiles took c seconds each (their geometric mean), the
/// rest of the budget is spread evenly over floor(kCompileWaits_s / c) rounds, each never
/// narrower than `batch` nor wider than the compile threads free of the start sample's rest:
/// at c = 2.4 s 5 rounds, of 10-11 at the default budget, so that the compiles named ahead
/// (the threads left) can cover half of the next round (kLeaveAfter); at the default budget
/// `batch` stays below about 1.2 s per compile. Rounds that widen measure
/// kWideBudget times the share (4.5% -> 5%): a wider round waits no longer than a narrower
/// one, and the candidates pay back what fewer rounds lose (docs/strategies.md, "Compile
/// cost in the decision"). The same share bounds the budget's growth after a late fastest
/// (budget_after_fastest()).
constexpr double kCompileWaits_s = 12.0;
constexpr double kWideBudget = 10.0 / 9.0;
/// Where the compiles seen take about as long as each other (their spread,
/// CompileCostModel::spread(), at most kEvenCompiles: a compile late among those is late for
/// want of a thread, or by chance), an exploring round need not wait for its last compiles
/// (Round::leave_unprepared): once kLeaveAfter of its picks are compiled it waits kPatience
/// times as long again as it took so far (each round waits about one compile), and at least
/// kSlowCompileMargin_s (a shorter wait does not matter to a first call), then leaves out
/// those still compiling. Each is in the first round after its compile ended (one left out
/// twice is dropped). The round of the budget's last left out waits kLastPatience of a
/// typical compile for those still compiling. The first round, before any compile is seen,
/// waits kUnseenPatience times as long again as the time from its first compile's end, not
/// from its start: in a fresh process every compile of the first wave also waits for the
/// compiler's one-time set-up, which would lengthen the wait with it (on an H100 host the
/// 384-config matmul's first round waited until 4.9 s on a 7.4 s compile when its others
/// had ended by 2.3 s). Only a compile far slower than the others is left out (4 chose as
/// well as a patience from the start on the recorded tables over 200 seeds, 1.5 worse on
/// fp8; docs/strategies.md). Where
/// compiles differ by config, a round waits for all of them: the compiles left out would be
/// the slow ones, and a config slow to compile is often a fast one (on the recorded tables
/// leaving them out chose worse, even after 4 times as long again, and even taken as soon as
/// compiled; docs/strategies.md, "A round does not wait on one slow compile").
constexpr double kLeaveAfter = 0.5;
constexpr double kPatience = 0.25;
constexpr double kUnseenPatience = 4.0;
constexpr double kEvenCompiles = 1.15;
constexpr double kLastPatience = 0.5;

/// A named effort level: the share of the space to measure and the fewest candidates, its
/// share of 1,000 configs. The fewest decide in spaces of a few hundred configs, where the
/// share is a score or two: on the 19 recorded tables of 384 configs (50 seeds each) the
/// default's fewest at 24 left 237 seeds over 1.05x of the best, at 45 94 (at 64 38, but over
/// 5% of the 1,008-config attention table measured), with the wide rounds below at about the
/// same simulated first call. The recorded tables of 1,008 configs and more have a larger
/// share: their figures are unchanged (docs/strategies.md, "Small spaces").
struct Effort {
  const char* name;
  double fraction;
  std::size_t least;
};
constexpr Effort kEfforts[] = {{"quick", 0.02, 20}, {"default", 0.045, 45}, {"thorough", 0.10, 100}};
/// Where the fewest are at least twice the share (a small space), the exploring rounds are
/// wide: the fewest over this many rounds, at most the compile threads. A round waits about
/// one compile however wide it is, and the threads are idle otherwise: on the tables of 384
/// configs, with a fewest of 50, rounds of 4 made the slice's simulated first call 10.3 s
/// where rounds of 13 made it 6.7 s, with as many seeds over 1.05x (66 and 68). Where the
/// share is near the fewest, rounds stay `batch` wide (rounds of 9 chose worse on the
/// attention table: 12 seeds over 1.05x against 3).
constexpr double kFewestRounds = 4.0;

/// Rounds: (1) the baseline and the prior's candidates, then a space-filling sample
/// (Mitchell's best candidate), so that a third of the budget is measured; (2) rounds of
/// `batch` candidates, the best scores of the SearchModel (Parzen estimates of what fast
/// candidates look like against slow ones, times the chance to run), until the budget (candidates,
/// or device seconds) is spent, the last share polishing around the fastest so far, and on while
/// that fastest is recent (`after_fastest`, budget_after_fastest()); (3) the `shortlist` fastest
/// race with the converge strategy, which makes the choice (with the baseline, if it ran). A
/// space no larger than the budget is raced whole. Exploring rounds never name a candidate twice;
/// every choice is a function of the seed and the agreed numbers, ties to the lower index.
class SearchStrategy final : public Strategy {
 public:
  /// `modelled`: picks by the model (the search); else uniformly at random (the baseline).
  SearchStrategy(const Measurement& measurement, const std::string& name, bool modelled)
      : measurement_(measurement), modelled_(modelled) {
    const detail::StrategyOptions options(measurement, name, detail::search_options());
    const std::string& level = options.text("effort");
    for (const Effort& effort : kEfforts) {
      if (level == effort.name) effort_ = effort;
    }
    // fraction has no default: without it, the effort's share and least.
    fraction_ = options.has("fraction") ? options.number("fraction") : effort_.fraction;
    least_ = options.has("fraction") ? 1 : effort_.least;
    budget_ms_ = options.number("budget_s") * 1000.0;
    batch_ = static_cast<std::size_t>(options.integer("batch"));
    batch_option_ = batch_;
    shortlist_ = static_cast<std::size_t>(options.integer("shortlist"));
    ahead_rounds_ = static_cast<std::size_t>(options.integer("ahead_rounds"));
    prepared_window_ = options.number("prepared_window");
    gaussian_process_ = options.text("model") == "gp";
    flat_knob_ = options.number("flat_knob");
    after_fastest_ = static_cast<std::size_t>(options.integer("after_fastest"));
    const std::string& feasibility = options.text("feasibility");
    forest_from_ = feasibility == "forest" ? 0.0
                   : feasibility == "auto" ? detail::FeasibilityModel::kAutoForestFrom
                                           : detail::FeasibilityModel::kNoForest;
  }

  /// The front end's compile threads (SpaceInfo::compile_threads) shape the rounds: the
  /// first measures at most that many of the start sample, the rest compiling meanwhile, and
  /// a round's picks and the compiles named ahead of it fill at most that many threads (more
  /// would queue a round's own picks behind guesses).
  void begin(const SpaceInfo& space) override {
    space_ = space;
    space_.compile_threads = std::max<std::size_t>(1, space.compile_threads);
    random_.seed(space.seed);
  }

  Round first_round(std::size_t count) override {
    if (space_.candidates.size() != count)
      begin(SpaceInfo{std::vector<std::string>(count), {}, space_.seed, space_.compile_threads});
    features_ = detail::config_features(space_.candidates);
    named_.assign(count, false);
    named_at_.assign(count, 0);
    speculated_.assign(count, false);
    prepared_.assign(count, false);
    prepare_s_.assign(count, 0.0);
    left_out_before_.assign(count, false);
    const auto share = static_cast<std::size_t>(std::ceil(fraction_ * static_cast<double>(count)));
    budget_ = std::min(count, std::max(least_, share));
    if (2 * share <= least_) {
      const auto wide = static_cast<std::size_t>(std::ceil(static_cast<double>(least_) / kFewestRounds));
      batch_ = std::max(batch_option_, std::min(space_.compile_threads, wide));
    }
    if (budget_ >= count) return start_race(all_candidates());
    std::vector<std::size_t> first;
    for (std::size_t i = 0; i < count; ++i) {
      if (space_.candidates[i] == measurement_.baseline) pick(i, first);
    }
    for (std::size_t i : space_.prior) {
      if (first.size() < budget_) pick(i, first);
    }
    const std::size_t threads = space_.compile_threads;
    const std::size_t given = std::min(first.size(), threads);  // the baseline and prior
    const std::size_t sample = std::max(std::min(batch_, budget_), budget_ / 3);
    while (first.size() < sample)
      pick(modelled_ ? farthest_of_random(first) : random_unnamed(), first);
    if (first.size() > threads) {
      // Beyond the threads, the sample (after the baseline and prior, its highest indices, so
      // that the runs come in the order one round would make them) compiles during the first
      // round and is measured in the second, with the second's picks when compiles are slow
      // (widen()).
      std::sort(first.begin() + static_cast<std::ptrdiff_t>(given), first.end());
      unmeasured_start_.assign(first.begin() + static_cast<std::ptrdiff_t>(threads), first.end());
      first.resize(threads);
      ahead_ = unmeasured_start_;
    }
    return explore(first);
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    if (race_) return race_->next_round(standings);
    observe(standings);
    if (!unmeasured_start_.empty()) {
      std::vector<std::size_t> picks = std::exchange(unmeasured_start_, {});
      ahead_.clear();
      spread_rounds(picks.size());
      if (batch_ > batch_option_) {
        const std::vector<std::size_t> more = propose(std::min(batch_, budget_ - std::min(budget_, named_count())));
        picks.insert(picks.end(), more.begin(), more.end());
      }
      take_compiled_left_out(picks);
      return explore(std::move(picks));
    }
    const std::vector<std::size_t> fastest = fastest_runs();
    if (modelled_ && !fastest.empty())
      budget_ = detail::budget_after_fastest(budget_, named_count(), named_at_[fastest.front()],
                                             after_fastest_, grown_budget());
    const bool spent = named_count() >= budget_ || (budget_ms_ > 0.0 && spent_ms_ >= budget_ms_);
    if (spent && !left_out_.empty()) {
      // The budget's last candidates left out, compiled meanwhile, are measured before the
      // race; those still compiling after kLastPatience of a typical compile are dropped.
      Round round = explore(std::exchange(left_out_, {}));
      if (round.leave_unprepared) {
        const double typical_s = CompileCostModel(features_, compiles_seen()).typical_seconds();
        round.leave_unprepared = LeaveUnprepared{0, 0.0, kLastPatience * typical_s};
      }
      return round;
    }
    if (spent && !fastest.empty()) {
      std::vector<std::size_t> shortlist(
          fastest.begin(),
          fastest.begin() + static_cast<std::ptrdiff_t>(std::min(shortlist_, fastest.size())));
      // The baseline races too (if it ran): it is kept unless another is faster beyond noise.
      for (std::size_t c = 0; c < standings.size(); ++c) {
        const bool listed = std::find(shortlist.begin(), shortlist.end(), c) != shortlist.end();
        if (standings[c].baseline && !standings[c].failed && standings[c].samples > 0 && !listed)
          shortlist.push_back(c);
      }
      std::sort(shortlist.begin(), shortlist.end());
      return start_race(std::move(shortlist));
    }
    if (named_count() == named_.size()) return Round{};  // every candidate failed
    // Nothing ran yet: go on past the budget until something does.
    spread_rounds(0);
    const std::size_t room = spent ? batch_ : std::min(batch_, budget_ - named_count());
    std::vector<std::size_t> picks = propose(room);
    take_compiled_left_out(picks);
    return explore(std::move(picks));
  }

  std::vector<std::size_t> ahead() const override {
    return race_ ? std::vector<std::size_t>{} : ahead_;
  }

 private:
  std::vector<std::size_t> all_candidates() const {
    std::vector<std::size_t> all(named_.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }

  std::size_t named_count() const {
    return static_cast<std::size_t>(std::count(named_.begin(), named_.end(), true));
  }

  void pick(std::size_t candidate, std::vector<std::size_t>& picks) {
    if (named_.at(candidate)) return;
    named_[candidate] = true;
    named_at_[candidate] = named_count();
    if (speculated_[candidate]) --speculating_;
    picks.push_back(candidate);
  }

  std::size_t random_unnamed() {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < named_.size(); ++i) {
      if (!named_[i]) open.push_back(i);
    }
    return open[static_cast<std::size_t>(random_() % open.size())];
  }

  /// Mitchell's best candidate: of a few random unnamed candidates, the one farthest from
  /// every candidate named so far.
  std::size_t farthest_of_random(const std::vector<std::size_t>& picked) {
    std::size_t best = random_unnamed();
    if (picked.empty()) return best;
    double best_gap = -1.0;
    for (int attempt = 0; attempt < kBestCandidateTries; ++attempt) {
      const std::size_t c = attempt == 0 ? best : random_unnamed();
      double gap = std::numeric_limits<double>::infinity();
      for (std::size_t other = 0; other < named_.size(); ++other) {
        if (named_[other]) gap = std::min(gap, features_.distance(c, other));
      }
      if (gap > best_gap || (gap == best_gap && c < best)) best = c, best_gap = gap;
    }
    return best;
  }

  Round explore(std::vector<std::size_t> picks) {
    std::sort(picks.begin(), picks.end());
    last_round_ = picks;
    Round round{std::move(picks), kExploreWarmups, kExploreTimed};
    const auto after = static_cast<std::size_t>(std::ceil(kLeaveAfter * static_cast<double>(round.candidates.size())));
    const std::vector<CompileCost> seen = compiles_seen();
    if (seen.empty()) {
      round.leave_unprepared = LeaveUnprepared{after, kUnseenPatience, kSlowCompileMargin_s, true};
    } else if (seen.size() >= 2 && CompileCostModel(features_, seen).spread() <= kEvenCompiles) {
      round.leave_unprepared = LeaveUnprepared{after, kPatience, kSlowCompileMargin_s};
    }
    // The baseline is what the choice must beat: a round that holds it waits for it.
    for (std::size_t c : round.candidates) {
      if (space_.candidates[c] == measurement_.baseline) round.leave_unprepared.reset();
    }
    return round;
  }

  Round start_race(std::vector<std::size_t> members) {
    ahead_.clear();
    race_.emplace(measurement_, std::move(members));
    return race_->first_round();
  }

  /// The last round's outcomes become observations; its device time is spent.
  void observe(const std::vector<CandidateStanding>& standings) {
    for (std::size_t c : last_round_) {
      if (!standings[c].failed)
        spent_ms_ += standings[c].time_ms * (kExploreWarmups + kExploreTimed);
    }
    for (std::size_t c = 0; c < named_.size(); ++c) {
      prepared_[c] = standings[c].prepared;
      prepare_s_[c] = standings[c].prepare_s;
    }
    if (!shaped_) widen();
    // A candidate left out a second time is dropped: its compile is slow.
    for (std::size_t c : last_round_) {
      if (!standings[c].left_out) continue;
      if (!left_out_before_[c]) left_out_.push_back(c);
      left_out_before_[c] = true;
    }
    observed_.clear();
    for (std::size_t c = 0; c < named_.size(); ++c) {
      // Named and not run yet: the start sample beyond the first round, or left out.
      const bool ran = standings[c].failed || standings[c].samples > 0;
      if (named_[c] && ran) observed_.push_back({c, standings[c].failed, standings[c].time_ms});
    }
  }

  /// Moves the candidates left out of earlier rounds whose compiles have ended into `picks`;
  /// the others wait for a later round (their compiles go on).
  void take_compiled_left_out(std::vector<std::size_t>& picks) {
    std::vector<std::size_t> compiling;
    for (std::size_t c : left_out_) (prepared_[c] ? picks : compiling).push_back(c);
    left_out_ = std::move(compiling);
  }

  /// Named candidates that ran, fastest first by their agreed times (ties to the lower index).
  std::vector<std::size_t> fastest_runs() const {
    std::vector<Observation> runs;
    for (const Observation& o : observed_) {
      if (!o.failed) runs.push_back(o);
    }
    std::stable_sort(runs.begin(), runs.end(), [](const Observation& a, const Observation& b) {
      return a.time_ms < b.time_ms;
    });
    std::vector<std::size_t> order;
    for (const Observation& o : runs) order.push_back(o.candidate);
    return order;
  }

  /// The unnamed candidates, best first by the model over `observed` (ties to the lower index).
  std::vector<std::size_t> ranked_by(const std::vector<Observation>& observed) const {
    std::vector<double> score(named_.size(), 0.0);
    std::vector<std::size_t> ranked;
    for (std::size_t c = 0; c < named_.size(); ++c) {
      if (!named_[c]) ranked.push_back(c);
    }
    if (gaussian_process_) {
      const detail::GaussianProcessModel model(features_, observed, forest_from_);
      for (std::size_t c : ranked) score[c] = model.log_score(c);
    } else {
      const detail::SearchModel model(features_, observed, forest_from_);
      for (std::size_t c : ranked) score[c] = model.log_score(c);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
    return ranked;
  }

  /// model=gp's exploring round: `room` candidates picked one at a time, each the best by a
  /// Gaussian process that believes the picks before it took the times it predicts for them
  /// (the "kriging believer", Ginsbourger et al. 2010: a believed pick is no longer uncertain,
  /// so the next pick goes where the process is still unsure rather than next to it); then the
  /// rest of `ranked`. `ranked` is ranked_by(observed_): its first is the first pick.
  std::vector<std::size_t> believed_batch(std::size_t room, const std::vector<std::size_t>& ranked) const {
    std::vector<Observation> believed = observed_;
    std::vector<bool> taken(named_.size(), false);
    std::vector<std::size_t> batch;
    while (batch.size() < room) {
      const detail::GaussianProcessModel model(features_, believed, forest_from_);
      std::optional<std::size_t> best;
      if (batch.empty()) {
        if (!ranked.empty()) best = ranked.front();  // scored by this same model in ranked_by()
      } else {
        double best_score = 0.0;
        for (std::size_t c = 0; c < named_.size(); ++c) {
          if (named_[c] || taken[c]) continue;
          const double score = model.log_score(c);
          if (!best || score > best_score) best = c, best_score = score;
        }
      }
      if (!best) break;
      taken[*best] = true;
      batch.push_back(*best);
      believed.push_back({*best, false, std::exp(model.predicted_log_ms(*best))});
    }
    batch.insert(batch.end(), ranked.begin(), ranked.end());
    return batch;
  }

  /// Whether a round proposed with `named` candidates named so far polishes: the last
  /// kPolishShare of the budget.
  bool polishing(std::size_t named) const {
    return named <= budget_ &&
           budget_ - named <= static_cast<std::size_t>(kPolishShare * static_cast<double>(budget_));
  }

  /// The order in which a polishing round takes candidates: the neighbours of each of the
  /// first kPolishCentres of `centres` that are not flat twins of one before (flat_knobs(),
  /// `flat_knob`), in turn, best ranked first, those along a flat knob after every centre's
  /// others; then the rest of `ranked` (the taker skips repeats and named candidates).
  std::vector<std::size_t> polish_order(const std::vector<std::size_t>& centres,
                                        const std::vector<std::size_t>& ranked) const {
    const std::vector<bool> flat = detail::flat_knobs(features_, observed_, flat_knob_);
    std::vector<std::size_t> distinct;
    for (std::size_t centre : centres) {
      if (distinct.size() >= kPolishCentres) break;
      if (std::none_of(distinct.begin(), distinct.end(), [&](std::size_t before) {
            return detail::flat_twins(features_, centre, before, flat);
          }))
        distinct.push_back(centre);
    }
    std::vector<std::size_t> order;
    std::vector<std::size_t> along_flat;
    for (std::size_t centre : distinct) {
      for (std::size_t c : ranked) {
        if (!features_.neighbours(c, centre)) continue;
        const auto knob = static_cast<std::size_t>(features_.only_difference(c, centre));
        (flat[knob] ? along_flat : order).push_back(c);
      }
    }
    order.insert(order.end(), along_flat.begin(), along_flat.end());
    order.insert(order.end(), ranked.begin(), ranked.end());
    return order;
  }

  /// Names ahead the first `count` candidates of `order` not named yet, within `room` and
  /// within the bound on speculation: at most kSpeculationShare x budget_ candidates named
  /// ahead and not (yet) in a round.
  void name_ahead(const std::vector<std::size_t>& order, std::size_t count, std::size_t room) {
    const auto bound = static_cast<std::size_t>(kSpeculationShare * static_cast<double>(budget_));
    for (std::size_t c : order) {
      if (count == 0 || ahead_.size() >= room) return;
      if (named_[c] || std::find(ahead_.begin(), ahead_.end(), c) != ahead_.end()) continue;
      if (!speculated_[c]) {
        if (speculating_ >= bound) return;
        speculated_[c] = true;
        ++speculating_;
      }
      ahead_.push_back(c);
      --count;
    }
  }

  /// Takes `room` candidates of `order` (best first) into `picks`, so that a round does not
  /// wait on a compile while others are ready: of the first prepared_window_ x room unnamed
  /// ones, those prepared first, in order; then those not prepared, in order, but one whose
  /// predicted compile (CompileCostModel) is over kSlowCompile times, and kSlowCompileMargin_s
  /// more than, the fastest predicted of them is left for a later round (its compile goes on if it was named ahead) while
  /// another can be taken. A front end that cannot tell reports every candidate prepared:
  /// the picks are then the first `room` of `order`.
  void take_prepared_first(const std::vector<std::size_t>& order, std::size_t room,
                           std::vector<std::size_t>& picks) {
    const auto window_size = static_cast<std::size_t>(prepared_window_ * static_cast<double>(room));
    std::vector<std::size_t> window;
    for (std::size_t c : order) {
      if (window.size() >= window_size) break;
      if (!named_[c] && std::find(window.begin(), window.end(), c) == window.end()) window.push_back(c);
    }
    for (std::size_t c : window) {
      if (picks.size() < room && prepared_[c]) pick(c, picks);
    }
    const CompileCostModel costs(features_, compiles_seen());
    double fastest_s = std::numeric_limits<double>::infinity();
    for (std::size_t c : window) {
      if (!named_[c]) fastest_s = std::min(fastest_s, costs.seconds(c));
    }
    for (std::size_t c : window) {
      const double seconds = costs.seconds(c);
      const bool slow = seconds > kSlowCompile * fastest_s && seconds > fastest_s + kSlowCompileMargin_s;
      if (picks.size() < room && !named_[c] && !slow) pick(c, picks);
    }
    for (std::size_t c : order) {
      if (picks.size() >= room) break;
      pick(c, picks);
    }
  }

  /// The compiles that ended, with their seconds.
  std::vector<CompileCost> compiles_seen() const {
    std::vector<CompileCost> seen;
    for (std::size_t c = 0; c < named_.size(); ++c) {
      if (prepared_[c] && prepare_s_[c] > 0.0) seen.push_back({c, prepare_s_[c]});
    }
    return seen;
  }

  /// Once, at the first standings with compile times (c: their geometric mean): where rounds
  /// of `batch` would take more than kCompileWaits_s / c rounds for the rest of the budget,
  /// the budget becomes kWideBudget times the share and spread_rounds() spreads it
  /// over that many. A front end that tells no compile times keeps `batch` and the budget.
  void widen() {
    const double typical_s = CompileCostModel(features_, compiles_seen()).typical_seconds();
    if (typical_s <= 0.0) return;
    shaped_ = true;
    const double rounds = std::max(1.0, kCompileWaits_s / typical_s);
    const auto open = static_cast<double>(budget_ - std::min(budget_, named_count()));
    if (std::ceil(open / rounds) <= static_cast<double>(batch_)) return;
    budget_ = std::max(budget_, grown_budget());
    rounds_left_ = static_cast<std::size_t>(std::floor(rounds));
  }

  /// Before an exploring round, once widen() widened: this round's width (batch_), the open
  /// budget over the rounds left, at least `batch` and at most the compile threads less
  /// `compiling` (the start sample's rest, compiling beside this round's picks).
  void spread_rounds(std::size_t compiling) {
    if (rounds_left_ == 0) return;
    const std::size_t open = budget_ - std::min(budget_, named_count());
    const std::size_t even = (open + rounds_left_ - 1) / rounds_left_;
    const std::size_t threads = space_.compile_threads - std::min(space_.compile_threads - 1, compiling);
    batch_ = std::max(batch_option_, std::min(even, threads));
    if (rounds_left_ > 1) --rounds_left_;
  }

  /// The most candidates the budget grows to (widen(), budget_after_fastest()): kWideBudget
  /// times the share of the space.
  std::size_t grown_budget() const {
    const double count = static_cast<double>(named_.size());
    const auto grown = static_cast<std::size_t>(std::floor(fraction_ * kWideBudget * count + 1e-9));
    return std::min(named_.size(), grown);
  }

  /// What a front end may compile during the round of `picks`, ahead_rounds_ rounds' worth,
  /// as the coming rounds will likely take it (a compile named ahead in vain delays those
  /// queued after it, so fewer right names beat more). Exploring: the model's next best
  /// (`ranked`), interleaved with its next best were `picks` to come back just faster than
  /// the fastest so far (a constant liar; failed, if nothing ran yet), as the next round's
  /// picks move towards this round's fast ones. Polishing next: the next round were the
  /// fastest to stay (the polish order around them), then for each pick the first it would
  /// take were that pick to become the fastest, then the rest of the first order. Nothing
  /// when the race comes next: its shortlist is compiled. It changes no pick (BENCHMARKS.md
  /// has the simulated first call's waits).
  void speculate(const std::vector<std::size_t>& ranked, const std::vector<std::size_t>& picks) {
    ahead_.clear();
    const std::size_t room =
        std::min(ahead_rounds_ * batch_, space_.compile_threads > batch_ ? space_.compile_threads - batch_ : 0);
    const std::vector<std::size_t> fastest = fastest_runs();
    if (room == 0 || (named_count() >= budget_ && !fastest.empty())) return;
    double best_ms = 0.0;
    for (const Observation& o : observed_) {
      if (!fastest.empty() && o.candidate == fastest.front()) best_ms = o.time_ms;
    }
    std::vector<Observation> believed = observed_;
    for (std::size_t c : picks) believed.push_back({c, fastest.empty(), best_ms * kLieShare});
    const std::vector<std::size_t> lied = ranked_by(believed);
    if (polishing(named_count())) {
      const std::vector<std::size_t> stay = polish_order(fastest, ranked);
      name_ahead(stay, batch_, room);
      for (std::size_t c : picks) {
        std::vector<std::size_t> centres{c};
        centres.insert(centres.end(), fastest.begin(), fastest.end());
        name_ahead(polish_order(centres, lied), 1, room);
      }
      name_ahead(stay, room, room);
      return;
    }
    for (std::size_t k = 0; ahead_.size() < room && k < ranked.size(); ++k) {
      name_ahead({ranked[k]}, 1, room);
      if (k < lied.size()) name_ahead({lied[k]}, 1, room);
    }
  }

  /// The next `room` candidates: the best scores of the model (random ones for the
  /// baseline), polishing: neighbours of the fastest so far first; then what a front end
  /// may prepare ahead (speculate()).
  std::vector<std::size_t> propose(std::size_t room) {
    std::vector<std::size_t> picks;
    if (!modelled_) {
      while (picks.size() < room && named_count() < named_.size()) pick(random_unnamed(), picks);
      return picks;
    }
    const std::vector<std::size_t> ranked = ranked_by(observed_);
    std::vector<std::size_t> order =
        polishing(named_count()) ? polish_order(fastest_runs(), ranked) : ranked;
    if (gaussian_process_ && !polishing(named_count())) order = believed_batch(room, ranked);
    take_prepared_first(order, room, picks);
    speculate(ranked, picks);
    return picks;
  }

  Measurement measurement_;
  bool modelled_;
  Effort effort_ = kEfforts[1];
  double fraction_ = 0.0;
  std::size_t least_ = 1;
  double budget_ms_ = 0.0;
  std::size_t batch_ = 4;  ///< picks per exploring round: `batch`, or wider (spread_rounds())
  std::size_t batch_option_ = 4;  ///< the `batch` option
  std::size_t shortlist_ = 5;
  std::size_t ahead_rounds_ = 4;
  double prepared_window_ = kDefaultPreparedWindow;
  bool gaussian_process_ = false;  ///< `model`: gp (GaussianProcessModel), else tpe (SearchModel)
  double flat_knob_ = kDefaultFlatKnob;
  /// `after_fastest`: candidates named after the fastest before the search stops
  /// (budget_after_fastest()).
  std::size_t after_fastest_ = detail::kDefaultAfterFastest;
  /// `feasibility`: the share of failures from which the chance to run is also a forest's
  /// (forest 0, auto FeasibilityModel::kAutoForestFrom, near never).
  double forest_from_ = detail::FeasibilityModel::kNoForest;

  SpaceInfo space_;
  detail::ConfigFeatures features_;
  std::mt19937_64 random_;
  std::size_t budget_ = 0;   ///< candidates to measure before the race
  std::vector<bool> named_;  ///< named in some round
  /// Per named candidate: how many were named when it was (1 for the first).
  std::vector<std::size_t> named_at_;
  std::vector<bool> speculated_;  ///< ever named ahead
  std::size_t speculating_ = 0;     ///< named ahead and not in a round: compiled in vain so far
  std::vector<bool> prepared_;      ///< per candidate, from the last standings
  std::vector<double> prepare_s_;   ///< per candidate, from the last standings (0: not known)
  std::vector<std::size_t> last_round_;
  bool shaped_ = false;  ///< widen() has seen compile times
  /// Exploring rounds left to spread the budget over (spread_rounds()); 0: rounds of `batch`.
  std::size_t rounds_left_ = 0;
  std::vector<std::size_t> unmeasured_start_;  ///< the start sample beyond the first round's
  std::vector<std::size_t> left_out_;  ///< left out unprepared: in the first round after its compile ended
  std::vector<bool> left_out_before_;  ///< per candidate: left out of some round
  std::vector<Observation> observed_;
  double spent_ms_ = 0.0;  ///< device time of the exploring rounds, by agreed times
  std::vector<std::size_t> ahead_;
  std::optional<detail::ShortlistRace> race_;
};

}  // namespace

namespace detail {

const std::vector<StrategyOption>& search_options() {
  static const std::vector<StrategyOption> options = [] {
    std::vector<std::string> efforts;
    for (const Effort& effort : kEfforts) efforts.emplace_back(effort.name);
    std::vector<StrategyOption> own{StrategyOption::seed(),
                                    StrategyOption::text("effort", "default", efforts),
                                    StrategyOption::number("fraction", std::nullopt, 1e-9, 1.0),
                                    StrategyOption::number("budget_s", 0.0, 0.0, 1e9),
                                    StrategyOption::integer("batch", kDefaultBatch, 1, 4096),
                                    StrategyOption::integer("shortlist", 5, 1, 256),
                                    StrategyOption::integer("ahead_rounds", kDefaultAheadRounds, 0, 64),
                                    StrategyOption::number("prepared_window", kDefaultPreparedWindow, 1.0, 64.0),
                                    StrategyOption::text("model", "tpe", {"tpe", "gp"}),
                                    StrategyOption::text("feasibility", "auto", {"near", "forest", "auto"}),
                                    StrategyOption::number("flat_knob", kDefaultFlatKnob, 0.0, 1.0),
                                    StrategyOption::integer("after_fastest", detail::kDefaultAfterFastest, 0, 4096)};
    // The race's parameters, as converge declares them.
    for (const StrategyOption& option : converge_options()) {
      if (std::find(kRaceParameters.begin(), kRaceParameters.end(), option.name) != kRaceParameters.end())
        own.push_back(option);
    }
    return own;
  }();
  return options;
}

}  // namespace detail

std::unique_ptr<Strategy> make_search_strategy(const Measurement& measurement) {
  return std::make_unique<SearchStrategy>(measurement, "search", true);
}

std::unique_ptr<Strategy> make_random_strategy(const Measurement& measurement) {
  return std::make_unique<SearchStrategy>(measurement, "random", false);
}

}  // namespace disttune
