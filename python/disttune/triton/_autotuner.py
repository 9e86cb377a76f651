"""The drop-in Autotuner: triton.autotune's kernel object, taken by the engine when made."""

from __future__ import annotations

from typing import Any, Optional

from triton.runtime.autotuner import Autotuner as TritonAutotuner

from disttune import _triton_setup
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
        # As newer Triton does: a None argument named in reset_to_zero / restore_value is skipped
        # (an optional pointer), where Triton 3.6's own hooks fail the launch.
        if not self.user_defined_pre_hook and (self.reset_to_zero or self.restore_value):
            self.pre_hook = self._reset_and_save
        if not self.user_defined_post_hook and self.restore_value:
            self.post_hook = self._restore
        _switch.take(self)
        _triton_setup.start()  # in the background until the first compile needs it

    def _reset_and_save(self, named: dict, reset_only: bool = False) -> None:
        for name in self.reset_to_zero:
            if named[name] is not None:
                named[name].zero_()
        if not reset_only:
            self.restore_copies = {name: named[name].clone() for name in self.restore_value
                                   if named[name] is not None}

    def _restore(self, named: dict, exception: Optional[BaseException]) -> None:
        for name, value in self.restore_copies.items():
            named[name].copy_(value)
        self.restore_copies = {}

    def prune_configs(self, kwargs: dict) -> list:
        """Triton's pruning; a fractional top_k that keeps no config keeps the perf model's best,
        as newer Triton does (Triton 3.6 returns none)."""
        pruned = super().prune_configs(kwargs)
        if pruned or not self.perf_model:
            return pruned
        top_k, self.configs_top_k = self.configs_top_k, 1
        try:
            return super().prune_configs(kwargs)
        finally:
            self.configs_top_k = top_k
