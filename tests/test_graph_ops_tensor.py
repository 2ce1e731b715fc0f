"""The graph ops of ops_tensor.py: builders infer their types, the interpreter matches NumPy."""

from __future__ import annotations

import dlc.dialects.graph as graph
import numpy as np
import pytest
from dlc.dialects.graph.attrs import from_numpy_dtype
from dlc.dialects.graph.interpreter import run_module
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType, f32, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException


def run(build: callable, *arrays: np.ndarray) -> list[np.ndarray]:  # type: ignore[valid-type]
    """Build `build(*args)` over arguments typed like `arrays`, verify it, and interpret it."""
    types = [TensorType(from_numpy_dtype(a.dtype), a.shape) for a in arrays]
    block = Block(arg_types=types)
    op: Operation = build(*block.args)
    block.add_op(op)
    block.add_op(ReturnOp(*op.results))
    function = FuncOp("f", (types, [r.type for r in op.results]), Region(block))
    module = ModuleOp([function])
    module.verify()
    return run_module(module, list(arrays))


def test_tensor_ops_are_in_the_dialect() -> None:
    names = {op.name for op in graph.Graph.operations}
    assert {"graph.cast", "graph.compare", "graph.where", "graph.gather", "graph.slice",
            "graph.pad", "graph.broadcast_to", "graph.resize", "graph.argmax", "graph.topk",
            "graph.conv_transpose2d"} <= names


def test_cast_truncates_toward_zero() -> None:
    x = np.array([-1.7, -0.5, 0.5, 2.9], np.float32)
    (got,) = run(lambda v: graph.CastOp(v, IntegerType(32)), x)
    np.testing.assert_array_equal(got, np.array([-1, 0, 0, 2], np.int32))
    (flags,) = run(lambda v: graph.CastOp(v, IntegerType(1)), x)
    assert flags.dtype == np.bool_ and flags.all()


@pytest.mark.parametrize("predicate,fn",
                         [("eq", np.equal), ("lt", np.less), ("ge", np.greater_equal)])
def test_compare_broadcasts(predicate: str, fn: np.ufunc) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1, 4, 2], np.float32)
    (got,) = run(lambda x, y: graph.CompareOp(x, y, predicate), a, b)
    np.testing.assert_array_equal(got, fn(a, b))


def test_where_broadcasts_three_ways() -> None:
    c = np.array([[True], [False]])
    a = np.arange(3, dtype=np.float32)
    b = np.array(-1, np.float32)
    (got,) = run(graph.WhereOp, c, a, b)
    np.testing.assert_array_equal(got, np.where(c, a, b))


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_gather_matches_take(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    indices = np.array(data.draw(st.lists(st.integers(-dim, dim - 1), min_size=1, max_size=4)))
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    (got,) = run(lambda v, i: graph.GatherOp(v, i, axis), x, indices)
    np.testing.assert_array_equal(got, np.take(x, np.where(indices < 0, indices + dim, indices),
                                               axis=axis))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_slice_matches_numpy(shape: list[int], data: st.DataObject) -> None:
    bound = st.integers(-7, 7)
    slices = [slice(data.draw(bound), data.draw(bound), data.draw(st.sampled_from([-2, -1, 2])))
              for _ in shape]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want = x[tuple(slices)]
    ranges = [range(*s.indices(d)) for s, d in zip(slices, shape, strict=True)]
    starts = [r.start if len(r) else 0 for r in ranges]
    (got,) = run(lambda v: graph.SliceOp(v, starts, [len(r) for r in ranges],
                                         [r.step for r in ranges]), x)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_matches_numpy(mode: str) -> None:
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    (got,) = run(lambda v: graph.PadOp(v, [1, 2, 2, 0], mode, 7.0), x)
    kwargs = {"constant_values": 7} if mode == "constant" else {}
    np.testing.assert_array_equal(got, np.pad(x, [(1, 2), (2, 0)], mode=mode, **kwargs))


def test_broadcast_to_and_its_verifier() -> None:
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    (got,) = run(lambda v: graph.BroadcastToOp(v, [2, 3, 4]), x)
    np.testing.assert_array_equal(got, np.broadcast_to(x, (2, 3, 4)))
    (value,) = Block(arg_types=[TensorType(f32, [3])]).args
    with pytest.raises(VerifyException, match="to broadcast to"):
        graph.BroadcastToOp(value, [2, 4])


def test_resize_nearest_and_linear() -> None:
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    (nearest,) = run(lambda v: graph.ResizeOp(v, [1, 1, 4, 6], [1, 1, 2, 2],
                                              coordinate_transformation_mode="asymmetric",
                                              nearest_mode="floor"), x)
    np.testing.assert_array_equal(nearest, x.repeat(2, axis=2).repeat(2, axis=3))
    (linear,) = run(lambda v: graph.ResizeOp(v, [1, 1, 2, 5], [1, 1, 1, 5 / 3], mode="linear",
                                             coordinate_transformation_mode="align_corners"),
                    x)
    np.testing.assert_allclose(linear[0, 0, 0], [0, 0.5, 1, 1.5, 2])


def test_argmax_and_topk_break_ties_by_index() -> None:
    x = np.array([[3, 1, 3, 2], [0, 5, 5, 5]], np.float32)
    (first,) = run(lambda v: graph.ArgMaxOp(v, axis=1, keepdims=False), x)
    (last,) = run(lambda v: graph.ArgMaxOp(v, axis=1, select_last_index=True), x)
    np.testing.assert_array_equal(first, [0, 1])
    np.testing.assert_array_equal(last, [[2], [3]])
    values, indices = run(lambda v: graph.TopKOp(v, 2, axis=1), x)
    np.testing.assert_array_equal(values, [[3, 3], [5, 5]])
    np.testing.assert_array_equal(indices, [[0, 2], [1, 2]])
    _, smallest = run(lambda v: graph.TopKOp(v, 3, axis=1, largest=False), x)
    np.testing.assert_array_equal(smallest, [[1, 3, 0], [0, 1, 2]])


def test_conv_transpose2d_is_the_adjoint_of_conv2d() -> None:
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for the same strides, padding and dilation.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 7, 7)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    options = {"strides": [2, 2], "padding": [1, 1, 1, 1], "dilation": [1, 1]}
    (y,) = run(lambda a, b: graph.Conv2DOp(a, b, **options), x, w)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    (dx,) = run(lambda a, b: graph.ConvTranspose2DOp(a, b, **options), dy, w)
    assert dx.shape == x.shape
    np.testing.assert_allclose(np.vdot(y, dy), np.vdot(x, dx), rtol=1e-4)


def test_topk_result_types() -> None:
    (value,) = Block(arg_types=[TensorType(f32, [3, 5])]).args
    op = graph.TopKOp(value, 2, axis=-1)
    assert [r.type for r in op.results] == [TensorType(f32, [3, 2]), TensorType(i64, [3, 2])]
    assert isinstance(op.results[0], SSAValue)
