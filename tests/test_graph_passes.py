"""Graph-level passes against the graph interpreter: results before and after on random inputs.

Each pass runs on random graphs (hypothesis) and on a ResNet-style network; the interpreter's
results must not change (bit for bit for passes that only move data, within float32 rounding for
the ones that refold arithmetic), and each pass's structural promise is checked on the output.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.attrs import FusionKind, fusion_kind
from dlc.dialects.graph.interpreter import run_module
from dlc.dialects.graph.ops import (
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    ConcatOp,
    ConstantOp,
    Conv2DOp,
    Conv2DWinogradOp,
    ExpOp,
    FlattenOp,
    FusedOp,
    GlobalAvgPool2DOp,
    MatmulOp,
    MaxPool2DOp,
    MulOp,
    NegOp,
    ReduceOp,
    ReluOp,
    ReshapeOp,
    SigmoidOp,
    SoftmaxOp,
    SubOp,
    TransposeOp,
    YieldOp,
)
from dlc.pipelines import parse_pipeline
from dlc.rewrites import get_all_passes
from dlc.rewrites.graph_fuse_ops import is_fusable, rows_of
from dlc.tools.check_semantics import random_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, bf16, f16, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# ---------------------------------------------------------------------------------------------
# Building, running and comparing
# ---------------------------------------------------------------------------------------------


class GraphBuilder:
    """Appends graph ops to a function body; `finish` returns the verified module."""

    def __init__(self, *arg_shapes: Sequence[int]) -> None:
        from xdsl.dialects.builtin import TensorType, f32

        self.block = Block(arg_types=[TensorType(f32, list(s)) for s in arg_shapes])
        self.args = list(self.block.args)

    def __call__(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, array: np.ndarray) -> SSAValue:
        return self(ConstantOp.from_array(np.asarray(array)))

    def finish(self, *results: SSAValue) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*results))
        function = func.FuncOp(
            "main",
            FunctionType.from_lists([a.type for a in self.args], [r.type for r in results]),
            Region(self.block),
        )
        module = ModuleOp([function])
        module.verify()
        return module


def apply(module: ModuleOp, spec: str) -> ModuleOp:
    """Run the pipeline `spec` on `module` in place, verify, and return it."""
    PassPipeline(parse_pipeline(spec)).apply(make_context(), module)
    module.verify()
    return module


def inputs_for(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    function = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
    return random_inputs(function, np.random.default_rng(seed))


def check_pass(
    module: ModuleOp, spec: str, exact: bool = False, rtol: float = 1e-4, atol: float = 1e-5
) -> ModuleOp:
    """Apply `spec`; the interpreter's results on random inputs must not change."""
    inputs = inputs_for(module)
    before = run_module(module, inputs)
    after = run_module(apply(module, spec), inputs)
    assert len(before) == len(after)
    for expected, actual in zip(before, after, strict=True):
        assert expected.shape == actual.shape and expected.dtype == actual.dtype
        if exact:
            np.testing.assert_array_equal(actual, expected)
        else:
            scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
            np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale)
    return module


def graph_ops(module: ModuleOp, kind: type[Operation] | None = None) -> list[Operation]:
    """The graph ops of the module (nested ones too), optionally only of one class."""
    return [
        op for op in module.walk()
        if op.dialect_name() == "graph" and (kind is None or isinstance(op, kind))
    ]


def op_counts(module: ModuleOp) -> collections.Counter[str]:
    return collections.Counter(op.name for op in graph_ops(module))


def text(module: ModuleOp) -> str:
    from io import StringIO

    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


