"""`loop-fuse-nests` in the cpu pipeline: a softmax kernel (max, exp, sum, normalise) runs in
one parallel loop, its exp computed once (tensor-expr-inline keeps it stored), and compiled
results match NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop.ops import ForOp
from xdsl.dialects import math
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
