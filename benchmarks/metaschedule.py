"""Apache TVM's MetaSchedule on `benchmarks/tune.py`'s tasks: the peer at the same trial budget.

Run with an interpreter that has Apache TVM (`benchmarks/tune.py --tvm-python PATH` does):
`python3 benchmarks/metaschedule.py --task gemm|conv --trials 64 256 [--size 1024] [--threads 2]`.
Prints one line, `METASCHEDULE {json}`: best GFLOP/s and wall seconds after each trial count
(from TVM's own run times, read by a measure callback as the trials come back), the tuning wall
time, the best schedule's GFLOP/s timed here (median of 10 calls, after its result is checked
against NumPy) and the seconds of TVM's one-time setup (excluded from the wall times).

Tasks, as `benchmarks/tune.py` builds them for dlc: fp32 GEMM `size`^3, and ResNet-18's layer1
conv (NCHW, 3x3, 64 -> 64 channels, 56x56, pad 1, + bias + ReLU).

Known to work (2026-12): apache-tvm 0.27.0.post1 with apache-tvm-ffi 0.1.14.post1, psutil and
xgboost, in a virtual environment of their own (`pip install apache-tvm==0.27.0.post1
apache-tvm-ffi==0.1.14.post1 psutil xgboost`). With apache-tvm-ffi 0.1.15.post2 TVM's JSON
serialization segfaults (`tvm::ffi::ToJSONGraph`), which MetaSchedule's mutators reach.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

import numpy as np

CONV = (1, 64, 56, 56, 64, 3)
"""ResNet-18's layer1 conv: batch, in channels, height, width, out channels, kernel size."""


