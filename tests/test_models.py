"""Whole models through dlc.compile: agreement with ONNX's reference evaluator, the memory plan,
kernel deduplication, the compile cache, weights outside the IR, exported libraries, profiles.

The planner and the structural hash are tested on their own (fast); everything that compiles a
real network is marked slow.
"""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import onnx
import pytest
from dlc.dialects.loop import AllocOp
from dlc.driver.compiler import Progress
from dlc.rewrites.loop_plan_memory import Lifetime, greedy_by_size
from dlc.runtime.executable import ExecutableError
from dlc.runtime.library import LibraryError
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import MemRefType, i8

import dlc

REPO = Path(__file__).resolve().parent.parent
SMALL_CNN = REPO / "examples" / "small_cnn.onnx"
RELATIVE_TOLERANCE = 1e-4


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


zoo = _load(REPO / "benchmarks" / "model_zoo.py", "dlc_model_zoo")


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    """max |got - expected| / max |expected|."""
    return float(np.max(np.abs(got - expected)) / max(np.max(np.abs(expected)), 1e-30))


def reference(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """ONNX's own reference evaluator: the oracle."""
    return list(ReferenceEvaluator(model).run(None, inputs))


def tiny_model(scale: float = 2.0) -> onnx.ModelProto:
    """y = Relu(x * w) + b over (2, 8), with constant w (not a splat: splat constants fold into
    kernels, which would make another scale another kernel) and b."""
    w = numpy_helper.from_array(
        scale * np.linspace(1.0, 2.0, 16, dtype=np.float32).reshape(2, 8), "w")
    b = numpy_helper.from_array(np.arange(8, dtype=np.float32), "b")
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["m"], name="scale"),
        helper.make_node("Relu", ["m"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "b"], ["y"], name="shift"),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [w, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# ---------------------------------------------------------------------------------------------
# The planner (fast)
# ---------------------------------------------------------------------------------------------

_intervals = st.lists(
    st.tuples(st.integers(1, 5000), st.integers(0, 30), st.integers(0, 10)), min_size=1,
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(_intervals, st.sampled_from([1, 16, 64]))
def test_greedy_by_size_never_overlaps_live_buffers(
    specs: list[tuple[int, int, int]], alignment: int
) -> None:
    lifetimes = [
        Lifetime(AllocOp(MemRefType(i8, [size])), size, start, start + length)
        for size, start, length in specs
    ]
    plan = greedy_by_size(lifetimes, alignment)
    placed = list(plan.offsets)
    assert sorted(id(lifetime) for lifetime, _ in placed) == sorted(map(id, lifetimes))
    for index, (a, offset_a) in enumerate(placed):
        assert offset_a % alignment == 0
        assert offset_a + a.size <= plan.peak_bytes
        for b, offset_b in placed[index + 1:]:
            if a.overlaps(b):
                assert offset_a + a.size <= offset_b or offset_b + b.size <= offset_a
    # never worse than no reuse, never better than the most bytes live at one time
    aligned = sum((lt.size + alignment - 1) // alignment * alignment for lt in lifetimes)
    assert plan.peak_bytes <= aligned
    for time in range(0, 41):
        live = sum(lt.size for lt in lifetimes if lt.start <= time <= lt.end)
        assert live <= plan.peak_bytes


def test_buffers_with_disjoint_lifetimes_share_bytes() -> None:
    def lifetime(size: int, start: int, end: int) -> Lifetime:
        return Lifetime(AllocOp(MemRefType(i8, [size])), size, start, end)

    chain = [lifetime(1000, 0, 1), lifetime(1000, 1, 2), lifetime(1000, 2, 3)]
    plan = greedy_by_size(chain, 64)
    offsets = [offset for _, offset in plan.offsets]
    assert offsets[0] == offsets[2] != offsets[1]
    assert plan.peak_bytes == 2048 and plan.unplanned_bytes == 3000


# ---------------------------------------------------------------------------------------------
# Small models (fast)
# ---------------------------------------------------------------------------------------------


def test_compiled_model_matches_reference_and_runs_by_name(tmp_path: Path) -> None:
    model = tiny_model()
    module = dlc.compile(model, cache_dir=tmp_path)
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    (expected,) = reference(model, {"x": x})
    np.testing.assert_allclose(module(x), expected, rtol=1e-6)
    results = module.run({"x": x})
    assert list(results) == ["y"] and module.input_names == ("x",)
    np.testing.assert_allclose(results["y"], expected, rtol=1e-6)
    with pytest.raises(ExecutableError, match=r"expects inputs 'x': missing 'x'; unknown 'z'"):
        module.run({"z": x})
    with pytest.raises(ExecutableError, match=r"input 0 \('x'\) of @main: expected shape"):
        module(np.zeros((3, 8), np.float32))
    with pytest.raises(ExecutableError, match=r"expected dtype float32, found float64"):
        module(np.zeros((2, 8), np.float64))


def test_weights_live_outside_the_code(tmp_path: Path) -> None:
    module = dlc.compile(tiny_model(), cache_dir=tmp_path)
    assert module.stats.weight_bytes == 2 * 8 * 4 + 8 * 4
    native = module.native
    weights = native.compiled.weights  # type: ignore[attr-defined]
    assert sorted(w.nbytes for w in weights.values()) == [32, 64]
    assert all(w.ctypes.data % 64 == 0 for w in weights.values())
    assert all(len(code) < 16384 for code in native.compiled.objects.values())  # type: ignore


def test_second_compile_comes_from_the_cache(tmp_path: Path) -> None:
    model = tiny_model()
    path = tmp_path / "tiny.onnx"
    onnx.save(model, path)
    first = dlc.compile(path, cache_dir=tmp_path / "cache")
    again = dlc.compile(path, cache_dir=tmp_path / "cache")
    assert not first.stats.model_cache_hit and again.stats.model_cache_hit
    x = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(first(x), again(x))
    # other weights, same structure: a new model, but every kernel comes from the cache
    other = dlc.compile(tiny_model(scale=-3.0), cache_dir=tmp_path / "cache")
    assert other.stats.kernels_cached == other.stats.kernels >= 1
    np.testing.assert_allclose(other(x), reference(tiny_model(-3.0), {"x": x})[0])
    uncached = dlc.compile(path, cache=False)
    assert uncached.stats.kernels_cached == 0


def test_corrupt_cache_entries_are_recompiled(tmp_path: Path) -> None:
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_model(), path)
    cache = tmp_path / "cache"
    dlc.compile(path, cache_dir=cache)
    for damaged in [*cache.glob("kernels/*.o"), *cache.glob("models/*/*")]:
        damaged.write_bytes(damaged.read_bytes()[: len(damaged.read_bytes()) // 2] + b"junk")
    module = dlc.compile(path, cache_dir=cache)
    assert not module.stats.model_cache_hit and module.stats.kernels_cached == 0
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(module(x), reference(tiny_model(), {"x": x})[0])
    assert dlc.compile(path, cache_dir=cache).stats.model_cache_hit


def test_cached_weights_with_flipped_bytes_are_recompiled(tmp_path: Path) -> None:
    """A cached weights blob whose bytes changed but whose size and modification time did not
    fails its SHA-256: the model is compiled again, not run on the wrong weights."""
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_model(), path)
    cache = tmp_path / "cache"
    dlc.compile(path, cache_dir=cache)
    (blob,) = cache.glob("models/*/weights.bin")
    status = blob.stat()
    data = bytearray(blob.read_bytes())
    data[0] ^= 0x40
    blob.write_bytes(bytes(data))
    os.utime(blob, ns=(status.st_atime_ns, status.st_mtime_ns))
    module = dlc.compile(path, cache_dir=cache)
    assert not module.stats.model_cache_hit
    x = np.ones((2, 8), np.float32)
    np.testing.assert_allclose(module(x), reference(tiny_model(), {"x": x})[0])


def test_truncating_the_cached_weights_does_not_crash_a_loaded_model(tmp_path: Path) -> None:
    """A model taken from the cache holds its own copy of the weights: truncating the cache
    file afterwards (another process clearing the cache) cannot SIGBUS it. Run in a child
    process, since the failure is a crash."""
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_model(), path)
    cache = tmp_path / "cache"
    dlc.compile(path, cache_dir=cache)
    script = (
        "import os, sys, numpy as np, dlc\n"
        f"m = dlc.compile({str(path)!r}, cache_dir={str(cache)!r})\n"
        "assert m.stats.model_cache_hit\n"
        "x = np.ones((2, 8), np.float32)\n"
        "before = m(x).copy()\n"
        f"(blob,) = __import__('pathlib').Path({str(cache)!r}).glob('models/*/weights.bin')\n"
        "os.truncate(blob, 0)\n"
        "np.testing.assert_array_equal(m(x), before)\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO, check=False)
    assert result.returncode == 0 and result.stdout.strip() == "ok", (result.returncode,
                                                                      result.stderr[-2000:])


def test_cache_size_limit_evicts_the_least_recently_used(tmp_path: Path) -> None:
    """Over its limit, the cache removes the least recently used entries until it fits (a load
    counts as a use); a compile with a limit evicts."""
    from dlc.driver.cache import CompileCache

    cache = tmp_path / "cache"
    paths = []
    for index, scale in enumerate((1.0, 2.0, 3.0)):
        paths.append(tmp_path / f"m{index}.onnx")
        onnx.save(tiny_model(scale=scale), paths[-1])
    models: list[Path] = []
    for path in paths:
        before = set((cache / "models").glob("*"))
        dlc.compile(path, cache_dir=cache, cache_max_bytes=None)
        (new,) = set((cache / "models").glob("*")) - before
        models.append(new)
    usage = CompileCache(cache, None).usage()
    assert usage.models == 3 and usage.kernels >= 1
    old = (models[0] / "manifest.json").stat().st_mtime - 3600
    for model in models[:2]:  # m0 and m1 last used an hour ago...
        for file in model.iterdir():
            os.utime(file, (old, old))
    assert dlc.compile(paths[0], cache_dir=cache).stats.model_cache_hit  # ... m0 used again now
    m1_bytes = sum(file.stat().st_size for file in models[1].iterdir())
    limit = usage.bytes - m1_bytes
    assert CompileCache(cache, limit).evict() == m1_bytes
    assert CompileCache(cache, None).usage().bytes == limit
    for path, cached in [(paths[0], True), (paths[2], True), (paths[1], False)]:
        assert dlc.compile(path, cache_dir=cache, cache_max_bytes=None).stats.model_cache_hit \
            is cached
    dlc.compile(tiny_model(scale=4.0), cache_dir=cache, cache_max_bytes=1)
    assert CompileCache(cache, None).usage().bytes <= 1


def test_integer_and_scalar_inputs(tmp_path: Path) -> None:
    table = np.arange(20, dtype=np.float32).reshape(5, 4)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows"], name="embed", axis=0),
        helper.make_node("Mul", ["rows", "scale"], ["y"], name="scale"),
    ]
    graph = helper.make_graph(
        nodes, "lookup",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [3]),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
        [numpy_helper.from_array(table, "table")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = dlc.compile(model, cache_dir=tmp_path)
    ids = np.array([4, 0, 2], np.int64)
    np.testing.assert_array_equal(module(ids, 0.5), table[ids] * 0.5)
    np.testing.assert_array_equal(module.run({"ids": ids, "scale": np.float32(2)})["y"],
                                  table[ids] * 2)
    with pytest.raises(ExecutableError, match=r"input 0 \('ids'\) of @main: expected dtype int64"):
        module(ids.astype(np.float32), 0.5)


def test_dynamic_dimensions_take_input_shapes_or_specialize(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "dynamic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = dlc.compile(model, input_shapes={"x": [3, 4]}, cache_dir=tmp_path)
    assert isinstance(module, dlc.Executable)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(module(x), np.maximum(x, 0))
    dynamic = dlc.compile(model, cache_dir=tmp_path)  # per call shape (driver.specialize)
    np.testing.assert_array_equal(dynamic(x), np.maximum(x, 0))
    np.testing.assert_array_equal(dynamic(x[:1]), np.maximum(x[:1], 0))
    with pytest.raises(dlc.ExecutableError, match="batch"):
        dynamic.export(tmp_path / "m.so")


def test_unsupported_ops_are_a_compile_error(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Det", ["x"], ["y"], name="determinant")], "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(dlc.CompileError, match="Det"):
        dlc.compile(model, cache_dir=tmp_path)
    with pytest.raises(dlc.CompileError, match="no such file"):
        dlc.compile(tmp_path / "missing.onnx", cache_dir=tmp_path)
    (tmp_path / "model.txt").write_text("x")
    with pytest.raises(dlc.CompileError, match=r"expected a \.onnx or \.mlir file"):
        dlc.compile(tmp_path / "model.txt", cache_dir=tmp_path)


def test_compiles_restore_the_garbage_collector_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from dlc.driver import compiler

    seen: list[tuple[int, ...]] = []
    run = compiler._Driver.run

    def recording_run(driver: compiler._Driver) -> compiler.CompiledModel:
        seen.append(gc.get_threshold())
        return run(driver)

    monkeypatch.setattr(compiler._Driver, "run", recording_run)
    before = gc.get_threshold()
    dlc.compile(tiny_model(), cache=False)
    assert seen == [compiler.GC_THRESHOLD_WHILE_COMPILING]
    assert gc.get_threshold() == before

    def failing_run(driver: compiler._Driver) -> compiler.CompiledModel:
        raise compiler.CompileError("LLVM failed")

    monkeypatch.setattr(compiler._Driver, "run", failing_run)
    with pytest.raises(dlc.CompileError, match="LLVM failed"):
        dlc.compile(tiny_model(scale=3.0), cache=False)
    assert gc.get_threshold() == before


def test_progress_is_reported_once_a_compile_is_slow() -> None:
    stream = io.StringIO()
    quiet = Progress("m.onnx", enabled=True, delay=60.0, stream=stream)
    quiet.stage("kernel 1/2")
    quiet.done()
    assert stream.getvalue() == ""
    slow = Progress("m.onnx", enabled=True, delay=0.0, stream=stream)
    slow.stage("kernel 1/2")
    slow.done()
    assert "dlc: compiling m.onnx: kernel 1/2" in stream.getvalue()
    assert "dlc: compiled m.onnx in" in stream.getvalue()


# ---------------------------------------------------------------------------------------------
# Real networks (slow)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dlc-cache")


@pytest.fixture(scope="module")
def small_cnn(cache_dir: Path) -> dlc.Executable:
    return dlc.compile(SMALL_CNN, cache_dir=cache_dir)


@pytest.mark.slow
def test_small_cnn_matches_reference(small_cnn: dlc.Executable) -> None:
    image = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (expected,) = reference(onnx.load(SMALL_CNN), {"image": image})
    assert relative_error(small_cnn(image), expected) <= RELATIVE_TOLERANCE
    stats = small_cnn.stats
    assert stats.calls >= 8 and 0 < stats.workspace_bytes < stats.unplanned_bytes


LOAD_IN_FRESH_PROCESS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import dlc

    model = dlc.load(sys.argv[1])
    image = np.load(sys.argv[2])
    np.save(sys.argv[3], model.run({"image": image})["probabilities"])
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("llvmlite", "xdsl", "onnx"))
    assert not heavy, heavy
    """
)


@pytest.mark.slow
def test_exported_model_carries_its_weights(small_cnn: dlc.Executable, tmp_path: Path) -> None:
    library = small_cnn.export(tmp_path / "small_cnn.so")
    assert library.stat().st_size > small_cnn.stats.weight_bytes
    image = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "image.npy", image)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH",
                                                                                 "")]))
    result = subprocess.run(
        [sys.executable, "-c", LOAD_IN_FRESH_PROCESS, str(library), str(tmp_path / "image.npy"),
         str(tmp_path / "out.npy")], capture_output=True, text=True, env=env, cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), small_cnn(image))
    loaded = dlc.load(library)
    assert loaded.model is not None and loaded.model.calls == small_cnn.model.calls  # type: ignore
    with pytest.raises(ExecutableError, match=r"input 0 \('image'\) of @main: expected shape"):
        loaded(np.zeros((1, 3, 16, 16), np.float32))


@pytest.mark.slow
def test_profile_names_the_onnx_nodes_of_each_kernel(small_cnn: dlc.Executable) -> None:
    from dlc.runtime.profiler import profile

    image = np.zeros((1, 3, 32, 32), np.float32)
    result = profile(small_cnn, [image], repeat=3)
    assert len(result.calls) == small_cnn.stats.calls
    assert all(t.seconds is not None and t.seconds > 0 for t in result.calls)
    nodes = [node for timing in result.calls for node in timing.call.nodes]
    assert {"conv1.relu", "conv4", "conv4.relu", "residual", "fc", "softmax"} <= set(nodes)
    table = result.table()
    assert "conv4, conv4.relu, residual" in table and "whole model (one call)" in table


def test_missing_or_corrupt_libraries_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="no shared library at"):
        dlc.load(tmp_path / "missing.so")
    (tmp_path / "corrupt.so").write_bytes(b"\x7fELF not really")
    with pytest.raises(LibraryError, match="cannot load"):
        dlc.load(tmp_path / "corrupt.so")


def _check_network(name: str, cache_dir: Path, seed: int = 0) -> dlc.Executable:
    model = zoo.MODELS[name]()
    module = dlc.compile(model, cache_dir=cache_dir)
    inputs = zoo.random_inputs(model, seed)
    expected = reference(model, inputs)
    got = module(*inputs.values())
    got = list(got) if isinstance(got, tuple) else [got]
    for g, e in zip(got, expected, strict=True):
        assert relative_error(g, e) <= RELATIVE_TOLERANCE, name
    return module


@pytest.mark.slow
def test_mlp_matches_reference(cache_dir: Path) -> None:
    _check_network("mlp", cache_dir)


@pytest.mark.slow
def test_transformer_block_matches_reference(cache_dir: Path) -> None:
    _check_network("transformer", cache_dir)


@pytest.mark.slow
def test_resnet18_dedups_kernels_and_plans_memory(cache_dir: Path) -> None:
    module = _check_network("resnet18", cache_dir)
    stats = module.stats
    assert stats.kernels < stats.calls
    assert stats.workspace_bytes < stats.unplanned_bytes / 2
    assert stats.weight_bytes > 40e6


def test_cached_parallel_kernels_link_in_a_fresh_process(tmp_path: Path) -> None:
    """A kernel taken from the disk cache still links its parallel runtime (libgomp, or dlc's
    pool with DLC_PARALLEL_RUNTIME=dlc) when it has parallel loops (the second model has other
    weights, so its kernels, not the whole model, come from the cache)."""

    def save(scale: float) -> Path:
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mm",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [128, 128])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [128, 128])],
            [numpy_helper.from_array(np.eye(128, dtype=np.float32) * scale, "w")])
        path = tmp_path / f"mm{scale}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        return path

    def run(scale: float) -> list[str]:
        script = textwrap.dedent(f"""
            import numpy as np, dlc
            m = dlc.compile({str(save(scale))!r}, cache_dir={str(tmp_path / "cache")!r},
                            threads=2)
            x = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
            assert np.array_equal(m(x), {scale} * x)
            maps = open("/proc/self/maps").read()
            linked = "libgomp" in maps or "dlc_thread_pool" in maps
            print("parallel" if linked else "serial", m.stats.kernels_cached)
        """)
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              cwd=REPO, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    assert run(2.0) == ["parallel", "0"]
    status, cached = run(3.0)
    assert status == "parallel" and int(cached) >= 1


@pytest.mark.parametrize("size", [5, 6])
def test_winograd_benchmark_model_is_the_direct_conv(size: int) -> None:
    """`benchmarks/winograd.py`'s Winograd F(2x2, 3x3) graph computes the direct 3x3 conv (an
    odd size crops its last tile): ONNX's reference evaluator on both, and dlc on the Winograd
    graph (strided slices, a concat, batched and thin MatMuls, a transpose)."""
    winograd_bench = _load(REPO / "benchmarks" / "winograd.py", "dlc_winograd_benchmark")
    direct_model, winograd_model = winograd_bench.direct_model, winograd_bench.winograd_model
    rng = np.random.default_rng(size)
    weight = rng.standard_normal((3, 3, 3, 3), dtype=np.float32)
    x = rng.standard_normal((1, 3, size, size), dtype=np.float32)
    winograd = winograd_model(weight, size)
    (expected,) = ReferenceEvaluator(direct_model(weight, size)).run(None, {"x": x})
    (reference,) = ReferenceEvaluator(winograd).run(None, {"x": x})
    np.testing.assert_allclose(reference, expected, rtol=1e-5, atol=1e-5)
    got = dlc.compile(winograd, cache=False)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
