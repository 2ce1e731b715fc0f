"""Transformer-style blocks over a runtime batch and sequence, and channels-last images over a
runtime plane, compiled once (`dlc.compile(model, dynamic_shapes=True)`): matmuls whose rows,
columns or contracting dim are runtime sizes, softmax, layer norms and reductions over runtime
axes, against ONNX Runtime at every size."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from dlc.driver.specialize import SpecializingExecutable
from dlc.frontends.onnx import import_onnx
from dlc.runtime.executable import Executable, ExecutableError
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper

import dlc
from tests.onnx.models import model, tensor

onnxruntime = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(11)
WIDTH, HEADS = 16, 2


def _weights(*shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [(RNG.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
            for shape in shapes]


def _check(executable: object, proto: onnx.ModelProto, inputs: list[np.ndarray]) -> None:
    session = onnxruntime.InferenceSession(proto.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    names = [i.name for i in proto.graph.input]
    want = session.run(None, dict(zip(names, inputs, strict=True)))
    got = executable(*inputs)  # type: ignore[operator]
    got = got if isinstance(got, tuple) else (got,)
    for value, expected in zip(got, want, strict=True):
        assert value.shape == expected.shape, [x.shape for x in inputs]
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-5)


def _sequence_model(nodes: list[onnx.NodeProto], initializers: dict[str, np.ndarray]
                    ) -> onnx.ModelProto:
    return model(nodes, [tensor("x", ["N", "S", WIDTH])], [tensor(nodes[-1].output[0], None)],
                 initializers)


def _mlp_block() -> onnx.ModelProto:
    """x + W2 gelu(W1 layer_norm(x) + b1) (the erf GELU an exporter writes)."""
    w1, w2 = _weights((WIDTH, 2 * WIDTH), (2 * WIDTH, WIDTH))
    scale, bias, b1 = (RNG.standard_normal(n).astype(np.float32)
                       for n in (WIDTH, WIDTH, 2 * WIDTH))
    node = helper.make_node
    return _sequence_model([
        node("LayerNormalization", ["x", "scale", "bias"], ["n"], axis=-1, name="norm"),
        node("MatMul", ["n", "w1"], ["h0"], name="fc1"),
        node("Add", ["h0", "b1"], ["h"]),
        node("Div", ["h", "sqrt2"], ["hs"]),
        node("Erf", ["hs"], ["e"]),
        node("Add", ["e", "one"], ["e1"]),
        node("Mul", ["h", "e1"], ["he"]),
        node("Mul", ["he", "half"], ["g"]),
        node("MatMul", ["g", "w2"], ["o"], name="fc2"),
        node("Add", ["x", "o"], ["y"]),
    ], {"scale": scale, "bias": bias, "w1": w1, "b1": b1, "w2": w2,
        "sqrt2": np.float32(np.sqrt(2)), "one": np.float32(1), "half": np.float32(0.5)})


def _attention_block() -> onnx.ModelProto:
    """Multi-head self-attention as an exporter writes it: heads split by Reshapes that keep
    the runtime batch and sequence (`0` copies a dim), `q @ k^T` over the runtime sequence,
    softmax along it, `p @ v` contracting over it."""
    wq, wk, wv = _weights((WIDTH, WIDTH), (WIDTH, WIDTH), (WIDTH, WIDTH))
    node = helper.make_node
    head = WIDTH // HEADS
    split = np.array([0, 0, HEADS, head], np.int64)
    return _sequence_model([
        node("MatMul", ["x", "wq"], ["q0"]), node("MatMul", ["x", "wk"], ["k0"]),
        node("MatMul", ["x", "wv"], ["v0"]),
        node("Reshape", ["q0", "split"], ["q1"]), node("Reshape", ["k0", "split"], ["k1"]),
        node("Reshape", ["v0", "split"], ["v1"]),
        node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        node("MatMul", ["q", "kt"], ["s0"], name="scores"),
        node("Mul", ["s0", "scale"], ["s"]),
        node("Softmax", ["s"], ["p"], axis=-1, name="softmax"),
        node("MatMul", ["p", "v"], ["o0"], name="context"),
        node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
        node("Reshape", ["o1", "merge"], ["y"]),
    ], {"wq": wq, "wk": wk, "wv": wv, "split": split, "scale": np.float32(head ** -0.5),
        "merge": np.array([0, 0, WIDTH], np.int64)})


@pytest.fixture(scope="module")
def attention() -> tuple[object, onnx.ModelProto]:
    proto = _attention_block()
    return dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1), proto


def test_an_mlp_block_over_a_runtime_sequence_compiles_once_and_matches_onnxruntime() -> None:
    proto = _mlp_block()
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)  # one compile, not one per shape
    for shape in [(1, 1), (2, 7), (3, 33), (1, 64)]:
        _check(executable, proto, [RNG.standard_normal((*shape, WIDTH)).astype(np.float32)])


def test_attention_over_a_runtime_sequence_compiles_once(attention) -> None:
    executable, _ = attention
    assert isinstance(executable, Executable)


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 3), length=st.integers(1, 40))
def test_attention_over_a_runtime_sequence_matches_onnxruntime(attention, batch: int,
                                                                length: int) -> None:
    executable, proto = attention
    _check(executable, proto, [RNG.standard_normal((batch, length, WIDTH)).astype(np.float32)])


@pytest.mark.parametrize(("op", "axes", "keepdims"), [
    ("ReduceMean", [1], 1), ("ReduceMax", [1, 2], 0), ("ReduceSum", [2], 0),
    ("ReduceSumSquare", [-1], 1), ("ReduceLogSumExp", [1], 0), ("ReduceMin", [2, 3], 1),
])
def test_reductions_over_runtime_axes_match_onnxruntime(op: str, axes: list[int],
                                                        keepdims: int) -> None:
    if op == "ReduceSum":  # axes are an input from opset 13
        nodes = [helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)]
        initializers = {"axes": np.array(axes, np.int64)}
    else:
        nodes = [helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=keepdims)]
        initializers = {}
    proto = model(nodes, [tensor("x", ["N", "H", "W", 4])], [tensor("y", None)], initializers)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    for shape in [(1, 1, 1, 4), (2, 5, 3, 4), (1, 17, 9, 4)]:
        _check(executable, proto, [RNG.standard_normal(shape).astype(np.float32)])


def test_a_reduction_over_a_runtime_batch_falls_back_to_shapes_per_call() -> None:
    proto = model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
                  [tensor("x", ["N", 4])], [tensor("y", None)],
                  {"axes": np.array([0], np.int64)})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, SpecializingExecutable)  # a batch's rows run apart
    _check(executable, proto, [RNG.standard_normal((3, 4)).astype(np.float32)])


@pytest.mark.parametrize(("b_dims", "bad", "message"), [
    (["B", "J", 3], (2, 6, 3), r"needs equal contracting dims, found 4 != 6"),
    (["C", 4, "N"], (3, 4, 3), r"needs equal sizes along batch dim 0 of its operands, "
                               r"found 2 != 3"),
])
def test_matmuls_disagreeing_on_runtime_dims_are_an_error_naming_the_node(
        b_dims: list[object], bad: tuple[int, ...], message: str) -> None:
    """A matmul whose operands' runtime contracting dims, or runtime batch dims, differ: the
    size checks it records name it."""
    proto = model([helper.make_node("MatMul", ["a", "b"], ["y"], name="product")],
                  [tensor("a", ["B", "M", 4 if "N" in b_dims else "K"]), tensor("b", b_dims)],
                  [tensor("y", None)])
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    a = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    _check(executable, proto, [a, RNG.standard_normal((2, 4, 3)).astype(np.float32)])
    with pytest.raises(ExecutableError, match=r"'graph.matmul' op \(node 'product'\) " + message):
        executable(a, np.zeros(bad, np.float32))


def _decoder_embedding(table: int) -> onnx.ModelProto:
    """A decoder's front as PyTorch exports it: token embeddings of `ids` (N x S), position
    embeddings at `Range(0, S)` (S from `Shape`), and scores over the sequence masked by the
    first S rows and columns of a causal mask (`Slice` to S, `Equal`, `Where`), softmaxed."""
    tokens, positions = _weights((32, WIDTH), (table, WIDTH))
    mask = np.tril(np.ones((table, table), np.float32))
    node = helper.make_node
    const = helper.make_node
    return model([
        node("Shape", ["ids"], ["shape"]),
        const("Constant", [], ["one"], value=helper.make_tensor("", 7, [], [1])),
        node("Gather", ["shape", "one"], ["s"], axis=0),
        const("Constant", [], ["zero"], value=helper.make_tensor("", 7, [], [0])),
        node("Range", ["zero", "s", "one"], ["range"], name="positions"),
        node("Unsqueeze", ["range", "axes0"], ["pos"]),
        node("Gather", ["tokens", "ids"], ["te"]),
        node("Gather", ["positions", "pos"], ["pe"]),
        node("Add", ["te", "pe"], ["x"]),
        node("MatMul", ["x", "xt_perm_w"], ["q"]),
        node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        node("MatMul", ["q", "xt"], ["scores"]),
        node("Unsqueeze", ["s", "axes0"], ["end"]),
        node("Slice", ["mask", "zeros", "end", "axes0"], ["rows"], name="mask_rows"),
        node("Slice", ["rows", "zeros", "end", "axes1"], ["causal"], name="mask_columns"),
        node("Equal", ["causal", "fzero"], ["masked"]),
        node("Where", ["masked", "minus_inf", "scores"], ["filled"]),
        node("Softmax", ["filled"], ["y"], axis=-1),
    ], [tensor("ids", ["N", "S"], onnx.TensorProto.INT64)], [tensor("y", None)],
        {"tokens": tokens, "positions": positions, "mask": mask,
         "xt_perm_w": _weights((WIDTH, WIDTH))[0], "axes0": np.array([0], np.int64),
         "axes1": np.array([1], np.int64), "zeros": np.array([0], np.int64),
         "fzero": np.float32(0), "minus_inf": np.float32(-np.inf)})


def test_a_decoders_positions_and_causal_mask_over_a_runtime_sequence_compile_once() -> None:
    """Range from 0 to the runtime sequence is `graph.arange`, the position table's and the
    causal mask's first S rows are gathers at those positions, Equal and Where run over the
    runtime dims: one compile matches ONNX Runtime at every length up to the tables'; a
    longer sequence breaks the size check the positions make (the table's 12 rows), naming
    the node, where clamped positions would compute garbage."""
    proto = _decoder_embedding(12)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    for n, s in ((1, 1), (2, 5), (3, 12)):
        _check(executable, proto, [RNG.integers(0, 32, (n, s)).astype(np.int64)])
    with pytest.raises(ExecutableError, match=r"'graph.arange' op \(node '(positions|mask_rows)'"
                                              r"\) needs at most 12 positions .* 12 < 13"):
        executable(np.zeros((1, 13), np.int64))


def _encoder_embedding(table: int, token_types: np.ndarray) -> onnx.ModelProto:
    """An encoder's front as Hugging Face's BERT exports it: the token types of a buffer
    (`token_types`, 1 x table) at the positions (`Slice` of a position buffer to S), by
    `GatherElements`, expanded to the input's N x S (`Expand` to `Shape(ids)`), their
    embeddings added to the tokens' and the positions'."""
    tokens, positions, types = _weights((32, WIDTH), (table, WIDTH), (2, WIDTH))
    node = helper.make_node
    return model([
        node("Shape", ["ids"], ["shape"]),
        node("Gather", ["shape", "one"], ["s"], axis=0),
        node("Unsqueeze", ["s", "axes0"], ["end"]),
        node("Slice", ["position_ids", "zeros", "end", "axes1"], ["pos"], name="positions"),
        node("GatherElements", ["token_type_ids", "pos"], ["types_at"], axis=1,
             name="token_types"),
        node("Expand", ["types_at", "shape"], ["types_nxs"], name="expand_types"),
        node("Gather", ["tokens", "ids"], ["te"]),
        node("Gather", ["types", "types_nxs"], ["ye"]),
        node("Gather", ["positions", "pos"], ["pe"]),
        node("Add", ["te", "ye"], ["tye"]),
        node("Add", ["tye", "pe"], ["y"]),
    ], [tensor("ids", ["N", "S"], onnx.TensorProto.INT64)], [tensor("y", None)],
        {"tokens": tokens, "positions": positions, "types": types,
         "position_ids": np.arange(table, dtype=np.int64)[None],
         "token_type_ids": token_types, "one": np.array(1, np.int64),
         "axes0": np.array([0], np.int64), "axes1": np.array([1], np.int64),
         "zeros": np.array([0], np.int64)})


@pytest.mark.parametrize("types", ["zeros", "alternating"])
def test_an_encoders_token_types_over_a_runtime_sequence_compile_once(types: str) -> None:
    """GatherElements of the token-type buffer at the runtime positions (indices of a runtime
    length along the gathered axis) and Expand of the result to the input's runtime N x S
    (`graph.broadcast_to` sized by the input): one compile matches ONNX Runtime at every
    length up to the buffers'."""
    table = 10
    buffer = (np.zeros((1, table), np.int64) if types == "zeros"
              else (np.arange(table, dtype=np.int64) % 2)[None])
    proto = _encoder_embedding(table, buffer)
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    for n, s in ((1, 1), (2, 5), (3, 10)):
        _check(executable, proto, [RNG.integers(0, 32, (n, s)).astype(np.int64)])


def test_a_mask_of_ones_over_a_runtime_sequence_compiles_once() -> None:
    """ConstantOfShape of the input's shape (the mask of ones Hugging Face's encoders make
    when no attention mask is given) is its element broadcast to the input's runtime N x S
    (`graph.broadcast_to` sized by the input): one compile matches ONNX Runtime."""
    node = helper.make_node
    proto = model([
        node("Shape", ["ids"], ["shape"]),
        node("ConstantOfShape", ["shape"], ["ones"],
             value=helper.make_tensor("", onnx.TensorProto.FLOAT, [1], [1.0])),
        node("Cast", ["ids"], ["f"], to=onnx.TensorProto.FLOAT),
        node("Sub", ["ones", "f"], ["masked"]),
        node("Mul", ["masked", "scale"], ["y"]),
    ], [tensor("ids", ["N", "S"], onnx.TensorProto.INT64)], [tensor("y", None)],
        {"scale": np.float32(-10000.0)})
    module = import_onnx(proto, dynamic_shapes=True)
    assert any(op.name == "graph.broadcast_to" for op in module.walk())
    executable = dlc.compile(proto, dynamic_shapes=True, threads=2, jobs=1)
    assert isinstance(executable, Executable)
    for n, s in ((1, 1), (2, 5), (3, 17)):
        _check(executable, proto, [RNG.integers(0, 2, (n, s)).astype(np.int64)])


def test_an_expand_whose_operand_disagrees_with_the_sizing_value_is_an_error() -> None:
    """An Expand of a row of runtime length T to the shape of ids (N x S) is a broadcast
    sized by ids whose operand must have ids' length there: a call with T != S breaks that
    size check (an ExecutableError naming the op), where a read past the row would not."""
    node = helper.make_node
    proto = model([
        node("Shape", ["ids"], ["shape"]),
        node("Expand", ["row", "shape"], ["y"], name="expand_row"),
    ], [tensor("row", [1, "T"]), tensor("ids", ["N", "S"], onnx.TensorProto.INT64)],
        [tensor("y", None)], {})
    executable = dlc.compile(proto, dynamic_shapes=True, threads=1, jobs=1)
    assert isinstance(executable, Executable)
    row = RNG.standard_normal((1, 5)).astype(np.float32)
    _check(executable, proto, [row, np.zeros((3, 5), np.int64)])
    with pytest.raises(ExecutableError, match=r"'graph.broadcast_to' op \(node 'expand_row'\) "
                                              r"needs dim 1 of its operand to be dim 1 of the "
                                              r"value sizing its result"):
        executable(row, np.zeros((3, 4), np.int64))
