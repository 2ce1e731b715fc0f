"""fp32 GEMM: dlc (default schedule) vs NumPy (OpenBLAS) at the same thread count.

Run: `python3 benchmarks/gemm.py [--sizes 256 1024 2048] [--threads 1 2]`. NumPy's threads are set
with threadpoolctl (the `bench` extra); dlc's with `dlc.compile(..., threads=N)`.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import report, time_calls  # noqa: E402


def gemm_module(size: int) -> str:
    """A graph-level `C = A @ B` of square f32 matrices."""
    t = f"tensor<{size}x{size}xf32>"
    return (
        f"func.func @gemm(%a: {t}, %b: {t}) -> {t} {{\n"
        f"  %c = graph.matmul %a, %b : ({t}, {t}) -> {t}\n"
        f"  func.return %c : {t}\n}}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()

    from threadpoolctl import threadpool_info, threadpool_limits

    import dlc

    blas = [(i["internal_api"], i.get("architecture")) for i in threadpool_info()]
    print(f"NumPy {np.__version__} BLAS {blas}; cores {os.cpu_count()}")
    rng = np.random.default_rng(0)
    for size in args.sizes:
        a = rng.standard_normal((size, size), dtype=np.float32)
        b = rng.standard_normal((size, size), dtype=np.float32)
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "gemm.mlir"
            path.write_text(gemm_module(size))
            for threads in args.threads:
                start = time.perf_counter()
                executable = dlc.compile(path, threads=threads, cache=False)
                compile_s = time.perf_counter() - start
                out = np.empty((size, size), dtype=np.float32)
                executable(a, b, out=(out,))
                expected = a @ b
                error = float(np.abs(out - expected).max() / np.abs(expected).max())
                with threadpool_limits(threads):
                    timings = time_calls(
                        {
                            "dlc": functools.partial(executable, a, b, out=(out,)),
                            "numpy": functools.partial(np.matmul, a, b),
                        },
                        repeats=args.repeats,
                    )
                flops = 2.0 * size**3
                print(report(
                    f"GEMM {size}^3 fp32, {threads} thread(s) (dlc compile {compile_s:.1f} s, "
                    f"max rel. error {error:.1e})", flops, timings, "numpy",
                ))


if __name__ == "__main__":
    main()
