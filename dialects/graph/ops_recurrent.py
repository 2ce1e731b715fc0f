"""Recurrent graph ops: `graph.lstm`, `graph.gru`, `graph.rnn` (ONNX LSTM, GRU, RNN).

Counterpart: ONNX's LSTM/GRU/RNN operators in their time-major layout (`layout` = 0; the importer
transposes batch-major models around the op) and TVM Relay's `nn.lstm`-style opaque ops. Each op
computes its result types from its operands and attributes and has an exact NumPy implementation
in `interpreter_recurrent.py`; `topi/recurrent.py` lowers it to a `tensor_expr.scan`.

Shared semantics. With T time steps, batch N, input size I, hidden size H, D directions (1 for
forward and reverse, 2 for bidirectional) and G gates (LSTM 4, GRU 3, RNN 1):
- operands: x T×N×I; w D×GH×I; r D×GH×H; b D×2GH (input bias then recurrence bias);
  initial_h D×N×H; for LSTM also initial_c D×N×H and p D×3H (peepholes i, o, f); then the
  optional `sequence_lens` (i32, length N, each in [0, T]).
- results: y T×D×N×H (the hidden state of every step, zero past a batch entry's length), y_h
  D×N×H (the state after the last valid step), and for LSTM y_c D×N×H.
- attributes: `direction` (forward | reverse | bidirectional), `hidden_size` (H), `activations`
  (lowercase ONNX names, A per direction: LSTM f, g, h; GRU f, g; RNN f), `activation_alpha` and
  `activation_beta` (one f64 per activation, the value it uses or 0 where it takes none), the
  optional `clip` (inputs of activations are clamped to [-clip, clip], except that of LSTM's
  `h`, the cell state, which ONNX Runtime leaves unclipped); LSTM `input_forget`
  (f = 1 - i), GRU `linear_before_reset`.
The reverse direction visits steps from the last valid one down to 0; a step past a batch entry's
length keeps that entry's state and writes zeros to y.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from dlc.dialects.graph.attrs import FusionKind, is_float_type
from dlc.dialects.graph.ops import (
    _tensor,
    bool_attr,
    i64_attr,
    op_error,
    with_fusion_kind,
)
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f64,
    i32,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    Operand,
    attr_def,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

DIRECTIONS: tuple[str, ...] = ("forward", "reverse", "bidirectional")
"""The values of a recurrent op's `direction`."""

ACTIVATIONS: dict[str, tuple[float, float]] = {
    "relu": (0.0, 0.0),
    "tanh": (0.0, 0.0),
    "sigmoid": (0.0, 0.0),
    "affine": (1.0, 0.0),
    "leakyrelu": (0.01, 0.0),
    "thresholdedrelu": (1.0, 0.0),
    "scaledtanh": (1.0, 1.0),
    "hardsigmoid": (0.2, 0.5),
    "elu": (1.0, 0.0),
    "softsign": (0.0, 0.0),
    "softplus": (0.0, 0.0),
}
"""The activations ONNX defines for recurrent ops (lowercase) and their default (alpha, beta)."""

ACTIVATION_ARGS: dict[str, tuple[bool, bool]] = {
    "affine": (True, True),
    "leakyrelu": (True, False),
    "thresholdedrelu": (True, False),
    "scaledtanh": (True, True),
    "hardsigmoid": (True, True),
    "elu": (True, False),
}
"""Which of (alpha, beta) an activation takes; the others take neither."""


