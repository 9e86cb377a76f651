// Binds the strategy registry: Python code registers a strategy (first_round/next_round) by name.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "disttune/measurement.hpp"
#include "disttune/strategy.hpp"

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
                            "int), got " + nb::cast<std::string>(nb::repr(returned)))
                               .c_str());
    }
    return Round{std::move(std::get<0>(round)), std::get<1>(round), std::get<2>(round)};
  }

  std::string name_;
  nb::object instance_;
};

void register_python_strategy(const std::string& name, nb::callable factory) {
  // A registered strategy lives as long as the process: its factory is never released, so
  // the registry (destroyed after the interpreter) holds no reference to give back.
  PyObject* kept = factory.release().ptr();
  register_strategy(name, [name, kept](const Measurement& measurement) -> std::unique_ptr<Strategy> {
    nb::gil_scoped_acquire gil;
    nb::object instance = nb::handle(kept)(nb::arg("warmup_runs") = measurement.warmup_runs,
                                           nb::arg("timed_runs") = measurement.timed_runs,
                                           nb::arg("statistic") = to_string(measurement.statistic));
    return std::make_unique<PythonStrategy>(name, std::move(instance));
  });
}

}  // namespace

void bind_strategy(nb::module_& module) {
  nb::class_<CandidateStanding>(module, "CandidateStanding",
                                "What a strategy knows of one candidate after a round (agreed across ranks).")
      .def_ro("failed", &CandidateStanding::failed)
      .def_ro("time_ms", &CandidateStanding::time_ms, "Agreed statistic; meaningless when failed.")
      .def_ro("noise", &CandidateStanding::noise, "Agreed relative spread of the samples.")
      .def_ro("samples", &CandidateStanding::samples, "Samples so far (the same on every rank).")
      .def("__repr__", [](const CandidateStanding& s) {
        return "CandidateStanding(failed=" + std::string(s.failed ? "True" : "False") +
               ", time_ms=" + std::to_string(s.time_ms) + ", noise=" + std::to_string(s.noise) +
               ", samples=" + std::to_string(s.samples) + ")";
      });
  module.def("register_strategy", &register_python_strategy, nb::arg("name"), nb::arg("factory"),
             "Makes `name` selectable as a strategy. factory(warmup_runs=, timed_runs=, "
             "statistic=) returns an object with first_round(count) and "
             "next_round(standings: list[CandidateStanding]), each returning (candidates, "
             "warmup_runs, timed_runs); a round without timed runs ends measurement and names "
             "the finalists. ValueError for a name already registered.");
  module.def("registered_strategies", &registered_strategies,
             "The registered strategy names, built-in ones first.");
}

}  // namespace disttune::python
