"""Whole models, dlc against ONNX Runtime (and Apache TVM when installed), in the same run.

Run: `python3 benchmarks/models.py [--models resnet18 transformer mlp light_resnet50]
[--repeats 15] [--threads 0] [--check] [--profile 5] [--direct]
[--tuning-log resnet18=r18.jsonl]`.

For each model (built by `benchmarks/model_zoo.py`, seeded): the untuned compile time with an
empty cache and again on a cache hit (a fresh process-independent compile of the same file),
the median latency of dlc and of ONNX Runtime (interleaved, `benchmarks.common.time_calls`), their
ratio, and dlc's agreement with ONNX Runtime (with `--check`, with ONNX's reference evaluator,
the oracle: max |dlc - ref| / max |ref| <= 1e-4). `--profile K` prints the K slowest kernel calls
(where the time goes). `--direct` also times the `cpu-direct` pipeline (no Winograd convs);
`--tuning-log NAME=FILE` also times model NAME compiled with that log (`dlc tune` on the same
model: `benchmarks/model_zoo.py` seeds its weights), all interleaved in the same run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402
from benchmarks.model_zoo import MODELS, random_inputs  # noqa: E402
from benchmarks.zoo import relative_error  # noqa: E402

TARGETS = {"resnet18": 1.2, "transformer": 1.2, "mlp": 1.2}
"""The latency ratio dlc / ONNX Runtime each model should stay under."""

RELATIVE_TOLERANCE = 1e-4


def tvm_available() -> bool:
    """Whether Apache TVM can be imported."""
    try:
        import tvm  # noqa: F401
    except ImportError:
        return False
    return True


def tvm_runner(path: Path, inputs: dict[str, np.ndarray]) -> tuple[float, object]:
    """Compile with Apache TVM, untuned, for the host CPU (`llvm -mcpu=<host>`); return
    (seconds, run). TVM 0.20 and later (Relax: `relax.frontend.onnx.from_onnx`, `tvm.compile`,
    the Relax VM; Relay is gone) and older releases (Relay at opt_level 3, graph executor)."""
    import onnx
    import tvm
    from dlc.target import host

    cpu = host().cpu
    start = time.perf_counter()
    shapes = {name: array.shape for name, array in inputs.items()}
    if not hasattr(tvm, "relay"):
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx

        module = from_onnx(onnx.load(path), shape_dict=shapes)
        executable = tvm.compile(module, target=tvm.target.Target({"kind": "llvm", "mcpu": cpu}))
        machine = relax.VirtualMachine(executable, tvm.cpu())
        arguments = [tvm.runtime.tensor(array) if hasattr(tvm.runtime, "tensor")
                     else tvm.nd.array(array) for array in inputs.values()]
        return time.perf_counter() - start, lambda: machine["main"](*arguments)
    from tvm import relay
    from tvm.contrib import graph_executor

    module, params = relay.frontend.from_onnx(onnx.load(path), shapes)
    with tvm.transform.PassContext(opt_level=3):
        library = relay.build(module, target=f"llvm -mcpu={cpu}", params=params)
    runtime = graph_executor.GraphModule(library["default"](tvm.cpu()))
    for name, array in inputs.items():
        runtime.set_input(name, array)
    return time.perf_counter() - start, runtime.run


def bench(name: str, args: argparse.Namespace, directory: Path) -> None:
    import onnx
    import onnxruntime

    import dlc

    model = MODELS[name]()
    path = directory / f"{name}.onnx"
    onnx.save(model, path)
    inputs = random_inputs(model)
    cache = directory / "cache"
    start = time.perf_counter()
    compiled = dlc.compile(path, threads=args.threads, cache_dir=cache)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    dlc.compile(path, threads=args.threads, cache_dir=cache)
    warm = time.perf_counter() - start
    stats = compiled.stats

    options = onnxruntime.SessionOptions()
    if args.threads:
        options.intra_op_num_threads = args.threads
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=["CPUExecutionProvider"])
    feed = dict(inputs)
    arrays = list(inputs.values())
    runs = {"dlc": lambda: compiled(*arrays), "onnxruntime": lambda: session.run(None, feed)}
    variants = {}
    if args.direct:
        variants["dlc-direct"] = {"pipeline": "cpu-direct"}
    if name in args.tuning_logs:
        variants["dlc-tuned"] = {"tuning_log": args.tuning_logs[name]}
    for label, options_ in variants.items():
        variant = dlc.compile(path, threads=args.threads, cache_dir=cache, **options_)
        runs[label] = lambda variant=variant: variant(*arrays)
    tvm_compile = None
    if tvm_available():
        try:
            tvm_compile, runs["tvm"] = tvm_runner(path, inputs)  # type: ignore[assignment]
        except Exception as e:  # noqa: BLE001 - a peer that cannot build the model is reported
            print(f"{name}: Apache TVM could not build it: {type(e).__name__}: "
                  f"{str(e).splitlines()[0] if str(e) else ''}")
    timings = time_calls(runs, repeats=args.repeats, min_seconds=0.05)

    got = compiled(*arrays)
    got = got[0] if isinstance(got, tuple) else got
    expected = session.run(None, feed)[0]
    oracle = "onnxruntime"
    if args.check:
        from onnx.reference import ReferenceEvaluator

        expected = ReferenceEvaluator(model).run(None, feed)[0]
        oracle = "onnx.reference"
    error = relative_error(got, expected)

    dlc_ms = timings["dlc"].median * 1e3
    ort_ms = timings["onnxruntime"].median * 1e3
    ratio = dlc_ms / ort_ms
    target = TARGETS.get(name)
    verdict = "" if target is None else (" ok" if ratio <= target else f" (target <= {target})")
    print(f"{name}: {stats.calls} kernel calls, {stats.kernels} distinct kernels, workspace "
          f"{stats.workspace_bytes / 2**20:.1f} MiB (unplanned {stats.unplanned_bytes / 2**20:.1f}"
          f" MiB), weights {stats.weight_bytes / 2**20:.1f} MiB")
    print(f"  compile: {cold:.2f} s cold, {warm:.3f} s cache hit"
          + (f"; tvm {tvm_compile:.2f} s, dlc/tvm {cold / tvm_compile:.2f}x"
             if tvm_compile is not None else ""))
    stages = sorted(stats.seconds.items(), key=lambda item: -item[1])[:5]
    print("  compile time goes to: " + ", ".join(f"{k} {v:.2f} s" for k, v in stages))
    line = f"  latency: dlc {dlc_ms:.3f} ms, onnxruntime {ort_ms:.3f} ms, dlc/ort {ratio:.2f}x"
    if "tvm" in timings:
        line += f", tvm {timings['tvm'].median * 1e3:.3f} ms"
    print(line + verdict)
    for label in variants:
        variant_ms = timings[label].median * 1e3
        print(f"  latency: {label} {variant_ms:.3f} ms, {label}/ort {variant_ms / ort_ms:.2f}x, "
              f"{label}/dlc {variant_ms / dlc_ms:.2f}x")
    status = "ok" if error <= RELATIVE_TOLERANCE else "MISMATCH"
    print(f"  agreement with {oracle}: {error:.2e} ({status})")
    if args.profile:
        from dlc.runtime.profiler import profile

        print(profile(compiled, arrays, repeat=5).table(args.profile))
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--check", action="store_true",
                        help="compare with onnx.reference instead of ONNX Runtime (slow)")
    parser.add_argument("--profile", type=int, default=0, metavar="K",
                        help="print the K slowest kernel calls")
    parser.add_argument("--direct", action="store_true",
                        help="also time the cpu-direct pipeline (no Winograd convs)")
    parser.add_argument("--tuning-log", dest="tuning_logs", action="append", default=[],
                        metavar="NAME=FILE", help="also time model NAME with this tuning log")
    args = parser.parse_args()
    logs = dict(item.split("=", 1) for item in args.tuning_logs if "=" in item)
    if len(logs) != len(args.tuning_logs):
        parser.error("expected --tuning-log NAME=FILE")
    args.tuning_logs = {name: Path(file) for name, file in logs.items()}
    if not tvm_available():
        print("Apache TVM is not installed: comparing with ONNX Runtime only")
    with tempfile.TemporaryDirectory(prefix="dlc-bench-") as directory:
        for name in args.models:
            try:
                bench(name, args, Path(directory))
            except Exception as e:  # noqa: BLE001 - report the model as failed, go on
                print(f"{name}: FAILED: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
