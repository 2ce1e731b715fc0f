"""`frontends/onnx/unbind.sink_unbinds`: a Transpose whose result is only unbound along axis 0
becomes the unbinding of its input and a transpose per piece (the same values, checked with
ONNX's reference evaluator), so that timm's attention (`qkv.permute(2, 0, 3, 1, 4).unbind(0)`)
keeps a dynamic batch leading and compiles once for every batch size."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
from dlc.frontends.onnx.importer import import_onnx
from dlc.frontends.onnx.unbind import sink_unbinds
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx.reference import ReferenceEvaluator

import dlc
from tests.onnx.models import model, tensor

RNG = np.random.default_rng(0)


def unbinding(shape: list[int], perm: list[int], gather: bool, opset: int = 17
              ) -> onnx.ModelProto:
    """x -> Transpose(perm) -> each piece along axis 0: a Split into ones and a Squeeze of
    axis 0, or a Gather of index i; every piece an output (before opset 13 the Split's sizes and
    the Squeeze's axes are attributes)."""
    pieces = shape[perm[0]]
    outputs = [f"y{i}" for i in range(pieces)]
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=perm)]
    weights: dict[str, np.ndarray] = {"zero": np.array([0], np.int64)}
    if gather:
        for i, name in enumerate(outputs):
            weights[f"i{i}"] = np.array(i, np.int64)
            nodes.append(helper.make_node("Gather", ["t", f"i{i}"], [name], axis=0))
    elif opset < 13:
        nodes.append(helper.make_node("Split", ["t"], [f"s{i}" for i in range(pieces)], axis=0,
                                      split=[1] * pieces))
        nodes += [helper.make_node("Squeeze", [f"s{i}"], [name], axes=[0])
                  for i, name in enumerate(outputs)]
    else:
        weights["ones"] = np.ones(pieces, np.int64)
        nodes.append(helper.make_node("Split", ["t", "ones"], [f"s{i}" for i in range(pieces)],
                                      axis=0))
        nodes += [helper.make_node("Squeeze", [f"s{i}", "zero"], [name])
                  for i, name in enumerate(outputs)]
    rest = [shape[p] for p in perm[1:]]
    return model(nodes, [tensor("x", shape)], [tensor(o, rest) for o in outputs], weights,
                 opset=opset)


@settings(deadline=None, max_examples=40)
@given(st.integers(3, 5).flatmap(lambda rank: st.tuples(
    st.lists(st.integers(1, 3), min_size=rank, max_size=rank),
    st.permutations(list(range(rank))).filter(lambda p: p[0] != 0))), st.booleans(),
    st.sampled_from([11, 17]))
def test_unbinding_before_transposing_gives_the_same_values(
        case: tuple[list[int], list[int]], gather: bool, opset: int) -> None:
    shape, perm = case
    proto = unbinding(shape, list(perm), gather, opset)
    rewritten = sink_unbinds(proto)
    onnx.checker.check_model(rewritten)
    assert {n.op_type for n in rewritten.graph.node if n.input[0] == "x"} == {
        "Gather" if gather else "Split"}  # x unbound first, each piece then transposed
    x = RNG.standard_normal(shape).astype(np.float32)
    for got, want in zip(ReferenceEvaluator(rewritten).run(None, {"x": x}),
                         ReferenceEvaluator(proto).run(None, {"x": x}), strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_transpose_read_by_anything_else_is_kept() -> None:
    proto = unbinding([2, 3, 4], [1, 0, 2], gather=True)
    proto.graph.node.append(helper.make_node("Relu", ["t"], ["r"]))
    proto.graph.output.append(tensor("r", [3, 2, 4]))
    assert sink_unbinds(proto) is proto
    static = unbinding([2, 3, 4], [0, 2, 1], gather=True)  # the leading axis stays first
    assert sink_unbinds(static) is static


def attention(batch: int | str = "N", tokens: int = 5, heads: int = 2, width: int = 6
              ) -> onnx.ModelProto:
    """timm's attention: x[N, T, C] @ Wqkv -> Reshape [0, T, 3, H, D] -> Transpose (2, 0, 3, 1,
    4) -> Split along axis 0 and Squeeze: q, k, v [N, H, T, D] -> softmax(q k^T) v -> Transpose
    and Reshape back to [N, T, C]."""
    rng = np.random.default_rng(5)
    channels = heads * width
    weights = {
        "wqkv": rng.standard_normal((channels, 3 * channels)).astype(np.float32) * 0.3,
        "qkv_shape": np.array([0, tokens, 3, heads, width], np.int64),
        "ones": np.ones(3, np.int64), "zero": np.array([0], np.int64),
        "out_shape": np.array([0, tokens, channels], np.int64),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "wqkv"], ["qkv"]),
        helper.make_node("Reshape", ["qkv", "qkv_shape"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[2, 0, 3, 1, 4]),
        helper.make_node("Split", ["t", "ones"], ["sq", "sk", "sv"], axis=0),
        *(helper.make_node("Squeeze", [f"s{n}", "zero"], [n]) for n in "qkv"),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", "out_shape"], ["y"]),
    ]
    return model(nodes, [tensor("x", [batch, tokens, channels])],
                 [tensor("y", [batch, tokens, channels])], weights)


def test_timm_attention_keeps_the_dynamic_batch() -> None:
    proto = attention()
    import_onnx(proto, dynamic_batch=True)  # the transpose no longer moves the batch
    executable = dlc.compile(proto, dynamic_batch=True, cache=False, jobs=1)
    assert executable.batch_symbol == "N"
    for rows in (1, 3):
        x = RNG.standard_normal((rows, 5, 12)).astype(np.float32)
        (want,) = ReferenceEvaluator(proto).run(None, {"x": x})
        np.testing.assert_allclose(executable(x), want, rtol=1e-4, atol=1e-4)


def test_every_permutation_moving_the_leading_axis_is_rewritten() -> None:
    for perm in itertools.permutations(range(4)):
        if perm[0] == 0:
            continue
        rewritten = sink_unbinds(unbinding([2, 3, 2, 3], list(perm), gather=False))
        first = [n for n in rewritten.graph.node if n.op_type == "Split"]
        assert [helper.get_attribute_value(a) for a in first[0].attribute
                if a.name == "axis"] == [perm[0]]
