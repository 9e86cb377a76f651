"""The drop-in Autotuner: triton.autotune's kernel object, taken by the engine when made."""

from __future__ import annotations

from typing import Any, Optional

from triton.runtime.autotuner import Autotuner as TritonAutotuner

from disttune.triton import _switch


class Autotuner(TritonAutotuner):
    """triton.runtime.autotuner.Autotuner (same constructor, attributes and hooks) whose
    tuning of a new key is the engine's (disttune.triton._kernel_tuning): candidates compiled
    as the engine's strategy names them, measured by the engine's strategy or by the given
    benchmarker, agreed across the ranks of torch's default process group (MAX), and kept in
    the engine's stores (directory, Redis)."""

    def __init__(self, fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=None, post_hook=None,
                 prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)
        # The benchmarker the user chose (do_bench=, or Triton's from warmup/rep/use_cuda_graph);
        # None: the engine measures.
        self.benchmarker = self._do_bench
        self.name = self.base_fn.__name__
        self.last_report: Optional[Any] = None
        _switch.take(self)
