"""bf16 GEMM (ONNX MatMul with a constant weight): dlc's `vdpbf16ps` kernel against dlc f32 and
the core's measured `vdpbf16ps` and f32 FMA peaks.

Run: `python3 benchmarks/bf16_gemm.py [--sizes 1024] [--threads 1] [--repeats 10]
[--target "llvm -mcpu=sapphirerapids"]`.

Two models of `Y = MatMul(X, W)`, X [n, n] an input and W [n, n] a constant weight: an f32
model, and the same one in bf16 (X, W and Y bf16: an ONNX bf16 model, which dlc compiles as it
is; its GEMM accumulates in f32 and rounds Y once). On a target with avx512bf16 the default
schedule (`avx512bf16-gemm`, rewrites/schedule_rules/bf16.py) packs W at compile time and runs
`vdpbf16ps` micro-kernels. The peaks are measured by `benchmarks/cpu_peak.py` (24 independent
chains of the instruction, timed in thread CPU time): 64 flops per `vdpbf16ps zmm`, 32 per
`vfmadd231ps zmm`. GFLOP/s counts 2 n^3 flops; times are medians (and bests) of interleaved
repetitions (`benchmarks.common.time_calls`). The error is the largest |Y - ref| over the
largest |ref|, ref the f64 product of the bf16-rounded X and W.

Measured 2026-12-02 on the shared 2-vCPU AVX-512 host (avx512_bf16; load average 3-4), `--sizes
1024 --threads 1 --repeats 10`: clock 2.91 GHz; `vdpbf16ps zmm` retires 0.45 per cycle (peak
77-85 GFLOP/s), `vfmadd231ps zmm` 1.2 per cycle (106-114 GFLOP/s; f32 runs reach up to 150, so
that probe reads low under load): bf16 29.4 ms = 73 GFLOP/s (best 77) = 94% of the vdpbf16ps
peak; f32 21.8 ms = 99 GFLOP/s (best 148). The micro-kernel is the ideal one (per k pair: 6
broadcasts, 4 panel loads, 24 vdpbf16ps on 24 register accumulators), so on this core a bf16
GEMM is bound by the instruction's throughput, below f32 FMA's; the generic bf16 schedule
(convert on load + f32 FMA, before this rule) measured 78-89 GFLOP/s against the rule's 78-84
in alternating runs: no gain here. A core that issues vdpbf16ps at f32 FMA's rate would double
the f32 figure.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402
from benchmarks.cpu_peak import (  # noqa: E402
    FLOPS_PER_FMA_ZMM,
    FLOPS_PER_VDPBF16PS,
    clock_hz,
    per_cycle,
)


def gemm_model(w: np.ndarray, bf16: bool):  # type: ignore[no-untyped-def]
    """`Y = MatMul(X, W)` with W an initializer, in f32 or (`bf16`) all in bf16."""
    import ml_dtypes
    from onnx import TensorProto, helper, numpy_helper

    size = w.shape[0]
    kind = TensorProto.BFLOAT16 if bf16 else TensorProto.FLOAT
    weight = (helper.make_tensor("w", kind, list(w.shape),
                                 w.astype(ml_dtypes.bfloat16).tobytes(), raw=True)
              if bf16 else numpy_helper.from_array(w, "w"))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "gemm",
        [helper.make_tensor_value_info("x", kind, [size, size])],
        [helper.make_tensor_value_info("y", kind, [size, size])], [weight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--target", default="host")
    args = parser.parse_args()

    import ml_dtypes

    import dlc

    clock = clock_hz()
    dpbf16 = per_cycle("vdpbf16ps", clock) * clock * FLOPS_PER_VDPBF16PS
    fma = per_cycle("vfmadd231ps", clock) * clock * FLOPS_PER_FMA_ZMM
    print(f"clock {clock / 1e9:.2f} GHz; measured peaks per core: vdpbf16ps "
          f"{dpbf16 / 1e9:.0f} GFLOP/s, f32 FMA {fma / 1e9:.0f} GFLOP/s")
    rng = np.random.default_rng(0)
    for size in args.sizes:
        x = rng.standard_normal((size, size)).astype(np.float32)
        w = rng.standard_normal((size, size)).astype(np.float32)
        ref = (x.astype(ml_dtypes.bfloat16).astype(np.float64)
               @ w.astype(ml_dtypes.bfloat16).astype(np.float64))
        functions = {}
        for name, bf16 in (("bf16", True), ("f32", False)):
            start = time.perf_counter()
            executable = dlc.compile(gemm_model(w, bf16), target=args.target,
                                     threads=args.threads, cache=False)
            compile_s = time.perf_counter() - start
            xi = x.astype(ml_dtypes.bfloat16) if bf16 else x
            y = np.asarray(executable(xi)).astype(np.float64)
            error = np.abs(y - ref).max() / np.abs(ref).max()
            print(f"{name} GEMM {size}^3, {args.threads} thread(s) on {args.target}: compile "
                  f"{compile_s:.1f} s, max error / max |ref| {error:.1e}")
            functions[name] = functools.partial(executable, xi)
        timings = time_calls(functions, repeats=args.repeats)
        flops = 2.0 * size**3
        for timing in timings.values():
            median, best = (flops / t / 1e9 for t in (timing.median, timing.best))
            peak = (dpbf16 if timing.name == "bf16" else fma) * args.threads
            print(f"  {timing.name:<5} {timing.median * 1e3:8.2f} ms (best "
                  f"{timing.best * 1e3:7.2f})  {median:6.1f} GFLOP/s (best {best:6.1f}) = "
                  f"{median * 1e9 / peak:4.0%} of its instruction's measured peak "
                  f"{peak / 1e9:.0f}")


if __name__ == "__main__":
    main()
