"""int8 GEMM (u8 x s8 -> s32, ONNX MatMulInteger): dlc's VNNI kernel against the CPU's int8 peak
and ONNX Runtime.

Run: `python3 benchmarks/int8_gemm.py [--sizes 1024] [--threads 1 2] [--b-input]`.

The model is `Y = MatMulInteger(A, B)`, A u8 [n, n] an input, B s8 [n, n] a constant weight (as
in a quantized dense layer: dlc packs it into VNNI panels at compile time), or with `--b-input`
an input too (then packed on every call). The peak is measured by `benchmarks/cpu_peak.py`:
the core clock times the int8 ops a cycle its `vpdpbusd` issues (2 zmm a cycle, 256 ops, on
Intel's server cores; 1 zmm or 2 ymm, 128 ops, on AMD's Zen 4); with T threads, T times that.
On a CPU with AMX the machine's int8 peak is AMX's (2048 ops a cycle a core), printed too.
GOPS counts 2 n^3 ops. Times are medians (and bests) of interleaved repetitions: wall time,
and process CPU time (on a host shared with other processes the CPU time of a one-thread run
is the steadier measure of the code's own speed).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402
from benchmarks.cpu_peak import (  # noqa: E402
    AMX_OPS_PER_CYCLE,
    clock_hz,
    has_amx_int8,
    measured_vnni_ops_per_cycle,
)


def gemm_model(size: int, b: np.ndarray | None):  # type: ignore[no-untyped-def]
    """`Y = MatMulInteger(A, B)`: B an initializer if given, else a second input."""
    from onnx import TensorProto, helper, numpy_helper

    a = helper.make_tensor_value_info("a", TensorProto.UINT8, [size, size])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, [size, size])
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    if b is not None:
        graph = helper.make_graph([node], "gemm", [a], [y], [numpy_helper.from_array(b, "b")])
    else:
        b_info = helper.make_tensor_value_info("b", TensorProto.INT8, [size, size])
        graph = helper.make_graph([node], "gemm", [a, b_info], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--b-input", action="store_true", help="B an input, not a weight")
    parser.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    args = parser.parse_args()

    import dlc

    clock = clock_hz()
    zmm, ymm, ops_per_cycle = measured_vnni_ops_per_cycle(clock)
    core_peak = clock * ops_per_cycle
    print(f"cores {os.cpu_count()}; clock {clock / 1e9:.2f} GHz; vpdpbusd {zmm:.2f} zmm or "
          f"{ymm:.2f} ymm a cycle: the VNNI peak per core is {ops_per_cycle:.0f} int8 ops a "
          f"cycle, {core_peak / 1e9:.0f} GOPS")
    amx = has_amx_int8()
    if amx:
        print(f"AMX: the machine's int8 peak per core is {AMX_OPS_PER_CYCLE} ops a cycle, "
              f"{clock * AMX_OPS_PER_CYCLE / 1e9:.0f} GOPS; dlc does not emit tile instructions")
    rng = np.random.default_rng(0)
    for size in args.sizes:
        a = rng.integers(0, 256, (size, size)).astype(np.uint8)
        b = rng.integers(-128, 128, (size, size)).astype(np.int8)
        model = gemm_model(size, None if args.b_input else b)
        inputs = (a, b) if args.b_input else (a,)
        expected = a.astype(np.int32) @ b.astype(np.int32)
        ops = 2.0 * size**3
        for threads in args.threads:
            start = time.perf_counter()
            executable = dlc.compile(model, threads=threads, cache=False)
            compile_s = time.perf_counter() - start
            out = np.empty((size, size), dtype=np.int32)
            executable(*inputs, out=(out,))
            exact = bool(np.array_equal(out, expected))
            functions = {"dlc": functools.partial(executable, *inputs, out=(out,))}
            if not args.no_ort:
                functions.update(_ort(model, inputs, threads))
            timings = time_calls(functions, repeats=args.repeats)
            kind = "B input" if args.b_input else "B weight"
            print(f"int8 GEMM {size}^3 u8 x s8 -> s32 ({kind}), {threads} thread(s): dlc "
                  f"compile {compile_s:.1f} s, exact {exact}")
            peak = core_peak * threads
            for timing in timings.values():
                wall, best, cpu = (ops / t / 1e9 for t in (timing.median, timing.best,
                                                           timing.cpu))
                print(f"  {timing.name:<5} {timing.median * 1e3:8.3f} ms (best "
                      f"{timing.best * 1e3:7.3f})  {wall:6.0f} GOPS wall (best {best:4.0f}) = "
                      f"{wall * 1e9 / peak:4.0%} (best {best * 1e9 / peak:4.0%}) of the "
                      f"VNNI peak {peak / 1e9:.0f};  cpu {timing.cpu * 1e3:8.3f} ms = "
                      f"{cpu * threads:6.0f} GOPS per {threads} core(s) of CPU time = "
                      f"{cpu * threads * 1e9 / peak:4.0%}")
                if amx:
                    amx_peak = clock * AMX_OPS_PER_CYCLE * threads
                    print(f"        = {wall * 1e9 / amx_peak:4.0%} of the AMX peak "
                          f"{amx_peak / 1e9:.0f}")


def _ort(model, inputs: tuple[np.ndarray, ...], threads: int):  # type: ignore[no-untyped-def]
    try:
        import onnxruntime as ort
    except ImportError:
        return {}
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    feeds = dict(zip(("a", "b")[:len(inputs)], inputs, strict=True))
    return {"ort": functools.partial(session.run, None, feeds)}


if __name__ == "__main__":
    main()