def _f64_array(values: Sequence[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(f64, [float(v) for v in values])


class RecurrentOp(IRDLOperation):
    """The operands, attributes and checks that graph.lstm, graph.gru and graph.rnn share."""

    GATES: ClassVar[int] = 1
    ACTIVATIONS_PER_DIRECTION: ClassVar[int] = 1
    DEFAULT_ACTIVATIONS: ClassVar[tuple[str, ...]] = ("tanh",)
    STATE_OPERANDS: ClassVar[tuple[str, ...]] = ("initial_h",)

    # Operands and results are declared in each op, in order (IRDL lists a subclass's fields
    # before its base's).
    if TYPE_CHECKING:
        x: Operand
        w: Operand
        r: Operand
        b: Operand
        initial_h: Operand
        sequence_lens: Operand | None
        y: OpResult
        y_h: OpResult

    direction = attr_def(StringAttr)
    hidden_size = attr_def(IntegerAttr[I64])
    activations = attr_def(ArrayAttr[StringAttr])
    activation_alpha = attr_def(DenseArrayBase)
    activation_beta = attr_def(DenseArrayBase)
    clip = opt_attr_def(FloatAttr)

    traits = traits_def(Pure())

    # -- accessors -------------------------------------------------------------------------------

    def direction_value(self) -> str:
        """forward, reverse or bidirectional."""
        return self.direction.data

    def num_directions(self) -> int:
        """2 for bidirectional, else 1."""
        return 2 if self.direction.data == "bidirectional" else 1

    def hidden(self) -> int:
        """The hidden size H."""
        return self.hidden_size.value.data

    def activation_list(self, direction: int) -> list[tuple[str, float, float]]:
        """(name, alpha, beta) of each activation of `direction` (0 forward, 1 reverse)."""
        count = self.ACTIVATIONS_PER_DIRECTION
        names = [a.data for a in self.activations.data]
        alphas = self.activation_alpha.get_values()
        betas = self.activation_beta.get_values()
        start = direction * count
        return [
            (names[k], float(alphas[k]), float(betas[k])) for k in range(start, start + count)
        ]

    def clip_value(self) -> float | None:
        """The clip threshold, or None."""
        return None if self.clip is None else float(self.clip.value.data)

    def sequence_lengths(self) -> SSAValue | None:
        """The optional `sequence_lens` operand."""
        return self.sequence_lens

    # -- verification ----------------------------------------------------------------------------

    @classmethod
    def infer_types(
        cls, x: Attribute, w: Attribute, r: Attribute, b: Attribute, states: Sequence[Attribute],
        sequence_lens: Attribute | None, *, direction: str, hidden_size: int,
        extra: dict[str, tuple[Attribute, list[int]]] | None = None,
    ) -> list[TensorType]:
        """The result types (y, y_h[, y_c]) after checking every operand's shape and type."""
        name = cls.name
        if direction not in DIRECTIONS:
            raise op_error(name, f"expected direction to be one of {', '.join(DIRECTIONS)}, "
                                 f"found '{direction}'")
        if hidden_size < 1:
            raise op_error(name, f"expected a positive hidden_size, found {hidden_size}")
        x_type = _tensor(name, "x", x)
        element = x_type.get_element_type()
        if not is_float_type(element):
            raise op_error(name, f"expected a float element type for x, found {element}")
        if x_type.get_num_dims() != 3:
            raise op_error(name, f"expected x of rank 3 (steps x batch x input), found {x_type}")
        steps, batch, inputs = x_type.get_shape()
        d, gh, h = 2 if direction == "bidirectional" else 1, cls.GATES * hidden_size, hidden_size
        expected: list[tuple[str, Attribute, list[int]]] = [
            ("w", w, [d, gh, inputs]), ("r", r, [d, gh, h]), ("b", b, [d, 2 * gh]),
        ]
        expected += [(state, t, [d, batch, h]) for state, t in zip(cls.STATE_OPERANDS, states,
                                                                    strict=True)]
        expected += [(key, t, shape) for key, (t, shape) in (extra or {}).items()]
        for what, type_, shape in expected:
            found = _tensor(name, what, type_)
            if list(found.get_shape()) != shape or found.get_element_type() != element:
                raise op_error(name, f"expected {what} of type "
                                     f"{TensorType(element, shape)}, found {found}")
        if sequence_lens is not None:
            lens = _tensor(name, "sequence_lens", sequence_lens)
            if lens != TensorType(i32, [batch]):
                raise op_error(name, f"expected sequence_lens of type "
                                     f"{TensorType(i32, [batch])}, found {lens}")
        state = TensorType(element, [d, batch, h])
        return [TensorType(element, [steps, d, batch, h])] + [state] * len(cls.STATE_OPERANDS)

    def _check_attributes(self) -> None:
        names = [a.data for a in self.activations.data]
        count = self.ACTIVATIONS_PER_DIRECTION * self.num_directions()
        if len(names) != count:
            raise op_error(self.name, f"expected {count} activations for direction "
                                      f"'{self.direction.data}', found {len(names)}")
        for activation in names:
            if activation not in ACTIVATIONS:
                raise op_error(self.name, f"expected activations among "
                                          f"{', '.join(ACTIVATIONS)}, found '{activation}'")
        for what, values in (("activation_alpha", self.activation_alpha),
                             ("activation_beta", self.activation_beta)):
            if values.elt_type != f64 or len(values.get_values()) != count:
                raise op_error(self.name, f"expected {what} to hold {count} f64 values, found "
                                          f"{values}")
        clip = self.clip_value()
        if clip is not None and not clip > 0:
            raise op_error(self.name, f"expected a positive clip, found {clip}")

    def _extra_operands(self) -> dict[str, tuple[Attribute, list[int]]]:
        return {}

    def verify_(self) -> None:
        self._check_attributes()
        lens = self.sequence_lengths()
        states = [getattr(self, state).type for state in self.STATE_OPERANDS]
        expected = self.infer_types(
            self.x.type, self.w.type, self.r.type, self.b.type, states,
            None if lens is None else lens.type, direction=self.direction.data,
            hidden_size=self.hidden(), extra=self._extra_operands())
        found = [result.type for result in self.results]
        if expected != found:
            raise op_error(self.name, f"expected result types "
                                      f"{', '.join(map(str, expected))}, found "
                                      f"{', '.join(map(str, found))}")


def _attributes(
    cls: type[RecurrentOp], direction: str, hidden_size: int,
    activations: Sequence[tuple[str, float, float]] | None, clip: float | None,
) -> dict[str, Attribute]:
    if activations is None:
        repeat = 2 if direction == "bidirectional" else 1
        activations = [(a, *ACTIVATIONS[a]) for a in cls.DEFAULT_ACTIVATIONS] * repeat
    attributes: dict[str, Attribute] = {
        "direction": StringAttr(direction),
        "hidden_size": i64_attr(hidden_size),
        "activations": ArrayAttr([StringAttr(a[0]) for a in activations]),
        "activation_alpha": _f64_array([a[1] for a in activations]),
        "activation_beta": _f64_array([a[2] for a in activations]),
    }
    if clip is not None:
        attributes["clip"] = FloatAttr(clip, f64)
    return attributes


def _values(*values: SSAValue | Operation | None) -> list[SSAValue]:
    return [SSAValue.get(v) for v in values if v is not None]


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class LSTMOp(RecurrentOp):
    """A long short-term memory layer (ONNX LSTM, time-major).

    Semantics: per direction and step (`*` elementwise, gates ordered i, o, f, c in w, r,
    b), `i = f(Xt·Wi + Ht-1·Ri + Pi*Ct-1 + Wbi + Rbi)`, `f = f(... + Pf*Ct-1 ...)` (or `1 - i` with
    `input_forget`), `c = g(Xt·Wc + Ht-1·Rc + Wbc + Rbc)`, `Ct = f*Ct-1 + i*c`,
    `o = f(... + Po*Ct ...)`, `Ht = o*h(Ct)`. See the module docstring for the operands.

    Example:
        %y, %yh, %yc = graph.lstm %x, %w, %r, %b, %h0, %c0, %p
            {direction = "forward", hidden_size = 3 : i64, activations = ["sigmoid", "tanh",
             "tanh"], activation_alpha = array<f64: 0.0, 0.0, 0.0>,
             activation_beta = array<f64: 0.0, 0.0, 0.0>, input_forget = false}
            : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>,
               tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x9xf32>)
            -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
    """

    name = "graph.lstm"
    GATES: ClassVar[int] = 4
    ACTIVATIONS_PER_DIRECTION: ClassVar[int] = 3
    DEFAULT_ACTIVATIONS: ClassVar[tuple[str, ...]] = ("sigmoid", "tanh", "tanh")
    STATE_OPERANDS: ClassVar[tuple[str, ...]] = ("initial_h", "initial_c")

    x = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    initial_c = operand_def(TensorType)
    p = operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    y = result_def(TensorType)
    y_h = result_def(TensorType)
    y_c = result_def(TensorType)
    input_forget = attr_def(BoolAttr, default_value=bool_attr(False))

    assembly_format = (
        "$x `,` $w `,` $r `,` $b `,` $initial_h `,` $initial_c `,` $p "
        "(`seq_lens` `(` $sequence_lens^ `)`)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, x: SSAValue | Operation, w: SSAValue | Operation, r: SSAValue | Operation,
        b: SSAValue | Operation, initial_h: SSAValue | Operation,
        initial_c: SSAValue | Operation, p: SSAValue | Operation,
        sequence_lens: SSAValue | Operation | None = None, *, direction: str = "forward",
        hidden_size: int, activations: Sequence[tuple[str, float, float]] | None = None,
        clip: float | None = None, input_forget: bool = False,
    ) -> None:
        operands = _values(x, w, r, b, initial_h, initial_c, p)
        lens = _values(sequence_lens)
        d = 2 if direction == "bidirectional" else 1
        result_types = self.infer_types(
            *(o.type for o in operands[:4]), [o.type for o in operands[4:6]],
            lens[0].type if lens else None, direction=direction, hidden_size=hidden_size,
            extra={"p": (operands[6].type, [d, 3 * hidden_size])})
        attributes = _attributes(type(self), direction, hidden_size, activations, clip)
        attributes["input_forget"] = bool_attr(input_forget)
        super().__init__(operands=[*operands, lens], result_types=result_types,
                         attributes=attributes)

    def _extra_operands(self) -> dict[str, tuple[Attribute, list[int]]]:
        return {"p": (self.p.type, [self.num_directions(), 3 * self.hidden()])}

    def input_forget_value(self) -> bool:
        """Whether the forget gate is coupled to the input gate (f = 1 - i)."""
        return bool(self.input_forget.value.data)


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class GRUOp(RecurrentOp):
    """A gated recurrent unit layer (ONNX GRU, time-major).

    Semantics: per direction and step (gates ordered z, r, h in w, r, b),
    `z = f(Xt·Wz + Ht-1·Rz + Wbz + Rbz)`, `r = f(Xt·Wr + Ht-1·Rr + Wbr + Rbr)`,
    `h = g(Xt·Wh + (r*Ht-1)·Rh + Rbh + Wbh)`, or with `linear_before_reset`
    `h = g(Xt·Wh + r*(Ht-1·Rh + Rbh) + Wbh)`; `Ht = (1-z)*h + z*Ht-1`.

    Example:
        %y, %yh = graph.gru %x, %w, %r, %b, %h0
            {direction = "reverse", hidden_size = 3 : i64, activations = ["sigmoid", "tanh"],
             activation_alpha = array<f64: 0.0, 0.0>, activation_beta = array<f64: 0.0, 0.0>,
             linear_before_reset = true}
            : (tensor<5x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>,
               tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
    """

    name = "graph.gru"
    GATES: ClassVar[int] = 3
    ACTIVATIONS_PER_DIRECTION: ClassVar[int] = 2
    DEFAULT_ACTIVATIONS: ClassVar[tuple[str, ...]] = ("sigmoid", "tanh")

    x = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    y = result_def(TensorType)
    y_h = result_def(TensorType)
    linear_before_reset = attr_def(BoolAttr, default_value=bool_attr(False))

    assembly_format = (
        "$x `,` $w `,` $r `,` $b `,` $initial_h "
        "(`seq_lens` `(` $sequence_lens^ `)`)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, x: SSAValue | Operation, w: SSAValue | Operation, r: SSAValue | Operation,
        b: SSAValue | Operation, initial_h: SSAValue | Operation,
        sequence_lens: SSAValue | Operation | None = None, *, direction: str = "forward",
        hidden_size: int, activations: Sequence[tuple[str, float, float]] | None = None,
        clip: float | None = None, linear_before_reset: bool = False,
    ) -> None:
        operands = _values(x, w, r, b, initial_h)
        lens = _values(sequence_lens)
        result_types = self.infer_types(
            *(o.type for o in operands[:4]), [operands[4].type],
            lens[0].type if lens else None, direction=direction, hidden_size=hidden_size)
        attributes = _attributes(type(self), direction, hidden_size, activations, clip)
        attributes["linear_before_reset"] = bool_attr(linear_before_reset)
        super().__init__(operands=[*operands, lens], result_types=result_types,
                         attributes=attributes)

    def linear_before_reset_value(self) -> bool:
        """Whether the reset gate applies after the recurrence GEMM."""
        return bool(self.linear_before_reset.value.data)


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class RNNOp(RecurrentOp):
    """A simple recurrent layer (ONNX RNN, time-major).

    Semantics: per direction and step, `Ht = f(Xt·Wi + Ht-1·Ri + Wbi + Rbi)`.

    Example:
        %y, %yh = graph.rnn %x, %w, %r, %b, %h0 seq_lens(%lens)
            {direction = "bidirectional", hidden_size = 3 : i64, activations = ["tanh", "relu"],
             activation_alpha = array<f64: 0.0, 0.0>, activation_beta = array<f64: 0.0, 0.0>}
            : (tensor<5x2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>, tensor<2x6xf32>,
               tensor<2x2x3xf32>, tensor<2xi32>) -> (tensor<5x2x2x3xf32>, tensor<2x2x3xf32>)
    """

    name = "graph.rnn"

    x = operand_def(TensorType)
    w = operand_def(TensorType)
    r = operand_def(TensorType)
    b = operand_def(TensorType)
    initial_h = operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    y = result_def(TensorType)
    y_h = result_def(TensorType)

    assembly_format = (
        "$x `,` $w `,` $r `,` $b `,` $initial_h "
        "(`seq_lens` `(` $sequence_lens^ `)`)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, x: SSAValue | Operation, w: SSAValue | Operation, r: SSAValue | Operation,
        b: SSAValue | Operation, initial_h: SSAValue | Operation,
        sequence_lens: SSAValue | Operation | None = None, *, direction: str = "forward",
        hidden_size: int, activations: Sequence[tuple[str, float, float]] | None = None,
        clip: float | None = None,
    ) -> None:
        operands = _values(x, w, r, b, initial_h)
        lens = _values(sequence_lens)
        result_types = self.infer_types(
            *(o.type for o in operands[:4]), [operands[4].type],
            lens[0].type if lens else None, direction=direction, hidden_size=hidden_size)
        super().__init__(operands=[*operands, lens], result_types=result_types,
                         attributes=_attributes(type(self), direction, hidden_size, activations,
                                                clip))


RECURRENT_OPS: tuple[type[IRDLOperation], ...] = (LSTMOp, GRUOp, RNNOp)
"""The ops of this module, in the order the Dialect object lists them."""
