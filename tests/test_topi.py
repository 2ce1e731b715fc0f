"""convert-graph-to-tensor-expr and tensor-expr-inline against the graph interpreter.

Each test builds a small graph function (random shapes and attributes, hypothesis where it
fits), lowers it to tensor_expr, evaluates it with the tensor_expr interpreter (which also fails
on any out-of-bounds read) and compares with the graph interpreter; then inlines and compares
again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from dlc.dialects.graph import ops as g
from dlc.dialects.graph import ops_tensor as tg
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.interpreter import run_module as run_graph
from dlc.dialects.tensor_expr.interpreter import (
    TensorExprInterpreterError,
    evaluate_compute,
)
from dlc.dialects.tensor_expr.interpreter import run_module as run_te
from dlc.dialects.tensor_expr.ops import ComputeOp, ReadOp
from dlc.rewrites.convert_graph_to_tensor_expr import ConvertGraphToTensorExprPass
from dlc.rewrites.tensor_expr_inline import TensorExprInlinePass
from dlc.rewrites.topi import defined_op_types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    NameLoc,
    Signedness,
    StringAttr,
    TensorType,
    UnknownLoc,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

Build = Callable[[Builder, list[SSAValue]], Sequence[SSAValue]]


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def graph_module(arg_types: Sequence[Attribute], build: Build) -> ModuleOp:
    """A module with one public function @main(args) -> build(args)."""
    block = Block(arg_types=list(arg_types))
    builder = Builder(InsertPoint.at_end(block))
    results = list(build(builder, list(block.args)))
    builder.insert(func.ReturnOp(*results))
    function = func.FuncOp("main", (list(arg_types), [r.type for r in results]), Region(block))
    module = ModuleOp([function])
    module.verify()
    return module


def insert(builder: Builder, op: Operation) -> SSAValue:
    return builder.insert(op).results[0]


def random_input(rng: np.random.Generator, type: Attribute) -> np.ndarray:
    assert isinstance(type, TensorType)
    shape = tuple(type.get_shape())
    element = type.get_element_type()
    if isinstance(element, IntegerType):
        if element.width.data == 1:
            return rng.integers(0, 2, shape).astype(np.bool_)
        return rng.integers(-6, 7, shape).astype(np.int64 if element.width.data == 64 else
                                                  np.int32)
    return rng.standard_normal(shape).astype(np.float32)


def lower(module: ModuleOp, inline: tuple[str, ...] | None = None) -> ModuleOp:
    """A lowered copy of `module` (and inlined with `inline` as keep-tags, when given)."""
    lowered = module.clone()
    ConvertGraphToTensorExprPass().apply(Context(), lowered)
    lowered.verify()
    if inline is not None:
        TensorExprInlinePass(keep_tags=inline).apply(Context(), lowered)
        lowered.verify()
    assert not [op.name for op in lowered.walk() if op.name.startswith("graph.")]
    return lowered


def check(
    module: ModuleOp, seed: int = 0, rtol: float = 2e-4, atol: float = 2e-5,
    inputs: Sequence[np.ndarray] | None = None,
) -> ModuleOp:
    """Lowered (plain, inlined keeping pads, inlined fully) == graph interpreter on one input."""
    rng = np.random.default_rng(seed)
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    if inputs is None:
        inputs = [random_input(rng, t) for t in main.function_type.inputs]
    expected = run_graph(module, inputs)
    lowered = lower(module)
    for variant in (lowered, lower(module, ("pad",)), lower(module, ())):
        actual = run_te(variant, inputs)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert a.shape == e.shape and a.dtype == e.dtype
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    return lowered


def computes(module: ModuleOp) -> list[ComputeOp]:
    return [op for op in module.walk() if isinstance(op, ComputeOp)]


def tensor(shape: Sequence[int], element: Attribute = f32) -> TensorType:
    return TensorType(element, list(shape))


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

BINARY = [g.AddOp, g.SubOp, g.MulOp, g.DivOp, g.MaxOp, g.MinOp, g.PowOp]


@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """Two shapes that broadcast: a random shape and a copy with dims dropped or set to 1."""
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    other = [draw(st.sampled_from([d, 1])) for d in shape]
    other = other[draw(st.integers(0, len(other))):]
    return (shape, other) if draw(st.booleans()) else (other, shape)


@SETTINGS
@given(shapes=broadcast_pair(), op_class=st.sampled_from(BINARY), seed=st.integers(0, 99))
def test_binary_broadcast(
    shapes: tuple[list[int], list[int]], op_class: type[g.AddOp], seed: int
) -> None:
    lhs, rhs = shapes
    module = graph_module(
        [tensor(lhs), tensor(rhs)], lambda b, a: [insert(b, op_class(a[0], a[1]))]
    )
    if op_class is g.PowOp:  # positive bases only: a negative base to a float power is NaN
        inputs = [np.abs(random_input(np.random.default_rng(seed), tensor(s))) + 0.5
                  for s in (lhs, rhs)]
        check(module, seed, inputs=inputs)
    else:
        check(module, seed)


@pytest.mark.parametrize("op_class", [g.AddOp, g.SubOp, g.MulOp, g.DivOp, g.MaxOp, g.MinOp])
def test_binary_integers(op_class: type[g.AddOp]) -> None:
    module = graph_module(
        [tensor([3, 4], i32), tensor([4], i32)], lambda b, a: [insert(b, op_class(a[0], a[1]))]
    )
    rng = np.random.default_rng(1)
    rhs = rng.integers(1, 5, (4,)) * rng.choice([-1, 1], (4,))  # no division by zero
    check(module, inputs=[rng.integers(-20, 20, (3, 4)).astype(np.int32), rhs.astype(np.int32)])


@pytest.mark.parametrize("element", [i32, i64])
def test_integer_pow(element: Attribute) -> None:
    module = graph_module([tensor([6], element), tensor([6], element)],
                          lambda b, a: [insert(b, g.PowOp(a[0], a[1]))])
    dtype = to_numpy_dtype(element)
    check(module, inputs=[np.array([-5, -2, 0, 3, 7, 11], dtype),
                          np.array([3, 0, 4, 2, 1, 9], dtype)])


UNARY = [g.ReluOp, g.SigmoidOp, g.TanhOp, g.ExpOp, g.ErfOp, g.SqrtOp, g.NegOp, g.AbsOp,
         g.LogOp, g.ReciprocalOp, g.CeilOp, g.FloorOp, g.RoundOp]


@pytest.mark.parametrize("op_class", UNARY)
def test_unary(op_class: type[g.ReluOp]) -> None:
    module = graph_module([tensor([2, 3, 4])], lambda b, a: [insert(b, op_class(a[0]))])
    x = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float32) * 3
    if op_class in (g.SqrtOp, g.LogOp):
        x = np.abs(x) + 0.1
    check(module, inputs=[x])


@pytest.mark.parametrize("op_class", [g.CeilOp, g.FloorOp, g.RoundOp])
def test_rounding_at_halves_and_specials(op_class: type[g.CeilOp]) -> None:
    """Ceil, floor and round (halves to even, as ONNX Round) on integral values, halves of
    both parities and signs, infinities and NaN: lowered == graph interpreter == NumPy."""
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.0, -3.0, 0.49999997, 1e20, np.inf,
                  -np.inf, np.nan], np.float32)
    module = graph_module([tensor([x.size])], lambda b, a: [insert(b, op_class(a[0]))])
    reference = {g.CeilOp: np.ceil, g.FloorOp: np.floor, g.RoundOp: np.rint}[op_class]
    np.testing.assert_array_equal(run_graph(module, [x])[0], reference(x))
    check(module, inputs=[x])


@pytest.mark.parametrize("op_class", [g.ReluOp, g.NegOp, g.AbsOp])
def test_unary_integers(op_class: type[g.ReluOp]) -> None:
    module = graph_module([tensor([5], i64)], lambda b, a: [insert(b, op_class(a[0]))])
    check(module, inputs=[np.array([-3, -1, 0, 2, 7], dtype=np.int64)])


@pytest.mark.parametrize("element", [f32, i32])
def test_clip(element: Attribute) -> None:
    module = graph_module(
        [tensor([4, 5], element)], lambda b, a: [insert(b, g.ClipOp(a[0], -2.0, 3.0))]
    )
    check(module, seed=3)


# ---------------------------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------------------------


@st.composite
def conv_case(draw: st.DrawFn) -> dict[str, object]:
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = draw(st.booleans()) and groups > 1
    in_per_group = 1 if depthwise else draw(st.integers(1, 2))
    channels = groups * in_per_group
    out_channels = groups * draw(st.integers(1, 2))
    kernel = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    strides = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    dilation = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    padding = [draw(st.integers(0, 2)) for _ in range(4)]
    size = []
    for axis in range(2):
        extent = dilation[axis] * (kernel[axis] - 1) + 1
        least = max(1, extent - padding[axis] - padding[axis + 2])
        size.append(draw(st.integers(least, least + 4)))
    return {
        "batch": draw(st.integers(1, 2)), "channels": channels, "size": size,
        "out_channels": out_channels, "in_per_group": in_per_group, "kernel": kernel,
        "strides": strides, "dilation": dilation, "padding": padding, "groups": groups,
        "bias": draw(st.booleans()), "layout": draw(st.sampled_from(["NCHW", "NCHW", "NHWC"])),
    }


@SETTINGS
@given(case=conv_case(), seed=st.integers(0, 99))
def test_conv2d(case: dict[str, object], seed: int) -> None:
    layout = str(case["layout"])
    n, c, (h, w) = case["batch"], case["channels"], case["size"]  # type: ignore[misc]
    kh, kw = case["kernel"]  # type: ignore[misc]
    o, i = case["out_channels"], case["in_per_group"]
    x_shape = [n, c, h, w] if layout == "NCHW" else [n, h, w, c]
    w_shape = [o, i, kh, kw] if layout == "NCHW" else [kh, kw, i, o]
    types = [tensor(x_shape), tensor(w_shape)] + ([tensor([o])] if case["bias"] else [])

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        return [insert(b, g.Conv2DOp(
            a[0], a[1], a[2] if len(a) == 3 else None, strides=case["strides"],  # type: ignore
            padding=case["padding"], dilation=case["dilation"],  # type: ignore[arg-type]
            groups=case["groups"], layout=layout,  # type: ignore[arg-type]
        ))]

    lowered = check(graph_module(types, build), seed)
    names = [op.block_name.data for op in computes(lowered)]
    assert names.count("pad") == (1 if any(case["padding"]) else 0)  # type: ignore[arg-type]
    assert names.count("bias_add") == (1 if case["bias"] else 0)


def test_conv2d_tags_and_inline_keeps_pad() -> None:
    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        conv = insert(b, g.Conv2DOp(a[0], a[1], padding=(1, 1, 1, 1)))
        biased = insert(b, g.AddOp(conv, a[2]))
        return [insert(b, g.ReluOp(biased))]

    module = graph_module(
        [tensor([1, 2, 5, 5]), tensor([3, 2, 3, 3]), tensor([3, 1, 1])], build
    )
    lowered = check(module)
    assert [(c.block_name.data, c.tag and c.tag.data) for c in computes(lowered)] == [
        ("pad", "pad"), ("conv2d", "conv2d_nchw"), ("add", "injective"), ("relu", "injective"),
    ]
    inlined = lower(module, ("pad",))
    assert [c.block_name.data for c in computes(inlined)] == ["pad", "conv2d", "relu"]
    epilogue = computes(inlined)[-1]
    read_tensors = [r.tensor for r in epilogue.walk() if isinstance(r, ReadOp)]
    assert computes(inlined)[1].result in read_tensors
    assert [c.block_name.data for c in computes(lower(module, ()))] == ["conv2d", "relu"]


def test_depthwise_and_group_tags() -> None:
    def conv(groups: int) -> str:
        module = graph_module(
            [tensor([1, 4, 5, 5]), tensor([4, 4 // groups, 3, 3])],
            lambda b, a: [insert(b, g.Conv2DOp(a[0], a[1], groups=groups))],
        )
        tags = [c.tag.data for c in computes(check(module)) if c.tag is not None]
        return tags[0]

    assert conv(1) == "conv2d_nchw"
    assert conv(2) == "group_conv2d_nchw"
    assert conv(4) == "depthwise_conv2d_nchw"


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------


@st.composite
def matmul_shapes(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    m, k, n = draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    batch_a, batch_b = draw(broadcast_pair())
    lhs = [k] if draw(st.integers(0, 4)) == 0 else [*batch_a[:2], m, k]
    rhs = [k] if draw(st.integers(0, 4)) == 0 else [*batch_b[:2], k, n]
    return lhs, rhs


@SETTINGS
@given(shapes=matmul_shapes(), seed=st.integers(0, 99))
def test_matmul(shapes: tuple[list[int], list[int]], seed: int) -> None:
    lhs, rhs = shapes
    try:
        g.MatmulOp.infer_type(tensor(lhs), tensor(rhs))
    except Exception:  # batch dims that do not broadcast after truncation
        return
    module = graph_module(
        [tensor(lhs), tensor(rhs)], lambda b, a: [insert(b, g.MatmulOp(a[0], a[1]))]
    )
    check(module, seed)


# ---------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------


@st.composite
def pool_case(draw: st.DrawFn) -> dict[str, object]:
    kernel = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    dilation = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    padding = [draw(st.integers(0, k - 1)) for k in kernel * 2]
    size = [draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(kernel, dilation, strict=True)]
    return {
        "kernel": kernel, "strides": [draw(st.integers(1, 3)), draw(st.integers(1, 3))],
        "dilation": dilation, "padding": padding, "size": size,
        "ceil_mode": draw(st.booleans()), "layout": draw(st.sampled_from(["NCHW", "NHWC"])),
        "count_include_pad": draw(st.booleans()),
    }


def _pool_input(case: dict[str, object]) -> TensorType:
    h, w = case["size"]  # type: ignore[misc]
    return tensor([2, 3, h, w] if case["layout"] == "NCHW" else [2, h, w, 3])


@SETTINGS
@given(case=pool_case(), seed=st.integers(0, 99))
def test_max_pool2d(case: dict[str, object], seed: int) -> None:
    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        return [insert(b, g.MaxPool2DOp(
            a[0], kernel=case["kernel"], strides=case["strides"],  # type: ignore[arg-type]
            padding=case["padding"], dilation=case["dilation"],  # type: ignore[arg-type]
            ceil_mode=bool(case["ceil_mode"]), layout=str(case["layout"]),
        ))]

    try:
        module = graph_module([_pool_input(case)], build)
    except Exception:  # a padding the verifier rejects for this window
        return
    check(module, seed)


@SETTINGS
@given(case=pool_case(), seed=st.integers(0, 99))
def test_avg_pool2d(case: dict[str, object], seed: int) -> None:
    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        return [insert(b, g.AvgPool2DOp(
            a[0], kernel=case["kernel"], strides=case["strides"],  # type: ignore[arg-type]
            padding=case["padding"], ceil_mode=bool(case["ceil_mode"]),  # type: ignore[arg-type]
            count_include_pad=bool(case["count_include_pad"]), layout=str(case["layout"]),
        ))]

    try:
        module = graph_module([_pool_input(case)], build)
    except Exception:
        return
    check(module, seed)


@pytest.mark.parametrize("include_pad", [False, True])
def test_avg_pool2d_ceil_mode_divisors(include_pad: bool) -> None:
    """Border windows of a padded ceil-mode pool count fewer elements: index arithmetic."""
    module = graph_module([tensor([1, 1, 6, 6])], lambda b, a: [insert(b, g.AvgPool2DOp(
        a[0], kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), ceil_mode=True,
        count_include_pad=include_pad,
    ))])
    lowered = check(module)
    divide = computes(lowered)[-1]
    assert any(op.name == "arith.sitofp" for op in divide.walk())


def test_global_avg_pool2d() -> None:
    for layout, shape in (("NCHW", [2, 3, 4, 5]), ("NHWC", [2, 4, 5, 3])):
        module = graph_module([tensor(shape)], lambda b, a, layout=layout: [
            insert(b, g.GlobalAvgPool2DOp(a[0], layout=layout))
        ])
        check(module)


# ---------------------------------------------------------------------------------------------
# Normalization and reductions
# ---------------------------------------------------------------------------------------------


def test_batch_norm() -> None:
    module = graph_module(
        [tensor([2, 3, 4, 4])] + [tensor([3])] * 4,
        lambda b, a: [insert(b, g.BatchNormOp(*a, epsilon=1e-3))],
    )
    rng = np.random.default_rng(4)
    inputs = [random_input(rng, tensor(s)) for s in ([2, 3, 4, 4], [3], [3], [3])]
    inputs.append(np.abs(random_input(rng, tensor([3]))) + 0.1)
    check(module, inputs=inputs)


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_softmax(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    module = graph_module([tensor(shape)], lambda b, a: [insert(b, g.SoftmaxOp(a[0], axis))])
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 30
    lowered = check(module, inputs=[x])
    assert [c.tag.data for c in computes(lowered) if c.tag] == [
        "softmax_max", "softmax_exp", "softmax_sum", "softmax_norm"
    ]


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    kind=st.sampled_from(["sum", "mean", "max", "min", "prod"]),
    keepdims=st.booleans(), integer=st.booleans(), data=st.data(),
)
def test_reduce(
    shape: list[int], kind: str, keepdims: bool, integer: bool, data: st.DataObject
) -> None:
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    axes = [a - len(shape) if data.draw(st.booleans()) else a for a in axes]
    element = i32 if integer else f32
    module = graph_module(
        [tensor(shape, element)], lambda b, a: [insert(b, g.ReduceOp(a[0], kind, axes, keepdims))]
    )
    check(module, data.draw(st.integers(0, 99)), rtol=1e-3)


def test_booleans_reduce_compare_and_select_as_logic() -> None:
    """i1 max/min are or/and although integer combiners and maxsi/minsi are signed (true = -1)."""

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        x, y = a
        topk = b.insert(tg.TopKOp(x, 2, 1))
        return [
            insert(b, g.ReduceOp(x, "max", [1], False)), insert(b, g.ReduceOp(x, "min", [0])),
            insert(b, g.ReduceOp(x, "prod", [1])), insert(b, g.MaxOp(x, y)),
            insert(b, g.MinOp(x, y)), insert(b, tg.ArgMaxOp(x, 1)), *topk.results,
            insert(b, tg.CompareOp(x, y, "lt")),
        ]

    module = graph_module([tensor([4, 3], i1), tensor([3], i1)], build)
    x = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1], [1, 0, 1]], dtype=np.bool_)
    check(module, inputs=[x, np.array([1, 0, 1], dtype=np.bool_)])


# ---------------------------------------------------------------------------------------------
# Injective: reshape, flatten, transpose, concat
# ---------------------------------------------------------------------------------------------


@st.composite
def reshape_case(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    factors = draw(st.lists(st.sampled_from([1, 2, 2, 3, 5]), min_size=1, max_size=5))

    def split(values: list[int]) -> list[int]:
        shape: list[int] = []
        for value in values:
            if shape and draw(st.booleans()):
                shape[-1] *= value
            else:
                shape.append(value)
        return shape

    source = split(factors)
    target = split(draw(st.permutations(factors)))
    return source, target


@SETTINGS
@given(case=reshape_case(), seed=st.integers(0, 99))
def test_reshape(case: tuple[list[int], list[int]], seed: int) -> None:
    source, target = case
    module = graph_module([tensor(source)], lambda b, a: [insert(b, g.ReshapeOp(a[0], target))])
    check(module, seed)


def test_reshape_merging_axes_needs_no_index_arithmetic_elsewhere() -> None:
    module = graph_module(
        [tensor([2, 3, 4, 5])], lambda b, a: [insert(b, g.ReshapeOp(a[0], [6, 4, 5]))]
    )
    body_ops = [op.name for op in computes(check(module))[0].walk()]
    assert body_ops.count("arith.divui") == 1 and body_ops.count("arith.remui") == 1


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=4), data=st.data())
def test_flatten(shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape)))
    module = graph_module([tensor(shape)], lambda b, a: [insert(b, g.FlattenOp(a[0], axis))])
    check(module)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_transpose(shape: list[int], data: st.DataObject) -> None:
    perm = data.draw(st.permutations(list(range(len(shape)))))
    module = graph_module([tensor(shape)], lambda b, a: [insert(b, g.TransposeOp(a[0], perm))])
    check(module)


@SETTINGS
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    sizes=st.lists(st.integers(0, 3), min_size=1, max_size=4), data=st.data(),
)
def test_concat(shape: list[int], sizes: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1))
    if sum(sizes) == 0:
        sizes[0] = 1
    types = [tensor([*shape[:axis], size, *shape[axis + 1 :]]) for size in sizes]
    negative = data.draw(st.booleans())
    module = graph_module(
        types, lambda b, a: [insert(b, g.ConcatOp(a, axis - len(shape) if negative else axis))]
    )
    check(module)


# ---------------------------------------------------------------------------------------------
# ONNX tensor ops: cast, compare, where, broadcast_to, gather, slice, pad, resize, argmax, topk,
# conv_transpose2d
# ---------------------------------------------------------------------------------------------

CAST_TYPES = [f32, f64, f16, i64, i32, i8, i1]


@pytest.mark.parametrize("source", CAST_TYPES)
def test_cast(source: Attribute) -> None:
    values = np.array([-2.7, -1.0, -0.5, 0.0, 0.4, 1.0, 2.5, 100.0])
    x = values.astype(to_numpy_dtype(source))
    for target in CAST_TYPES:
        module = graph_module([tensor([8], source)],
                              lambda b, a, t=target: [insert(b, tg.CastOp(a[0], t))])
        check(module, inputs=[x])


@SETTINGS
@given(shapes=broadcast_pair(), predicate=st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]),
       element=st.sampled_from([f32, i32, i1]), seed=st.integers(0, 99))
def test_compare(
    shapes: tuple[list[int], list[int]], predicate: str, element: Attribute, seed: int
) -> None:
    lhs, rhs = shapes
    module = graph_module([tensor(lhs, element), tensor(rhs, element)],
                          lambda b, a: [insert(b, tg.CompareOp(a[0], a[1], predicate))])
    rng = np.random.default_rng(seed)
    inputs = [random_input(rng, tensor(s, element)) for s in (lhs, rhs)]
    if element == f32:  # ties and NaNs
        for x in inputs:
            x[...] = np.round(x)
            x[x > 1] = np.nan
    check(module, inputs=inputs)


@SETTINGS
@given(shapes=broadcast_pair(), data=st.data())
def test_where_and_broadcast_to(shapes: tuple[list[int], list[int]], data: st.DataObject) -> None:
    small, large = sorted(shapes, key=len)
    target = shapes[0] if len(shapes[0]) >= len(shapes[1]) else shapes[1]
    target = [max(a, b) for a, b in zip(target, broadcast_shape(*shapes), strict=True)]
    module = graph_module(
        [tensor(small, i1), tensor(large), tensor([])],
        lambda b, a: [insert(b, tg.WhereOp(a[0], a[1], a[2])),
                      insert(b, tg.BroadcastToOp(a[1], target))],
    )
    check(module, data.draw(st.integers(0, 99)))


def broadcast_shape(lhs: list[int], rhs: list[int]) -> list[int]:
    return list(np.broadcast_shapes(tuple(lhs), tuple(rhs)))


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       index_shape=st.lists(st.integers(1, 3), max_size=2), data=st.data())
def test_gather(shape: list[int], index_shape: list[int], data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = shape[axis]
    element = data.draw(st.sampled_from([i64, i32]))
    module = graph_module([tensor(shape), tensor(index_shape, element)],
                          lambda b, a: [insert(b, tg.GatherOp(a[0], a[1], axis))])
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    indices = rng.integers(-dim, dim, index_shape).astype(to_numpy_dtype(element))
    check(module, inputs=[random_input(rng, tensor(shape)), indices])


@st.composite
def slice_case(draw: st.DrawFn) -> tuple[list[int], list[int], list[int], list[int]]:
    shape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    starts, sizes, steps = [], [], []
    for dim in shape:
        step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
        start = draw(st.integers(0, dim - 1))
        room = start // -step + 1 if step < 0 else (dim - 1 - start) // step + 1
        starts.append(start)
        steps.append(step)
        sizes.append(draw(st.integers(0, room)))
    return shape, starts, sizes, steps


@SETTINGS
@given(case=slice_case(), seed=st.integers(0, 99))
def test_slice(case: tuple[list[int], list[int], list[int], list[int]], seed: int) -> None:
    shape, starts, sizes, steps = case
    module = graph_module([tensor(shape)],
                          lambda b, a: [insert(b, tg.SliceOp(a[0], starts, sizes, steps))])
    check(module, seed)


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       mode=st.sampled_from(["constant", "reflect", "edge", "wrap"]), data=st.data())
def test_pad(shape: list[int], mode: str, data: st.DataObject) -> None:
    limit = (lambda d: d - 1) if mode == "reflect" else (lambda d: 2 * d + 1)
    before = [data.draw(st.integers(0, limit(d))) for d in shape]
    after = [data.draw(st.integers(0, limit(d))) for d in shape]
    element = data.draw(st.sampled_from([f32, i32]))
    module = graph_module([tensor(shape, element)], lambda b, a: [
        insert(b, tg.PadOp(a[0], [*before, *after], mode, value=-1.5))])
    lowered = check(module, data.draw(st.integers(0, 99)))
    assert [c.tag.data for c in computes(lowered) if c.tag] == ["pad"]


@st.composite
def resize_case(draw: st.DrawFn) -> dict[str, object]:
    mode = draw(st.sampled_from(["nearest", "linear", "cubic"]))
    shape = [1, draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(1, 5))]
    scales = [1.0, 1.0] + [draw(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 3.0]))
                           for _ in range(2)]
    sizes = [*shape[:2], *(max(1, int(d * s)) for d, s in zip(shape[2:], scales[2:],
                                                               strict=True))]
    return {
        "shape": shape, "sizes": sizes, "scales": scales, "mode": mode,
        "coordinate_transformation_mode": draw(st.sampled_from([
            "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
            "asymmetric", "tf_half_pixel_for_nn"])),
        "nearest_mode": draw(st.sampled_from([
            "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])),
        "exclude_outside": mode == "cubic" and draw(st.booleans()),
        "antialias": mode != "nearest" and draw(st.booleans()),
        "cubic_coeff_a": draw(st.sampled_from([-0.75, -0.5])),
    }


@SETTINGS
@given(case=resize_case(), seed=st.integers(0, 99))
def test_resize(case: dict[str, object], seed: int) -> None:
    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        return [insert(b, tg.ResizeOp(
            a[0], case["sizes"], case["scales"], mode=str(case["mode"]),  # type: ignore[arg-type]
            coordinate_transformation_mode=str(case["coordinate_transformation_mode"]),
            nearest_mode=str(case["nearest_mode"]), cubic_coeff_a=float(case["cubic_coeff_a"]),
            exclude_outside=bool(case["exclude_outside"]), antialias=bool(case["antialias"]),
        ))]

    module = graph_module([tensor(case["shape"])], build)  # type: ignore[arg-type]
    check(module, seed, rtol=1e-4, atol=1e-5)


COORDINATE_MODES = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                    "asymmetric", "tf_half_pixel_for_nn"]


@pytest.mark.parametrize("coordinates", COORDINATE_MODES)
def test_resize_every_mode(coordinates: str) -> None:
    """Every coordinate mode with every rounding (scale 2 and 1.5 hit the .5 ties), linear, and
    cubic with and without exclude_outside; up- and down-sampling."""
    x = np.random.default_rng(9).standard_normal((1, 1, 4, 5)).astype(np.float32)
    variants = [("nearest", rounding, False) for rounding in
                ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")]
    variants += [("linear", "floor", False), ("cubic", "floor", False), ("cubic", "floor", True)]
    for mode, rounding, exclude in variants:
        for sizes, scales in (([8, 10], [2.0, 2.0]), ([6, 3], [1.5, 0.6])):
            module = graph_module([tensor(x.shape)], lambda b, a, sizes=sizes, scales=scales,
                                  mode=mode, rounding=rounding, exclude=exclude: [
                insert(b, tg.ResizeOp(a[0], [1, 1, *sizes], [1.0, 1.0, *scales], mode=mode,
                                      coordinate_transformation_mode=coordinates,
                                      nearest_mode=rounding, exclude_outside=exclude))])
            check(module, inputs=[x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_tf_crop_and_resize(mode: str) -> None:
    """A region of interest partly outside the input: those outputs are extrapolation_value."""
    x = np.random.default_rng(10).standard_normal((1, 1, 4, 5)).astype(np.float32)
    for roi in ([0, 0, 0.2, -0.3, 1, 1, 0.9, 1.4], [0, 0, 1.0, 0.0, 1, 1, 0.0, 1.0],
                [0, 0, 0, 0, 1, 1, 1, 1]):
        module = graph_module([tensor(x.shape)], lambda b, a, roi=roi: [
            insert(b, tg.ResizeOp(a[0], [1, 1, 5, 7], [1.0, 1.0, 1.25, 1.4], mode=mode,
                                  coordinate_transformation_mode="tf_crop_and_resize",
                                  roi=roi, extrapolation_value=-7.0))])
        check(module, inputs=[x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias(mode: str) -> None:
    x = np.random.default_rng(11).standard_normal((1, 2, 9, 8)).astype(np.float32)
    for sizes, scales in (([3, 5], [1 / 3, 0.625]), ([18, 4], [2.0, 0.5])):
        module = graph_module([tensor(x.shape)], lambda b, a, sizes=sizes, scales=scales: [
            insert(b, tg.ResizeOp(a[0], [1, 2, *sizes], [1.0, 1.0, *scales], mode=mode,
                                  antialias=True))])
        check(module, inputs=[x], rtol=1e-4, atol=1e-5)


def test_resize_nearest_on_integers_is_a_gather() -> None:
    module = graph_module([tensor([1, 1, 2, 3], i32)], lambda b, a: [insert(b, tg.ResizeOp(
        a[0], [1, 1, 4, 6], [1.0, 1.0, 2.0, 2.0]))])
    lowered = check(module)
    assert not computes(lowered)[0].get_reduce_extents()


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), keepdims=st.booleans(),
       last=st.booleans(), integer=st.booleans(), data=st.data())
def test_argmax(
    shape: list[int], keepdims: bool, last: bool, integer: bool, data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    element = i32 if integer else f32
    module = graph_module([tensor(shape, element)],
                          lambda b, a: [insert(b, tg.ArgMaxOp(a[0], axis, keepdims, last))])
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = rng.integers(-2, 3, shape).astype(to_numpy_dtype(element))  # ties
    check(module, inputs=[x])


@SETTINGS
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), largest=st.booleans(),
       integer=st.booleans(), data=st.data())
def test_topk(shape: list[int], largest: bool, integer: bool, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    element = i32 if integer else f32

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        op = b.insert(tg.TopKOp(a[0], k, axis, largest))
        return [op.values, op.indices]

    module = graph_module([tensor(shape, element)], build)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = rng.integers(-3, 4, shape).astype(to_numpy_dtype(element))  # ties keep input order
    if not integer:  # NaN ranks above every number, ±inf and ±0 among them
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
        mask = rng.random(shape) < 0.3
        x[mask] = rng.choice(specials, int(mask.sum()))
    check(module, inputs=[x])


@st.composite
def conv_transpose_case(draw: st.DrawFn) -> dict[str, object]:
    groups = draw(st.sampled_from([1, 1, 2]))
    strides = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    return {
        "groups": groups, "channels": groups * draw(st.integers(1, 2)),
        "outs_per_group": draw(st.integers(1, 2)),
        "size": [draw(st.integers(1, 4)), draw(st.integers(1, 4))],
        "kernel": [draw(st.integers(1, 3)), draw(st.integers(1, 3))],
        "strides": strides, "dilation": [draw(st.integers(1, 2)), draw(st.integers(1, 2))],
        "padding": [draw(st.integers(0, 1)) for _ in range(4)],
        "output_padding": [draw(st.integers(0, s - 1)) for s in strides],
        "bias": draw(st.booleans()),
    }


@SETTINGS
@given(case=conv_transpose_case(), seed=st.integers(0, 99))
def test_conv_transpose2d(case: dict[str, object], seed: int) -> None:
    c, opg, groups = case["channels"], case["outs_per_group"], case["groups"]
    kh, kw = case["kernel"]  # type: ignore[misc]
    types = [tensor([2, c, *case["size"]]), tensor([c, opg, kh, kw])]  # type: ignore[list-item]
    if case["bias"]:
        types.append(tensor([opg * groups]))  # type: ignore[operator]

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        return [insert(b, tg.ConvTranspose2DOp(
            a[0], a[1], a[2] if len(a) == 3 else None, strides=case["strides"],  # type: ignore
            padding=case["padding"], output_padding=case["output_padding"],  # type: ignore
            dilation=case["dilation"], groups=groups,  # type: ignore[arg-type]
        ))]

    try:
        module = graph_module(types, build)
    except Exception:  # cropped to nothing
        return
    check(module, seed)


# ---------------------------------------------------------------------------------------------
# Constants, fused groups, names
# ---------------------------------------------------------------------------------------------


def test_constant_keeps_the_elements_attribute() -> None:
    weights = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        return [insert(b, g.MatmulOp(a[0], insert(b, g.ConstantOp.from_array(weights))))]

    module = graph_module([tensor([2, 3])], build)
    original = next(op for op in module.walk() if isinstance(op, g.ConstantOp)).value
    lowered = check(module)
    constants = [op for op in lowered.walk() if isinstance(op, arith.ConstantOp)
                 and isinstance(op.result.type, TensorType)]
    assert len(constants) == 1 and constants[0].value is original
    assert isinstance(original, DenseIntOrFPElementsAttr)


def test_dense_resource_constant() -> None:
    weights = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        c = insert(b, g.ConstantOp.from_array(weights, resource="topi_test_weights"))
        return [insert(b, g.AddOp(a[0], c))]

    check(graph_module([tensor([2, 3])], build))


def _fused_module(name: str | None) -> ModuleOp:
    """@main(x) calls a fused group conv2d + add + relu, then a second group exp."""

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        weight = insert(b, g.ConstantOp.from_array(
            np.random.default_rng(6).standard_normal((2, 1, 3, 3)).astype(np.float32)))
        body = Block(arg_types=[a[0].type, weight.type])
        inner = Builder(InsertPoint.at_end(body))
        conv = insert(inner, g.Conv2DOp(body.args[0], body.args[1], padding=(1, 1, 1, 1)))
        relu = insert(inner, g.ReluOp(insert(inner, g.AddOp(conv, conv))))
        inner.insert(g.YieldOp(relu))
        fused = insert(b, g.FusedOp([a[0], weight], [relu.type], body, name=name))
        body2 = Block(arg_types=[fused.type])
        inner2 = Builder(InsertPoint.at_end(body2))
        inner2.insert(g.YieldOp(insert(inner2, g.ExpOp(body2.args[0]))))
        return [insert(b, g.FusedOp([fused], [fused.type], body2))]

    return graph_module([tensor([1, 1, 4, 4])], build)


def test_fused_groups_become_private_functions_and_calls() -> None:
    lowered = check(_fused_module("fused_conv2d_add_relu"))
    functions = [op for op in lowered.ops if isinstance(op, func.FuncOp)]
    names = [f.sym_name.data for f in functions]
    assert names == ["main", "fused_conv2d_add_relu_0", "fused_exp_0"]
    assert all(f.sym_visibility and f.sym_visibility.data == "private" for f in functions[1:])
    calls = [op.callee.string_value() for op in lowered.walk() if isinstance(op, func.CallOp)]
    assert calls == ["fused_conv2d_add_relu_0", "fused_exp_0"]
    unnamed = lower(_fused_module(None))
    assert "fused_conv2d_add_relu_0" in [
        op.sym_name.data for op in unnamed.ops if isinstance(op, func.FuncOp)
    ]


def test_onnx_node_name_and_location_are_carried() -> None:
    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        relu = b.insert(g.ReluOp(a[0]))
        relu.location = NameLoc(StringAttr("Relu_7"), UnknownLoc())
        return [relu.result]

    lowered = lower(graph_module([tensor([3])], build))
    (compute,) = computes(lowered)
    assert compute.attributes["onnx_node"] == StringAttr("Relu_7")
    assert compute.location == NameLoc(StringAttr("Relu_7"), UnknownLoc())


# ---------------------------------------------------------------------------------------------
# Failures
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class _UndefinedOp(g.GraphOp):
    """A graph op with no compute definition (test only)."""

    name = "graph.test_undefined"
    x = operand_def(TensorType)
    result = result_def(TensorType)

    def inferred_result_type(self) -> TensorType:
        return self.x.type  # type: ignore[return-value]


def test_op_without_definition_fails_naming_it() -> None:
    module = graph_module(
        [tensor([2])],
        lambda b, a: [insert(b, _UndefinedOp.create(operands=[a[0]], result_types=[a[0].type]))],
    )
    with pytest.raises(PassFailedException, match="'graph.test_undefined' op has no compute"):
        lower(module)


def test_unranked_tensor_fails() -> None:
    from xdsl.dialects.builtin import UnrankedTensorType

    unranked = UnrankedTensorType(f32)  # a dynamic dim is a runtime extent: that lowers
    block = Block(arg_types=[unranked])
    block.add_op(func.ReturnOp(block.args[0]))
    module = ModuleOp([func.FuncOp("dyn", ([unranked], [unranked]), Region(block))])
    with pytest.raises(PassFailedException, match=r"expected ranked tensors, found tensor<\*xf32>"):
        lower(module)


def test_a_result_with_rows_no_operand_has_fails() -> None:
    from dlc.rewrites.topi.common import emit_compute

    block = Block(arg_types=[TensorType(f32, [4])])
    builder = Builder(InsertPoint.at_end(block))
    origin = func.ReturnOp(block.args[0])
    with pytest.raises(PassFailedException, match="expected an operand with a dynamic dim 0"):
        emit_compute(builder, origin, "spread", TensorType(f32, [-1, 4]),
                     lambda b, i, r: b.insert(arith.ConstantOp(FloatAttr(0.0, f32))).result,
                     tag="injective")


def test_signed_elements_fail() -> None:
    s8 = IntegerType(8, Signedness.SIGNED)
    module = graph_module(
        [tensor([2], s8), tensor([2], s8)], lambda b, a: [insert(b, g.AddOp(a[0], a[1]))]
    )
    with pytest.raises(PassFailedException, match="'graph.add' op expected a float, signless or "
                       "unsigned integer element type, found si8"):
        lower(module)


UNSIGNED = [IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64)]


def unsigned_input(rng: np.random.Generator, shape: Sequence[int], element: IntegerType
                   ) -> np.ndarray:
    """Values over the whole unsigned range, half of them with the top bit set (where signed
    and unsigned semantics differ)."""
    width = element.width.data
    dtype = np.dtype(f"uint{width}")
    low = rng.integers(1, 1 << min(width - 1, 62), shape, dtype=np.uint64)
    top = np.uint64(1) << np.uint64(width - 1)
    values = np.where(rng.integers(0, 2, shape) == 1, low | top, low)
    return values.astype(dtype)


def _unsigned_pair(element: IntegerType) -> list[np.ndarray]:
    rng = np.random.default_rng(element.width.data)
    return [unsigned_input(rng, [3, 4], element), unsigned_input(rng, [4], element)]


@pytest.mark.parametrize("element", UNSIGNED, ids=str)
@pytest.mark.parametrize("op_class", [g.AddOp, g.SubOp, g.MulOp, g.DivOp, g.MaxOp, g.MinOp])
def test_binary_unsigned(op_class: type[g.AddOp], element: IntegerType) -> None:
    """Unsigned tensors compute with the unsigned ops (divui, maxui, minui) on signless
    integers; the public function's unsigned arguments and results carry dlc.unsigned."""
    module = graph_module(
        [tensor([3, 4], element), tensor([4], element)],
        lambda b, a: [insert(b, op_class(a[0], a[1]))],
    )
    lowered = check(module, inputs=_unsigned_pair(element))
    main = next(op for op in lowered.ops if isinstance(op, func.FuncOp))
    assert all(isinstance(t, TensorType) and t.get_element_type() == IntegerType(
        element.width.data) for t in (*main.function_type.inputs, *main.function_type.outputs))
    assert main.arg_attrs is not None and main.res_attrs is not None
    assert all("dlc.unsigned" in d.data for d in (*main.arg_attrs, *main.res_attrs))
    names = {op.name for op in lowered.walk()}
    if op_class in (g.DivOp, g.MaxOp, g.MinOp):
        assert {"arith.divui", "arith.maxui", "arith.minui"} & names