class Case:
    """A generated module that hypothesis reports as its IR text."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.ir = text(module)

    def __repr__(self) -> str:
        return self.ir


# ---------------------------------------------------------------------------------------------
# graph-fold-constants
# ---------------------------------------------------------------------------------------------

_SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def constant_chains(draw: st.DrawFn) -> Case:
    """x + f(c) where f is a random chain of foldable ops on a constant."""
    shape = draw(_SHAPES)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    b = GraphBuilder(shape)
    value = b.const(rng.standard_normal(shape).astype(np.float32))
    current = shape
    steps = draw(st.integers(1, 5))
    for _ in range(steps):
        choice = draw(st.sampled_from(["transpose", "reshape", "neg", "mul", "add", "concat"]))
        if choice == "transpose":
            perm = draw(st.permutations(range(len(current))))
            value = b(TransposeOp(value, perm))
        elif choice == "reshape":
            value = b(ReshapeOp(value, [-1]))
        elif choice == "neg":
            value = b(NegOp(value))
        elif choice == "concat":
            value = b(ConcatOp([value, value], 0))
        else:
            other = b.const(rng.standard_normal(current).astype(np.float32))
            value = b((MulOp if choice == "mul" else AddOp)(value, other))
        current = tuple(value.type.get_shape())  # type: ignore[attr-defined]
    # Bring the folded value back to the input's shape so that it meets x.
    value = b(ReshapeOp(value, [math.prod(current)]))
    count = math.prod(shape)
    value = b(ReshapeOp(b(ReduceOp(b(ReshapeOp(value, [-1, count])), "sum", [0])), shape))
    return Case(b.finish(b(AddOp(b.args[0], value))))


@SETTINGS
@given(constant_chains())
def test_fold_constants_folds_whole_chains_exactly(case: Case) -> None:
    module = case.module
    check_pass(module, "graph-fold-constants", exact=True)
    remaining = collections.Counter(op.name for op in graph_ops(module))
    assert remaining == {"graph.constant": 1, "graph.add": 1}, remaining


@SETTINGS
@given(constant_chains(), st.integers(1, 16))
def test_fold_constants_respects_size_limit(case: Case, limit: int) -> None:
    module = case.module
    sizes_before = {
        id(op): math.prod(op.result.type.get_shape()) for op in graph_ops(module, ConstantOp)
    }
    check_pass(module, f"graph-fold-constants{{size-limit={limit}}}", exact=True)
    for op in graph_ops(module, ConstantOp):
        size = math.prod(op.result.type.get_shape())  # type: ignore[attr-defined]
        assert id(op) in sizes_before or size <= limit


def test_fold_constants_leaves_ops_the_interpreter_cannot_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dlc.dialects.graph import interpreter

    monkeypatch.delitem(interpreter.IMPLEMENTATIONS, NegOp)
    b = GraphBuilder((2,))
    negated = b(NegOp(b.const(np.arange(2, dtype=np.float32))))
    module = b.finish(b(AddOp(b.args[0], b(ExpOp(negated)))))
    apply(module, "graph-fold-constants")
    assert op_counts(module) == {"graph.constant": 1, "graph.neg": 1, "graph.exp": 1,
                                 "graph.add": 1}


# ---------------------------------------------------------------------------------------------
# graph-fold-batch-norm
# ---------------------------------------------------------------------------------------------


@st.composite
def conv_bn_graphs(draw: st.DrawFn) -> Case:
    """conv2d (random geometry, groups, optional bias) → batch norm → optional mul/add → relu."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    groups = draw(st.sampled_from([1, 2]))
    c_in = groups * draw(st.integers(1, 2))
    c_out = groups * draw(st.integers(1, 3))
    k = draw(st.integers(1, 3))
    size = draw(st.integers(k, 6))
    stride, dilation = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    if dilation * (k - 1) + 1 > size:
        dilation = 1
    pad = draw(st.integers(0, k - 1))
    b = GraphBuilder((1, c_in, size, size))
    weight = b.const(rng.standard_normal((c_out, c_in // groups, k, k)).astype(np.float32))
    bias = b.const(rng.standard_normal(c_out).astype(np.float32)) if draw(st.booleans()) else None
    value = b(Conv2DOp(
        b.args[0], weight, bias, strides=(stride, stride), padding=(pad, pad, pad, pad),
        dilation=(dilation, dilation), groups=groups,
    ))
    params = [
        rng.uniform(0.5, 2.0, c_out), rng.standard_normal(c_out), rng.standard_normal(c_out),
        rng.uniform(0.5, 2.0, c_out),
    ]
    value = b(BatchNormOp(value, *(b.const(p.astype(np.float32)) for p in params), epsilon=1e-3))
    for op_class in draw(st.lists(st.sampled_from([MulOp, AddOp, SubOp]), max_size=2)):
        shape = draw(st.sampled_from([(c_out, 1, 1), (1, c_out, 1, 1), ()]))
        constant = b.const(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        value = b(op_class(value, constant))
    return Case(b.finish(b(ReluOp(value))))


@SETTINGS
@given(conv_bn_graphs())
def test_fold_batch_norm_into_conv(case: Case) -> None:
    module = case.module
    check_pass(module, "graph-fold-batch-norm")
    counts = op_counts(module)
    assert counts["graph.batch_norm"] == 0
    assert counts["graph.conv2d"] == 1
    assert counts["graph.mul"] == counts["graph.add"] == counts["graph.sub"] == 0, counts
    (conv,) = graph_ops(module, Conv2DOp)
    assert isinstance(conv, Conv2DOp) and conv.bias is not None


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**16))
def test_fold_batch_norm_into_matmul(n: int, k: int, c: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    b = GraphBuilder((n, k))
    m = b(MatmulOp(b.args[0], b.const(rng.standard_normal((k, c)).astype(np.float32))))
    params = [rng.uniform(0.5, 2, c), rng.standard_normal(c), rng.standard_normal(c),
              rng.uniform(0.5, 2, c)]
    value = b(BatchNormOp(m, *(b.const(p.astype(np.float32)) for p in params)))
    module = check_pass(b.finish(value), "graph-fold-batch-norm")
    assert op_counts(module)["graph.batch_norm"] == 0


def test_batch_norm_with_a_negative_variance_folds_to_nan_quietly() -> None:
    """An invalid model (a negative variance) folds to the NaNs the unfolded op computes, without
    a NumPy warning on the compiler's output."""
    import warnings

    b = GraphBuilder((2, 3))
    m = b(MatmulOp(b.args[0], b.const(np.ones((3, 2), np.float32))))
    params = [np.ones(2), np.zeros(2), np.zeros(2), np.array([1.0, -4.0])]
    value = b(BatchNormOp(m, *(b.const(p.astype(np.float32)) for p in params)))
    module = b.finish(value)
    inputs = inputs_for(module)
    (expected,) = run_module(module, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (folded,) = run_module(apply(module, "graph-fold-batch-norm"), inputs)
    assert np.isnan(expected[:, 1]).all() and np.isnan(folded[:, 1]).all()
    np.testing.assert_allclose(folded[:, 0], expected[:, 0], rtol=1e-5)


def test_lone_batch_norm_decomposes_to_mul_add() -> None:
    rng = np.random.default_rng(0)
    b = GraphBuilder((2, 3, 4, 4))
    params = [rng.uniform(0.5, 2, 3), rng.standard_normal(3), rng.standard_normal(3),
              rng.uniform(0.5, 2, 3)]
    value = b(BatchNormOp(b.args[0], *(b.const(p.astype(np.float32)) for p in params)))
    module = check_pass(b.finish(b(SigmoidOp(value))), "graph-fold-batch-norm")
    counts = op_counts(module)
    assert counts["graph.batch_norm"] == 0 and counts["graph.mul"] == counts["graph.add"] == 1


# ---------------------------------------------------------------------------------------------
# graph-simplify
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_simplify_transpose_and_reshape_chains(data: st.DataObject) -> None:
    shape = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=4).map(tuple))
    b = GraphBuilder(shape)
    value = b.args[0]
    for _ in range(data.draw(st.integers(1, 6))):
        current = value.type.get_shape()  # type: ignore[attr-defined]
        choice = data.draw(st.sampled_from(["transpose", "reshape", "flatten", "neutral"]))
        if choice == "transpose":
            value = b(TransposeOp(value, data.draw(st.permutations(range(len(current))))))
        elif choice == "reshape":
            dims = [d for d in current if d != 1] or [1]
            value = b(ReshapeOp(value, data.draw(st.permutations(dims))))
        elif choice == "flatten":
            value = b(FlattenOp(value, data.draw(st.integers(0, len(current)))))
        else:
            op_class, neutral = data.draw(st.sampled_from([(AddOp, 0.0), (MulOp, 1.0)]))
            value = b(op_class(value, b.const(np.full((1,) * len(current), neutral, np.float32))))
    module = check_pass(b.finish(b(ExpOp(value))), "graph-simplify", exact=True)
    counts = op_counts(module)
    assert counts["graph.add"] == counts["graph.mul"] == 0
    # What is left is canonical: no reshape-like op feeds another, no transpose feeds a transpose,
    # no transpose is the identity and no reshape keeps its operand's shape. (A count bound would be
    # wrong: reshape -> transpose -> reshape -> transpose does not compose in general.)
    reshape_like = (ReshapeOp, FlattenOp)
    for op in module.walk():
        producer = op.operands[0].owner if op.operands else None
        if isinstance(op, reshape_like):
            assert not isinstance(producer, reshape_like), "reshape of reshape left"
            assert op.operands[0].type != op.results[0].type, "no-op reshape left"
        if isinstance(op, TransposeOp):
            assert not isinstance(producer, TransposeOp), "transpose of transpose left"
            assert list(op.perm_tuple()) != sorted(op.perm_tuple()), "identity transpose left"


# ---------------------------------------------------------------------------------------------
# graph-convert-layout
# ---------------------------------------------------------------------------------------------


@st.composite
def cnn_chains(draw: st.DrawFn) -> Case:
    """A random NCHW chain of convs, bias adds, relus, pools, concats and residual adds."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    channels = draw(st.integers(1, 3))
    size = draw(st.integers(4, 8))
    b = GraphBuilder((1, channels, size, size))
    value = b.args[0]

    def conv(x: SSAValue, c_out: int) -> SSAValue:
        c_in = x.type.get_shape()[1]  # type: ignore[attr-defined]
        w = b.const(rng.standard_normal((c_out, c_in, 3, 3)).astype(np.float32))
        return b(Conv2DOp(x, w, padding=(1, 1, 1, 1)))

    value = conv(value, draw(st.integers(1, 3)))
    for _ in range(draw(st.integers(1, 5))):
        shape = value.type.get_shape()  # type: ignore[attr-defined]
        choice = draw(st.sampled_from(["conv", "bias", "relu", "maxpool", "avgpool", "concat",
                                       "residual", "sigmoid"]))
        if choice == "conv":
            value = conv(value, draw(st.integers(1, 3)))
        elif choice == "bias":
            value = b(AddOp(value, b.const(rng.standard_normal((shape[1], 1, 1)).astype(
                np.float32))))
        elif choice == "relu":
            value = b(ReluOp(value))
        elif choice == "sigmoid":
            value = b(SigmoidOp(value))
        elif choice in ("maxpool", "avgpool") and min(shape[2:]) >= 2:
            pool = MaxPool2DOp if choice == "maxpool" else AvgPool2DOp
            value = b(pool(value, kernel=(2, 2), strides=(1, 1)))
        elif choice == "concat":
            value = b(ConcatOp([value, conv(value, 1)], 1))
        elif choice == "residual":
            value = b(AddOp(conv(value, shape[1]), value))
    value = b(ReluOp(value))
    pooled = b(GlobalAvgPool2DOp(value))
    return Case(b.finish(value, b(FlattenOp(pooled))))


def _transposes_at_edges(module: ModuleOp) -> bool:
    """Every transpose reads a function argument or feeds only the return or a reshape."""
    for op in graph_ops(module, TransposeOp):
        reads_argument = not isinstance(op.operands[0].owner, Operation)
        users = [use.operation for use in op.results[0].uses]
        feeds_edge = all(isinstance(u, func.ReturnOp | ReshapeOp | FlattenOp) for u in users)
        if not (reads_argument or feeds_edge):
            return False
    return True


@SETTINGS
@given(cnn_chains())
def test_convert_layout_nhwc_and_back(case: Case) -> None:
    module = case.module
    convs = len(graph_ops(module, Conv2DOp))
    # Only data moves, but pools may sum in another order: float32 rounding only.
    check_pass(module, "graph-convert-layout", rtol=1e-5, atol=1e-6)
    assert all(op.layout_value() == "NHWC" for op in graph_ops(module, Conv2DOp))  # type: ignore[attr-defined]
    assert all(op.layout_value() == "NHWC" for op in graph_ops(module, MaxPool2DOp))  # type: ignore[attr-defined]
    assert len(graph_ops(module, Conv2DOp)) == convs
    assert _transposes_at_edges(module), text(module)
    assert len(graph_ops(module, TransposeOp)) <= 2
    check_pass(module, "graph-convert-layout{layout=NCHW},graph-simplify", rtol=1e-5, atol=1e-6)
    assert not graph_ops(module, TransposeOp), text(module)


def test_convert_layout_rejects_unknown_layout() -> None:
    from xdsl.utils.exceptions import PassFailedException

    b = GraphBuilder((1, 1, 2, 2))
    module = b.finish(b(ReluOp(b.args[0])))
    with pytest.raises(PassFailedException, match="expected layout in NCHW, NHWC, found 'NCHW16c'"):
        apply(module, "graph-convert-layout{layout=NCHW16c}")


# ---------------------------------------------------------------------------------------------
# graph-fuse-ops
# ---------------------------------------------------------------------------------------------


@st.composite
def random_dags(draw: st.DrawFn) -> Case:
    """A random DAG over 2-D tensors: matmuls, elementwise, broadcast, injective, reductions,
    softmax, with values reused by several ops."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = draw(st.integers(1, 3))
    b = GraphBuilder((n, n), (n, n))
    values = list(b.args)
    for _ in range(draw(st.integers(1, 10))):
        x = draw(st.sampled_from(values))
        y = draw(st.sampled_from(values))
        choice = draw(st.sampled_from(
            ["matmul", "relu", "exp", "add", "mulc", "transpose", "reduce", "softmax", "neg"]))
        if choice == "matmul":
            new = b(MatmulOp(x, b.const(rng.standard_normal((n, n)).astype(np.float32))))
        elif choice == "relu":
            new = b(ReluOp(x))
        elif choice == "exp":
            new = b(ExpOp(b(NegOp(b(ReluOp(x))))))
        elif choice == "neg":
            new = b(NegOp(x))
        elif choice == "add":
            new = b(AddOp(x, y))
        elif choice == "mulc":
            new = b(MulOp(x, b.const(rng.standard_normal(n).astype(np.float32))))
        elif choice == "transpose":
            new = b(TransposeOp(x, (1, 0)))
        elif choice == "reduce":
            new = b(ReduceOp(x, "max", [1], keepdims=True))
            new = b(AddOp(new, x))
        else:
            new = b(SoftmaxOp(x))
        values.append(new)
    outputs = draw(st.lists(st.sampled_from(values[2:]), min_size=1, max_size=2, unique=True))
    return Case(b.finish(*outputs))


def _check_groups(module: ModuleOp, max_depth: int) -> None:
    """The structural promises of graph-fuse-ops."""
    for function in module.body.block.ops:
        assert isinstance(function, func.FuncOp)
        for op in function.body.block.ops:  # nothing fusable left outside a group
            assert not is_fusable(op), f"{op.name} outside any group"
    for fused in graph_ops(module, FusedOp):
        body = [op for op in fused.regions[0].block.ops if not isinstance(op, YieldOp)]
        members = {id(op) for op in body}
        compute = [op for op in body if not isinstance(op, ConstantOp)]
        assert 1 <= len(compute) <= max_depth
        anchors = [op for op in compute if fusion_kind(op) == FusionKind.OUT_FUSABLE]
        assert len(anchors) <= 1
        for anchor in anchors:  # no producer of an out-fusable op's operands inside its group
            for operand in anchor.operands:
                owner = operand.owner
                assert not (isinstance(owner, Operation) and id(owner) in members
                            and not isinstance(owner, ConstantOp))
        reductions = [op for op in compute if fusion_kind(op) == FusionKind.REDUCTION]
        if rows_of(compute) is None:  # nothing after a reduction, but in a row group
            for reduction in reductions:
                users = [use.operation for use in reduction.results[0].uses]
                assert all(isinstance(u, YieldOp) for u in users)
        opaque = [op for op in compute if fusion_kind(op) == FusionKind.OPAQUE]
        assert not opaque or len(compute) == 1
        # only the last op's results leave the group: values used twice end their group
        outputs = [op for op in compute
                   if any(isinstance(use.operation, YieldOp) for r in op.results for use in r.uses)]
        assert len(outputs) == (1 if fused.results else 0)  # a dead group yields nothing


@SETTINGS
@given(random_dags(), st.sampled_from([2, 256]))
def test_fuse_ops_preserves_results_and_rules(case: Case, max_depth: int) -> None:
    module = case.module
    check_pass(module, f"graph-fuse-ops{{max-depth={max_depth}}}", exact=True)
    _check_groups(module, max_depth)
    once = text(module)
    apply(module, f"graph-fuse-ops{{max-depth={max_depth}}}")
    assert text(module) == once  # idempotent


def test_fuse_ops_leaves_non_graph_ops_alone() -> None:
    from xdsl.parser import Parser

    module = Parser(make_context(), """
      func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
        %r = graph.relu %x : tensor<2x2xf32>
        %c = func.call @helper(%r) : (tensor<2x2xf32>) -> tensor<2x2xf32>
        %e = graph.exp %c : tensor<2x2xf32>
        func.return %e : tensor<2x2xf32>
      }
      func.func private @helper(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
        %n = graph.neg %a : tensor<2x2xf32>
        func.return %n : tensor<2x2xf32>
      }
    """).parse_module()
    check_pass(module, "graph-fuse-ops", exact=True)
    main, helper = (op for op in module.body.block.ops if isinstance(op, func.FuncOp))
    assert [op.name for op in main.body.block.ops] == [
        "graph.fused", "func.call", "graph.fused", "func.return"]
    assert [op.name for op in helper.body.block.ops] == ["graph.fused", "func.return"]


# ---------------------------------------------------------------------------------------------
# The graph-opt pipeline on a ResNet-style network
# ---------------------------------------------------------------------------------------------


def _conv_bn(
    b: GraphBuilder, rng: np.random.Generator, x: SSAValue, c_out: int, k: int, stride: int = 1,
    relu: bool = True,
) -> SSAValue:
    c_in = x.type.get_shape()[1]  # type: ignore[attr-defined]
    w = rng.standard_normal((c_out, c_in, k, k)) * math.sqrt(2.0 / (c_in * k * k))
    pad = k // 2
    value = b(Conv2DOp(x, b.const(w.astype(np.float32)), strides=(stride, stride),
                       padding=(pad,) * 4))
    params = [rng.uniform(0.5, 1.5, c_out), rng.normal(0, 0.1, c_out),
              rng.normal(0, 0.1, c_out), rng.uniform(0.5, 1.5, c_out)]
    value = b(BatchNormOp(value, *(b.const(p.astype(np.float32)) for p in params)))
    return b(ReluOp(value)) if relu else value


def resnet_like(seed: int = 0) -> ModuleOp:
    """Stem (conv-bn-relu, max pool), two bottleneck blocks (one with a projection shortcut),
    global pooling, flatten, dense layer with bias, softmax."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder((1, 3, 16, 16))
    x = _conv_bn(b, rng, b.args[0], 8, 3, stride=2)
    x = b(MaxPool2DOp(x, kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1)))
    for c_mid, c_out, stride in ((4, 16, 1), (4, 16, 1)):
        y = _conv_bn(b, rng, x, c_mid, 1)
        y = _conv_bn(b, rng, y, c_mid, 3, stride)
        y = _conv_bn(b, rng, y, c_out, 1, relu=False)
        shortcut = x
        if x.type.get_shape()[1] != c_out:  # type: ignore[attr-defined]
            shortcut = _conv_bn(b, rng, x, c_out, 1, stride, relu=False)
        x = b(ReluOp(b(AddOp(y, shortcut))))
    x = b(FlattenOp(b(GlobalAvgPool2DOp(x))))
    w = b.const((rng.standard_normal((16, 10)) * 0.3).astype(np.float32))
    x = b(AddOp(b(MatmulOp(x, w)), b.const(rng.standard_normal(10).astype(np.float32))))
    return b.finish(b(SoftmaxOp(x)))


def test_graph_opt_on_resnet_like_network() -> None:
    module = resnet_like()
    before = op_counts(module)
    check_pass(module, "graph-opt")
    after = op_counts(module)
    groups = graph_ops(module, FusedOp)
    names = collections.Counter(
        (g.name_value() or "").rstrip("_0123456789") for g in groups  # type: ignore[attr-defined]
    )
    print(f"\nresnet-like: ops before {sum(before.values()) - before['graph.constant']}, "
          f"groups {len(groups)}: {dict(names)}")
    assert before["graph.batch_norm"] == 8 and after["graph.batch_norm"] == 0
    assert after["graph.conv2d"] == before["graph.conv2d"] == 8
    # 7 conv groups (+relu / +add+relu), the shortcut conv alone, pool, gap, flatten, dense, softmax
    assert names == {
        "fused_conv2d_relu": 5, "fused_conv2d_add_relu": 2, "fused_conv2d": 1,
        "fused_max_pool2d": 1, "fused_global_avg_pool2d": 1, "fused_flatten": 1,
        "fused_matmul_add": 1, "fused_softmax": 1,
    }
    _check_groups(module, 256)


def test_graph_opt_then_layout_conversion_on_resnet_like_network() -> None:
    module = resnet_like(seed=1)
    check_pass(module, "graph-fold-batch-norm,graph-convert-layout,graph-simplify,graph-opt")
    assert all(op.layout_value() == "NHWC" for op in graph_ops(module, Conv2DOp))  # type: ignore[attr-defined]
    assert len(graph_ops(module, TransposeOp)) == 1  # the input's; the output edge is a reshape


LIGHT_RESNET50 = (
    Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
)


def _randomize_weights(module: ModuleOp, seed: int) -> None:
    """Replace every float constant with random data of its shape: He-scaled conv and dense
    weights, batch-norm variances and scales in [0.5, 1.5], small biases and means."""
    rng = np.random.default_rng(seed)
    for op in graph_ops(module, ConstantOp):
        assert isinstance(op, ConstantOp)
        array = op.to_array()
        if array.dtype != np.float32:
            continue
        users = [use.operation for use in op.result.uses]
        user = users[0] if users else None
        index = next(use.index for use in op.result.uses) if users else 0
        if isinstance(user, Conv2DOp | MatmulOp) and index == 1:
            fan_in = array[0].size if isinstance(user, Conv2DOp) else array.shape[0]
            data = rng.standard_normal(array.shape) * math.sqrt(2.0 / fan_in)
        elif isinstance(user, BatchNormOp) and index in (1, 4):
            data = rng.uniform(0.5, 1.5, array.shape)
        else:
            data = rng.normal(0, 0.1, array.shape)
        new = ConstantOp.from_array(data.astype(np.float32))
        op.attributes["value"] = new.value


def _return_logits(module: ModuleOp) -> None:
    """Drop the final softmax: with random weights it saturates and would hide any error."""
    (softmax,) = graph_ops(module, SoftmaxOp)
    assert isinstance(softmax, SoftmaxOp)
    softmax.results[0].replace_all_uses_with(softmax.x)
    softmax.detach()
    softmax.erase()


@pytest.mark.slow
def test_graph_opt_on_light_resnet50() -> None:
    """light_resnet50 from the onnx package, with random weights (its own are constant)."""
    onnx_import = pytest.importorskip("dlc.frontends.onnx")
    if not LIGHT_RESNET50.is_file():
        pytest.skip(f"{LIGHT_RESNET50} not installed")
    module = onnx_import.import_onnx(LIGHT_RESNET50)
    _randomize_weights(module, seed=0)
    _return_logits(module)
    module.verify()
    before = op_counts(module)
    check_pass(module, "graph-opt", rtol=1e-3, atol=1e-5)
    after = op_counts(module)
    groups = graph_ops(module, FusedOp)
    print(f"\nlight_resnet50: ops before {sum(before.values()) - before['graph.constant']} "
          f"({dict(before)}), after: {len(groups)} fused groups")
    assert before["graph.batch_norm"] == 53 and after["graph.batch_norm"] == 0
    assert after["graph.conv2d"] == 53
    # 53 conv groups (33 conv+relu, 16 conv+add+relu, 4 projection shortcuts alone), the two
    # pools, the flatten's reshape and the dense layer (matmul + bias)
    names = collections.Counter(
        (g.name_value() or "").rstrip("_0123456789") for g in groups  # type: ignore[attr-defined]
    )
    assert names == {
        "fused_conv2d_relu": 33, "fused_conv2d_add_relu": 16, "fused_conv2d": 4,
        "fused_max_pool2d": 1, "fused_avg_pool2d": 1, "fused_reshape": 1, "fused_matmul_add": 1,
    }, names
    _check_groups(module, 256)


# ---------------------------------------------------------------------------------------------
# graph-winograd-conv
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(
    c=st.integers(1, 3), k=st.integers(1, 3), h=st.integers(1, 9), w=st.integers(1, 6),
    kh=st.sampled_from([1, 3]), kw=st.sampled_from([1, 3]), stride=st.sampled_from([1, 2]),
    padding=st.tuples(*[st.integers(0, 1)] * 4), bias=st.booleans(),
    tile=st.sampled_from([0, 2, 4]), seed=st.integers(0, 1 << 16),
)
def test_winograd_conv_preserves_results_and_rewrites_what_it_may(
    c: int, k: int, h: int, w: int, kh: int, kw: int, stride: int, padding: tuple[int, ...],
    bias: bool, tile: int, seed: int,
) -> None:
    from dlc.rewrites.graph_winograd_conv import choose_tile

    top, left, bottom, right = padding
    if h + top + bottom < kh or w + left + right < kw:
        return
    rng = np.random.default_rng(seed)
    g = GraphBuilder((1, c, h, w))
    weight = g.const(rng.standard_normal((k, c, kh, kw)).astype(np.float32))
    b = g.const(rng.standard_normal(k).astype(np.float32)) if bias else None
    conv = g(Conv2DOp(g.args[0], weight, b, padding=padding, strides=(stride, stride)))
    module = g.finish(g(ReluOp(conv)))
    out_rows = (h + top + bottom - kh) // stride + 1
    check_pass(module, f"graph-winograd-conv{{tile={tile} min-channels=1 min-width=1}}",
               rtol=1e-4, atol=1e-5)
    rewritten = bool(graph_ops(module, Conv2DWinogradOp))
    assert rewritten == (kh == 3 and stride == 1 and choose_tile(out_rows, tile) is not None)
    assert len(graph_ops(module, Conv2DOp)) == (0 if rewritten else 1)


# ---------------------------------------------------------------------------------------------
# graph-to-low-precision
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(random_dags(), st.sampled_from(["bf16", "f16"]))
def test_to_low_precision_stays_close_and_keeps_sensitive_ops_f32(case: Case, kind: str) -> None:
    from dlc.rewrites.graph_to_low_precision import FOLLOW_OPS, KEEP_FP32_OPS

    def reaches_only_results(value: SSAValue) -> bool:  # an output layer's result
        return all(isinstance(use.operation, func.ReturnOp) or (
            use.operation.name in FOLLOW_OPS and use.operation.name not in KEEP_FP32_OPS
            and all(reaches_only_results(r) for r in use.operation.results))
            for use in value.uses)

    module = case.module
    signature = [f.function_type for f in module.ops if isinstance(f, func.FuncOp)]
    # 8 (bf16) or 11 (f16) significand bits, a few roundings deep
    tolerance = 6e-2 if kind == "bf16" else 8e-3
    check_pass(module, f"graph-to-low-precision{{type={kind}}}", rtol=tolerance, atol=tolerance)
    assert [f.function_type for f in module.ops if isinstance(f, func.FuncOp)] == signature
    for op in graph_ops(module):
        element_types = {o.type.get_element_type() for o in op.operands}  # type: ignore
        if op.name == "graph.matmul" and not reaches_only_results(op.results[0]):
            assert element_types == {bf16 if kind == "bf16" else f16}, op
        if op.name in KEEP_FP32_OPS:
            assert element_types == {f32}, op
    once = text(module)
    apply(module, f"graph-to-low-precision{{type={kind}}}")
    assert text(module) == once  # idempotent


# ---------------------------------------------------------------------------------------------
# graph-annotate-target, graph-merge-regions, graph-partition
# ---------------------------------------------------------------------------------------------


@SETTINGS
@given(random_dags(), st.data())
def test_partition_preserves_results(case: Case, data: st.DataObject) -> None:
    from dlc.rewrites.partition_targets import TARGET_ATTR

    module = case.module
    names = sorted({op.name for op in graph_ops(module) if not isinstance(op, ConstantOp)})
    on_cpu = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    overrides = ",".join(f"{name}=llvm" for name in on_cpu)
    spec = (f'graph-annotate-target{{targets="opencl,llvm" overrides="{overrides}"}},'
            "graph-merge-regions,graph-partition")
    check_pass(module, spec, exact=True)
    main = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")
    for op in main.body.block.ops:
        assert isinstance(op, ConstantOp | func.CallOp | func.ReturnOp), op.name
    for function in module.ops:
        if function is main:
            continue
        assert isinstance(function, func.FuncOp)
        target = function.attributes[TARGET_ATTR].data
        expected = {op.name in on_cpu for op in function.body.block.ops
                    if op.dialect_name() == "graph" and not isinstance(op, ConstantOp)}
        assert expected == {target == "llvm"}


def test_every_graph_pass_has_property_coverage() -> None:
    covered = {"graph-fold-constants", "graph-fold-batch-norm", "graph-simplify",
               "graph-convert-layout", "graph-fuse-ops", "graph-winograd-conv",
               # property tests in tests/test_conv_transpose_subpixel.py,
               # test_conv_column_to_row.py, test_conv_split_bands.py, test_conv_subsample.py
               "graph-conv-transpose-to-subpixel", "graph-conv-column-to-row",
               "graph-conv-subsample",
               "graph-conv-split-bands",
               "graph-fold-qdq",  # graph-fold-qdq: tests/test_quant_ops.py
               # tests/test_lookup_tables.py: random QDQ chains, folded, against the graph
               "graph-fold-lookup-tables",
               "graph-annotate-target", "graph-merge-regions", "graph-partition",
               "graph-to-low-precision",
               # tests/onnx/test_dynamic_extents.py: chains of padding-insensitive ops
               "graph-mark-valid-extents",
               # tests/test_dynamic_batch.py: chains of batch-polymorphic ops, row by row
               "graph-batch-rows"}
    registered = {name for name in get_all_passes() if name.startswith("graph-")}
    assert registered <= covered | {"graph-opt"}, registered - covered



def test_epilogue_walk_is_linear_in_a_chain_of_diamonds() -> None:
    """A conv, then 60 elementwise diamonds (exp and relu of one value, added), then a
    transpose: the whole chain is the conv's epilogue and the transpose is alone. Deciding that
    walks every path from the conv to the chain's end unless the walk is memoized (2^60 paths;
    20 diamonds took 37 s before)."""
    from dlc.dialects.graph.ops import FusedOp

    t = "tensor<1x2x4x4xf32>"
    lines = [
        f"func.func @f(%x: {t}) -> tensor<1x4x4x2xf32> {{",
        "  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>",
        f"  %v0 = graph.conv2d %x, %w : ({t}, tensor<2x2x1x1xf32>) -> {t}",
    ]
    for i in range(60):
        lines += [f"  %a{i} = graph.exp %v{i} : {t}", f"  %b{i} = graph.relu %v{i} : {t}",
                  f"  %v{i + 1} = graph.add %a{i}, %b{i} : ({t}, {t}) -> {t}"]
    lines += [
        f"  %r = graph.transpose %v60 {{perm = array<i64: 0, 2, 3, 1>}} : ({t}) -> "
        "tensor<1x4x4x2xf32>",
        "  func.return %r : tensor<1x4x4x2xf32>", "}",
    ]
    module = apply(Parser(make_context(), "\n".join(lines)).parse_module(), "graph-fuse-ops")
    fused = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert [(op.name_value(), len(list(op.body.block.ops))) for op in fused] == [
        ("fused_conv2d_exp_relu_add", 2 + 3 * 60 + 1), ("fused_transpose", 2)]
