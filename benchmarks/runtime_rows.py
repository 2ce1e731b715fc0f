"""Kernels over a runtime number of rows: one kernel compiled for `?` rows (its loops bounded by
the size passed beside the pointers, cut by the default schedule into static blocks of rows)
against the same kernel compiled for each static row count, ONNX Runtime and NumPy, in one
process, taking turns.

Run: `python3 benchmarks/runtime_rows.py [--kernel dense|softmax] [--rows 1 3 8 9 64]
[--threads 2] [--repeats 9]`.

Prints the runtime-rows kernel's compile time, then per row count the median latency of each
engine, the ratios runtime-rows/static and runtime-rows/ORT, and the largest difference from
NumPy. `dense` is relu(x @ W) with a constant 784x512 W (packed at compile time, as a model's
weights are); `softmax` is a row-wise softmax over 1000 columns.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _rows_type(rows: int | None, *trailing: int) -> str:
    return f"tensor<{'?' if rows is None else rows}x{'x'.join(map(str, trailing))}xf32>"


def _row_count(rows: int | None, value: str, type_: str) -> tuple[str, str]:
    """(the ops defining `%n`, the rows of `value`, and the `sizes(%n)` clause of a compute
    over them) for `?` rows; empty strings for a static row count."""
    if rows is not None:
        return "", ""
    return (f"  %c0 = arith.constant 0 : index\n  %n = tensor.dim {value}, %c0 : {type_}\n",
            " sizes(%n)")


def softmax_rows(width: int, rows: int | None = None) -> str:
    """tensor_expr text of a row-wise softmax over `rows` rows of `width` (None: `?` rows, the
    computes sized by `tensor.dim`): a max, a sum and their broadcasts."""
    t = _rows_type(rows, width)
    v = "tensor<?xf32>" if rows is None else f"tensor<{rows}xf32>"
    dim, sizes = _row_count(rows, "%x", t)
    return f"""
func.func @softmax(%x: {t}) -> {t} {{
{dim}  %m = tensor_expr.compute "row_max"{sizes} reduce [{width}] max init 0xFF800000 : f32
      -> {v} {{
  ^bb0(%i: index, %k: index):
    %e = tensor_expr.read %x[%i, %k] : {t}
    tensor_expr.yield %e : f32
  }}
  %e = tensor_expr.compute "exp" tag "injective"{sizes} -> {t} {{
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %x[%i, %j] : {t}
    %mx = tensor_expr.read %m[%i] : {v}
    %d = arith.subf %a, %mx : f32
    %r = math.exp %d : f32
    tensor_expr.yield %r : f32
  }}
  %s = tensor_expr.compute "row_sum"{sizes} reduce [{width}] sum init 0.0 : f32 -> {v} {{
  ^bb0(%i: index, %k: index):
    %a = tensor_expr.read %e[%i, %k] : {t}
    tensor_expr.yield %a : f32
  }}
  %y = tensor_expr.compute "div" tag "injective"{sizes} -> {t} {{
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %e[%i, %j] : {t}
    %d = tensor_expr.read %s[%i] : {v}
    %r = arith.divf %a, %d : f32
    tensor_expr.yield %r : f32
  }}
  func.return %y : {t}
}}
"""


def dense_relu(weight: np.ndarray, rows: int | None = None) -> str:
    """tensor_expr text of `relu(x @ W)` over `rows` rows (None: `?`), W a constant that the
    entry passes to the kernel, as a model's entry passes its weights (so that
    `loop-fold-constant-nests` packs it at compile time)."""
    k, n = weight.shape
    x, y, w = _rows_type(rows, k), _rows_type(rows, n), f"tensor<{k}x{n}xf32>"
    hex_bytes = weight.astype(np.float32).tobytes().hex().upper()
    dim, sizes = _row_count(rows, "%x", x)
    return f"""
