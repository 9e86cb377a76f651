// Binds the Timer seam: Python-written timers (a trampoline), the CPU and the CUDA timers.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/trampoline.h>

#include <cstdint>

#include "bindings.hpp"
#include "disttune/timer.hpp"
#include "failure_text.hpp"
#include "python_timer.hpp"
#ifdef DISTTUNE_PYTHON_HAVE_CUDA
#include "disttune/cuda.hpp"
#endif

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// Routes PythonTimer's virtual calls to the Python subclass; what they raise reaches the
/// engine with a readable text (with_readable_errors: e.g. an isolated candidate's failure,
/// reported by the worker timer's collect()).
struct PythonTimerTrampoline : PythonTimer {
  NB_TRAMPOLINE(PythonTimer);
  void begin_tuning() override {
    with_readable_errors([&] { NB_OVERRIDE(begin_tuning); });
  }
  void prepare_timed_run() override {
    with_readable_errors([&] { NB_OVERRIDE(prepare_timed_run); });
  }
  bool flushes_l2() const override {
    return with_readable_errors([&]() -> bool { NB_OVERRIDE(flushes_l2); });
  }
  void start() override {
    with_readable_errors([&] { NB_OVERRIDE_PURE(start); });
  }
  void stop() override {
    with_readable_errors([&] { NB_OVERRIDE_PURE(stop); });
  }
  std::vector<double> collect() override {
    return with_readable_errors([&]() -> std::vector<double> { NB_OVERRIDE_PURE(collect); });
  }
  bool holds_pairs_across_candidates() const override {
    return with_readable_errors([&]() -> bool { NB_OVERRIDE(holds_pairs_across_candidates); });
  }
};

}  // namespace

void bind_timer(nb::module_& module) {
  nb::class_<Timer>(module, "TimerBase",
                    "A timer the engine can drive (CpuTimer, CudaTimer or a Timer subclass).")
      .def_prop_ro("name", &Timer::name)
      .def("flushes_l2", &Timer::flushes_l2,
           "True if prepare_timed_run() clears the device cache before each timed run.")
      .def("hardware_json", [](const Timer& timer) { return canonical_json(timer.hardware()); },
           "The device facts this timer adds to the hardware fingerprint, as canonical JSON.")
      .def("deps_json", [](const Timer& timer) { return canonical_json(timer.deps()); },
           "The software versions this timer reports, as canonical JSON.");

  nb::class_<PythonTimer, Timer, PythonTimerTrampoline>(
      module, "Timer",
      "Base of timers written in Python: override start(), stop() and collect() (which returns "
      "the durations in ms of every start/stop pair since the last collect; the engine "
      "collects once per round), optionally begin_tuning(), prepare_timed_run(), flushes_l2() "
      "(True if prepare_timed_run() clears the device cache) and "
      "holds_pairs_across_candidates() (False: collect before each change of candidate).")
      .def(nb::init<std::string, const std::string&, const std::string&>(), nb::arg("name"),
           nb::arg("hardware_json") = "{}", nb::arg("deps_json") = "{}")
      .def("begin_tuning", &PythonTimer::begin_tuning)
      .def("prepare_timed_run", &PythonTimer::prepare_timed_run)
      .def("start", &PythonTimer::start)
      .def("stop", &PythonTimer::stop)
      .def("collect", &PythonTimer::collect)
      .def("holds_pairs_across_candidates", &PythonTimer::holds_pairs_across_candidates);

  nb::class_<CpuTimer, Timer>(module, "CpuTimer", "Times runs with the host's steady clock.")
      .def(nb::init<>());

#ifdef DISTTUNE_PYTHON_HAVE_CUDA
  nb::class_<CudaTimer, Timer>(
      module, "CudaTimer",
      "Times runs with CUDA event pairs on one stream (a CUstream handle as an int; 0 is the "
      "legacy default stream); optional L2 flush before each timed run and CUDA-graph batches.")
      .def(
          "__init__",
          [](CudaTimer* self, std::uintptr_t stream, bool flush_l2, int graph_runs,
             bool steady_clock) {
            CudaTimerOptions options;
            options.stream = reinterpret_cast<void*>(stream);
            options.flush_l2 = flush_l2;
            options.graph_runs = graph_runs;
            options.steady_clock = steady_clock;
            new (self) CudaTimer(options);
          },
          nb::arg("stream") = 0, nb::arg("flush_l2") = false, nb::arg("graph_runs") = 0,
          nb::arg("steady_clock") = true)
      .def_prop_ro("device", &CudaTimer::device)
      .def("clocks", [](const CudaTimer& timer) { return canonical_json(timer.clocks()); },
           "The SM clocks of the last tuning as JSON text ({} without steady_clock).");
  module.def("cuda_unavailable_reason", &cuda_unavailable_reason,
             "Why CUDA cannot be used in this process, or None if it can.");
#else
  module.def(
      "cuda_unavailable_reason",
      []() -> std::optional<std::string> { return "disttune was built without its CUDA backend"; },
      "Why CUDA cannot be used in this process, or None if it can.");
#endif
}

}  // namespace disttune::python
