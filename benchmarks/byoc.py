"""Convnets with dlc alone, dlc with BYOC offload (onednn: convs, pools, dense layers as oneDNN
primitives; cblas: the dense layers as OpenBLAS sgemm), and ONNX Runtime, in one run.

Run: `python3 benchmarks/byoc.py [--models vgg_mini resnet18 mlp] [--repeats 15] [--threads 0]
[--byoc onednn cblas]`.

For each model (seeded weights): the median latency of each implementation (interleaved,
`benchmarks.common.time_calls`), the ratio to ONNX Runtime, the number of offloaded regions,
and each dlc variant's agreement with ONNX Runtime (max |dlc - ort| / max |ort|, which must stay
<= 1e-4). Prints the reason and stops where the BYOC library is missing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402
from benchmarks.model_zoo import mlp, random_inputs, resnet18  # noqa: E402

RELATIVE_TOLERANCE = 1e-4


def vgg_mini(seed: int = 0) -> onnx.ModelProto:
    """A small VGG-style convnet on 1x3x32x32: two conv-relu-pool stages and two dense layers
    (4096 -> 1024 -> 10), where the dense layers are most of the FLOPs a BLAS can take."""
    rng = np.random.default_rng(seed)
    weights = {
        "c1_w": rng.standard_normal((32, 3, 3, 3)) * 0.2, "c1_b": rng.standard_normal(32) * 0.1,
        "c2_w": rng.standard_normal((64, 32, 3, 3)) * 0.06, "c2_b": rng.standard_normal(64) * 0.1,
        "f1_w": rng.standard_normal((4096, 1024)) * 0.015, "f1_b": rng.standard_normal(1024) * 0.1,
        "f2_w": rng.standard_normal((1024, 10)) * 0.03,
    }
    nodes = [
        helper.make_node("Conv", ["x", "c1_w", "c1_b"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2_w", "c2_b"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"]),
        helper.make_node("MatMul", ["f", "f1_w"], ["m1"]),
        helper.make_node("Add", ["m1", "f1_b"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["h"]),
        helper.make_node("MatMul", ["h", "f2_w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "vgg_mini",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "vgg_mini": vgg_mini, "resnet18": resnet18, "mlp": mlp,
}


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    """max |got - expected| / max |expected|."""
    return float(np.max(np.abs(got - expected)) / max(float(np.max(np.abs(expected))), 1e-30))


def bench(name: str, args: argparse.Namespace) -> bool:
    """Times one model three ways; prints a table; returns whether dlc agreed with ORT."""
    import onnxruntime

    import dlc

    model = MODELS[name]()
    feeds = random_inputs(model)
    inputs = list(feeds.values())
    options = onnxruntime.SessionOptions()
    if args.threads:
        options.intra_op_num_threads = args.threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)[0]
    compiled = {"dlc": dlc.compile(model, threads=args.threads)}
    for library in args.byoc:
        compiled[f"dlc+{library}"] = dlc.compile(model, threads=args.threads, byoc=library)
    errors = {label: relative_error(c(*inputs), expected) for label, c in compiled.items()}
    calls = {label: (lambda c=c: c(*inputs)) for label, c in compiled.items()}
    timings = time_calls({**calls, "ort": lambda: session.run(None, feeds)},
                         repeats=args.repeats)
    base = timings["ort"].median
    offloaded = ", ".join(f"{len(compiled[f'dlc+{lib}'].native.compiled.externs)} to {lib}"
                          for lib in args.byoc)
    print(f"{name}: regions offloaded: {offloaded}")
    for label, timing in timings.items():
        error = f"  rel.err vs ort {errors[label]:.1e}" if label in errors else ""
        print(f"  {label:<12} {timing.median * 1e3:9.3f} ms  x{base / timing.median:5.2f} vs ort"
              f"{error}")
    return all(e <= RELATIVE_TOLERANCE for e in errors.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["vgg_mini", "resnet18"],
                        choices=list(MODELS))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    parser.add_argument("--byoc", nargs="+", default=["onednn", "cblas"])
    args = parser.parse_args()
    from dlc.driver.byoc import available_reason

    for library in args.byoc:
        reason = available_reason(library)
        if reason is not None:
            print(f"benchmarks/byoc.py: --byoc {library} is not available: {reason}")
            sys.exit(1)
    ok = [bench(name, args) for name in args.models]
    if not all(ok):
        print(f"some dlc result differs from ONNX Runtime by more than {RELATIVE_TOLERANCE}")
        sys.exit(1)


if __name__ == "__main__":
    main()
