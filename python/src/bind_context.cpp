// Binds contextual tuning: KernelTuningState, CandidateTexts, ContextualAutotuner (run, active, launch).
#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "context_options.hpp"
#include "disttune/context.hpp"
#include "failure_text.hpp"

namespace nb = nanobind;

namespace disttune::python {
namespace {

/// The Python type of OuterRunAbandoned, to turn it back into the C++ exception when it
/// has crossed the user's outer function.
nb::handle outer_run_abandoned_type;

/// Runs the Python `outer` through the tuner; the GIL is released between outer runs.
void run_outer(ContextualAutotuner& tuner, nb::callable outer) {
  std::function<void()> call = [&outer] {
    nb::gil_scoped_acquire gil;
    try {
      outer();
    } catch (nb::python_error& error) {
      if (error.matches(outer_run_abandoned_type)) throw OuterRunAbandoned(failure_text(error));
      // The engine writes the error's text; one that nanobind cannot write is replaced.
      if (!what_is_safe(error)) throw std::runtime_error(failure_text(error));
      throw;
    }
  };
  nb::gil_scoped_release released;
  tuner.run(call);
}

/// A kernel's candidate texts converted to C++ once: a cached launch passes them to the
/// engine by reference instead of converting a Python list of texts at every launch.
struct CandidateTexts {
  std::vector<std::string> texts;
};

std::size_t launch(ContextualAutotuner& tuner, KernelTuningState& kernel, const std::string& key,
                   const std::vector<std::string>& candidates, nb::callable launch_one,
                   std::optional<nb::callable> prepare_ahead) {
  PrepareAhead ahead;
  // Held by the tuning for its lifetime (one run()); the Python callable is released with
  // the GIL held.
  if (prepare_ahead) {
    auto held = std::shared_ptr<nb::callable>(new nb::callable(std::move(*prepare_ahead)), [](nb::callable* held) {
      nb::gil_scoped_acquire gil;
      delete held;
    });
    ahead = [held](const std::vector<std::size_t>& candidates) {
      with_readable_errors([&] {
        nb::gil_scoped_acquire gil;
        (*held)(candidates);
      });
    };
  }
  return tuner.launch(kernel, key, candidates,
                      [&launch_one](std::size_t index) {
                        with_readable_errors([&] {
                          nb::gil_scoped_acquire gil;
                          launch_one(index);
                        });
                      },
                      ahead);
}

}  // namespace

void bind_context(nb::module_& module) {
  // A BaseException, so that `except Exception` in the user's outer function lets it pass.
  outer_run_abandoned_type =
      nb::exception<OuterRunAbandoned>(module, "OuterRunAbandoned", PyExc_BaseException);

  nb::class_<KernelChoice>(module, "KernelChoice", "A kernel's choice for one key.")
      .def_ro("key", &KernelChoice::key)
      .def_ro("best", &KernelChoice::best)
      .def_ro("config", &KernelChoice::config)
      .def_ro("candidates", &KernelChoice::candidates);

  nb::class_<KernelTuningState>(module, "KernelTuningState",
                                "A tunable kernel's name and in-process cache (key -> choice).")
      .def(nb::init<std::string>(), nb::arg("name"))
      .def_prop_ro("name", &KernelTuningState::name)
      .def("cached_index", &KernelTuningState::cached_index, nb::arg("key"), nb::arg("candidates"))
      .def(
          "cached_index",
          [](const KernelTuningState& state, const std::string& key, const CandidateTexts& candidates) {
            return state.cached_index(key, candidates.texts);
          },
          nb::arg("key"), nb::arg("candidates"))
      .def("choice", &KernelTuningState::choice, nb::arg("key"))
      .def("last_choice", &KernelTuningState::last_choice)
      .def("clear", &KernelTuningState::clear)
      .def("epoch", &KernelTuningState::epoch,
           "Grows whenever a cached choice is replaced or the cache is emptied (not when a key is "
           "added): what cached_index answered for a key still holds while the epoch is the same.");

  nb::class_<CandidateTexts>(module, "CandidateTexts",
                             "A kernel's candidate texts, converted once for launch() and cached_index().")
      .def(
          "__init__",
          [](CandidateTexts* self, std::vector<std::string> texts) { new (self) CandidateTexts{std::move(texts)}; },
          nb::arg("texts"));

  nb::class_<ContextualAutotuner>(
      module, "ContextualAutotuner",
      "The contextual tuner of one outer function: run(outer) calls outer until every kernel "
      "launched inside through launch() is tuned, then once more with every best config.")
      .def(
          "__init__",
          [](ContextualAutotuner* self, std::string function_name, const nb::kwargs& options) {
            new (self) ContextualAutotuner(std::move(function_name), contextual_tuner_options(options));
          },
          nb::arg("function_name"), nb::arg("options"),
          "The contextual tuner of `function_name`; its keyword options are those of "
          "contextual_option_names, with contextual_defaults' defaults. An unknown option is "
          "InvalidSetting naming it.")
      .def("run", &run_outer, nb::arg("outer"),
           "Calls outer() until tuning is done; the last call is the final run.")
      .def_static("active", &ContextualAutotuner::active, nb::rv_policy::reference,
                  "The tuner whose run() is active in this process, or None.")
      .def("launch", &launch, nb::arg("kernel"), nb::arg("key"), nb::arg("candidates"),
           nb::arg("launch_one"), nb::arg("prepare_ahead").none() = nb::none(),
           "Inside run(): launches the candidate the kernel's tuning wants now, once, through "
           "launch_one(i), and returns i. prepare_ahead(list of i), given at a key's first "
           "launch, is told each candidate before its turn (to start its compile; it returns "
           "at once).")
      .def(
          "launch",
          [](ContextualAutotuner& tuner, KernelTuningState& kernel, const std::string& key,
             const CandidateTexts& candidates, nb::callable launch_one, std::optional<nb::callable> prepare_ahead) {
            return launch(tuner, kernel, key, candidates.texts, std::move(launch_one), std::move(prepare_ahead));
          },
          nb::arg("kernel"), nb::arg("key"), nb::arg("candidates"), nb::arg("launch_one"),
          nb::arg("prepare_ahead").none() = nb::none(),
          "launch() with candidate texts converted once (CandidateTexts).")
      .def_prop_ro("function_name", &ContextualAutotuner::function_name)
      .def_prop_ro("outer_runs", &ContextualAutotuner::outer_runs)
      .def_prop_ro("log_path", &ContextualAutotuner::log_path);
}

}  // namespace disttune::python
