// Binds the strategy registry: Python code registers a strategy (first_round/next_round) by name,
// with its options.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "disttune/measurement.hpp"
#include "disttune/strategy.hpp"
#include "disttune/strategy_option.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// A strategy written in Python: an object with first_round(count) and
/// next_round(standings), each returning (candidates, warmup_runs, timed_runs). Called from
/// the engine (whose caller may have released the GIL), so each call takes the GIL.
class PythonStrategy final : public Strategy {
 public:
  PythonStrategy(std::string name, nb::object instance)
      : name_(std::move(name)), instance_(std::move(instance)) {}
  ~PythonStrategy() override {
    nb::gil_scoped_acquire gil;
    instance_.reset();
  }
  PythonStrategy(const PythonStrategy&) = delete;
  PythonStrategy& operator=(const PythonStrategy&) = delete;

  Round first_round(std::size_t count) override {
    nb::gil_scoped_acquire gil;
    return round_of(instance_.attr("first_round")(count), "first_round");
  }

  Round next_round(const std::vector<CandidateStanding>& standings) override {
    nb::gil_scoped_acquire gil;
    return round_of(instance_.attr("next_round")(standings), "next_round");
  }

 private:
  Round round_of(const nb::object& returned, const char* method) const {
    std::tuple<std::vector<std::size_t>, int, int> round;
    if (!nb::try_cast(returned, round)) {
      throw nb::type_error(("disttune: strategy '" + name_ + "': " + method +
                            "() must return (candidates: list[int], warmup_runs: int, timed_runs: "
                            "int), got " +
                            nb::cast<std::string>(nb::repr(returned)))
                               .c_str());
    }
    return Round{std::move(std::get<0>(round)), std::get<1>(round), std::get<2>(round)};
  }

  std::string name_;
  nb::object instance_;
};

/// The options a Python strategy declares: `defaults` maps each name to its default, whose
/// type is the option's (float: a finite number, int: an integer, str: any text), and
/// "seed" (an unsigned integer, default 0) unless declared there.
std::vector<StrategyOption> declared_options(const std::string& strategy,
                                             const nb::dict& defaults) {
  std::vector<StrategyOption> declared;
  for (const auto& [key, value] : defaults) {
    std::string name;
    const auto refuse = [&](const std::string& why) {
      throw nb::type_error(("disttune: strategy '" + strategy + "' option " + name + ": " + why +
                            ", got " + nb::cast<std::string>(nb::repr(value)))
                               .c_str());
    };
    if (!nb::try_cast(key, name)) refuse("option names must be str");
    if (nb::isinstance<nb::bool_>(value)) {
      refuse("the default must be a float, int or str (a bool is neither: use 0 and 1)");
    } else if (nb::isinstance<nb::float_>(value)) {
      declared.push_back(StrategyOption::number(name, nb::cast<double>(value)));
    } else if (nb::isinstance<nb::int_>(value)) {
      long long fallback = 0;
      if (!nb::try_cast(value, fallback)) refuse("an int default must fit in 64 bits");
      declared.push_back(StrategyOption::integer(name, fallback));
    } else if (nb::isinstance<nb::str>(value)) {
      declared.push_back(StrategyOption::text(name, nb::cast<std::string>(value)));
    } else {
      refuse("the default must be a float, int or str");
    }
  }
  const bool has_seed =
      std::any_of(declared.begin(), declared.end(),
                  [](const StrategyOption& option) { return option.name == "seed"; });
  if (!has_seed) declared.insert(declared.begin(), StrategyOption::seed());
  return declared;
}

/// The options as the strategy reads them (canonical texts) as Python values of their kinds.
nb::dict typed_options(const std::vector<StrategyOption>& declared,
                       const std::map<std::string, std::string>& values) {
  nb::dict typed;
  for (const StrategyOption& option : declared) {
    const auto found = values.find(option.name);
    if (found == values.end()) continue;
    const nb::str text(found->second.c_str(), found->second.size());
    switch (option.kind) {
      case OptionKind::number:
        typed[option.name.c_str()] = nb::float_(text);
        break;
      case OptionKind::integer:
        typed[option.name.c_str()] = nb::int_(text);
        break;
      case OptionKind::text:
        typed[option.name.c_str()] = text;
        break;
    }
  }
  return typed;
}

void register_python_strategy(const std::string& name, nb::callable factory,
                              std::optional<nb::dict> defaults) {
  // Declared now (a bad default fails the registration); without `options` the strategy
  // declares none, so any option, the seed too, is refused rather than ignored.
  std::vector<StrategyOption> declared =
      defaults ? declared_options(name, *defaults) : std::vector<StrategyOption>{};
  const bool takes_options = defaults.has_value();
  // A registered strategy lives as long as the process: its factory is never released, so
  // the registry (destroyed after the interpreter) holds no reference to give back.
  PyObject* kept = factory.release().ptr();
  register_strategy(name, declared,
                    [name, kept, declared,
                     takes_options](const Measurement& measurement) -> std::unique_ptr<Strategy> {
                      nb::gil_scoped_acquire gil;
                      nb::dict settings;
                      settings["warmup_runs"] = measurement.warmup_runs;
                      settings["timed_runs"] = measurement.timed_runs;
                      settings["statistic"] = to_string(measurement.statistic);
                      if (takes_options)
                        settings["options"] = typed_options(declared, measurement.strategy_options);
                      nb::object instance = nb::handle(kept)(**settings);
                      return std::make_unique<PythonStrategy>(name, std::move(instance));
                    });
}

}  // namespace

void bind_strategy(nb::module_& module) {
  nb::class_<CandidateStanding>(
      module, "CandidateStanding",
      "What a strategy knows of one candidate after a round (agreed across ranks).")
      .def_ro("failed", &CandidateStanding::failed)
      .def_ro("time_ms", &CandidateStanding::time_ms, "Agreed statistic; meaningless when failed.")
      .def_ro("noise", &CandidateStanding::noise, "Agreed relative spread of the samples.")
      .def_ro("samples", &CandidateStanding::samples, "Samples so far (the same on every rank).")
      .def_ro("prepared", &CandidateStanding::prepared,
              "Whether its compile has ended on every rank (True when the front end cannot tell).")
      .def_ro("prepare_s", &CandidateStanding::prepare_s,
              "Its compile's seconds, the longest over ranks; 0 when not known or not prepared.")
      .def("__repr__", [](const CandidateStanding& s) {
        return "CandidateStanding(failed=" + std::string(s.failed ? "True" : "False") +
               ", time_ms=" + std::to_string(s.time_ms) + ", noise=" + std::to_string(s.noise) +
               ", samples=" + std::to_string(s.samples) + ")";
      });
  module.def("register_strategy", &register_python_strategy, nb::arg("name"), nb::arg("factory"),
             nb::arg("options") = nb::none(),
             "Makes `name` selectable as a strategy. factory(warmup_runs=, timed_runs=, "
             "statistic=) returns an object with first_round(count) and "
             "next_round(standings: list[CandidateStanding]), each returning (candidates, "
             "warmup_runs, timed_runs); a round without timed runs ends measurement and names "
             "the finalists. `options` (name -> default: float, int or str) declares the "
             "strategy's options; the factory then also gets options= (every declared option "
             "and seed, given or defaulted, typed as its default). Any other strategy option is "
             "InvalidSetting naming it. ValueError for a name already registered.");
  module.def("registered_strategies", &registered_strategies,
             "The registered strategy names, built-in ones first.");
}

}  // namespace disttune::python
