"""`loop-fuse-nests` in the cpu pipeline: a softmax kernel (max, exp, sum, normalise) and a
layer norm (merged into one kernel by graph-fuse-ops' row groups) each run in one parallel loop,
the softmax's exp computed once (tensor-expr-inline keeps it stored), and compiled results match
NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop.ops import ForOp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, math
from xdsl.parser import Parser

import dlc
from tests.test_graph_passes import apply

TO_LOOPS = ("graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
            "loop-default-schedule{threads=2},loop-fuse-nests")


def softmax_module(shape: tuple[int, ...], axis: int) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %r = graph.softmax %x {{axis = {axis} : i64}} : {t}
  func.return %r : {t}
}}"""


def numpy_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize(("shape", "axis"), [((12, 16, 40), 2), ((1, 4, 16, 40), 3)])
def test_softmax_is_one_parallel_loop_with_one_exp(shape: tuple[int, ...], axis: int) -> None:
    module = Parser(make_context(), softmax_module(shape, axis)).parse_module()
    apply(module, TO_LOOPS)
    kernel = next(op for op in module.walk()
                  if getattr(op, "sym_name", None) is not None
                  and op.sym_name.data.startswith("fused_softmax"))  # type: ignore[attr-defined]
    parallel = [op for op in kernel.walk() if isinstance(op, ForOp) and op.kind.data == "parallel"]
    assert len(parallel) == 1
    assert sum(isinstance(op, math.ExpOp) for op in kernel.walk()) == 1


@pytest.mark.parametrize(("shape", "axis"), [
    ((12, 16, 40), 2), ((37, 1000), 1), ((3, 5, 7), 1), ((1, 4, 16, 40), 3),
])
def test_compiled_softmax_matches_numpy(shape: tuple[int, ...], axis: int) -> None:
    module = Parser(make_context(), softmax_module(shape, axis)).parse_module()
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 4
    actual = np.asarray(dlc.compile(module, threads=2, cache=False)(x))
    np.testing.assert_allclose(actual, numpy_softmax(x, axis), rtol=1e-5, atol=1e-6)


def layer_norm_module(shape: tuple[int, ...]) -> str:
    """A layer norm over the last axis as the ONNX importer writes it (mean, x - mean, the mean
    of its squares, 1 / sqrt(var + eps), scale, bias)."""
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    r = f"tensor<{'x'.join(map(str, (*shape[:-1], 1)))}xf32>"
    w = f"tensor<{shape[-1]}xf32>"
    axis = len(shape) - 1
    return f"""func.func @main(%x: {t}, %g: {w}, %b: {w}) -> {t} {{
  %mean = graph.reduce %x {{axes = array<i64: {axis}>, kind = "mean"}} : ({t}) -> {r}
  %d = graph.sub %x, %mean : ({t}, {r}) -> {t}
  %sq = graph.mul %d, %d : ({t}, {t}) -> {t}
  %var = graph.reduce %sq {{axes = array<i64: {axis}>, kind = "mean"}} : ({t}) -> {r}
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %ve = graph.add %var, %eps : ({r}, tensor<f32>) -> {r}
  %sd = graph.sqrt %ve : {r}
  %inv = graph.reciprocal %sd : {r}
  %n = graph.mul %d, %inv : ({t}, {r}) -> {t}
  %s = graph.mul %n, %g : ({t}, {w}) -> {t}
  %y = graph.add %s, %b : ({t}, {w}) -> {t}
  func.return %y : {t}
}}"""


@settings(max_examples=6, deadline=None)
@given(rows=st.lists(st.integers(1, 9), min_size=1, max_size=2),
       width=st.sampled_from([1, 7, 16, 33, 200, 768]))
@example(rows=[8], width=7)  # 8 or 9 rows once went to the channel kernel, packing x transposed
@example(rows=[1, 9], width=768)
@example(rows=[2, 8], width=33)  # a kernel that prefetches once kept loop-fuse-nests from fusing
def test_layer_norm_is_one_kernel_one_parallel_loop_and_matches_numpy(
    rows: list[int], width: int,
) -> None:
    """graph-fuse-ops merges the layer norm's four row groups into one kernel, and
    loop-fuse-nests runs all its stages in one parallel loop over the rows; compiled, it
    matches NumPy on random shapes."""
    shape = (*rows, width)
    module = Parser(make_context(), layer_norm_module(shape)).parse_module()
    apply(module, TO_LOOPS)
    kernels = [op for op in module.walk()
               if isinstance(op, func.FuncOp) and op.sym_name.data.startswith("fused_")]
    assert len(kernels) == 1
    parallel = [op for op in kernels[0].walk()
                if isinstance(op, ForOp) and op.kind.data == "parallel"]
    assert len(parallel) <= 1

    rng = np.random.default_rng(width)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    g, b = (rng.standard_normal(width).astype(np.float32) for _ in range(2))
    module = Parser(make_context(), layer_norm_module(shape)).parse_module()
    actual = np.asarray(dlc.compile(module, threads=2, cache=False)(x, g, b))
    wide = x.astype(np.float64)
    mean = wide.mean(axis=-1, keepdims=True)
    expected = (wide - mean) / np.sqrt(((wide - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(actual, expected * g + b, rtol=1e-4, atol=1e-4)