func.func @main(%x: {x}) -> {y} {{
  %w = arith.constant dense<"0x{hex_bytes}"> : {w}
  %y = func.call @dense(%x, %w) : ({x}, {w}) -> {y}
  func.return %y : {y}
}}
func.func private @dense(%x: {x}, %w: {w}) -> {y} {{
{dim}  %y = tensor_expr.compute "matmul"{sizes} reduce [{k}] sum init 0.0 : f32 -> {y} {{
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %x[%i, %k] : {x}
    %b = tensor_expr.read %w[%k, %j] : {w}
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }}
  %z = tensor_expr.compute "relu" tag "injective"{sizes} -> {y} {{
  ^bb0(%i: index, %j: index):
    %v = tensor_expr.read %y[%i, %j] : {y}
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %zero : f32
    tensor_expr.yield %m : f32
  }}
  func.return %z : {y}
}}
"""


def compile_text(text: str, threads: int):  # noqa: ANN201 - a dlc.Executable
    """`text` (tensor_expr level) bufferized and compiled for this host."""
    from dlc.dialects import make_context
    from dlc.rewrites.convert_tensor_expr_to_loop import ConvertTensorExprToLoopPass
    from xdsl.parser import Parser

    import dlc

    module = Parser(make_context(), text).parse_module()
    ConvertTensorExprToLoopPass().apply(make_context(), module)
    return dlc.compile(module, threads=threads)


def _onnx_model(kernel: str, weight: np.ndarray, width: int):  # noqa: ANN202 - an ONNX model
    from onnx import TensorProto, helper, numpy_helper

    if kernel == "dense":
        nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]),
                 helper.make_node("Relu", ["y"], ["z"])]
        inits = [numpy_helper.from_array(weight, "w")]
        k, n = weight.shape
    else:
        nodes = [helper.make_node("Softmax", ["x"], ["z"], axis=1)]
        inits, k, n = [], width, width
    graph = helper.make_graph(
        nodes, kernel, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", k])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", n])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", choices=["dense", "softmax"], default="dense")
    parser.add_argument("--rows", nargs="+", type=int, default=[1, 2, 3, 5, 7, 8, 9, 16, 64])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    import dlc
    from benchmarks.common import ort_session, time_dynamic_static

    weight = np.random.default_rng(1).standard_normal((784, 512)).astype(np.float32)
    width = 1000

    def text(rows: int | None) -> str:
        return dense_relu(weight, rows) if args.kernel == "dense" else softmax_rows(width, rows)

    def reference(x: np.ndarray) -> np.ndarray:
        if args.kernel == "dense":
            return np.maximum(x @ weight, 0)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    start = time.perf_counter()
    runtime_rows = compile_text(text(None), args.threads)
    print(f"{args.kernel}, threads={args.threads}: the runtime-rows kernel compiled once in "
          f"{time.perf_counter() - start:.2f} s")
    session = ort_session(_onnx_model(args.kernel, weight, width).SerializeToString(),
                          args.threads)
    columns = runtime_rows.signature.outputs[0].shape[1:]

    def with_out(executable: dlc.Executable) -> Callable[[np.ndarray], object]:
        """`executable` taking a new output array per call (as ORT makes one)."""
        return lambda rows: executable(rows, out=[np.empty((len(rows), *columns), np.float32)])

    print(f"{'rows':>5} {'rows ms':>8} {'static ms':>10} {'ORT ms':>8} {'rows/static':>11} "
          f"{'rows/ORT':>9} {'max err':>9}")
    for count in args.rows:
        x = np.random.default_rng(count).standard_normal(
            (count, runtime_rows.signature.inputs[0].shape[1])).astype(np.float32)
        static = compile_text(text(count), args.threads)
        dynamic = with_out(runtime_rows)
        error = float(np.abs(dynamic(x) - reference(x)).max())  # type: ignore[operator]
        engines: list[Callable[[np.ndarray], object]] = [
            dynamic, with_out(static), lambda x: session.run(None, {"x": x})]
        d, s, o = time_dynamic_static(*engines, x, args.repeats)
        print(f"{count:>5} {d:8.3f} {s:10.3f} {o:8.3f} {d / s:11.2f} {d / o:9.2f} {error:9.1e}")


if __name__ == "__main__":
    main()
