"""Experiment: Winograd F(2x2, 3x3) convolution written with ONNX ops, compiled by dlc, against
the direct conv2d (dlc and ONNX Runtime) on ResNet's 3x3 layers.

Run: `python3 benchmarks/winograd.py [--layers 64x56 512x7] [--threads 2]`.

Why it is here: ResNet-18's 3x3 convs already run near this machine's fp32 peak with the direct
algorithm (dlc's default schedules, as ONNX Runtime's MLAS), so a model faster than ORT by a
margin needs fewer multiplies: Winograd's F(2x2, 3x3) does a 3x3 conv's 2x2 output tile with 16
products per input channel instead of 36. The form here needs no new op: per 4x4 input tile
(stride 2), the input transform `V = (B^T (x) B^T) d` and the output transform `Y = (A^T (x)
A^T) M` are MatMuls with the Kronecker products of the small transform matrices, and the
product per tile position `M[t] = U[t] V[t]` (U: the weight transformed at build time) is a
batched MatMul of 16. The report shows the batched MatMul alone against the direct conv, and
what the transforms cost as generic kernels (16 strided slices gathered by one concat, two thin
MatMuls, copies): a native Winograd needs its own fused transform kernels before it pays.
Measured on the 2-vCPU EPYC (znver4), 2 threads: 64x56x56, the batched MatMul 0.49 ms vs the
direct conv's 1.50 ms (ORT 1.46), the whole graph 5.97 ms (the slice/concat gather 2.9 ms;
3.69 and 1.5 ms once the `concat` schedule rule splits the gather per slice);
512x7x7, the batched MatMul 1.21 ms vs direct 1.47 ms (16 tile positions, a quarter of them
padding), the whole graph 2.20 ms. Errors vs ORT: 4.4e-7 and 8.5e-7 (relative to the largest).
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

B_T = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float32)
G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float32)
A_T = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float32)
"""Lavin and Gray's F(2x2, 3x3) matrices: input (B^T), weight (G) and output (A^T) transforms."""


def _graph(name: str, nodes: list, channels: int, size: int, initializers: list) -> object:
    import onnx
    from onnx import TensorProto, helper

    shape = [1, channels, size, size]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def direct_model(weight: np.ndarray, size: int) -> object:
    """`Relu(Conv(x, weight))`, 3x3, padding 1."""
    from onnx import helper, numpy_helper

    nodes = [helper.make_node("Conv", ["x", "W"], ["conv"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["y"])]
    return _graph("direct", nodes, weight.shape[0], size, [numpy_helper.from_array(weight, "W")])


def winograd_model(weight: np.ndarray, size: int) -> object:
    """The same conv as `direct_model`, by Winograd F(2x2, 3x3) in ONNX ops (module docstring).
    The output is `T x T` tiles of 2x2 (T = ceil(size / 2)), cropped to `size`."""
    from onnx import helper, numpy_helper

    channels = weight.shape[0]
    tiles = (size + 1) // 2
    positions = tiles * tiles
    transformed = np.einsum("xi,kcij,yj->xykc", G, weight, G).reshape(16, channels, channels)
    arrays = {
        "U": transformed.astype(np.float32),
        "BB": np.kron(B_T, B_T), "AA": np.kron(A_T, A_T),
        "pads": np.array([0, 0, 1, 1, 0, 0, 2 * tiles + 1 - size, 2 * tiles + 1 - size]),
        "axes": np.array([2, 3]), "steps": np.array([2, 2]),
        "flat": np.array([1, channels * positions]),
        "per_position": np.array([16, channels, positions]),
        "matrix": np.array([16, channels * positions]),
        "quads": np.array([2, 2, channels, tiles, tiles]),
        "image": np.array([1, channels, 2 * tiles, 2 * tiles]),
        "origin": np.array([0, 0]), "extent": np.array([size, size]),
    }
    nodes = [helper.make_node("Pad", ["x", "pads"], ["padded"])]
    rows = []
    for i in range(4):
        for j in range(4):
            arrays[f"start{i}{j}"] = np.array([i, j])
            arrays[f"end{i}{j}"] = np.array([i + 2 * tiles - 1, j + 2 * tiles - 1])
            nodes += [
                helper.make_node("Slice", ["padded", f"start{i}{j}", f"end{i}{j}", "axes",
                                           "steps"], [f"d{i}{j}"]),
                helper.make_node("Reshape", [f"d{i}{j}", "flat"], [f"row{i}{j}"]),
            ]
            rows.append(f"row{i}{j}")
    nodes += [
        helper.make_node("Concat", rows, ["D"], axis=0),  # [16 tile elements, C * P]
        helper.make_node("MatMul", ["BB", "D"], ["V_rows"]),
        helper.make_node("Reshape", ["V_rows", "per_position"], ["V"]),
        helper.make_node("MatMul", ["U", "V"], ["M"]),  # [16, K, P]: the batched products
        helper.make_node("Reshape", ["M", "matrix"], ["M_rows"]),
        helper.make_node("MatMul", ["AA", "M_rows"], ["Y_rows"]),  # [4 = 2x2 outputs, K * P]
        helper.make_node("Reshape", ["Y_rows", "quads"], ["Y_quads"]),
        helper.make_node("Transpose", ["Y_quads"], ["Y_tiles"], perm=[2, 3, 0, 4, 1]),
        helper.make_node("Reshape", ["Y_tiles", "image"], ["Y_image"]),
        helper.make_node("Slice", ["Y_image", "origin", "extent", "axes"], ["Y"]),
        helper.make_node("Relu", ["Y"], ["y"]),
    ]
    initializers = [
        numpy_helper.from_array(a if a.dtype == np.float32 else a.astype(np.int64), name)
        for name, a in arrays.items()
    ]
    return _graph("winograd", nodes, channels, size, initializers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", nargs="+", default=["64x56", "512x7"],
                        help="channels x size of each 3x3 conv (channels in = out)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    import onnxruntime as ort
    from dlc.runtime.profiler import profile

    import dlc

    rng = np.random.default_rng(0)
    for layer in args.layers:
        channels, size = (int(part) for part in layer.split("x"))
        weight = rng.standard_normal((channels, channels, 3, 3), dtype=np.float32) * 0.05
        x = rng.standard_normal((1, channels, size, size), dtype=np.float32)
        direct, winograd = direct_model(weight, size), winograd_model(weight, size)
        start = time.perf_counter()
        fast = dlc.compile(winograd, threads=args.threads, cache=False)
        compile_s = time.perf_counter() - start
        plain = dlc.compile(direct, threads=args.threads, cache=False)
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        session = ort.InferenceSession(direct.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        expected = session.run(None, {"x": x})[0]
        error = float(np.abs(fast(x) - expected).max() / np.abs(expected).max())
        timings = time_calls({
            "winograd": functools.partial(fast, x),
            "direct": functools.partial(plain, x),
            "onnxruntime": functools.partial(session.run, None, {"x": x}),
        }, repeats=args.repeats)
        print(report(
            f"conv2d 3x3 {channels}->{channels} {size}x{size} + ReLU, {args.threads} thread(s): "
            f"Winograd F(2x2,3x3) in ONNX ops (dlc compile {compile_s:.1f} s, max rel. error "
            f"vs ORT {error:.1e}) vs the direct conv; GFLOP/s count the direct conv's work",
            2.0 * channels * channels * 9 * size * size, timings, "onnxruntime",
        ))
        print("  Winograd's kernels:")
        print("\n".join("    " + line for line in profile(fast, [x], repeat=5).table(12)
                        .splitlines()))


if __name__ == "__main__":
    main()
