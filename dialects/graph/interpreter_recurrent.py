"""NumPy implementations of `graph.lstm`, `graph.gru` and `graph.rnn`, for the graph interpreter.

Importing this module registers them; `dialects.graph` imports it. They follow ONNX's definitions
(and ONNX Runtime where ONNX's reference evaluator leaves features out: activations, clip,
sequence_lens): the reverse direction runs from a batch entry's last valid step down to 0, steps
past an entry's length keep its state and write zeros to y.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from dlc.dialects.graph.interpreter import implements
from dlc.dialects.graph.ops_recurrent import GRUOp, LSTMOp, RecurrentOp, RNNOp

Activation = Callable[[np.ndarray], np.ndarray]


def activation_function(name: str, alpha: float, beta: float) -> Activation:
    """The NumPy function of an ONNX recurrent activation (lowercase name)."""
    def sigmoid(x: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-x))

    table: dict[str, Activation] = {
        "relu": lambda x: np.maximum(x, 0),
        "tanh": np.tanh,
        "sigmoid": sigmoid,
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(x) - 1)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.log1p(np.exp(x)),
    }
    function = table[name]

    def typed(x: np.ndarray) -> np.ndarray:
        return np.asarray(function(x), dtype=x.dtype)

    return typed


def _activations(op: RecurrentOp, direction: int) -> list[Activation]:
    """The activations of `direction`, each clipping its input when the op has `clip` (except
    LSTM's `h`, whose input is the cell state: ONNX Runtime clips the gates only)."""
    clip = op.clip_value()
    functions = [activation_function(*a) for a in op.activation_list(direction)]
    if clip is None:
        return functions
    clipped = [lambda x, f=f: f(np.clip(x, -clip, clip)) for f in functions]
    if isinstance(op, LSTMOp):
        clipped[2] = functions[2]
    return clipped


Cell = Callable[[np.ndarray, list[np.ndarray], int], tuple[list[np.ndarray], np.ndarray]]
"""`cell(x_t, states, direction) -> (new states, h_t)` for one step of one direction."""


def _run(op: RecurrentOp, x: np.ndarray, states: list[np.ndarray], lens: np.ndarray | None,
         cell: Cell) -> list[np.ndarray]:
    steps, batch = x.shape[0], x.shape[1]
    d, h = op.num_directions(), op.hidden()
    lengths = np.full(batch, steps) if lens is None else lens.astype(np.int64)
    y = np.zeros((steps, d, batch, h), dtype=x.dtype)
    finals = [s.copy() for s in states]
    for direction in range(d):
        reverse = op.direction_value() == "reverse" or direction == 1
        current = [s[direction].copy() for s in states]
        for t in (reversed(range(steps)) if reverse else range(steps)):
            valid = (t < lengths)[:, None]
            new, h_t = cell(x[t], current, direction)
            current = [np.where(valid, n, c) for n, c in zip(new, current, strict=True)]
            y[t, direction] = np.where(valid, h_t, 0)
        for final, value in zip(finals, current, strict=True):
            final[direction] = value
    return [y, *finals]


@implements(LSTMOp)
def _lstm(op: LSTMOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x, w, r, b, h0, c0, p = args[:7]
    lens = args[7] if len(args) > 7 else None
    hs = op.hidden()
    acts = [_activations(op, d) for d in range(op.num_directions())]

    def cell(x_t: np.ndarray, states: list[np.ndarray], d: int) -> tuple[list[np.ndarray],
                                                                          np.ndarray]:
        h_prev, c_prev = states
        f, g, hact = acts[d]
        gates = x_t @ w[d].T + h_prev @ r[d].T + b[d, : 4 * hs] + b[d, 4 * hs :]
        gi, go, gf, gc = (gates[:, k * hs : (k + 1) * hs] for k in range(4))
        pi, po, pf = (p[d, k * hs : (k + 1) * hs] for k in range(3))
        i = f(gi + pi * c_prev)
        forget = (1 - i) if op.input_forget_value() else f(gf + pf * c_prev)
        c = forget * c_prev + i * g(gc)
        o = f(go + po * c)
        h = o * hact(c)
        return [h, c], h

    return _run(op, x, [h0, c0], lens, cell)


@implements(GRUOp)
def _gru(op: GRUOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x, w, r, b, h0 = args[:5]
    lens = args[5] if len(args) > 5 else None
    hs = op.hidden()
    acts = [_activations(op, d) for d in range(op.num_directions())]

    def cell(x_t: np.ndarray, states: list[np.ndarray], d: int) -> tuple[list[np.ndarray],
                                                                          np.ndarray]:
        (h_prev,) = states
        f, g = acts[d]
        wb, rb = b[d, : 3 * hs], b[d, 3 * hs :]
        xw = x_t @ w[d].T + wb
        rz, rr, rh = (r[d, k * hs : (k + 1) * hs] for k in range(3))
        z = f(xw[:, :hs] + h_prev @ rz.T + rb[:hs])
        reset = f(xw[:, hs : 2 * hs] + h_prev @ rr.T + rb[hs : 2 * hs])
        if op.linear_before_reset_value():
            cand = g(xw[:, 2 * hs :] + reset * (h_prev @ rh.T + rb[2 * hs :]))
        else:
            cand = g(xw[:, 2 * hs :] + (reset * h_prev) @ rh.T + rb[2 * hs :])
        h = (1 - z) * cand + z * h_prev
        return [h], h

    return _run(op, x, [h0], lens, cell)


@implements(RNNOp)
def _rnn(op: RNNOp, args: list[np.ndarray]) -> list[np.ndarray]:
    x, w, r, b, h0 = args[:5]
    lens = args[5] if len(args) > 5 else None
    hs = op.hidden()
    acts = [_activations(op, d) for d in range(op.num_directions())]

    def cell(x_t: np.ndarray, states: list[np.ndarray], d: int) -> tuple[list[np.ndarray],
                                                                          np.ndarray]:
        (h_prev,) = states
        h = acts[d][0](x_t @ w[d].T + h_prev @ r[d].T + b[d, :hs] + b[d, hs:])
        return [h], h

    return _run(op, x, [h0], lens, cell)
