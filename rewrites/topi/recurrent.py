"""Compute definitions of `graph.lstm`, `graph.gru` and `graph.rnn`: a GEMM over all steps, then a
`tensor_expr.scan` per direction whose step is the recurrence GEMM plus fused gate computes.

Counterpart: TVM's LSTM written with `te.scan` (apps/topi_recipe/rnn/lstm.py) and the way ONNX
Runtime's DeepCPU kernels run: the input projection has no recurrence, so it is hoisted out of the
time loop as one GEMM over every step (`<op>_xw_<dir>`, T×N×GH, tagged "matmul", biases folded
in); only `H_{t-1}·R^T` (`<op>_hr_<dir>`, N×GH, tagged "matmul") and the elementwise gate math
run per step, inside the scan. Design: the time loop is a tensor_expr-level construct
(`tensor_expr.scan`, TVM's te.scan) rather than unrolled computes or a graph-level loop op, so
that the step's computes stay ordinary computes that tensor-expr-inline, the loop lowering and
the default schedules treat as they treat any other (convert-tensor-expr-to-loop puts their
nests inside one serial `loop.for`, and loop-default-schedule schedules each of them), while the
state is carried in buffers the lowering reuses across steps.

Gate computes per step (one nest each, reading the step's slice of the projection, the GEMM
result and the states): LSTM `c` (next cell state) and `h` (next hidden state, from `c`); GRU
`reset` (r, or r*H without linear_before_reset), a second GEMM for the candidate when the reset
applies before it, and `h`; RNN `h`. With `sequence_lens`, a T×N mask (1 where t < length)
is a sequence of the scan: a masked step keeps the state and writes 0 to y.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dlc.dialects.graph.ops_recurrent import GRUOp, LSTMOp, RecurrentOp, RNNOp
from dlc.dialects.tensor_expr.scan import ScanOp
from dlc.rewrites.topi.common import (
    binary,
    check_element_type,
    constant,
    emit_compute,
    index,
    index_to_element,
    read,
    shape_of,
    tensor_type,
    zero_attr,
)
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

INJECTIVE = "injective"
MATMUL = "matmul"
RECURRENT = "recurrent"
"""The tag of what a GEMM reads that tensor-expr-inline must keep materialised: the transposed
weights (K×GH, so that the GEMMs' B is contiguous along the output axis; constant weights are
transposed at compile time by loop-fold-constant-nests) and GRU's reset gate (inlined, the GEMM
would recompute it for every term)."""

ScalarFn = Callable[[Builder, SSAValue], SSAValue]


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------


def _sigmoid(b: Builder, x: SSAValue) -> SSAValue:
    one = constant(b, 1, x.type)
    exp = b.insert(mathd.ExpOp(b.insert(arith.NegfOp(x)).result)).result
    return b.insert(arith.DivfOp(one, b.insert(arith.AddfOp(one, exp)).result)).result


def _affine(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    scaled = binary(b, "mul", x, constant(b, alpha, x.type))
    return binary(b, "add", scaled, constant(b, beta, x.type))


def activation(name: str, alpha: float, beta: float, clip: float | None) -> ScalarFn:
    """The scalar body of an ONNX recurrent activation, its input clamped to [-clip, clip]."""

    def apply(b: Builder, x: SSAValue) -> SSAValue:
        t = x.type
        zero = constant(b, 0, t)
        if clip is not None:
            x = binary(b, "min", binary(b, "max", x, constant(b, -clip, t)), constant(b, clip, t))
        if name == "sigmoid":
            return _sigmoid(b, x)
        if name == "tanh":
            return b.insert(mathd.TanhOp(x)).result
        if name == "relu":
            return binary(b, "max", x, zero)
        if name == "affine":
            return _affine(b, x, alpha, beta)
        if name == "leakyrelu":
            negative = b.insert(arith.CmpfOp(x, zero, "olt")).result
            return b.insert(arith.SelectOp(negative, binary(b, "mul", x, constant(b, alpha, t)),
                                           x)).result
        if name == "thresholdedrelu":
            above = b.insert(arith.CmpfOp(x, constant(b, alpha, t), "ogt")).result
            return b.insert(arith.SelectOp(above, x, zero)).result
        if name == "scaledtanh":
            inner = b.insert(mathd.TanhOp(binary(b, "mul", x, constant(b, beta, t)))).result
            return binary(b, "mul", inner, constant(b, alpha, t))
        if name == "hardsigmoid":
            linear = _affine(b, x, alpha, beta)
            return binary(b, "min", binary(b, "max", linear, zero), constant(b, 1, t))
        if name == "elu":
            negative = b.insert(arith.CmpfOp(x, zero, "olt")).result
            expm1 = binary(b, "sub", b.insert(mathd.ExpOp(x)).result, constant(b, 1, t))
            return b.insert(arith.SelectOp(negative, binary(b, "mul", expm1,
                                                            constant(b, alpha, t)), x)).result
        if name == "softsign":
            denominator = binary(b, "add", b.insert(mathd.AbsFOp(x)).result, constant(b, 1, t))
            return b.insert(arith.DivfOp(x, denominator)).result
        assert name == "softplus", name
        exp = b.insert(mathd.ExpOp(x)).result
        return b.insert(mathd.LogOp(binary(b, "add", exp, constant(b, 1, t)))).result

    return apply


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


class _Direction:
    """What one direction's computes are built from, and their names; making one emits the
    direction's transposed weights."""

    def __init__(self, op: RecurrentOp, builder: Builder, direction: int) -> None:
        self.op, self.builder, self.d = op, builder, direction
        self.reverse = op.direction_value() == "reverse" or direction == 1
        self.suffix = "bw" if self.reverse else "fw"
        self.prefix = op.name.split(".", 1)[-1]
        steps, batch, _ = shape_of(op.x)
        self.steps, self.batch, self.hidden = steps, batch, op.hidden()
        self.element = tensor_type(op.x).get_element_type()
        self.acts = [activation(*a, op.clip_value()) for a in op.activation_list(direction)]
        self.wt = self.transposed(op.w, "wt")

    def name(self, what: str) -> str:
        return f"{self.prefix}_{what}_{self.suffix}"

    def dim(self, b: Builder) -> SSAValue:
        return index(b, self.d)

    def transposed(self, weight: SSAValue, what: str, offset: int = 0,
                   count: int | None = None) -> SSAValue:
        """Rows [offset, offset + count) of weight[d] transposed: out[k, j] =
        weight[d, offset + j, k] (K×count, the B of a GEMM, whole so that it can be packed)."""
        _, gh, k = shape_of(weight)
        result = TensorType(self.element, [k, gh - offset if count is None else count])

        def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
            row = b.insert(arith.AddiOp(i[1], index(b, offset))).result if offset else i[1]
            return read(b, weight, [self.dim(b), row, i[0]])

        return emit_compute(self.builder, self.op, self.name(what), result, body, tag=RECURRENT)

    def input_projection(self, gates: int, biases: Sequence[tuple[int, int]]) -> SSAValue:
        """xw[t, n, j] = sum_k x[t, n, k] * w[d, j, k] + sum of b[d, offset + j] over `biases`
        (offset, count): the biases added to gate columns [0, count)."""
        op, element = self.op, self.element
        inputs = shape_of(op.x)[2]
        gh = gates * self.hidden
        result = TensorType(element, [self.steps, self.batch, gh])

        def body(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
            t, n, j = i
            return binary(b, "mul", read(b, op.x, [t, n, r[0]]), read(b, self.wt, [r[0], j]))

        product = emit_compute(self.builder, op, self.name("xw"), result, body, tag=MATMUL,
                               reduce_extents=[inputs], combiner="sum",
                               init=zero_attr(element))

        def with_bias(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
            value = read(b, product, i)
            j = i[2]
            for offset, count in biases:
                term = read(b, op.b, [self.dim(b), b.insert(arith.AddiOp(j, index(b, offset))
                                                            ).result])
                if count < gh:
                    inside = b.insert(arith.CmpiOp(j, index(b, count), "ult")).result
                    term = b.insert(arith.SelectOp(inside, term, constant(b, 0, element))
                                    ).result
                value = binary(b, "add", value, term)
            return value

        return emit_compute(self.builder, op, self.name("xwb"), result, with_bias, tag=INJECTIVE)

    def initial(self, state: SSAValue, what: str) -> SSAValue:
        """state[d] as an N×H tensor."""
        result = TensorType(self.element, [self.batch, self.hidden])

        def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
            return read(b, state, [self.dim(b), *i])

        return emit_compute(self.builder, self.op, self.name(what), result, body, tag="copy")

    def recurrence(self, b: Builder, h: SSAValue, weight: SSAValue, name: str,
                   scale: SSAValue | None = None) -> SSAValue:
        """hr[n, j] = sum_k h[n, k] (* scale[n, k]) * weight[k, j], with `weight` rows of r
        transposed (`transposed`)."""
        op, element = self.op, self.element
        result = TensorType(element, [self.batch, shape_of(weight)[1]])

        def body(bb: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
            n, j = i
            value = read(bb, h, [n, r[0]])
            if scale is not None:
                value = binary(bb, "mul", value, read(bb, scale, [n, r[0]]))
            return binary(bb, "mul", value, read(bb, weight, [r[0], j]))

        return emit_compute(b, op, self.name(name), result, body, tag=MATMUL,
                            reduce_extents=[self.hidden], combiner="sum",
                            init=zero_attr(element))

    def mask_sequence(self) -> SSAValue | None:
        """m[t, n] = 1 where t < sequence_lens[n], else 0; None without sequence_lens."""
        lens = self.op.sequence_lengths()
        if lens is None:
            return None
        lens_type = tensor_type(lens).get_element_type()
        result = TensorType(self.element, [self.steps, self.batch])

        def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
            t, n = i
            step = index_to_element(b, t, lens_type)
            valid = b.insert(arith.CmpiOp(step, read(b, lens, [n]), "slt")).result
            return b.insert(arith.SelectOp(valid, constant(b, 1, self.element),
                                           constant(b, 0, self.element))).result

        return emit_compute(self.builder, self.op, self.name("mask"), result, body, tag="copy")

    def gate(self, b: Builder, xw: SSAValue, hr: SSAValue, n: SSAValue, j: SSAValue,
             gate: int, hr_gate: int | None = None) -> SSAValue:
        """xw[n, gate*H + j] + hr[n, hr_gate*H + j]: a gate's pre-activation."""
        h = self.hidden
        column = b.insert(arith.AddiOp(j, index(b, gate * h))).result if gate else j
        value = read(b, xw, [n, column])
        hr_gate = gate if hr_gate is None else hr_gate
        hr_column = b.insert(arith.AddiOp(j, index(b, hr_gate * h))).result if hr_gate else j
        return binary(b, "add", value, read(b, hr, [n, hr_column]))

    def masked(self, b: Builder, mask: SSAValue | None, n: SSAValue, new: SSAValue,
               old: SSAValue) -> SSAValue:
        """`new` where the step is valid for batch entry n, else `old`."""
        if mask is None:
            return new
        valid = b.insert(arith.CmpfOp(read(b, mask, [n]), constant(b, 0, self.element), "one")
                         ).result
        return b.insert(arith.SelectOp(valid, new, old)).result

    def step_output(self, b: Builder, h: SSAValue, mask: SSAValue | None) -> SSAValue:
        """y_t: the next hidden state, 0 where the step is masked."""
        if mask is None:
            return h
        result = tensor_type(h)

        def body(bb: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
            return binary(bb, "mul", read(bb, h, i), read(bb, mask, [i[0]]))

        return emit_compute(b, self.op, self.name("y"), result, body, tag=INJECTIVE)

    def scan(self, inits: list[SSAValue], xw: SSAValue,
             step: Callable[[Builder, list[SSAValue], SSAValue, SSAValue | None],
                            list[SSAValue]]) -> list[SSAValue]:
        """Emits the scan: (final states..., stacked y)."""
        mask = self.mask_sequence()
        sequences = [xw] if mask is None else [xw, mask]

        def body(b: Builder, states: list[SSAValue], slices: list[SSAValue]) -> list[SSAValue]:
            next_states = step(b, states, slices[0], slices[1] if mask is not None else None)
            return [*next_states, self.step_output(b, next_states[0],
                                                   slices[1] if mask is not None else None)]

        scan = ScanOp.build(self.name("scan"), inits, sequences, body, self.reverse)
        scan.location = self.op.location
        hints = ["h_prev", "c_prev"][: len(inits)] + ["xw_t", "mask_t"][: len(sequences)]
        for arg, hint in zip(scan.body.block.args, hints, strict=True):
            arg.name_hint = hint
        for result, hint in zip(scan.outs, [*(f"{self.prefix}_state{k}" for k in
                                              range(len(inits))), f"{self.prefix}_ys"],
                                strict=True):
            result.name_hint = f"{hint}_{self.suffix}"
        self.builder.insert(scan)
        return list(scan.outs)


def _gather(op: RecurrentOp, builder: Builder, name: str, result_type: TensorType,
            parts: Sequence[SSAValue], axis: int) -> SSAValue:
    """out[..., d, ...] = parts[d][... without axis]: y and the final states by direction."""

    def body(b: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
        rest = [*i[:axis], *i[axis + 1:]]
        value = read(b, parts[0], rest)
        for d, part in enumerate(parts[1:], start=1):
            here = b.insert(arith.CmpiOp(i[axis], index(b, d), "eq")).result
            value = b.insert(arith.SelectOp(here, read(b, part, rest), value)).result
        return value

    return emit_compute(builder, op, name, result_type, body, tag=INJECTIVE)


def _define(op: RecurrentOp, builder: Builder,
            direction_fn: Callable[[_Direction], list[SSAValue]]) -> list[SSAValue]:
    """Runs `direction_fn` per direction (final states..., ys) and assembles y and the states."""
    check_element_type(op, tensor_type(op.x).get_element_type())
    per_direction = [direction_fn(_Direction(op, builder, d))
                     for d in range(op.num_directions())]
    prefix = op.name.split(".", 1)[-1]
    results = [_gather(op, builder, f"{prefix}_y", tensor_type(op.results[0]),
                       [p[-1] for p in per_direction], 1)]
    for k, result in enumerate(op.results[1:]):
        results.append(_gather(op, builder, f"{prefix}_{'hc'[k]}_out", tensor_type(result),
                               [p[k] for p in per_direction], 0))
    return results


# ---------------------------------------------------------------------------------------------
# The ops
# ---------------------------------------------------------------------------------------------


@compute_definition(LSTMOp)
def lstm(op: LSTMOp, builder: Builder) -> list[SSAValue]:
    """Gates i, o, f, c: `c = f*c' + i*g(..)`, `h = o*h(c)`, peepholes on i, f (c') and o (c)."""

    def direction(dir_: _Direction) -> list[SSAValue]:
        hs = dir_.hidden
        xw = dir_.input_projection(4, [(0, 4 * hs), (4 * hs, 4 * hs)])
        f, g, _ = dir_.acts
        hact = activation(*op.activation_list(dir_.d)[2], None)  # the cell state is not clipped
        rt = dir_.transposed(op.r, "rt")
        element = dir_.element

        def peephole(b: Builder, which: int, j: SSAValue) -> SSAValue:
            column = b.insert(arith.AddiOp(j, index(b, which * hs))).result if which else j
            return read(b, op.p, [dir_.dim(b), column])

        def step(b: Builder, states: list[SSAValue], xw_t: SSAValue, mask: SSAValue | None
                 ) -> list[SSAValue]:
            h_prev, c_prev = states
            hr = dir_.recurrence(b, h_prev, rt, "hr")
            cell = TensorType(element, [dir_.batch, hs])

            def c_body(bb: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
                n, j = i
                old = read(bb, c_prev, [n, j])
                gi = binary(bb, "add", dir_.gate(bb, xw_t, hr, n, j, 0),
                            binary(bb, "mul", peephole(bb, 0, j), old))
                i_gate = f(bb, gi)
                if op.input_forget_value():
                    f_gate = binary(bb, "sub", constant(bb, 1, element), i_gate)
                else:
                    gf = binary(bb, "add", dir_.gate(bb, xw_t, hr, n, j, 2),
                                binary(bb, "mul", peephole(bb, 2, j), old))
                    f_gate = f(bb, gf)
                candidate = g(bb, dir_.gate(bb, xw_t, hr, n, j, 3))
                new = binary(bb, "add", binary(bb, "mul", f_gate, old),
                             binary(bb, "mul", i_gate, candidate))
                return dir_.masked(bb, mask, n, new, old)

            c_next = emit_compute(b, op, dir_.name("c"), cell, c_body, tag=INJECTIVE)

            def h_body(bb: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
                n, j = i
                c = read(bb, c_next, [n, j])
                go = binary(bb, "add", dir_.gate(bb, xw_t, hr, n, j, 1),
                            binary(bb, "mul", peephole(bb, 1, j), c))
                new = binary(bb, "mul", f(bb, go), hact(bb, c))
                return dir_.masked(bb, mask, n, new, read(bb, h_prev, [n, j]))

            h_next = emit_compute(b, op, dir_.name("h"), cell, h_body, tag=INJECTIVE)
            return [h_next, c_next]

        return dir_.scan([dir_.initial(op.initial_h, "h0"), dir_.initial(op.initial_c, "c0")],
                         xw, step)

    return _define(op, builder, direction)


@compute_definition(GRUOp)
def gru(op: GRUOp, builder: Builder) -> list[SSAValue]:
    """Gates z, r, h: `h = (1-z)*g(..) + z*h'`, the reset before or after the candidate GEMM."""
    linear = op.linear_before_reset_value()

    def direction(dir_: _Direction) -> list[SSAValue]:
        hs = dir_.hidden
        # Recurrence biases of z and r always fold into the projection; that of h only when the
        # reset applies after the GEMM's bias (linear_before_reset keeps it inside).
        xw = dir_.input_projection(3, [(0, 3 * hs), (3 * hs, 3 * hs if not linear else 2 * hs)])
        f, g = dir_.acts
        element = dir_.element
        cell = TensorType(element, [dir_.batch, hs])
        # Without linear_before_reset the candidate's GEMM reads r*H: its rows get their own B.
        rt = dir_.transposed(op.r, "rt", 0, None if linear else 2 * hs)
        rt_h = None if linear else dir_.transposed(op.r, "rt_h", 2 * hs, hs)

        def step(b: Builder, states: list[SSAValue], xw_t: SSAValue, mask: SSAValue | None
                 ) -> list[SSAValue]:
            (h_prev,) = states
            hr = dir_.recurrence(b, h_prev, rt, "hr")

            def reset_body(bb: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
                return f(bb, dir_.gate(bb, xw_t, hr, *i, 1))

            reset = emit_compute(b, op, dir_.name("reset"), cell, reset_body, tag=RECURRENT)
            if rt_h is None:
                candidate_hr = hr
            else:
                candidate_hr = dir_.recurrence(b, h_prev, rt_h, "hr_reset", scale=reset)

            def h_body(bb: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
                n, j = i
                old = read(bb, h_prev, [n, j])
                z = f(bb, dir_.gate(bb, xw_t, hr, n, j, 0))
                if linear:
                    column = bb.insert(arith.AddiOp(j, index(bb, 2 * hs))).result
                    rbh = read(bb, op.b, [dir_.dim(bb), bb.insert(
                        arith.AddiOp(j, index(bb, 5 * hs))).result])
                    recurrent = binary(bb, "add", read(bb, hr, [n, column]), rbh)
                    pre = binary(bb, "add", read(bb, xw_t, [n, column]),
                                 binary(bb, "mul", read(bb, reset, [n, j]), recurrent))
                else:
                    pre = dir_.gate(bb, xw_t, candidate_hr, n, j, 2, hr_gate=0)
                candidate = g(bb, pre)
                one_minus_z = binary(bb, "sub", constant(bb, 1, element), z)
                new = binary(bb, "add", binary(bb, "mul", one_minus_z, candidate),
                             binary(bb, "mul", z, old))
                return dir_.masked(bb, mask, n, new, old)

            return [emit_compute(b, op, dir_.name("h"), cell, h_body, tag=INJECTIVE)]

        return dir_.scan([dir_.initial(op.initial_h, "h0")], xw, step)

    return _define(op, builder, direction)


@compute_definition(RNNOp)
def rnn(op: RNNOp, builder: Builder) -> list[SSAValue]:
    """`h = f(x·W + h'·R + Wb + Rb)`."""

    def direction(dir_: _Direction) -> list[SSAValue]:
        hs = dir_.hidden
        xw = dir_.input_projection(1, [(0, hs), (hs, hs)])
        (f,) = dir_.acts
        cell = TensorType(dir_.element, [dir_.batch, hs])
        rt = dir_.transposed(op.r, "rt")

        def step(b: Builder, states: list[SSAValue], xw_t: SSAValue, mask: SSAValue | None
                 ) -> list[SSAValue]:
            (h_prev,) = states
            hr = dir_.recurrence(b, h_prev, rt, "hr")

            def h_body(bb: Builder, i: list[SSAValue], _: list[SSAValue]) -> SSAValue:
                n, j = i
                new = f(bb, dir_.gate(bb, xw_t, hr, n, j, 0))
                return dir_.masked(bb, mask, n, new, read(bb, h_prev, [n, j]))

            return [emit_compute(b, op, dir_.name("h"), cell, h_body, tag=INJECTIVE)]

        return dir_.scan([dir_.initial(op.initial_h, "h0")], xw, step)

    return _define(op, builder, direction)

