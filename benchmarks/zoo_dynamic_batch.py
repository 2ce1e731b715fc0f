"""The public model zoo exported with a dynamic batch: does each model compile once for every
batch size (`dlc.compile(dynamic_batch=True)`), match ONNX Runtime, and how fast is it?

Run: `python3 benchmarks/zoo_dynamic_batch.py [--models resnet18 vit_tiny] [--batches 1 4]
[--sizes 128 192] [--threads 2] [--repeats 10] [--cache-dir /tmp/dlc-zoo] [--runtime-rows]
[--polymorphic]`
(needs torch and torchvision, the `zoo` extra, to export).

With `--sizes`, the image models are exported with dynamic height and width too and compiled as
one library of those image sizes, each with the dynamic batch (`dlc.compile(specialize=[{...:
(None, C, s, s)}], dynamic_batch=True)`), and every batch runs at every size. With
`--polymorphic` too, each is compiled once over runtime shapes (`dlc.compile(dynamic_shapes=
True)`: `once` where the polymorphic build was taken, else what it fell back to), each (batch,
size) also compiled for its static shape, and the cells show the compiled-once latency over
the static compile's (`x static`) beside ONNX Runtime's ratio.

Each model of `benchmarks/zoo.py` is exported with its inputs' and output's leading dim named
`N` (`torch.onnx.export(dynamic_axes=...)`, as deployments export) and compiled once. Per model
it prints the compile's seconds, what it made (`batch`: one executable for every batch size;
`per shape`: it fell back to compiling per call signature, with the importer's reason), and per
batch size the largest difference from ONNX Runtime relative to its output's largest magnitude
and the median latency of both, timed in one process taking turns (`benchmarks.common.
time_calls`: a ratio, not the isolated figure of `benchmarks/zoo.py`).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def with_batch(model: object, rows: int) -> object:
    """A copy of the ONNX `model` whose inputs' named leading dims are `rows`."""
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # type: ignore[arg-type]
    for value in copy.graph.input:
        dims = value.type.tensor_type.shape.dim
        if dims and dims[0].dim_param:
            dims[0].dim_value = rows
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+")
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--sizes", nargs="+", type=int,
                        help="image sizes of a library of several shapes (image models only)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/dlc-zoo"))
    parser.add_argument("--runtime-rows", action="store_true",
                        help="kernels whose loops take the batch's size at run time "
                             "(pipeline cpu-runtime-rows) instead of entries of one row and "
                             "of blocks of rows")
    parser.add_argument("--polymorphic", action="store_true",
                        help="with --sizes: compile once over runtime shapes "
                             "(dynamic_shapes=True) and compare with static compiles")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.polymorphic and not args.sizes:
        parser.error("--polymorphic needs --sizes (the image sizes to run)")

    import onnx
    import onnxruntime
    from dlc.runtime.executable import Executable

    import dlc
    from benchmarks.common import time_calls
    from benchmarks.model_zoo import random_inputs
    from benchmarks.zoo import ZOO, export

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.log_severity_level = 3  # the declared output shape is [N, ...]: no warnings
    ratios: list[float] = []
    static_ratios: list[float] = []
    shapes = [f"n={r}" + (f",{s}" if s else "") for r in args.batches
              for s in args.sizes or [None]]
    static_column = f" {'x static':>8}" if args.polymorphic else ""
    print(f"{'model':20} {'compile s':>9} {'made':>9} " + " ".join(
        f"{f'{shape}: err':>12} {'dlc ms':>8} {'ORT ms':>8} {'x ORT':>6}{static_column}"
        for shape in shapes))
    for name in args.models or list(ZOO):
        if args.sizes and ZOO[name].family in ("transformer", "speech", "generator"):
            continue  # not an image model
        path = export(ZOO[name], args.cache_dir / "onnx", "image" if args.sizes else "batch")
        model = onnx.load(str(path))
        image = model.graph.input[0]
        channels = image.type.tensor_type.shape.dim[1].dim_value
        variants = [{image.name: (None, channels, s, s)} for s in args.sizes or ()]
        start = time.perf_counter()
        if args.polymorphic:
            executable = dlc.compile(model, dynamic_shapes=True, threads=args.threads,
                                     cache_dir=args.cache_dir / "dlc")
        else:
            executable = dlc.compile(model, dynamic_batch=True, threads=args.threads,
                                     cache_dir=args.cache_dir / "dlc",
                                     specialize=variants or None,
                                     pipeline="cpu-runtime-rows" if args.runtime_rows else "cpu")
        seconds = time.perf_counter() - start
        if args.polymorphic:
            made = "once" if isinstance(executable, Executable) else "per shape"
        else:
            made = ("batch" if all(getattr(v, "batch_symbol", None)
                                   for v in getattr(executable, "variants", [executable]))
                    else "per shape")
        session = onnxruntime.InferenceSession(str(path), options,
                                               providers=["CPUExecutionProvider"])
        cells = []
        for rows, size in [(r, s) for r in args.batches for s in args.sizes or [None]]:
            shaped = with_batch(model, rows)
            if size is not None:
                dims = shaped.graph.input[0].type.tensor_type.shape.dim  # type: ignore[attr-defined]
                dims[2].dim_value = dims[3].dim_value = size
            feeds = random_inputs(shaped, seed=rows, int_high=1000)
            (want, *_) = session.run(None, feeds)
            got = next(iter(executable.run(feeds).values()))
            error = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
            engines = {"dlc": lambda e=executable, f=feeds: e.run(f),
                       "ort": lambda s=session, f=feeds: s.run(None, f)}
            if args.polymorphic:
                static = dlc.compile(shaped, threads=args.threads,
                                     cache_dir=args.cache_dir / "dlc")
                engines["static"] = lambda e=static, f=feeds: e.run(f)
            timings = time_calls(engines, repeats=args.repeats)
            d, o = timings["dlc"].median * 1e3, timings["ort"].median * 1e3
            ratios.append(d / o)
            cells.append(f"{error:12.1e} {d:8.2f} {o:8.2f} {d / o:6.2f}")
            if args.polymorphic:
                static_ratios.append(d / (timings["static"].median * 1e3))
                cells[-1] += f" {static_ratios[-1]:8.2f}"
        print(f"{name:20} {seconds:9.1f} {made:>9} " + " ".join(cells), flush=True)
    print(f"geometric mean dlc/ORT over {len(ratios)} (model, shape) pairs: "
          f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
    if static_ratios:
        print(f"geometric mean compiled once / static compile: "
              f"{math.exp(sum(map(math.log, static_ratios)) / len(static_ratios)):.2f}")


if __name__ == "__main__":
    main()
