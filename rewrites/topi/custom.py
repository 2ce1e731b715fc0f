"""Compute definition of `graph.custom`: the user's tensor-expression definition, or a call of
the user's external C function.

Counterpart: TVM's `te.compute` / `te.extern` as a user writes them for a new op. A
tensor-expression op's `compute(te, *inputs, **attrs)` builds `tensor_expr.compute`s through
`TensorExprBuilder` (`te.compute(shape, lambda i: x[i] * 2)`), so that fusion, the default
schedules and tuning treat it as any built-in op. An external op becomes
`func.call @symbol(inputs) -> outputs` of a bodyless `func.func private @symbol` carrying
`dlc.extern_library`; `convert-tensor-expr-to-loop` turns both into the destination-passing
form (outputs as trailing memref arguments), which the LLVM lowering calls with bare pointers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from dlc.dialects.graph.attrs import from_numpy_dtype, to_numpy_dtype
from dlc.dialects.graph.custom import (
    EXTERN_LIBRARY_ATTR,
    EXTERN_OP_ATTR,
    CustomOp,
    CustomOpDefinition,
    library_path,
    tensor_info,
)
from dlc.rewrites.topi.common import (
    binary,
    constant,
    emit_compute,
    is_float,
    is_unsigned,
    read,
    reduction,
)
from dlc.rewrites.topi.elementwise import INJECTIVE
from dlc.rewrites.topi.registry import compute_definition
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IndexType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

_INDEX_BINARY = {
    "add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp,
    "floordiv": arith.DivUIOp, "mod": arith.RemUIOp,
}


class Expr:
    """A scalar of a compute's body: an index variable, a read element, or arithmetic on them.

    Python operators build `arith` ops (`+ - * /`, `//` and `%` on indices); plain numbers take
    the other operand's type.
    """

    def __init__(self, te: TensorExprBuilder, value: SSAValue) -> None:
        self.te = te
        self.value = value

    @property
    def is_index(self) -> bool:
        """Whether this is an index (a loop variable or arithmetic on them)."""
        return isinstance(self.value.type, IndexType)

    def _other(self, other: Expr | float) -> SSAValue:
        if isinstance(other, Expr):
            return other.value
        return constant(self.te.b, other, self.value.type)

    def _binary(self, kind: str, other: Expr | float, reverse: bool = False) -> Expr:
        lhs, rhs = self.value, self._other(other)
        if reverse:
            lhs, rhs = rhs, lhs
        if self.is_index:
            if kind == "div":
                kind = "floordiv"
            if kind not in _INDEX_BINARY:
                raise TypeError(f"{kind} is not defined on indices")
            return Expr(self.te, self.te.b.insert(_INDEX_BINARY[kind](lhs, rhs)).results[0])
        return Expr(self.te, binary(self.te.b, kind, lhs, rhs))

    def __add__(self, other: Expr | float) -> Expr:
        return self._binary("add", other)

    def __radd__(self, other: float) -> Expr:
        return self._binary("add", other, True)

    def __sub__(self, other: Expr | float) -> Expr:
        return self._binary("sub", other)

    def __rsub__(self, other: float) -> Expr:
        return self._binary("sub", other, True)

    def __mul__(self, other: Expr | float) -> Expr:
        return self._binary("mul", other)

    def __rmul__(self, other: float) -> Expr:
        return self._binary("mul", other, True)

    def __truediv__(self, other: Expr | float) -> Expr:
        return self._binary("div", other)

    def __rtruediv__(self, other: float) -> Expr:
        return self._binary("div", other, True)

    def __floordiv__(self, other: Expr | int) -> Expr:
        return self._binary("floordiv", other)

    def __mod__(self, other: Expr | int) -> Expr:
        return self._binary("mod", other)

    def __neg__(self) -> Expr:
        return self._binary("sub", 0, True)


class Tensor:
    """A tensor a compute reads: an input of the op or an earlier compute's result.

    `x[i]` (a list of index expressions or ints, or one per axis) reads one element.
    """

    def __init__(self, te: TensorExprBuilder, value: SSAValue) -> None:
        self.te = te
        self.value = value
        info = tensor_info(value.type)
        self.shape: tuple[int, ...] = info.shape
        self.dtype: np.dtype = info.dtype

    def __getitem__(self, indices: Any) -> Expr:
        if not isinstance(indices, tuple | list):
            indices = (indices,)
        flat: list[Expr | int] = []
        for index in indices:
            flat.extend(index if isinstance(index, list | tuple) else [index])
        if len(flat) != len(self.shape):
            raise self.te.error(
                f"expected {len(self.shape)} indices to read a tensor of shape {self.shape}, "
                f"found {len(flat)}"
            )
        values = [i.value if isinstance(i, Expr) else self.te.index(i).value for i in flat]
        return Expr(self.te, read(self.te.b, self.value, values))


class TensorExprBuilder:
    """What a custom op's `compute(te, *inputs, **attrs)` builds with (TVM's `te` module).

    `te.compute(shape, body)` adds one `tensor_expr.compute`; `body(i)` (or `body(i, r)` for a
    reduction over `reduce=[extents]` with `combiner` sum, max, min or prod) returns the element
    at the index expressions `i`. The scalar functions (`exp`, `sigmoid`, `maximum`, ...) act on
    `Expr`s.
    """

    def __init__(self, op: CustomOp, builder: Builder) -> None:
        self.op = op
        self.outer = builder
        self.b = builder
        self.count = 0

    def error(self, message: str) -> PassFailedException:
        """An error naming the custom op."""
        return PassFailedException(f"'{self.op.name}' op {self.op.op_type.data}: {message}")

    def index(self, value: int) -> Expr:
        """An index constant."""
        return Expr(self, constant(self.b, value, IndexType()))

    def const(self, value: float, dtype: Any = np.float32) -> Expr:
        """A scalar constant of `dtype`."""
        return Expr(self, constant(self.b, value, from_numpy_dtype(np.dtype(dtype))))

    def compute(
        self,
        shape: Sequence[int],
        body: Callable[..., Expr],
        *,
        dtype: Any = None,
        reduce: Sequence[int] = (),
        combiner: str = "sum",
        name: str | None = None,
    ) -> Tensor:
        """A new tensor of `shape` whose element at `i` is `body(i)` (or the `combiner` of
        `body(i, r)` over the reduction indices `r` ranging over `reduce`). The dtype is the
        body's unless given."""
        outer = self.b
        element_types: list[Any] = []

        def build(b: Builder, i: list[SSAValue], r: list[SSAValue]) -> SSAValue:
            self.b = b
            try:
                spatial = [Expr(self, v) for v in i]
                result = body(spatial, [Expr(self, v) for v in r]) if reduce else body(spatial)
            finally:
                self.b = outer
            if not isinstance(result, Expr):
                raise self.error(f"expected the compute's body to give an Expr, found {result!r}")
            element_types.append(result.value.type)
            return result.value

        short = self.op.op_type.data.rsplit("::", 1)[-1].lower()
        compute_name = name or (short if self.count == 0 else f"{short}_{self.count}")
        self.count += 1
        element = from_numpy_dtype(np.dtype(dtype)) if dtype is not None else None
        if element is None:
            element = self._probe_element_type(shape, body, reduce)
        combine, init = (None, None)
        tag = INJECTIVE
        if reduce:
            combine, init = reduction(combiner, element)
            tag = f"reduce_{combiner}"
        value = emit_compute(
            outer, self.op, compute_name, TensorType(element, list(shape)), build, tag=tag,
            reduce_extents=list(reduce), combiner=combine, init=init,
        )
        if element_types and element_types[0] != element:
            raise self.error(
                f"expected the body of compute '{compute_name}' to give {element}, found "
                f"{element_types[0]}"
            )
        return Tensor(self, value)

    def _probe_element_type(self, shape: Sequence[int], body: Callable[..., Expr],
                            reduce: Sequence[int]) -> Any:
        """The element type `body` gives, found by building it once in a scratch block."""
        from xdsl.ir import Block

        scratch = Block(arg_types=[IndexType()] * (len(shape) + len(reduce)))
        outer = self.b
        self.b = Builder(InsertPoint.at_end(scratch))
        try:
            spatial = [Expr(self, a) for a in scratch.args[: len(shape)]]
            reduced = [Expr(self, a) for a in scratch.args[len(shape):]]
            result = body(spatial, reduced) if reduce else body(spatial)
        finally:
            self.b = outer
        element = result.value.type
        for op in reversed(list(scratch.ops)):
            op.detach()
            op.erase(safe_erase=False)
        return element

    # -- scalar functions ------------------------------------------------------------------

    def _math(self, op_type: type[Operation], x: Expr) -> Expr:
        return Expr(self, self.b.insert(op_type(x.value)).results[0])  # pyright: ignore

    def exp(self, x: Expr) -> Expr:
        """e ** x."""
        return self._math(mathd.ExpOp, x)

    def log(self, x: Expr) -> Expr:
        """Natural logarithm."""
        return self._math(mathd.LogOp, x)

    def tanh(self, x: Expr) -> Expr:
        """Hyperbolic tangent."""
        return self._math(mathd.TanhOp, x)

    def sqrt(self, x: Expr) -> Expr:
        """Square root."""
        return self._math(mathd.SqrtOp, x)

    def sigmoid(self, x: Expr) -> Expr:
        """1 / (1 + exp(-x))."""
        return 1.0 / (1.0 + self.exp(-x))

    def maximum(self, a: Expr, b: Expr | float) -> Expr:
        """The larger of `a` and `b`."""
        return a._binary("max", b)

    def minimum(self, a: Expr, b: Expr | float) -> Expr:
        """The smaller of `a` and `b`."""
        return a._binary("min", b)

    def cast(self, x: Expr, dtype: Any) -> Expr:
        """`x` converted to `dtype` (float <-> float, int -> float, float -> int)."""
        target = from_numpy_dtype(np.dtype(dtype))
        source = x.value.type
        if source == target:
            return x
        if is_float(source) and is_float(target):
            wider = np.dtype(dtype).itemsize > to_numpy_dtype(source).itemsize
            op: Operation = (arith.ExtFOp if wider else arith.TruncFOp)(x.value, target)
        elif is_float(target):
            op = (arith.UIToFPOp if is_unsigned(source) else arith.SIToFPOp)(x.value, target)
        else:
            op = (arith.FPToUIOp if is_unsigned(target) else arith.FPToSIOp)(x.value, target)
        return Expr(self, self.b.insert(op).results[0])


