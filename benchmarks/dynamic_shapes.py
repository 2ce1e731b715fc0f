"""Runtime shapes: one executable for a model with dynamic dims against the same model compiled
for each static shape, and ONNX Runtime, in one run.

Run: `python3 benchmarks/dynamic_shapes.py [--threads 2] [--shapes 1x320 4x320 1x640]
[--repeats 10] [--variants 320 640 | --polymorphic]`.

The model is `benchmarks/model_zoo.yolo_style` (input `x` declared [N, 3, H, W]). For each call
shape it prints the first call's seconds through the dynamic executable (a compile of that
signature, cold cache), then the steady latency of the dynamic executable, of a static compile
of that shape, and of ONNX Runtime, with the ratios dynamic/static and dynamic/ORT.

With `--variants SIZE...`, the dynamic executable is one library of those image sizes with a
dynamic batch (`dlc compile --specialize x=?x3xSxS ... --dynamic-batch`), compiled once (its
compile time and size are printed, against a library per size), exported and loaded with
`dlc.load` as a deployment would; its first call is then a call, not a compile.

With `--polymorphic`, the dynamic executable is the model compiled once for every shape
(`dlc.compile(model, dynamic_shapes=True)`: kernels over runtime extents); its compile time is
printed, and its first call at each shape is a call.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--shapes", nargs="+", default=["1x320", "4x320", "1x640"],
                        help="BATCHxSIZE call shapes (SIZE a multiple of 8)")
    parser.add_argument("--repeats", type=int, default=10)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--variants", type=int, nargs="+", metavar="SIZE",
                       help="one library of these image sizes, any batch")
    group.add_argument("--polymorphic", action="store_true",
                       help="one compile for every shape (kernels over runtime extents)")
    args = parser.parse_args()

    import onnxruntime

    import dlc
    from benchmarks.common import time_dynamic_static
    from benchmarks.model_zoo import yolo_style

    model = yolo_style()
    options = onnxruntime.SessionOptions()
    if args.threads:
        options.intra_op_num_threads = args.threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    with tempfile.TemporaryDirectory() as cache:
        if args.variants:
            dynamic = variants_library(model, args.variants, args.threads, cache)
        elif args.polymorphic:
            start = time.perf_counter()
            dynamic = dlc.compile(model, threads=args.threads, cache_dir=cache,
                                  dynamic_shapes=True)
            print(f"compiled once for every shape in {time.perf_counter() - start:.1f} s")
        else:
            dynamic = dlc.compile(model, threads=args.threads, cache_dir=cache)
        described = dynamic.describe() if hasattr(dynamic, "describe") else (
            "N x 3 x H x W, one compile")
        print(f"yolo_style, threads={args.threads or 'all'}: x declared {described}")
        print(f"{'shape':>14} {'first call s':>12} {'dynamic ms':>11} {'static ms':>10} "
              f"{'ORT ms':>8} {'dyn/static':>10} {'dyn/ORT':>8} {'max err':>9}")
        for spec in args.shapes:
            batch, size = (int(v) for v in spec.split("x"))
            x = np.random.default_rng(0).standard_normal((batch, 3, size, size)).astype(np.float32)
            start = time.perf_counter()
            got = dynamic(x)
            first = time.perf_counter() - start
            static = dlc.compile(model, threads=args.threads, cache_dir=cache,
                                 input_shapes={"x": x.shape})
            want = session.run(None, {"x": x})
            error = max(float(np.abs(a - b).max()) for a, b in zip(got, want, strict=True))
            d, s, o = time_dynamic_static(
                dynamic, static, lambda x: session.run(None, {"x": x}), x, args.repeats)
            print(f"{'x'.join(map(str, x.shape)):>14} {first:12.2f} {d:11.3f} {s:10.3f} "
                  f"{o:8.3f} {d / s:10.2f} {d / o:8.2f} {error:9.1e}")


def variants_library(model: object, sizes: list[int], threads: int, cache: str) -> object:
    """One library of `sizes` (a dynamic batch each), compiled with a cold cache and loaded;
    prints its compile time and size, and the size of a library per image size."""
    import dlc

    shapes = [{"x": (None, 3, size, size)} for size in sizes]
    start = time.perf_counter()
    compiled = dlc.compile(model, specialize=shapes, dynamic_batch=True, threads=threads,
                           cache_dir=cache)
    seconds = time.perf_counter() - start
    path = Path(cache) / "variants.so"
    compiled.export(path)
    apart = 0
    for index, variant in enumerate(compiled.variants):
        apart += variant.export(Path(cache) / f"variant{index}.so").stat().st_size
    print(f"one library of {len(sizes)} sizes: compiled in {seconds:.1f} s, "
          f"{path.stat().st_size / 1024:.0f} KiB ({apart / 1024:.0f} KiB as a library per size)")
    return dlc.load(path)


if __name__ == "__main__":
    main()
