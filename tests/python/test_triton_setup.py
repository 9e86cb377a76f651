"""Triton's one-time compile set-up (disttune._triton_setup): computed once, in one thread, before
any compile of the pipeline starts; nothing where Triton is not imported. Each case runs in a
fresh interpreter, as the set-up is once per process."""

import os
import subprocess
import sys
import textwrap

import pytest


def run_fresh(program: str, interpret: bool = True) -> str:
    """Runs `program` in a fresh interpreter; with interpret=False, outside Triton's interpreter
    (which this suite's conftest sets), where the drop-in queues real compiles."""
    env = dict(os.environ)
    if not interpret:
        env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(program)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_without_triton_imported_nothing_starts_and_triton_is_not_imported():
    assert run_fresh("""
        import sys, threading
        from disttune import _triton_setup
        _triton_setup.start()
        _triton_setup.wait()
        print("triton" in sys.modules, [t.name for t in threading.enumerate() if "setup" in t.name])
    """) == "False []"


def test_the_key_is_computed_once_whoever_asks_and_however_often():
    pytest.importorskip("triton")
    assert run_fresh("""
        import threading, time
        import triton.runtime.cache as cache
        from disttune import _triton_setup
        calls = []
        def counted():
            calls.append(threading.current_thread().name)
            time.sleep(0.2)
        cache.triton_key = counted
        askers = [threading.Thread(target=_triton_setup.wait) for _ in range(4)]
        for asker in askers:
            asker.start()
        _triton_setup.start()
        for asker in askers:
            asker.join()
        _triton_setup.wait()
        print(calls)
    """) == "['disttune-triton-setup']"


def test_every_compile_of_the_pipeline_starts_after_the_set_up_and_is_timed_without_it():
    pytest.importorskip("triton")
    assert run_fresh("""
        import threading, time
        import triton.runtime.cache as cache
        from disttune import _prepare, _resources
        set_up = threading.Event()
        ended = []
        def slow_key():
            time.sleep(0.5)
            ended.append(time.perf_counter())
            set_up.set()
        cache.triton_key = slow_key
        seen = {}
        def compile_one(candidate):
            seen[candidate] = set_up.is_set()
        pipeline = _prepare.CompilePipeline(compile_one, 4, None, None, _resources.Unrunnable().of(str, ()))
        try:
            assert pipeline.prepare([0, 1, 2, 3], []) == [""] * 4
            # Each compile's time (its timeline's start, its seconds) begins after the set-up.
            print(sorted(seen.items()), all(start >= ended[0] for _, start, _, _ in pipeline.timeline))
        finally:
            pipeline.close()
    """) == "[(0, True), (1, True), (2, True), (3, True)] True"


def test_a_set_up_that_raises_leaves_it_to_the_compile_to_raise():
    pytest.importorskip("triton")
    assert run_fresh("""
        import triton.runtime.cache as cache
        from disttune import _triton_setup
        def broken():
            raise OSError("libtriton not readable")
        cache.triton_key = broken
        _triton_setup.wait()
        _triton_setup.wait()
        print("returned")
    """) == "returned"


def test_a_child_forked_during_the_set_up_does_its_own_instead_of_waiting_forever():
    pytest.importorskip("triton")
    assert run_fresh("""
        import os, threading, time
        import triton.runtime.cache as cache
        from disttune import _triton_setup
        started = threading.Event()
        def slow_key():
            started.set()
            time.sleep(1.0)
        cache.triton_key = slow_key
        _triton_setup.start()
        started.wait()
        child = os.fork()
        if child == 0:
            _triton_setup.wait()  # its own set-up, not the parent's thread, which the child lacks
            os._exit(0)
        _triton_setup.wait()
        _, status = os.waitpid(child, 0)
        print(os.waitstatus_to_exitcode(status))
    """) == "0"


def test_the_drop_in_queues_its_first_compiles_after_the_set_up():
    pytest.importorskip("triton")
    assert run_fresh("""
        import threading, time
        from concurrent.futures import ThreadPoolExecutor
        import triton
        import triton.runtime.cache as cache
        from disttune import _triton_compile
        set_up = threading.Event()
        def slow_key():
            time.sleep(0.5)
            set_up.set()
        cache.triton_key = slow_key
        queued = []
        class Fn:
            def run(self, *args, **kwargs):  # where Triton would queue the config's compile
                queued.append((kwargs["BLOCK"], set_up.is_set()))
        class Kernel:
            arg_names = ["x"]
            fn = Fn()
        configs = [triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})]
        with ThreadPoolExecutor(2) as pool:
            _triton_compile.start_compiles(Kernel(), configs, (None,), {}, pool)
        print(queued)
    """, interpret=False) == "[(16, True), (32, True)]"