def gemm_func(size: int) -> object:
    from tvm import te

    a = te.placeholder((size, size), "float32", name="A")
    b = te.placeholder((size, size), "float32", name="B")
    k = te.reduce_axis((0, size), name="k")
    c = te.compute((size, size), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return te.create_prim_func([a, b, c])


def conv_func() -> object:
    from tvm import te, tirx

    n, ic, h, w, oc, ks = CONV
    data = te.placeholder((n, ic, h, w), "float32", name="data")
    weight = te.placeholder((oc, ic, ks, ks), "float32", name="weight")
    bias = te.placeholder((oc,), "float32", name="bias")
    pad = ks // 2
    padded = te.compute(
        (n, ic, h + 2 * pad, w + 2 * pad),
        lambda b, c, y, x: tirx.if_then_else(
            tirx.all(y >= pad, y < h + pad, x >= pad, x < w + pad),
            data[b, c, y - pad, x - pad], tirx.const(0.0, "float32")),
        name="pad")
    rc = te.reduce_axis((0, ic), name="rc")
    ry = te.reduce_axis((0, ks), name="ry")
    rx = te.reduce_axis((0, ks), name="rx")
    conv = te.compute(
        (n, oc, h, w),
        lambda b, o, y, x: te.sum(padded[b, rc, y + ry, x + rx] * weight[o, rc, ry, rx],
                                  axis=[rc, ry, rx]),
        name="conv")
    out = te.compute((n, oc, h, w),
                     lambda b, o, y, x: te.max(conv[b, o, y, x] + bias[o], 0.0), name="relu")
    return te.create_prim_func([data, weight, bias, out])


def reference(task: str, arrays: list[np.ndarray]) -> np.ndarray:
    """The task's result in float64 NumPy."""
    if task == "gemm":
        return arrays[0].astype(np.float64) @ arrays[1].astype(np.float64)
    data, weight, bias = (a.astype(np.float64) for a in arrays)
    ks = weight.shape[2]
    pad = ks // 2
    padded = np.pad(data, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h, w = data.shape[2:]
    out = np.zeros((data.shape[0], weight.shape[0], h, w))
    for y in range(ks):
        for x in range(ks):
            out += np.einsum("nchw,oc->nohw", padded[:, :, y:y + h, x:x + w], weight[:, :, y, x])
    return np.maximum(out + bias[None, :, None, None], 0.0)


def build_without_intrinsics(mod: object, target: object, _params: object) -> object:
    """MetaSchedule's default build, less its `import tvm.s_tir.tensor_intrin`: that import
    parses TVM's tensor intrinsics (about 30 s on a slow host) in every fresh builder process,
    past the builder's timeout; an fp32 kernel on the CPU uses none of them."""
    from tvm.driver import build
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    return build(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod), target=target)


def tune(task: str, size: int, trials: list[int], threads: int, cpu: str) -> dict[str, object]:
    import tvm
    from tvm.ir.utils import derived_object
    from tvm.s_tir import meta_schedule as ms

    func = (gemm_func(size) if task == "gemm" else conv_func()).with_attr("global_symbol", "main")
    mod = tvm.IRModule({"main": func})
    flops = 2.0 * size**3 if task == "gemm" else 2.0 * np.prod(CONV[:4]) * CONV[4] * CONV[5] ** 2
    target = tvm.target.Target({"kind": "llvm", "mcpu": cpu, "num-cores": threads})
    setup = time.monotonic()
    import tvm.s_tir.tensor_intrin  # noqa: F401 - the one-time setup tuning would do
    setup_s = time.monotonic() - setup
    curve: list[tuple[int, float, float]] = []
    start = time.monotonic()

    @derived_object
    class Curve(ms.measure_callback.PyMeasureCallback):
        """Best GFLOP/s so far and the wall time, after each batch of trials."""

        def apply(self, task_scheduler, task_id, candidates, builds, runs):  # type: ignore[no-untyped-def]
            best = curve[-1][1] if curve else 0.0
            for run in runs:
                if run.error_msg is None and run.run_secs:
                    seconds = float(np.median([float(s) for s in run.run_secs]))
                    best = max(best, flops / seconds / 1e9)
            done = (curve[-1][0] if curve else 0) + len(runs)
            curve.append((done, best, time.monotonic() - start))

    with tempfile.TemporaryDirectory(prefix="dlc-metaschedule-") as work:
        database = ms.tune_tir(
            mod=mod, target=target, work_dir=work, max_trials_global=max(trials),
            num_trials_per_iter=16, num_tuning_cores=threads,
            builder=ms.builder.LocalBuilder(timeout_sec=120, f_build=build_without_intrinsics),
            runner=ms.runner.LocalRunner(timeout_sec=60),
            measure_callbacks=[ms.measure_callback.AddToDatabase(),
                               ms.measure_callback.RemoveBuildArtifact(),
                               ms.measure_callback.UpdateCostModel(), Curve()],
        )
        wall = time.monotonic() - start
        schedule = ms.tir_integration.compile_tir(database, mod, target)
    if schedule is None:
        raise RuntimeError("MetaSchedule found no valid schedule")
    library = tvm.compile(schedule.mod, target=target)
    rng = np.random.default_rng(0)
    shapes = ([(size, size), (size, size)] if task == "gemm"
              else [CONV[:4], (CONV[4], CONV[1], CONV[5], CONV[5]), (CONV[4],)])
    arrays = [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]
    expected = reference(task, arrays)
    device = tvm.cpu(0)
    args = [tvm.runtime.tensor(a, device) for a in arrays]
    out = tvm.runtime.tensor(np.zeros(expected.shape, np.float32), device)
    function = library["main"]
    function(*args, out)
    error = float(np.abs(out.numpy() - expected).max() / np.abs(expected).max())
    if error > 1e-3:
        raise RuntimeError(f"MetaSchedule's best schedule is wrong: relative error {error:.2e}")
    seconds = []
    for _ in range(10):
        begin = time.perf_counter()
        function(*args, out)
        seconds.append(time.perf_counter() - begin)
    at: dict[str, object] = {}
    for count in trials:
        reached = [point for point in curve if point[0] >= count]
        point = reached[0] if reached else (curve[-1] if curve else (0, float("nan"), wall))
        at[str(count)] = {"trials": point[0], "gflops": point[1], "wall_s": point[2]}
    return {"task": task, "at": at, "tune_wall_s": wall, "setup_s": setup_s,
            "timed_gflops": flops / float(np.median(seconds)) / 1e9, "max_rel_error": error,
            "tvm": tvm.__version__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=["gemm", "conv"], default="gemm")
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--trials", type=int, nargs="+", default=[64])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cpu", default="native", help="LLVM CPU name (default: the host's)")
    args = parser.parse_args()
    cpu = args.cpu
    if cpu == "native":
        from tvm.target.codegen import llvm_get_system_cpu

        cpu = llvm_get_system_cpu()
    row = tune(args.task, args.size, args.trials, args.threads, cpu)
    print("METASCHEDULE " + json.dumps(row), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
