"""Kernels over runtime extents in any dim: one kernel compiled for images of `?` height and
width (its loops bounded by sizes passed beside the pointers, scheduled by the rule for runtime
extents: whole vectors and a peeled rest) against the same kernel compiled for each static
size, ONNX Runtime and NumPy, in one process, taking turns.

Run: `python3 benchmarks/runtime_extents.py [--kernel conv|box] [--sizes 16 56 112 224]
[--channels 16] [--threads 2] [--repeats 9]`.

Prints the runtime kernel's compile time, then per size the median latency of each engine, the
ratios runtime/static and runtime/ORT, and the largest difference from NumPy. `conv` is a valid
3x3 conv of `channels` to `channels` channels, then bias and ReLU, over one NCHW image; `box`
a valid 3x3 window sum over one channel (a pool-like kernel).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.runtime_rows import compile_text  # noqa: E402


def _plane(size: int | None, channels: int) -> tuple[str, str, str]:
    """(input type, output type, the ops sizing the output and its `sizes` clause)."""
    if size is not None:
        return (f"tensor<1x{channels}x{size}x{size}xf32>",
                f"tensor<1x{channels}x{size - 2}x{size - 2}xf32>", "")
    x = f"tensor<1x{channels}x?x?xf32>"
    sizing = (f"  %c2 = arith.constant 2 : index\n  %c3 = arith.constant 3 : index\n"
              f"  %h = tensor.dim %x, %c2 : {x}\n  %w = tensor.dim %x, %c3 : {x}\n"
              f"  %oh = arith.subi %h, %c2 : index\n  %ow = arith.subi %w, %c2 : index\n")
    return x, x, sizing


def conv_relu(weight: np.ndarray, bias: np.ndarray, size: int | None = None) -> str:
    """tensor_expr text of `relu(conv3x3(x, W) + b)` over one image of `size` x `size` (None:
    `?` x `?`, the computes sized from the input's dims), W and b constants."""
    channels = weight.shape[0]
    x, y, sizing = _plane(size, channels)
    sizes = " sizes(%oh, %ow)" if size is None else ""
    w, b = f"tensor<{channels}x{channels}x3x3xf32>", f"tensor<{channels}xf32>"
    w_hex = weight.astype(np.float32).tobytes().hex().upper()
    b_hex = bias.astype(np.float32).tobytes().hex().upper()
    return f"""
func.func @main(%x: {x}) -> {y} {{
  %w = arith.constant dense<"0x{w_hex}"> : {w}
  %b = arith.constant dense<"0x{b_hex}"> : {b}
  %y = func.call @conv(%x, %w, %b) : ({x}, {w}, {b}) -> {y}
  func.return %y : {y}
}}
func.func private @conv(%x: {x}, %k: {w}, %b: {b}) -> {y} {{
{sizing}  %y = tensor_expr.compute "conv"{sizes} reduce [{channels}, 3, 3] sum init 0.0 : f32
      -> {y} {{
  ^bb0(%i: index, %o: index, %p: index, %q: index, %c: index, %r: index, %s: index):
    %a = arith.addi %p, %r : index
    %e = arith.addi %q, %s : index
    %v = tensor_expr.read %x[%i, %c, %a, %e] : {x}
    %u = tensor_expr.read %k[%o, %c, %r, %s] : {w}
    %m = arith.mulf %v, %u : f32
    tensor_expr.yield %m : f32
  }}
  %z = tensor_expr.compute "bias_relu" tag "injective"{sizes} -> {y} {{
  ^bb0(%i: index, %o: index, %p: index, %q: index):
    %v = tensor_expr.read %y[%i, %o, %p, %q] : {y}
    %d = tensor_expr.read %b[%o] : {b}
    %s = arith.addf %v, %d : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %zero : f32
    tensor_expr.yield %r : f32
  }}
  func.return %z : {y}
}}
"""


def box(size: int | None = None) -> str:
    """tensor_expr text of a valid 3x3 window sum over one channel of `size` x `size`."""
    x, y, sizing = _plane(size, 1)
    sizes = " sizes(%oh, %ow)" if size is None else ""
    return f"""
func.func @main(%x: {x}) -> {y} {{
{sizing}  %y = tensor_expr.compute "box"{sizes} reduce [3, 3] sum init 0.0 : f32 -> {y} {{
  ^bb0(%i: index, %o: index, %p: index, %q: index, %r: index, %s: index):
    %a = arith.addi %p, %r : index
    %e = arith.addi %q, %s : index
    %v = tensor_expr.read %x[%i, %o, %a, %e] : {x}
    tensor_expr.yield %v : f32
  }}
  func.return %y : {y}
}}
"""


def _onnx_model(kernel: str, weight: np.ndarray, bias: np.ndarray):  # noqa: ANN202
    from onnx import TensorProto, helper, numpy_helper

    channels = weight.shape[0] if kernel == "conv" else 1
    if kernel == "conv":
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3]),
                 helper.make_node("Relu", ["y"], ["z"])]
        inits = [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")]
    else:
        nodes = [helper.make_node("Conv", ["x", "w"], ["z"], kernel_shape=[3, 3])]
        inits = [numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")]
    shape = [1, channels, "H", "W"]
    graph = helper.make_graph(
        nodes, kernel, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, channels, "OH", "OW"])],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def reference(kernel: str, x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    _, _, h, w = x.shape
    windows = [(r, s, x[:, :, r:r + h - 2, s:s + w - 2]) for r in range(3) for s in range(3)]
    if kernel == "box":
        return sum(window for _, _, window in windows)  # type: ignore[return-value]
    out = sum(np.einsum("nchw,oc->nohw", window, weight[:, :, r, s]) for r, s, window in windows)
    return np.maximum(out + bias[None, :, None, None], 0)  # type: ignore[operator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", choices=["conv", "box"], default="conv")
    parser.add_argument("--sizes", nargs="+", type=int, default=[16, 56, 112, 224])
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    import dlc
    from benchmarks.common import ort_session, time_dynamic_static

    g = np.random.default_rng(1)
    weight = g.standard_normal((args.channels, args.channels, 3, 3)).astype(np.float32) * 0.1
    bias = g.standard_normal(args.channels).astype(np.float32)
    channels = args.channels if args.kernel == "conv" else 1

    def text(size: int | None) -> str:
        return conv_relu(weight, bias, size) if args.kernel == "conv" else box(size)

    start = time.perf_counter()
    runtime = compile_text(text(None), args.threads)
    print(f"{args.kernel}, channels={channels}, threads={args.threads}: the runtime-extents "
          f"kernel compiled once in {time.perf_counter() - start:.2f} s")
    session = ort_session(_onnx_model(args.kernel, weight, bias).SerializeToString(),
                          args.threads)

    def with_out(executable: dlc.Executable) -> Callable[[np.ndarray], object]:
        """`executable` taking a new output array per call (as ORT makes one)."""
        return lambda x: executable(x, out=[np.empty(
            (1, channels, x.shape[2] - 2, x.shape[3] - 2), np.float32)])

    print(f"{'size':>5} {'runtime ms':>10} {'static ms':>10} {'ORT ms':>8} "
          f"{'runtime/static':>14} {'runtime/ORT':>11} {'max err':>9}")
    for size in args.sizes:
        x = np.random.default_rng(size).standard_normal(
            (1, channels, size, size)).astype(np.float32)
        static = compile_text(text(size), args.threads)
        dynamic = with_out(runtime)
        error = float(np.abs(dynamic(x) - reference(args.kernel, x, weight, bias)).max())  # type: ignore[operator]
        d, s, o = time_dynamic_static(dynamic, with_out(static),
                                      lambda x: session.run(None, {"x": x}), x, args.repeats)
        print(f"{size:>5} {d:10.3f} {s:10.3f} {o:8.3f} {d / s:14.2f} {d / o:11.2f} "
              f"{error:9.1e}")


if __name__ == "__main__":
    main()
