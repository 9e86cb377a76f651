// The parts of the disttune._core module, one binder per engine seam.
#pragma once

#include <nanobind/nanobind.h>

namespace disttune::python {

/// DisttuneError and the errors under it (InvalidSetting, TuningFailed, CollectiveTimeout, ...).
void bind_errors(nanobind::module_& module);
/// environment_settings, the defaults of both tuners and the settings read from the environment.
void bind_settings(nanobind::module_& module);
/// set_sink: a Python callable receiving disttune's console output.
void bind_sink(nanobind::module_& module);
/// Timer, CpuTimer, CudaTimer and cuda_unavailable_reason.
void bind_timer(nanobind::module_& module);
/// Communicator, CollectiveContext, make_callback_communicator and the collective errors.
void bind_communicator(nanobind::module_& module);
/// FunctionTuner, TuningReport, CandidateResult, format_table and the canonical-JSON helpers.
void bind_function_tuner(nanobind::module_& module);
/// KernelTuningState, KernelChoice, ContextualAutotuner and the contextual errors.
void bind_context(nanobind::module_& module);
/// CandidateStanding, register_strategy and registered_strategies: strategies by name.
void bind_strategy(nanobind::module_& module);
/// HitPath and make_hit_path: the C cache-hit path of a tuned function.
void bind_hit_path(nanobind::module_& module);
/// Record, RecordRead, read_record and parse_record: the typed record and its one reader.
void bind_store(nanobind::module_& module);
/// command_table, run_command, import_table and export_table: the disttune command line
/// (src/cli/).
void bind_command_line(nanobind::module_& module);

}  // namespace disttune::python