@pytest.mark.parametrize("element", UNSIGNED, ids=str)
@pytest.mark.parametrize("predicate", ["lt", "le", "gt", "ge", "eq"])
def test_compare_unsigned(element: IntegerType, predicate: str) -> None:
    module = graph_module(
        [tensor([3, 4], element), tensor([4], element)],
        lambda b, a: [insert(b, tg.CompareOp(a[0], a[1], predicate))],
    )
    check(module, inputs=_unsigned_pair(element))


@pytest.mark.parametrize("element", UNSIGNED, ids=str)
@pytest.mark.parametrize("target", [f32, f64, i64, IntegerType(8), IntegerType(1)], ids=str)
def test_cast_from_unsigned(element: IntegerType, target: Attribute) -> None:
    """Unsigned sources zero-extend and convert to float as unsigned (a uint8 200 is 200.0)."""
    module = graph_module(
        [tensor([3, 4], element)], lambda b, a: [insert(b, tg.CastOp(a[0], target))]
    )
    check(module, inputs=_unsigned_pair(element)[:1], rtol=1e-6, atol=0)


@pytest.mark.parametrize("target", UNSIGNED, ids=str)
def test_cast_to_unsigned(target: IntegerType) -> None:
    module = graph_module([tensor([6], f32)], lambda b, a: [insert(b, tg.CastOp(a[0], target))])
    check(module, inputs=[np.array([0.0, 1.5, 100.7, 200.2, 254.9, 3.0], np.float32)])


