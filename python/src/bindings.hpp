// The parts of the disttune._core module, one binder per engine seam.
#pragma once

#include <nanobind/nanobind.h>

namespace disttune::python {

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

}  // namespace disttune::python
