"""Whole-nest evaluation of a `loop.for` nest with NumPy: every iteration at once.

Counterpart: constant folding of a loop nest (TVM folds a layout transform of a constant weight
with `FoldConstant` after `AlterOpLayout`; MLIR's affine loop fusion/`fold-memref` utilities
evaluate such copies at compile time). The loop interpreter (`dialects.loop.interpreter`) runs
one scalar op at a time, too slow for a weight of millions of elements; this evaluator runs each
op once over the whole iteration space of the loops around it: the loops around an op are the
axes of an array (outermost first, so the array's C order is the iteration order), an induction
variable is the array of its values along its own axis (size 1 on the others), and a value
computed from induction variables broadcasts over the axes it depends on (NumPy broadcasting:
nothing is repeated for the loops a value does not depend on). It handles what a re-layout
nest holds: `loop.for` with bounds known outside the nest, `loop.block`, scalar
`loop.load`/`loop.store`, and `arith`/`math` ops. Stores run op by op in
program order, each over all its iterations in iteration order, which is the serial order as
long as no iteration reads what another one of the same nest writes (a pure re-layout: the nest
reads only buffers it does not write), and for an accumulation `buf[i] = buf[i] + x` (a sum over
the loops `i` does not depend on, as a packed weight's column sums), which adds each
iteration's `x` in place (`np.add.at`): the serial result of integer sums.

An index that is an affine function of the induction variables (sums and constant multiples:
what a re-layout's indices are) is also kept as its coefficients; an access whose indices all
are becomes a strided view of the buffer (NumPy's `as_strided`): a load reads through it with no
gather and a store writes through it with one strided copy, where index arrays per axis would
cost a gather or scatter over the whole weight (ResNet-18 packs 11.7M weights at compile time).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from dlc.dialects.arith_numpy import ARITH_MATH_OPS, numpy_dtype
from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, PrefetchOp, StoreOp, YieldOp
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, MemRefType, VectorType
from xdsl.ir import Attribute, Operation, SSAValue

Value = Any
"""A Python int, a NumPy scalar, a 1-D array of per-iteration values, or a buffer."""


class NestEvaluationError(Exception):
    """The nest holds something whole-nest evaluation does not handle (the message says what)."""


def constant_value(op: arith.ConstantOp) -> Value:
    """The value of a scalar `arith.constant` (an `index` is a Python int)."""
    value, type_ = op.value, op.result.type
    if not isinstance(value, IntegerAttr | FloatAttr):
        raise NestEvaluationError(f"'{op.name}' of {type_} is not a scalar constant")
    return _convert(value.value.data, type_)


def evaluate_nest(root: ForOp, env: dict[SSAValue, Value]) -> None:
    """Run the nest `root` over NumPy buffers, in place.

    `env` maps every value the nest uses from outside to a buffer (a NumPy array of the memref's
    shape; stores need it writeable) or a scalar. Raises NestEvaluationError for an op it does
    not handle, a loop bound that varies inside the nest, or an access out of bounds.
    """
    _Evaluation(dict(env)).ops([root], {}, ())


Lanes = dict[SSAValue, np.ndarray]
"""The values that vary inside the nest, each an array with one axis per enclosing loop."""


@dataclass(frozen=True)
class _Affine:
    """An index `constant + sum(coefficients[axis] * iteration[axis])`, where `iteration[axis]`
    counts the iterations of the loop of that axis (outermost 0) from 0."""

    constant: int
    coefficients: tuple[tuple[int, int], ...] = ()

    def plus(self, other: _Affine, sign: int = 1) -> _Affine:
        merged = dict(self.coefficients)
        for axis, coefficient in other.coefficients:
            merged[axis] = merged.get(axis, 0) + sign * coefficient
        return _Affine(self.constant + sign * other.constant,
                       tuple(sorted((a, c) for a, c in merged.items() if c)))

    def times(self, factor: int) -> _Affine:
        if factor == 0:
            return _Affine(0)
        return _Affine(self.constant * factor,
                       tuple((a, c * factor) for a, c in self.coefficients))


class _Evaluation:
    def __init__(self, env: dict[SSAValue, Value]) -> None:
        self.env = env
        self.affine: dict[SSAValue, _Affine] = {}

    def ops(self, ops: list[Operation], lanes: Lanes, shape: tuple[int, ...]) -> None:
        """Runs `ops` over the iterations of the loops around them, whose trip counts are
        `shape`; `lanes` holds the values that vary (arrays of `len(shape)` axes)."""
        for op in ops:
            if isinstance(op, ForOp):
                self.loop(op, lanes, shape)
            elif isinstance(op, BlockOp):
                self.ops(list(op.body.block.ops), lanes, shape)
            elif isinstance(op, YieldOp | PrefetchOp):
                continue
            elif isinstance(op, LoadOp):
                buffer, index = self.access(op, lanes, shape)
                view = self.strided(op, buffer, shape)
                if view is not None:
                    # A view of a buffer the nest may write would see later stores: copy it.
                    loaded = view.copy() if buffer.flags.writeable else view
                else:
                    loaded = buffer[index]
                if not isinstance(loaded, np.ndarray) or loaded.ndim != len(shape):
                    loaded = np.reshape(loaded, (1,) * len(shape))
                lanes[op.result] = loaded
            elif isinstance(op, StoreOp):
                buffer, index = self.access(op, lanes, shape)
                if not buffer.flags.writeable:
                    raise NestEvaluationError(f"'{op.name}' stores into a constant buffer")
                value = self.value(op.value, lanes)
                increment = self.increment(op, lanes)
                if increment is not None:
                    # `buf[i] = buf[i] + x` (a sum, such as a packed weight's column sums):
                    # every iteration adds its x to what the earlier ones left.
                    *index, increment = np.broadcast_arrays(*index, increment)
                    np.add.at(buffer, tuple(index), increment)
                    continue
                view = self.strided(op, buffer, shape)
                if view is not None and _distinct_addresses(view):
                    view[...] = value
                    continue
                if shape:
                    # Every iteration stores, in C order (the serial order: the last one wins).
                    *index, value = np.broadcast_arrays(*index, value)
                buffer[tuple(index)] = value
            elif isinstance(op, arith.ConstantOp):
                self.env[op.result] = constant_value(op)
            else:
                self.compute(op, lanes)

    def increment(self, op: StoreOp, lanes: Lanes) -> Value | None:
        """`x` of a store `buf[i] = buf[i] + x` (an integer `arith.addi` of a load of the same
        element, the same index values), else None."""
        add = op.value.owner
        if not isinstance(add, arith.AddiOp):
            return None
        for acc, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            load = acc.owner
            if (isinstance(load, LoadOp) and load.memref is op.memref
                    and len(load.indices) == len(op.indices)
                    and all(a is b for a, b in zip(load.indices, op.indices, strict=True))):
                return self.value(other, lanes)
        return None

    def loop(self, op: ForOp, lanes: Lanes, shape: tuple[int, ...]) -> None:
        bounds = []
        for operand in (op.lb, op.ub, op.step):
            value = self.value(operand, lanes)
            if isinstance(value, np.ndarray):
                raise NestEvaluationError(
                    f"'{op.name}' \"{op.axis.data}\" has a bound that varies inside the nest")
            bounds.append(int(value))
        lb, ub, step = bounds
        if step <= 0:
            raise NestEvaluationError(f"'{op.name}' \"{op.axis.data}\" has step {step} <= 0")
        values = np.arange(lb, ub, step, dtype=np.int64)
        if values.size == 0 or 0 in shape:
            return
        inner = {key: lane[..., np.newaxis] for key, lane in lanes.items()}
        inner[op.induction_var] = values.reshape((1,) * len(shape) + (values.size,))
        self.affine[op.induction_var] = _Affine(lb, ((len(shape), step),))
        self.ops(list(op.body.block.ops), inner, (*shape, values.size))

    def value(self, value: SSAValue, lanes: Lanes) -> Value:
        lane = lanes.get(value)
        if lane is not None:
            return lane
        if value not in self.env:
            raise NestEvaluationError(f"a value of type {value.type} defined outside the nest "
                                      "has no known value")
        return self.env[value]

    def access(
        self, op: LoadOp | StoreOp, lanes: Lanes, shape: tuple[int, ...]
    ) -> tuple[np.ndarray, tuple[np.ndarray | int, ...]]:
        value_type = op.result.type if isinstance(op, LoadOp) else op.value.type
        if isinstance(value_type, VectorType):
            raise NestEvaluationError(f"'{op.name}' of {value_type} is not a scalar access")
        buffer = self.value(op.memref, lanes)
        if not isinstance(buffer, np.ndarray) or not isinstance(op.memref.type, MemRefType):
            raise NestEvaluationError(f"'{op.name}' accesses a buffer with no known value")
        index: list[np.ndarray | int] = []
        for axis, (operand, dim) in enumerate(zip(op.indices, buffer.shape, strict=True)):
            position = self.value(operand, lanes)
            if isinstance(position, np.ndarray):
                low, high = int(position.min()), int(position.max())
            else:
                position = int(position)
                low = high = position
            if low < 0 or high >= dim:
                raise NestEvaluationError(
                    f"'{op.name}' accesses {op.memref.type} out of bounds: index #{axis} spans "
                    f"[{low}, {high}], expected [0, {dim - 1}]")
            index.append(position)
        return buffer, tuple(index)

    def affine_form(self, value: SSAValue) -> _Affine | None:
        """`value` as an affine function of the iterations, if it is one."""
        form = self.affine.get(value)
        if form is None and value in self.env:
            known = self.env[value]
            if isinstance(known, int | np.integer):
                return _Affine(int(known))
        return form

    def strided(self, op: LoadOp | StoreOp, buffer: np.ndarray,
                shape: tuple[int, ...]) -> np.ndarray | None:
        """The elements `op` accesses over the iterations as a view of `buffer` (axes: the
        loops around `op`), when its indices are affine and `buffer` is C-contiguous; the
        caller has checked the bounds."""
        if not buffer.flags.c_contiguous or not shape:
            return None
        offset = 0
        strides = [0] * len(shape)
        for index, stride in zip(op.indices, _element_strides(buffer.shape), strict=True):
            form = self.affine_form(index)
            if form is None:
                return None
            offset += form.constant * stride
            for axis, coefficient in form.coefficients:
                strides[axis] += coefficient * stride
        flat = buffer.reshape(-1)
        return np.lib.stride_tricks.as_strided(
            flat[offset:], shape, [s * buffer.itemsize for s in strides],
            writeable=buffer.flags.writeable,
        )

    def track_affine(self, op: Operation) -> None:
        """Records the affine form of an integer `op`'s result when its operands have one."""
        if op.name not in ("arith.addi", "arith.subi", "arith.muli"):
            return
        forms = [self.affine_form(operand) for operand in op.operands]
        lhs, rhs = forms
        if lhs is None or rhs is None:
            return
        if op.name == "arith.muli":
            if lhs.coefficients and rhs.coefficients:
                return
            form = lhs.times(rhs.constant) if not rhs.coefficients else rhs.times(lhs.constant)
        else:
            form = lhs.plus(rhs, -1 if op.name == "arith.subi" else 1)
        self.affine[op.results[0]] = form

    def compute(self, op: Operation, lanes: Lanes) -> None:
        impl = ARITH_MATH_OPS.get(op.name)
        if impl is None or len(op.results) != 1:
            raise NestEvaluationError(f"'{op.name}' op is not supported by nest evaluation")
        args = [self.value(operand, lanes) for operand in op.operands]
        result = _convert(impl(op, args), op.results[0].type)
        if isinstance(op.results[0].type, IndexType):
            self.track_affine(op)
        if isinstance(result, np.ndarray) and result.ndim:
            lanes[op.results[0]] = result
        else:
            self.env[op.results[0]] = result


def _element_strides(shape: tuple[int, ...]) -> list[int]:
    """The C-order strides of `shape`, in elements."""
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    return strides


def _distinct_addresses(view: np.ndarray) -> bool:
    """Whether every element of the strided `view` has its own address (then a store through it
    is the serial loop's store: no iteration overwrites another's): each stride, smallest first,
    steps past all the elements the smaller strides reach."""
    reach = 0
    for size, stride in sorted(zip(view.shape, view.strides, strict=True),
                               key=lambda pair: abs(pair[1])):
        if size == 1:
            continue
        if abs(stride) <= reach:
            return False
        reach += abs(stride) * (size - 1)
    return True


def _convert(value: Value, type_: Attribute) -> Value:
    """`value` as a value of the scalar type `type_` (arrays stay arrays)."""
    if isinstance(type_, VectorType):
        raise NestEvaluationError(f"values of {type_} are not supported by nest evaluation")
    if isinstance(value, np.ndarray) and value.ndim:
        return value.astype(np.int64 if isinstance(type_, IndexType) else numpy_dtype(type_),
                            copy=False)
    if isinstance(type_, IndexType):
        return int(value)
    return np.asarray(value).astype(numpy_dtype(type_))[()]
