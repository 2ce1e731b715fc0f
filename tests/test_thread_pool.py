"""dlc's thread pool (`runtime/thread_pool/pool.c`, `driver/thread_pool.py`): every iteration
once under concurrent and nested regions, models on it match the libgomp lowering, and the
driver falls back to libgomp without a C compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.driver import thread_pool
from onnx import TensorProto, helper, numpy_helper

import dlc

REPO = Path(__file__).resolve().parent.parent
needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler (cc)")


def _run_with_pool(tmp_path: Path, name: str, timeout: float) -> str:
    """Builds `tests/c/<name>.c` with the pool's source, runs it; returns what it printed."""
    program = tmp_path / name
    built = subprocess.run(
        ["cc", "-O2", "-std=gnu11", "-pthread", "-o", str(program),
         str(REPO / "tests" / "c" / f"{name}.c"), str(thread_pool.POOL_SOURCE)],
        capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=timeout,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip()


@needs_cc
def test_every_iteration_runs_once_under_concurrent_and_nested_regions(tmp_path: Path) -> None:
    assert _run_with_pool(tmp_path, "pool_stress", timeout=300) == "ok"


@needs_cc
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                    reason="the pool thread needs a core of its own to take part in a region")
def test_participants_run_their_home_shards(tmp_path: Path) -> None:
    """Back-to-back regions of 8 chunks on 2 threads: the pool thread's first chunk is one of
    its home shard's (4-7) in every region it takes part in, whatever the load (what keeps a
    kernel's part of its input in the cache of the core that wrote it); from one shared
    counter it took the caller's next chunk (1) whenever it came while the caller ran 0."""
    home, foreign = (int(count) for count in _run_with_pool(tmp_path, "pool_affinity",
                                                            timeout=120).split())
    assert foreign == 0 and home > 0, f"first chunks: {home} home, {foreign} the caller's"


def _matmul_relu(n: int) -> onnx.ModelProto:
    w = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [n, n])],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@needs_cc
@pytest.mark.parametrize("threads", [2, 3])
def test_a_model_on_the_pool_matches_numpy(threads: int) -> None:
    model = _matmul_relu(96)
    executable = dlc.compile(model, threads=threads, cache=False)
    x = np.random.default_rng(1).standard_normal((96, 96)).astype(np.float32)
    w = numpy_helper.to_array(model.graph.initializer[0])
    for _ in range(20):  # regions back to back, the pool threads awake or asleep
        np.testing.assert_allclose(executable(x), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)


def test_without_a_c_compiler_parallel_loops_go_to_libgomp(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setattr(thread_pool.shutil, "which", lambda _: None)
    assert thread_pool.parallel_runtime() == "gomp"
    executable = dlc.compile(_matmul_relu(64), threads=2, cache=False)
    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    w = numpy_helper.to_array(_matmul_relu(64).graph.initializer[0])
    np.testing.assert_allclose(executable(x), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(dlc.runtime.library.LibraryError, match="no C compiler"):
        thread_pool.pool_library()


def test_the_pool_is_found_in_objects_and_ir() -> None:
    assert thread_pool.uses_pool(b"\x00dlc_parallel_for\x00")
    assert thread_pool.uses_pool("call void @dlc_parallel_for(ptr @f, ptr %d, i64 8, i32 2)")
    assert not thread_pool.uses_pool(b"GOMP_parallel")
    assert thread_pool.link_inputs([b"GOMP_parallel"]) == []
    assert str(thread_pool.POOL_SOURCE) in thread_pool.link_inputs([b"dlc_parallel_for"])


def test_the_environment_picks_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DLC_PARALLEL_RUNTIME", "gomp")
    assert thread_pool.parallel_runtime() == "gomp"
    monkeypatch.setenv("DLC_PARALLEL_RUNTIME", "tbb")
    with pytest.raises(dlc.CompileError, match="expected DLC_PARALLEL_RUNTIME to be 'dlc' or "
                       "'gomp', found 'tbb'"):
        dlc.compile(_matmul_relu(32), threads=2)


@needs_cc
def test_the_pool_library_is_built_once_per_source(tmp_path: Path) -> None:
    first = thread_pool.pool_library(tmp_path)
    assert first.parent == tmp_path / "runtime" and first.exists()
    stamp = first.stat().st_mtime_ns
    assert thread_pool.pool_library(tmp_path) == first and first.stat().st_mtime_ns == stamp
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # an unusable cache: a temporary copy instead
    elsewhere = thread_pool.pool_library(blocked)
    assert elsewhere.exists() and blocked not in elsewhere.parents


@needs_cc
def test_unloading_the_pool_stops_its_threads(tmp_path: Path) -> None:
    program = tmp_path / "pool_unload"
    built = subprocess.run(["cc", "-O2", "-o", str(program),
                            str(REPO / "tests" / "c" / "pool_unload.c"), "-ldl"],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    library = thread_pool.pool_library(tmp_path)
    result = subprocess.run([str(program), str(library)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.split() == ["ok", "3", "1"]  # 2 pool threads beside main, then none
