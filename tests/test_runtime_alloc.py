"""A compiled model allocates nothing per call: its planned workspace and its kernels' buffers
(Winograd transforms, packed tiles) come from per-site cache slots after the first call
(`rewrites.llvm_lowering.memref.cached_heap_allocate`), and concurrent calls stay correct."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

REPOSITORY = Path(__file__).resolve().parent.parent

COUNTER_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
size_t dlc_test_aligned_allocs = 0;
static void *(*real_aligned_alloc)(size_t, size_t);
void *aligned_alloc(size_t alignment, size_t size) {
  if (!real_aligned_alloc) real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  __atomic_add_fetch(&dlc_test_aligned_allocs, 1, __ATOMIC_RELAXED);
  return real_aligned_alloc(alignment, size);
}
"""
"""An LD_PRELOAD interposer counting every `aligned_alloc` of the process (the call the
generated code makes for heap buffers; NumPy and Python use malloc)."""

COUNT_CALLS = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    import dlc
    sys.path.insert(0, sys.argv[1])
    from test_runtime_alloc import two_convs_model
    model = dlc.compile(two_convs_model(), cache_dir=sys.argv[2], threads=2)
    counter = ctypes.c_size_t.in_dll(ctypes.CDLL(None), "dlc_test_aligned_allocs")
    x = np.random.default_rng(0).standard_normal((1, 16, 20, 20), dtype=np.float32)
    out = np.empty((1, 16, 20, 20), np.float32)
    before = counter.value
    model(x, out=(out,))
    first = counter.value - before
    before = counter.value
    for _ in range(20):
        model(x, out=(out,))
    print(first, counter.value - before)
""")


def two_convs_model() -> object:
    """`Relu(Conv(Relu(BatchNormalization(Conv(x)))))` on 1x16x20x20, 3x3 convs: Winograd
    kernels (with transform buffers) and an intermediate in the entry's workspace."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    channels = 16
    arrays = {
        "W1": rng.standard_normal((channels, channels, 3, 3), dtype=np.float32) * 0.1,
        "W2": rng.standard_normal((channels, channels, 3, 3), dtype=np.float32) * 0.1,
        "scale": rng.uniform(0.5, 1.5, channels).astype(np.float32),
        "shift": rng.standard_normal(channels, dtype=np.float32) * 0.1,
        "mean": rng.standard_normal(channels, dtype=np.float32) * 0.1,
        "var": rng.uniform(0.5, 1.5, channels).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "W1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "scale", "shift", "mean", "var"], ["b1"]),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("Conv", ["r1", "W2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["y"]),
    ]
    shape = [1, channels, 20, 20]
    graph = helper.make_graph(
        nodes, "two_convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(array, name) for name, array in arrays.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def reference(model: object, x: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, {"x": x})[0]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_calls_after_the_first_allocate_nothing(tmp_path: Path) -> None:
    counter = tmp_path / "count_aligned_alloc.so"
    source = tmp_path / "count_aligned_alloc.c"
    source.write_text(COUNTER_SOURCE)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(counter), str(source), "-ldl"],
                   check=True)
    environment = dict(os.environ, LD_PRELOAD=str(counter),
                       PYTHONPATH=f"{REPOSITORY}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = subprocess.run(
        [sys.executable, "-c", COUNT_CALLS, str(Path(__file__).parent), str(tmp_path / "cache")],
        capture_output=True, text=True, env=environment, cwd=REPOSITORY, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    first, later = (int(n) for n in result.stdout.split()[-2:])
    # The first call takes the buffers (the counter sees the generated code's allocations)...
    assert first >= 2, result.stdout
    # ...and the next twenty find them in their slots.
    assert later == 0, f"{later} aligned_allocs in 20 calls after the first"


def test_concurrent_calls_get_buffers_of_their_own(tmp_path: Path) -> None:
    import dlc

    model = two_convs_model()
    compiled = dlc.compile(model, cache_dir=tmp_path, threads=2)
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal((1, 16, 20, 20), dtype=np.float32) for _ in range(4)]
    expected = [reference(model, x) for x in inputs]
    failures: list[str] = []

    def calls(index: int) -> None:
        for _ in range(15):
            got = compiled(inputs[index])
            assert isinstance(got, np.ndarray)
            if not np.allclose(got, expected[index], rtol=1e-4, atol=1e-4):
                failures.append(f"thread {index}: max error {np.abs(got - expected[index]).max()}")
                return

    threads = [threading.Thread(target=calls, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures


# ------------------------------------------------------------------------------------------
# DLC_NUM_THREADS
# ------------------------------------------------------------------------------------------


def test_dlc_num_threads_sets_the_thread_count_a_compile_leaves_at_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dlc.driver.target import resolve_cpu_target

    monkeypatch.setenv("DLC_NUM_THREADS", "3")
    assert resolve_cpu_target("host").threads == 3
    assert resolve_cpu_target("host", 2).threads == 2  # threads= wins
    assert resolve_cpu_target("llvm -mcpu=znver3").threads == 3
    assert resolve_cpu_target("llvm -mcpu=znver3 -num-cores=4").threads == 4  # the string wins
    monkeypatch.delenv("DLC_NUM_THREADS")
    assert resolve_cpu_target("llvm -mcpu=znver3").threads == 0


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_dlc_num_threads_must_be_a_positive_count(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    from dlc.driver.errors import CompileError
    from dlc.driver.target import resolve_cpu_target

    monkeypatch.setenv("DLC_NUM_THREADS", value)
    with pytest.raises(CompileError, match=f"expected DLC_NUM_THREADS to be a number of "
                                           f"threads \\(an integer >= 1\\), found '{value}'"):
        resolve_cpu_target("host")


def test_dlc_num_threads_is_the_openmp_default_of_a_loaded_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dlc.runtime.library import prepare_openmp_environment

    monkeypatch.setenv("DLC_NUM_THREADS", "3")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    prepare_openmp_environment()
    assert os.environ["OMP_NUM_THREADS"] == "3"