# ---------------------------------------------------------------------------------------------
# The definition
# ---------------------------------------------------------------------------------------------


def _module_of(op: Operation) -> ModuleOp:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ModuleOp):
        parent = parent.parent_op()
    assert parent is not None, "the op is inside a module"
    while (outer := parent.parent_op()) is not None and isinstance(outer, ModuleOp):
        parent = outer
    return parent


def declare_extern(op: CustomOp, definition: CustomOpDefinition) -> None:
    """Adds `func.func private @symbol` (no body, `dlc.extern_library`) to `op`'s module, once;
    fails if the symbol is declared with another signature."""
    extern = definition.extern
    assert extern is not None
    module = _module_of(op)
    inputs = [v.type for v in op.inputs]
    outputs = [r.type for r in op.outputs]
    for existing in module.ops:
        if isinstance(existing, func.FuncOp) and existing.sym_name.data == extern.name:
            if list(existing.function_type.inputs) != inputs or list(
                existing.function_type.outputs
            ) != outputs:
                raise PassFailedException(
                    f"'{op.name}' op {definition.qualified_name}: external function "
                    f"@{extern.name} is called with tensors {inputs} -> {outputs} and with "
                    f"{existing.function_type}; an external function takes one signature"
                )
            return
    declaration = func.FuncOp.external(extern.name, inputs, outputs)
    declaration.attributes[EXTERN_LIBRARY_ATTR] = StringAttr(library_path(extern))
    declaration.attributes[EXTERN_OP_ATTR] = StringAttr(definition.qualified_name)
    module.body.block.add_op(declaration)


@compute_definition(CustomOp)
def custom(op: CustomOp, builder: Builder) -> SSAValue | list[SSAValue]:
    """The user's compute (`TensorExprBuilder`) or a call of the user's external function."""
    try:
        definition = op.definition()
    except Exception as e:
        raise PassFailedException(str(e)) from None
    if definition.extern is not None:
        declare_extern(op, definition)
        call = func.CallOp(definition.extern.name, list(op.inputs), [r.type for r in op.outputs])
        call.location = op.location
        builder.insert(call)
        return list(call.results)
    assert definition.compute is not None
    te = TensorExprBuilder(op, builder)
    found = definition.compute(te, *(Tensor(te, v) for v in op.inputs), **op.attribute_values())
    tensors = [found] if isinstance(found, Tensor) else list(found)
    values = [t.value for t in tensors]
    for value, result in zip(values, op.outputs, strict=False):
        if value.type != result.type:
            raise PassFailedException(
                f"'{op.name}' op {definition.qualified_name}: the shape function gives "
                f"{result.type} but the compute gives {value.type}"
            )
    return values

