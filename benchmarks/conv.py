"""conv2d 3x3 (stride 1, batch 1) + BatchNormalization + Relu at ResNet's four 3x3 layer
shapes: dlc (`cpu`: Winograd F(m, 3) along the rows where `graph-winograd-conv` takes the conv),
dlc `cpu-direct` (the direct conv) and ONNX Runtime, in one process.

Run: `python3 benchmarks/conv.py [--threads 1 2] [--layers 64x56 128x28 256x14 512x7]`. The same
ONNX model (built with onnx.helper, random weights) goes to all three; ORT runs with
`intra_op_num_threads` equal to dlc's `threads`. GFLOP/s count the direct conv's multiply-adds.
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
    parser.add_argument("--layers", nargs="+", default=["64x56", "128x28", "256x14", "512x7"],
                        help="CxS: channels and image size of each conv")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    import onnxruntime as ort

    import dlc

    print(f"ONNX Runtime {ort.__version__}")
    for layer in args.layers:
        channels, size = (int(v) for v in layer.split("x"))
        model = conv_bn_relu_model(channels, size)
        flops = 2.0 * channels * channels * 9 * size * size
        x = np.random.default_rng(1).standard_normal((1, channels, size, size), dtype=np.float32)
        for threads in args.threads:
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            session = ort.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
            expected = session.run(None, {"x": x})[0]
            functions, notes = {}, []
            for name, pipeline in (("dlc", "cpu"), ("dlc-direct", "cpu-direct")):
                start = time.perf_counter()
                executable = dlc.compile(model, threads=threads, cache=False, pipeline=pipeline)
                compile_s = time.perf_counter() - start
                out = np.empty_like(expected)
                executable(x, out=(out,))
                error = float(np.abs(out - expected).max() / np.abs(expected).max())
                notes.append(f"{name}: compile {compile_s:.1f} s, error {error:.1e}")
                functions[name] = functools.partial(executable, x, out=(out,))
            functions["onnxruntime"] = functools.partial(session.run, None, {"x": x})
            timings = time_calls(functions, repeats=args.repeats)
            print(report(
                f"conv2d 3x3 {channels}->{channels} {size}x{size} + BN + ReLU, {threads} "
                f"thread(s) ({'; '.join(notes)}; errors relative to ORT's largest output)",
                flops, timings, "onnxruntime",
            ))


if __name__ == "__main__":
    main()