def test_unsigned_reductions_topk_and_clip() -> None:
    """max/min reductions over unsigned integers combine with maxui/minui; TopK ranks as
    unsigned; Clip bounds compare as unsigned."""
    u8 = UNSIGNED[0]
    x = np.array([[1, 200, 7, 128], [255, 0, 3, 129], [5, 6, 250, 4]], np.uint8)

    def build(b: Builder, a: list[SSAValue]) -> list[SSAValue]:
        values, indices = b.insert(tg.TopKOp(a[0], 2)).results
        return [
            insert(b, g.ReduceOp(a[0], "max", [1])),
            insert(b, g.ReduceOp(a[0], "min", [1])),
            values, indices,
            insert(b, g.ClipOp(a[0], 5, 200)),
        ]

    lowered = check(graph_module([tensor([3, 4], u8)], build), inputs=[x])
    combiners = {c.combiner.data for c in computes(lowered) if c.combiner is not None}
    assert {"maxui", "minui"} <= combiners


def test_every_graph_op_has_a_definition() -> None:
    from dlc.dialects.graph import Graph, IfOp, LoopOp

    defined = set(defined_op_types())
    structural = {g.FusedOp, g.YieldOp, IfOp, LoopOp}  # IfOp, LoopOp: rewrites/control_flow.py
    missing = [op.name for op in Graph.operations if op not in defined | structural]
    assert not missing, f"graph ops without a compute definition: {missing}"


