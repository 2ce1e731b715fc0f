"""The sizes of a tensor_expr function's results as affine maps of its inputs' sizes: the shape
functions of the runtime dims, so that a caller can allocate (and check) the outputs.

Counterpart: TVM Relax's symbolic shapes (`R.Tensor((n, m - 2))`, evaluated by its VM before a
call), MLIR's `reifyResultShapes`. A result's dynamic dim is traced back to the inputs: a
compute's `sizes` operand, `arith` on `index` (`addi`, `subi`, `muli` by a constant, `divui` /
`divsi` / `floordivsi`, `ceildivsi` / `ceildivui` and `remui` / `remsi` by a constant), and
`tensor.dim` of an argument, whose sizes are the map's symbols (`s0, s1, ...`: the dynamic dims
of the tensor arguments, argument by argument, as the loop-level function takes their sizes); a
call's result has the size of its first operand dynamic in that dim (`convert-tensor-expr-to-
loop`'s rule). A size computed otherwise (from data, or not affinely) has no map: the caller
then passes the output.
"""

from __future__ import annotations

from collections.abc import Callable

from dlc.dialects.tensor_expr.ops import ComputeOp
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, TensorType
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

_BY_CONSTANT: dict[type, Callable[[AffineExpr, int], AffineExpr]] = {
    arith.DivUIOp: lambda a, c: a // c,
    arith.DivSIOp: lambda a, c: a // c,
    arith.FloorDivSIOp: lambda a, c: a // c,
    arith.CeilDivSIOp: lambda a, c: a.ceil_div(c),
    arith.CeilDivUIOp: lambda a, c: a.ceil_div(c),
    arith.RemUIOp: lambda a, c: a % c,
    arith.RemSIOp: lambda a, c: a % c,
}
"""The `index` ops of a size divided (or taken modulo) by a positive constant."""


def input_symbols(func: FuncOp) -> dict[tuple[int, int], int]:
    """The symbol of each dynamic dim of `func`'s tensor arguments: (argument, dim) -> k."""
    dims = [(position, dim) for position, type_ in enumerate(func.function_type.inputs.data)
            if isinstance(type_, TensorType)
            for dim, size in enumerate(type_.get_shape()) if size < 0]
    return {pair: k for k, pair in enumerate(dims)}


def output_size_maps(func: FuncOp) -> list[AffineMapAttr | None]:
    """Per result of `func`: the map from the inputs' sizes to its dynamic dims' sizes (one
    result per dynamic dim, in order), or None for a static result or a size not traced."""
    block = func.body.block
    terminator = block.last_op
    if not isinstance(terminator, ReturnOp):
        return [None] * len(func.function_type.outputs.data)
    symbols = input_symbols(func)
    maps: list[AffineMapAttr | None] = []
    for value in terminator.arguments:
        type_ = value.type
        if not isinstance(type_, TensorType) or all(d >= 0 for d in type_.get_shape()):
            maps.append(None)
            continue
        exprs = [_dim_expr(value, dim, symbols, func)
                 for dim, size in enumerate(type_.get_shape()) if size < 0]
        maps.append(None if any(e is None for e in exprs) else AffineMapAttr(
            AffineMap(0, len(symbols), tuple(e for e in exprs if e is not None))))
    return maps


def _dim_expr(value: SSAValue, dim: int, symbols: dict[tuple[int, int], int], func: FuncOp
              ) -> AffineExpr | None:
    """The size of dim `dim` of the tensor `value` in terms of the inputs' sizes."""
    owner = value.owner
    if isinstance(value, BlockArgument):
        symbol = symbols.get((value.index, dim))
        static = value.type.get_shape()[dim]  # type: ignore[attr-defined]
        if value.block is not func.body.block:
            return None
        return AffineExpr.constant(static) if static >= 0 else (
            None if symbol is None else AffineExpr.symbol(symbol))
    shape = value.type.get_shape()  # type: ignore[attr-defined]
    if shape[dim] >= 0:
        return AffineExpr.constant(shape[dim])
    if isinstance(owner, ComputeOp):
        size = owner.extents()[dim]
        return _size_expr(size, symbols, func) if isinstance(size, SSAValue) else None
    if isinstance(owner, CallOp):
        source = next((operand for operand in owner.arguments
                       if isinstance(operand.type, TensorType)
                       and dim < operand.type.get_num_dims()
                       and operand.type.get_shape()[dim] < 0), None)
        return None if source is None else _dim_expr(source, dim, symbols, func)
    return None


def _size_expr(value: SSAValue, symbols: dict[tuple[int, int], int], func: FuncOp
               ) -> AffineExpr | None:
    """The `index` value `value` in terms of the inputs' sizes."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return AffineExpr.constant(owner.value.value.data)
    if isinstance(owner, tensor.DimOp):
        index = owner.index.owner
        if isinstance(index, arith.ConstantOp) and isinstance(index.value, IntegerAttr):
            return _dim_expr(owner.source, index.value.value.data, symbols, func)
        return None
    if not isinstance(owner, (arith.AddiOp, arith.SubiOp, arith.MuliOp, *_BY_CONSTANT)):
        return None
    lhs = _size_expr(owner.operands[0], symbols, func)
    rhs = _size_expr(owner.operands[1], symbols, func)
    if lhs is None or rhs is None:
        return None
    if isinstance(owner, arith.AddiOp):
        return lhs + rhs
    if isinstance(owner, arith.SubiOp):
        return lhs - rhs
    constant = _constant(rhs)
    if isinstance(owner, arith.MuliOp):
        if constant is None and _constant(lhs) is None:
            return None  # a product of two sizes is not affine
        return lhs * rhs if constant is not None else rhs * lhs
    if constant is None or constant <= 0:
        return None
    return _BY_CONSTANT[type(owner)](lhs, constant)


def _constant(expr: AffineExpr) -> int | None:
    value = getattr(expr, "value", None)
    return value if isinstance(value, int) else None


def size_exprs(size_map: AffineMapAttr) -> tuple[object, ...]:
    """The results of `size_map` in the runtime's JSON form (`runtime.size_exprs`)."""
    return tuple(_json(expr) for expr in size_map.data.results)


def _json(expr: AffineExpr) -> object:
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineSymExpr):
        return {"s": expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return [_KINDS[expr.kind], _json(expr.lhs), _json(expr.rhs)]
    raise ValueError(f"expected an affine expression of symbols, found {expr}")


_KINDS = {
    AffineBinaryOpKind.Add: "add",
    AffineBinaryOpKind.Mul: "mul",
    AffineBinaryOpKind.Mod: "mod",
    AffineBinaryOpKind.FloorDiv: "floordiv",
    AffineBinaryOpKind.CeilDiv: "ceildiv",
}
