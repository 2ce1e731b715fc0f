"""Latency as a deployed model sees it: back to back, called periodically, and beside a twin.

Run: `python3 benchmarks/periodic.py [--models conv_bn_relu resnet18] [--engines dlc
onnxruntime] [--threads 0] [--calls 40] [--pause-ms 20] [--twin-calls 40]`.

For each model and engine (dlc, ONNX Runtime), in one run:
- steady: the median of `--calls` calls made back to back (after a warm-up);
- periodic: the median of `--calls` calls each made after a `--pause-ms` pause (a 50 fps
  stream): what is left idle in between (worker threads asleep, buffers given back to the
  system, caches cold) shows up here;
- twin: the median of calls made back to back while a second process runs the same model back
  to back on the same cores (two replicas on one machine, where 2x is the fair share).
Each prints with its ratio to steady. The twin runs this file with `--serve` and the same
compile cache. Figures are medians of one run on a shared machine: compare ratios within a run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MODELS = ("conv_bn_relu", "resnet18")
ENGINES = ("dlc", "onnxruntime")


def build_model(name: str) -> object:
    """The ONNX model `name`: the conv3x3+BN+ReLU layer of `benchmarks/conv.py` (64 channels,
    56x56) or a model of `benchmarks/model_zoo.py`."""
    if name == "conv_bn_relu":
        from benchmarks.conv import conv_bn_relu_model

        return conv_bn_relu_model(64, 56)
    from benchmarks.model_zoo import MODELS as ZOO

    if name not in ZOO:
        raise SystemExit(f"periodic.py: no model '{name}' (conv_bn_relu, {', '.join(ZOO)})")
    return ZOO[name]()


def runner(name: str, engine: str, directory: Path, threads: int) -> Callable[[], object]:
    """A function running model `name` once on `engine` (compiled into `directory`'s cache)."""
    import onnx

    from benchmarks.model_zoo import random_inputs

    path = directory / f"{name}.onnx"
    if not path.exists():
        onnx.save(build_model(name), path)
    model = onnx.load(str(path))
    inputs = random_inputs(model)
    if engine == "dlc":
        import dlc

        compiled = dlc.compile(path, threads=threads, cache_dir=directory / "cache")
        arrays = list(inputs.values())
        return lambda: compiled(*arrays)
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=["CPUExecutionProvider"])
    return lambda: session.run(None, inputs)


def timed(function: Callable[[], object], calls: int, pause: float = 0.0) -> float:
    """The median seconds of `calls` calls, each after a `pause`."""
    samples = []
    for _ in range(calls):
        if pause:
            time.sleep(pause)
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def serve(args: argparse.Namespace) -> None:
    """The twin: run the model back to back until stdin closes (prints `ready` once warm)."""
    import threading

    function = runner(args.serve[0], args.serve[1], Path(args.directory), args.threads)
    for _ in range(3):
        function()
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print("ready", flush=True)
    while not stop.is_set():
        function()


def with_twin(name: str, engine: str, args: argparse.Namespace, directory: Path,
              function: Callable[[], object]) -> float:
    """The steady median while a second process runs the same model back to back."""
    twin = subprocess.Popen(
        [sys.executable, __file__, "--serve", name, engine, "--directory", str(directory),
         "--threads", str(args.threads)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert twin.stdout is not None
        if twin.stdout.readline().strip() != "ready":
            raise SystemExit(f"periodic.py: the twin of {name} on {engine} did not start")
        time.sleep(0.2)
        return timed(function, args.twin_calls)
    finally:
        assert twin.stdin is not None
        twin.stdin.close()
        twin.wait(timeout=120)


def measure(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(args.directory or temporary)
        directory.mkdir(parents=True, exist_ok=True)
        for name in args.models:
            for engine in args.engines:
                function = runner(name, engine, directory, args.threads)
                for _ in range(5):
                    function()
                steady = timed(function, args.calls)
                periodic = timed(function, args.calls, args.pause_ms / 1e3)
                twin = with_twin(name, engine, args, directory, function)
                print(f"{name} {engine}: steady {steady * 1e3:.3f} ms, periodic "
                      f"{periodic * 1e3:.3f} ms ({periodic / steady:.2f}x), twin "
                      f"{twin * 1e3:.3f} ms ({twin / steady:.2f}x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--twin-calls", type=int, default=40)
    parser.add_argument("--pause-ms", type=float, default=20.0)
    parser.add_argument("--directory", default="",
                        help="where models and the compile cache go (default: a temporary one)")
    parser.add_argument("--serve", nargs=2, metavar=("MODEL", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    np.random.seed(0)
    if args.serve:
        serve(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
