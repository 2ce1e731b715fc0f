"""Compile the bundled small CNN (examples/small_cnn.onnx) with dlc, run it, and check it.

Prints how long the compile took, how closely dlc's output agrees with ONNX's reference
evaluator (`onnx.reference.ReferenceEvaluator`) on a seeded random image, and dlc's median
latency (with ONNX Runtime's beside it when installed). Exits 1 if the results disagree.

    python3 examples/run_example.py [--repeat N] [--no-cache]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parent
MODEL = EXAMPLES / "small_cnn.onnx"
RELATIVE_TOLERANCE = 1e-4


def median_ms(function: Callable[[], object], repeat: int) -> float:
    """The median wall time of `function`, in milliseconds, after one warm-up call."""
    from dlc.runtime.profiler import median_seconds

    return median_seconds(function, repeat) * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timed runs")
    parser.add_argument("--no-cache", action="store_true", help="compile without the cache")
    args = parser.parse_args()
    sys.path.insert(0, str(EXAMPLES.parent))

    import onnx
    from onnx.reference import ReferenceEvaluator

    import dlc

    if not MODEL.is_file():
        sys.path.insert(0, str(EXAMPLES))
        from make_small_cnn_onnx import build_small_cnn

        onnx.save(build_small_cnn(), MODEL)
    start = time.perf_counter()
    model = dlc.compile(MODEL, cache=not args.no_cache, progress=True)
    compile_seconds = time.perf_counter() - start
    stats = model.stats
    print(f"compiled {MODEL.name} in {compile_seconds:.2f} s: {stats.calls} kernel calls, "
          f"{stats.kernels} distinct kernels, {stats.workspace_bytes // 1024} KiB workspace"
          + (" (from the compile cache)" if stats.model_cache_hit else ""))

    image = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    (got,) = model.run({"image": image}).values()
    (expected,) = ReferenceEvaluator(onnx.load(MODEL)).run(None, {"image": image})
    error = float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
    agrees = error <= RELATIVE_TOLERANCE
    print(f"agreement with onnx.reference: max |dlc - reference| / max |reference| = "
          f"{error:.2e} ({'ok' if agrees else 'FAILED'}, tolerance {RELATIVE_TOLERANCE:g}); "
          f"class {int(got.argmax())} vs {int(expected.argmax())}")

    latency = median_ms(lambda: model(image), args.repeat)
    line = f"latency: dlc {latency:.3f} ms (median of {args.repeat})"
    try:
        import onnxruntime
    except ImportError:
        pass
    else:
        session = onnxruntime.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
        ort = median_ms(lambda: session.run(None, {"image": image}), args.repeat)
        line += f", onnxruntime {ort:.3f} ms (dlc / ort = {latency / ort:.2f}x)"
    print(line)
    return 0 if agrees else 1


if __name__ == "__main__":
    sys.exit(main())
