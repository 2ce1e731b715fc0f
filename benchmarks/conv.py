"""conv2d 3x3 64->64 on 56x56 (batch 1) + BatchNormalization + Relu: dlc vs ONNX Runtime.

Run: `python3 benchmarks/conv.py [--threads 1 2]`. The same ONNX model (built with onnx.helper,
random weights) goes to both; ORT runs with `intra_op_num_threads` equal to dlc's `threads`.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import report, time_calls  # noqa: E402


def conv_bn_relu_model(
    channels: int = 64, size: int = 56, seed: int = 0
) -> object:
    """The ONNX model `Relu(BatchNormalization(Conv(x, W, b)))`, 3x3 kernel, padding 1."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((channels, channels, 3, 3), dtype=np.float32) * 0.05
    bias = rng.standard_normal(channels, dtype=np.float32) * 0.1
    scale = rng.uniform(0.5, 1.5, channels).astype(np.float32)
    shift = rng.standard_normal(channels, dtype=np.float32) * 0.1
    mean = rng.standard_normal(channels, dtype=np.float32) * 0.1
    var = rng.uniform(0.5, 1.5, channels).astype(np.float32)
    initializers = [
        numpy_helper.from_array(array, name)
        for name, array in (("W", weight), ("B", bias), ("scale", scale), ("shift", shift),
                            ("mean", mean), ("var", var))
    ]
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["conv"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "scale", "shift", "mean", "var"],
                         ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "conv_bn_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    import onnxruntime as ort

    import dlc

    channels, size = 64, 56
    model = conv_bn_relu_model(channels, size)
    flops = 2.0 * channels * channels * 9 * size * size
    x = np.random.default_rng(1).standard_normal((1, channels, size, size), dtype=np.float32)
    print(f"ONNX Runtime {ort.__version__}")
    for threads in args.threads:
        start = time.perf_counter()
        executable = dlc.compile(model, threads=threads, cache=False)
        compile_s = time.perf_counter() - start
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        expected = session.run(None, {"x": x})[0]
        out = np.empty_like(expected)
        executable(x, out=(out,))
        error = float(np.abs(out - expected).max())
        timings = time_calls(
            {
                "dlc": functools.partial(executable, x, out=(out,)),
                "onnxruntime": functools.partial(session.run, None, {"x": x}),
            },
            repeats=args.repeats,
        )
        print(report(
            f"conv2d 3x3 {channels}->{channels} {size}x{size} + BN + ReLU, {threads} thread(s) "
            f"(dlc compile {compile_s:.1f} s, max abs. error {error:.1e})",
            flops, timings, "onnxruntime",
        ))


if __name__ == "__main__":
    main()
