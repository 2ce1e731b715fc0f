"""A dynamic batch: one executable compiled with `dlc.compile(dynamic_batch=True)` (the entries
of one row and of blocks of rows, run by its batch loop) against the same model compiled for
each static batch, and ONNX Runtime, in one process, taking turns.

Run: `python3 benchmarks/dynamic_batch.py [--model resnet18|mlp|transformer] [--batches 1 8]
[--threads 1] [--image 64] [--repeats 10] [--fresh-inputs] [--runtime-rows]`.

Prints, per batch size, the median latency of the dynamic executable, of the static compile of
that batch and of ONNX Runtime, the ratios dynamic/static and dynamic/ORT, and the largest
difference from ORT; the dynamic executable is compiled once (the count is printed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["resnet18", "mlp", "transformer"],
                        default="resnet18")
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--image", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--runtime-rows", action="store_true",
                        help="compile the dynamic batch into kernels whose loops take the "
                             "batch's size at run time (pipeline cpu-runtime-rows) instead of "
                             "entries of one row and of blocks of rows")
    parser.add_argument("--fresh-inputs", action="store_true",
                        help="write the input before every call (each engine alike), as a "
                             "caller with new data does: the calls then read it from the "
                             "writing core's cache, not from a cache every core shares")
    args = parser.parse_args()

    import onnxruntime

    import dlc
    from benchmarks.common import time_dynamic_static
    from benchmarks.model_zoo import mlp, resnet18, transformer_block

    def build(batch: int | str):  # noqa: ANN202 - an ONNX model
        if args.model == "mlp":
            return mlp(batch=batch)  # type: ignore[arg-type]
        if args.model == "transformer":
            return transformer_block(seq=32, hidden=128, heads=4, mlp=512, batch=batch)
        return resnet18(batch=batch, image=args.image, classes=100)  # type: ignore[arg-type]

    model = build("N")
    name = model.graph.input[0].name
    row = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim][1:]
    options = onnxruntime.SessionOptions()
    if args.threads:
        options.intra_op_num_threads = args.threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    with tempfile.TemporaryDirectory() as cache:
        pipeline = "cpu-runtime-rows" if args.runtime_rows else "cpu"
        dynamic = dlc.compile(model, threads=args.threads, cache_dir=cache, dynamic_batch=True,
                              pipeline=pipeline)
        print(f"{args.model}, threads={args.threads or 'all'}: {type(dynamic).__name__}, batch "
              f"'{getattr(dynamic, 'batch_symbol', None)}', compiled once")
        print(f"{'batch':>5} {'dynamic ms':>11} {'static ms':>10} {'ORT ms':>8} "
              f"{'dyn/static':>10} {'dyn/ORT':>8} {'max err':>9}")
        for batch in args.batches:
            x = np.random.default_rng(0).standard_normal((batch, *row)).astype(np.float32)
            static = dlc.compile(build(batch), threads=args.threads, cache_dir=cache)
            want = session.run(None, {name: x})[0]
            error = float(np.abs(dynamic(x) - want).max())
            engines = [dynamic, static, lambda x: session.run(None, {name: x})]
            if args.fresh_inputs:
                engines = [_fresh(engine, x.copy()) for engine in engines]
            d, s, o = time_dynamic_static(*engines, x, args.repeats)
            print(f"{batch:>5} {d:11.3f} {s:10.3f} {o:8.3f} {d / s:10.2f} {d / o:8.2f} "
                  f"{error:9.1e}")


def _fresh(engine: Callable[[np.ndarray], object], source: np.ndarray
           ) -> Callable[[np.ndarray], object]:
    """`engine` called on its input after writing it again from `source`."""
    def call(x: np.ndarray) -> object:
        np.copyto(x, source)
        return engine(x)
    return call


if __name__ == "__main__":
    main()