# ---------------------------------------------------------------------------------------------
# The tensor_expr interpreter itself
# ---------------------------------------------------------------------------------------------


def test_interpreter_rejects_out_of_bounds_reads() -> None:
    source = tensor([4])
    block = Block(arg_types=[source])
    outer = Builder(InsertPoint.at_end(block))

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        one = b.insert(arith.ConstantOp.from_int_and_width(1, IndexType())).result
        shifted = b.insert(arith.AddiOp(i[0], one)).result  # reads x[4] at i = 3
        return b.insert(ReadOp(block.args[0], [shifted])).result

    compute = outer.insert(ComputeOp.build("shift", source, body))
    with pytest.raises(TensorExprInterpreterError, match="out of bounds"):
        evaluate_compute(compute, {block.args[0]: np.zeros(4, np.float32)})


def test_interpreter_matches_a_direct_loop_on_a_reduction() -> None:
    module = graph_module([tensor([3, 4]), tensor([4, 2])],
                          lambda b, a: [insert(b, g.MatmulOp(a[0], a[1]))])
    lowered = lower(module)
    rng = np.random.default_rng(8)
    a, w = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(
        np.float32)
    expected = np.zeros((3, 2), np.float32)
    for i in range(3):
        for j in range(2):
            expected[i, j] = math.fsum(float(a[i, k] * w[k, j]) for k in range(4))
    np.testing.assert_allclose(run_te(lowered, [a, w])[0], expected, rtol=1e-5, atol=1e-6)
