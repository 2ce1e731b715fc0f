"""Converters of ONNX's recurrent ops: LSTM, GRU, RNN -> graph.lstm, graph.gru, graph.rnn.

The graph ops are time-major with every operand present except `sequence_lens`: absent biases,
initial states and peepholes become zero constants; `layout` = 1 (batch-major) transposes x and the
initial states in and y, y_h, y_c out; activation names are lowercased and `activation_alpha` and
`activation_beta` are dealt out in order to the activations that take them, the others getting
their ONNX Runtime defaults (as ONNX Runtime reads them).
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph import GRUOp, LSTMOp, RNNOp, TransposeOp
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.ops_recurrent import (
    ACTIVATION_ARGS,
    ACTIVATIONS,
    DIRECTIONS,
    RecurrentOp,
)
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

_INPUT_NAMES = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")


def _activations(node: NodeContext, op_type: type[RecurrentOp], directions: int
                 ) -> list[tuple[str, float, float]]:
    """(name, alpha, beta) per activation, for every direction."""
    given = node.attr_strs("activations", None)
    names = ([a.lower() for a in given] if given
             else list(op_type.DEFAULT_ACTIVATIONS) * directions)
    count = op_type.ACTIVATIONS_PER_DIRECTION
    if len(names) == count and directions == 2:
        names = names * 2
    if len(names) != count * directions:
        raise node.error(f"expected {count * directions} activations, found {len(names)}")
    alphas = list(node.attr_floats("activation_alpha", []) or [])
    betas = list(node.attr_floats("activation_beta", []) or [])
    result: list[tuple[str, float, float]] = []
    for name in names:
        if name not in ACTIVATIONS:
            raise node.error(f"expected activations among {', '.join(ACTIVATIONS)}, found "
                             f"'{name}'")
        alpha, beta = ACTIVATIONS[name]
        takes_alpha, takes_beta = ACTIVATION_ARGS.get(name, (False, False))
        if takes_alpha and alphas:
            alpha = alphas.pop(0)
        if takes_beta and betas:
            beta = betas.pop(0)
        result.append((name, alpha, beta))
    return result


def _batch_major(node: NodeContext, value: SSAValue, perm: list[int]) -> SSAValue:
    return node.emit(TransposeOp(value, perm))


def _convert(node: NodeContext, op_type: type[RecurrentOp]) -> list[ConvertedValue]:
    direction = node.attr_str("direction", "forward")
    if direction not in DIRECTIONS:
        raise node.error(f"expected direction to be one of {', '.join(DIRECTIONS)}, found "
                         f"'{direction}'")
    d = 2 if direction == "bidirectional" else 1
    layout = node.attr_int("layout", 0)
    if layout not in (0, 1):
        raise node.error(f"expected layout 0 or 1, found {layout}")
    for index in range(3):
        if node.rank(index) != 3:
            raise node.error(f"expected input {_INPUT_NAMES[index]} of rank 3, found "
                             f"{node.input_type(index)}")
    x = node.input(0)
    if layout == 1:
        x = _batch_major(node, x, [1, 0, 2])
    batch = node.shape(0)[1 - layout]
    hidden = node.shape(2)[2]
    if node.has_attr("hidden_size") and node.attr_int("hidden_size") != hidden:
        raise node.error(f"expected hidden_size {node.attr_int('hidden_size')} to match R's "
                         f"last dim {hidden}")
    dtype = to_numpy_dtype(node.element_type(0))
    gates = op_type.GATES

    def operand(index: int, shape: list[int], *, state: bool = False) -> SSAValue:
        if not node.has_input(index):
            return node.constant(np.zeros(shape, dtype=dtype))
        value = node.input(index)
        if state and layout == 1:
            value = _batch_major(node, value, [1, 0, 2])
        return value

    w, r = node.input(1), node.input(2)
    b = operand(3, [d, 2 * gates * hidden])
    lens = None
    if node.has_input(4):
        lens = node.input(4)
        if node.element_type(4) != i32:
            raise node.error(f"expected sequence_lens of element type i32, found "
                             f"{node.input_type(4)}")
    h0 = operand(5, [d, batch, hidden], state=True)
    common = {"direction": direction, "hidden_size": hidden,
              "activations": _activations(node, op_type, d),
              "clip": node.attr_float("clip", 0.0) if node.has_attr("clip") else None}
    if op_type is LSTMOp:
        c0 = operand(6, [d, batch, hidden], state=True)
        p = operand(7, [d, 3 * hidden])
        op = node.emit_op(LSTMOp(x, w, r, b, h0, c0, p, lens, **common,
                                 input_forget=bool(node.attr_int("input_forget", 0))))
    elif op_type is GRUOp:
        op = node.emit_op(GRUOp(x, w, r, b, h0, lens, **common, linear_before_reset=bool(
            node.attr_int("linear_before_reset", 0))))
    else:
        op = node.emit_op(RNNOp(x, w, r, b, h0, lens, **common))
    results: list[ConvertedValue] = list(op.results)
    if layout == 1:
        results = [_batch_major(node, results[0], [2, 0, 1, 3]),
                   *(_batch_major(node, s, [1, 0, 2]) for s in op.results[1:])]
    return results


@register("LSTM")
class LSTM(OnnxOpConverter):
    """`LSTM`: graph.lstm (v7; v14 adds `layout`)."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return _convert(node, LSTMOp)


@register("GRU")
class GRU(OnnxOpConverter):
    """`GRU`: graph.gru (v7; v14 adds `layout`)."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return _convert(node, GRUOp)


@register("RNN")
class RNN(OnnxOpConverter):
    """`RNN`: graph.rnn (v7; v14 adds `layout`)."""

    @classmethod
    def _impl_v7(cls, node: NodeContext) -> list[ConvertedValue]:
        return _convert(node, RNNOp)
