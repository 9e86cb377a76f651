"""Triton compiles in worker processes (disttune._compile_workers): a spawned worker compiles a
kernel for an H100/H200 target into Triton's file cache, with no GPU (Triton's compiler and its
ptxas run on the CPU), and the program's own compile of it then reads that cache; a worker
refuses a kernel it cannot find or whose source is not the program's."""

import os

import pytest

triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

from disttune import _compile_workers  # noqa: E402

HOPPER = GPUTarget("cuda", 90, 32)
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
WORKER_START_S = 120  # a spawned worker imports triton (and torch) on a loaded machine


def doubled(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=mask), mask=mask)


# A compiled kernel even where the tests run Triton's interpreter (triton.jit would give an
# interpreted one), here and in the workers, which import this module.
doubled = JITFunction(doubled)


def cached_files(root):
    return sorted(os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names)


def request(fn, block, cache_dir, cache_key=None):
    """compile_in_worker's arguments for `fn` at BLOCK=`block`, as compile_request makes them."""
    return ("test_compile_workers", "doubled", cache_key or fn.cache_key, dict(SIGNATURE), {(3,): block}, {},
            HOPPER, {"num_warps": 4, "num_stages": 2}, None, cache_dir)


@pytest.fixture(scope="module")
def workers():
    pool = _compile_workers.CompileWorkers(1)
    assert pool.up(WORKER_START_S), "no compile worker started"
    yield pool
    pool.shutdown()


def test_a_worker_compiles_into_the_cache_the_program_then_reads(workers, tmp_path, monkeypatch):
    cache_dir = str(tmp_path / "triton")
    workers._pool.submit(_compile_workers.compile_in_worker, *request(doubled, 256, cache_dir)).result()
    written = cached_files(cache_dir)
    assert any(name.endswith(".cubin") for name in written), written

    monkeypatch.setattr(triton.knobs.cache, "dir", cache_dir)
    source = ASTSource(doubled, dict(SIGNATURE), {(3,): 256}, {})
    kernel = triton.compile(source, target=HOPPER, options={"num_warps": 4, "num_stages": 2})
    assert cached_files(cache_dir) == written  # a cache hit: nothing compiled again
    assert kernel.metadata.num_warps == 4


def test_another_specialisation_is_another_compile(workers, tmp_path):
    cache_dir = str(tmp_path / "triton")
    for block in (128, 512):
        workers._pool.submit(_compile_workers.compile_in_worker, *request(doubled, block, cache_dir)).result()
    assert sum(name.endswith(".cubin") for name in cached_files(cache_dir)) == 2


def test_a_kernel_whose_source_differs_is_refused(workers, tmp_path):
    cache_dir = str(tmp_path / "triton")
    compiling = workers._pool.submit(_compile_workers.compile_in_worker,
                                     *request(doubled, 256, cache_dir, cache_key="another source"))
    with pytest.raises(LookupError, match="not the kernel the program runs"):
        compiling.result()
    assert cached_files(cache_dir) == []


def test_a_kernel_inside_a_function_is_left_to_the_program():
    def queued():  # a closure shaped as Triton's JIT queues it, over a kernel made in a function
        return src, target, options

    def local_kernel(x_ptr):
        tl.store(x_ptr, 1.0)

    src = ASTSource(JITFunction(local_kernel), {"x_ptr": "*fp32"}, {}, {})
    target, options = HOPPER, None
    assert _compile_workers.compile_request(queued) is None


def test_the_closure_of_a_module_kernel_becomes_a_request(tmp_path, monkeypatch):
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path))

    class Options:
        def __init__(self):
            self.num_warps = 4

    def queued():
        return src, target, options, env_vars

    src = ASTSource(doubled, dict(SIGNATURE), {(3,): 64}, {})
    target, options, env_vars = HOPPER, Options(), {}
    made = _compile_workers.compile_request(queued)
    assert made == ("test_compile_workers", "doubled", doubled.cache_key, SIGNATURE, {(3,): 64}, {}, HOPPER,
                    {"num_warps": 4}, {}, str(tmp_path))


def test_a_closure_of_another_shape_is_no_request():
    assert _compile_workers.compile_request(lambda: None) is None
