"""The sizes of a tensor_expr function's results as affine maps of its inputs' sizes: the shape
functions of the runtime dims, so that a caller can allocate (and check) the outputs.

Counterpart: TVM Relax's symbolic shapes (`R.Tensor((n, m - 2))`, evaluated by its VM before a
call), MLIR's `reifyResultShapes`. A result's dynamic dim is traced back to the inputs: a
compute's `sizes` operand, `arith` on `index` (`addi`, `subi`, `muli` (a product of two sizes
is semi-affine, MLIR's `s0 * s1`), `divui` / `divsi` / `floordivsi`, `ceildivsi` / `ceildivui`
and `remui` / `remsi` by a constant), and
`tensor.dim` of an argument, whose sizes are the map's symbols (`s0, s1, ...`: the dynamic dims
of the tensor arguments, argument by argument, as the loop-level function takes their sizes); a
call's result has the size of its first operand dynamic in that dim (`convert-tensor-expr-to-
loop`'s rule). A size computed otherwise (from data, or not affinely) has no map: the caller
then passes the output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dlc.dialects.contracts import DIM_SYMBOLS_ATTR, SIZE_CHECKS_ATTR
from dlc.dialects.dim_symbols import argument_symbols
from dlc.dialects.tensor_expr.ops import ComputeOp
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.traits import SymbolTable

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


_Memo = dict[object, object]
"""What one trace has computed: each (value, dim)'s expression, each callee's maps (a chain
of calls would otherwise be traced again from every call after it)."""


def output_size_maps(func: FuncOp, memo: _Memo | None = None) -> list[AffineMapAttr | None]:
    """Per result of `func`: the map from the inputs' sizes to its dynamic dims' sizes (one
    result per dynamic dim, in order), or None for a static result or a size not traced."""
    memo = {} if memo is None else memo
    if (func, "maps") in memo:
        return memo[func, "maps"]  # type: ignore[return-value]
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
        exprs = [_dim_expr(value, dim, symbols, func, memo)
                 for dim, size in enumerate(type_.get_shape()) if size < 0]
        maps.append(None if any(e is None for e in exprs) else AffineMapAttr(
            AffineMap(0, len(symbols), tuple(e for e in exprs if e is not None))))
    memo[func, "maps"] = maps
    return maps


def _dim_expr(value: SSAValue, dim: int, symbols: dict[tuple[int, int], int], func: FuncOp,
              memo: _Memo) -> AffineExpr | None:
    """The size of dim `dim` of the tensor `value` in terms of the inputs' sizes."""
    if (value, dim) not in memo:
        memo[value, dim] = _traced_dim_expr(value, dim, symbols, func, memo)
    return memo[value, dim]  # type: ignore[return-value]


def _traced_dim_expr(value: SSAValue, dim: int, symbols: dict[tuple[int, int], int],
                     func: FuncOp, memo: _Memo) -> AffineExpr | None:
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
        return _size_expr(size, symbols, func, memo) if isinstance(size, SSAValue) else None
    if isinstance(owner, CallOp):
        traced = call_size_expr(owner, owner.results.index(value), dim, memo)
        if traced is None:
            return None
        expr, operand_dims = traced
        sizes = [_dim_expr(owner.arguments[o], d, symbols, func, memo)
                 for o, d in operand_dims]
        if any(size is None for size in sizes):
            return None
        return expr.replace_dims_and_symbols([], [s for s in sizes if s is not None])
    return None


def call_size_expr(call: CallOp, result: int, dim: int, memo: _Memo | None = None
                   ) -> tuple[AffineExpr, list[tuple[int, int]]] | None:
    """The size of dynamic dim `dim` of `call`'s result `result` as an affine expression whose
    symbol k is the size of dim `d_k` of operand `o_k` (the list of (o_k, d_k)): the callee's
    shape function where it has a body (None where its body sizes it otherwise: from data, or
    not affinely), else the size of the first operand dynamic in that dim (the rule of the
    batch-polymorphic functions `convert-graph-to-tensor-expr` outlines); None where neither
    applies."""
    callee = SymbolTable.lookup_symbol(call, call.callee)
    if isinstance(callee, FuncOp) and callee.body.blocks:
        maps = output_size_maps(callee, memo)
        size_map = maps[result] if result < len(maps) else None
        if size_map is None:
            return None
        type_ = call.results[result].type
        assert isinstance(type_, TensorType)
        dynamic = [d for d, size in enumerate(type_.get_shape()) if size < 0]
        pairs = sorted(input_symbols(callee).items(), key=lambda item: item[1])
        return size_map.data.results[dynamic.index(dim)], [pair for pair, _ in pairs]
    source = next((position for position, operand in enumerate(call.arguments)
                   if isinstance(operand.type, TensorType)
                   and dim < operand.type.get_num_dims()
                   and operand.type.get_shape()[dim] < 0), None)
    return None if source is None else (AffineExpr.symbol(0), [(source, dim)])


def _size_expr(value: SSAValue, symbols: dict[tuple[int, int], int], func: FuncOp,
               memo: _Memo) -> AffineExpr | None:
    """The `index` value `value` in terms of the inputs' sizes."""
    def dim_of(leaf: SSAValue) -> AffineExpr | None:
        owner = leaf.owner
        if isinstance(owner, tensor.DimOp):
            index = owner.index.owner
            if isinstance(index, arith.ConstantOp) and isinstance(index.value, IntegerAttr):
                return _dim_expr(owner.source, index.value.value.data, symbols, func, memo)
        return None

    return index_arith_expr(value, dim_of)


def index_arith_expr(value: SSAValue, leaf: Callable[[SSAValue], AffineExpr | None]
                     ) -> AffineExpr | None:
    """The `index` value `value` as an affine expression: constants, and `arith` on `index`
    (`addi`, `subi`, `muli` (of two sizes too: a semi-affine product, `dialects.semi_affine`),
    divisions and remainders by a positive constant) down to the values `leaf` gives an
    expression for (None: not of that form, or not traced)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return AffineExpr.constant(owner.value.value.data)
    if not isinstance(owner, (arith.AddiOp, arith.SubiOp, arith.MuliOp, *_BY_CONSTANT)):
        return leaf(value)
    lhs = index_arith_expr(owner.operands[0], leaf)
    rhs = index_arith_expr(owner.operands[1], leaf)
    if lhs is None or rhs is None:
        return None
    if isinstance(owner, arith.AddiOp):
        return lhs + rhs
    if isinstance(owner, arith.SubiOp):
        return lhs - rhs
    constant = _constant(rhs)
    if isinstance(owner, arith.MuliOp):
        return lhs * rhs  # of two sizes: semi-affine
    if constant is None or constant <= 0:
        return None
    return _BY_CONSTANT[type(owner)](lhs, constant)


# ---------------------------------------------------------------------------------------------
# Size checks: what the inputs' sizes must satisfy
# ---------------------------------------------------------------------------------------------

CHECK_KINDS = ("eq", "ge")
"""`eq`: the two sizes are equal; `ge`: the first is at least the second."""


def index_expr(func: FuncOp, value: SSAValue) -> AffineExpr | None:
    """The `index` value `value` of `func` in terms of its inputs' sizes, or None."""
    return _size_expr(value, input_symbols(func), func, {})


def checked_sizes(checks: Attribute | None, count: int) -> list[AffineExpr]:
    """For each of `count` input symbols, the expression the `eq` size checks `checks` (a
    function's `dlc.size_checks`, verified before it runs) make it equal to: a symbol one side
    of a check is replaced by the other side (the lower of two symbols kept), checks applied
    until none changes anything. Sizes whose expressions agree after the replacement
    (`replace_dims_and_symbols([], checked_sizes(...))`) are equal at run time: a concat's
    operands along its other axes, a residual add's two operands."""
    sizes = [AffineExpr.symbol(k) for k in range(count)]
    entries = [entry for entry in (checks.data if isinstance(checks, ArrayAttr) else ())
               if isinstance(entry, DictionaryAttr) and entry.data.get("kind") == StringAttr("eq")
               and isinstance(entry.data.get("sizes"), AffineMapAttr)]
    for _ in range(count):
        changed = False
        for entry in entries:
            lhs, rhs = (expr.replace_dims_and_symbols([], sizes)
                        for expr in entry.data["sizes"].data.results)  # type: ignore[attr-defined]
            if lhs == rhs:
                continue
            pair = [e.position if isinstance(e, AffineSymExpr) and e.position < count else None
                    for e in (lhs, rhs)]
            if pair[0] is not None and pair[1] is not None:
                low, high = sorted(pair)  # type: ignore[type-var]
                replaced, value = high, AffineExpr.symbol(low)
            elif pair[1] is not None:
                replaced, value = pair[1], lhs
            elif pair[0] is not None:
                replaced, value = pair[0], rhs
            else:
                continue
            substitution = [AffineExpr.symbol(k) for k in range(count)]
            substitution[replaced] = value
            sizes = [size.replace_dims_and_symbols([], substitution) for size in sizes]
            changed = True
        if not changed:
            break
    return sizes


def same_size(func: FuncOp, lhs: SSAValue | int, rhs: SSAValue | int) -> bool:
    """Whether the `index` values (or constants) `lhs` and `rhs` of `func` are equal at run
    time: the same value, or expressions of its inputs' sizes that agree once its `eq` size
    checks are applied (`checked_sizes`)."""
    if lhs is rhs or lhs == rhs:
        return True
    exprs = [AffineExpr.constant(v) if isinstance(v, int) else index_expr(func, v)
             for v in (lhs, rhs)]
    if exprs[0] is None or exprs[1] is None:
        return False
    sizes = checked_sizes(func.attributes.get(SIZE_CHECKS_ATTR), len(input_symbols(func)))
    return exprs[0].replace_dims_and_symbols([], sizes) == \
        exprs[1].replace_dims_and_symbols([], sizes)


def dim_expr(func: FuncOp, value: SSAValue, dim: int) -> AffineExpr | None:
    """The size of dim `dim` of the tensor `value` of `func` in terms of its inputs' sizes (an
    argument's symbol, a compute's size, a call's shape function), or None."""
    return _dim_expr(value, dim, input_symbols(func), func, {})


def add_size_check(func: FuncOp, kind: str, lhs: AffineExpr, rhs: AffineExpr, what: str
                   ) -> None:
    """Records on `func` (`dlc.size_checks`) that its inputs' sizes must make `lhs` equal to
    (`eq`) or at least (`ge`) `rhs`; nothing where that holds for any sizes."""
    assert kind in CHECK_KINDS, kind
    if (lhs - rhs) == AffineExpr.constant(0) or (
            kind == "ge" and (value := _constant(lhs - rhs)) is not None and value >= 0):
        return
    entry = _check_entry(kind, lhs, rhs, len(input_symbols(func)), what)
    existing = func.attributes.get(SIZE_CHECKS_ATTR)
    entries = list(existing.data) if isinstance(existing, ArrayAttr) else []
    if entry not in entries:
        func.attributes[SIZE_CHECKS_ATTR] = ArrayAttr([*entries, entry])


def _check_entry(kind: str, lhs: AffineExpr, rhs: AffineExpr, symbols: int, what: str
                 ) -> DictionaryAttr:
    return DictionaryAttr({"sizes": AffineMapAttr(AffineMap(0, symbols, (lhs, rhs))),
                           "kind": StringAttr(kind), "what": StringAttr(what)})


def size_checks(func: FuncOp, memo: _Memo | None = None) -> list[DictionaryAttr]:
    """The checks of `func`'s inputs' sizes (`dlc.size_checks`, in its symbols): its
    arguments sharing a `dlc.dim_symbols` name agreeing, its own, and those of the functions it
    calls (their operands' sizes traced to `func`'s inputs; a check that cannot be traced is
    left to no one, as the callee's own sizes would be)."""
    memo = {} if memo is None else memo
    if (func, "checks") not in memo:
        checks: list[DictionaryAttr] = []
        existing = func.attributes.get(SIZE_CHECKS_ATTR)
        own = list(existing.data) if isinstance(existing, ArrayAttr) else []
        for entry in [*_shared_symbol_checks(func), *own, *_call_checks(func, memo)]:
            lhs, rhs = entry.data["sizes"].data.results  # type: ignore[attr-defined]
            if lhs != rhs and entry not in checks:
                checks.append(entry)
        memo[func, "checks"] = checks
    return memo[func, "checks"]  # type: ignore[return-value]


def _shared_symbol_checks(func: FuncOp) -> list[DictionaryAttr]:
    """`eq` checks of the arguments' dims that share a `dlc.dim_symbols` name (ONNX's
    `dim_param`: one size)."""
    if func.arg_attrs is None or not any(DIM_SYMBOLS_ATTR in a.data for a in func.arg_attrs.data):
        return []
    symbols = input_symbols(func)
    names = [f"#{i}" for i in range(len(func.function_type.inputs.data))]
    for position, attrs in enumerate(func.arg_attrs.data):
        if isinstance(name := attrs.data.get("onnx.name"), StringAttr):
            names[position] = f"'{name.data}'"
    first: dict[str, tuple[int, str]] = {}
    checks: list[DictionaryAttr] = []
    for position, dims in enumerate(argument_symbols(func)):
        for dim, symbol in enumerate(dims):
            if not symbol or (position, dim) not in symbols:
                continue
            where = f"input {names[position]} dim {dim}"
            if symbol not in first:
                first[symbol] = (symbols[position, dim], where)
                continue
            index, there = first[symbol]
            checks.append(_check_entry(
                "eq", AffineExpr.symbol(symbols[position, dim]), AffineExpr.symbol(index),
                len(symbols), f"{where} and {there} share the dim '{symbol}'"))
    return checks


def _call_checks(func: FuncOp, memo: _Memo) -> list[DictionaryAttr]:
    """The checks of the tensor_expr functions `func` calls, in `func`'s symbols."""
    symbols = input_symbols(func)
    checks: list[DictionaryAttr] = []
    for call in func.walk():
        if not isinstance(call, CallOp):
            continue
        callee = SymbolTable.lookup_symbol(call, call.callee)
        if not isinstance(callee, FuncOp) or not callee.body.blocks or any(
                isinstance(t, MemRefType) for t in callee.function_type.inputs.data):
            continue  # a declaration, or a function lowered already (sizes of its own)
        inner = size_checks(callee, memo)
        pairs = sorted(input_symbols(callee).items(), key=lambda item: item[1])
        values = [_dim_expr(call.arguments[o], d, symbols, func, memo) for (o, d), _ in pairs]
        known = [v for v in values if v is not None]
        if not inner or len(known) != len(values):
            continue
        for entry in inner:
            kind, lhs, rhs, what = _check_parts(entry)
            checks.append(_check_entry(kind, lhs.replace_dims_and_symbols([], known),
                                       rhs.replace_dims_and_symbols([], known), len(symbols),
                                       what))
    return checks


def _check_parts(entry: DictionaryAttr) -> tuple[str, AffineExpr, AffineExpr, str]:
    sizes, kind, what = entry.data["sizes"], entry.data["kind"], entry.data["what"]
    assert isinstance(sizes, AffineMapAttr) and isinstance(kind, StringAttr)
    assert isinstance(what, StringAttr)
    lhs, rhs = sizes.data.results
    return kind.data, lhs, rhs, what.data


def check_exprs(entry: DictionaryAttr) -> tuple[str, object, object, str]:
    """One `dlc.size_checks` entry in the runtime's form: (kind, lhs, rhs, what), the sizes as
    JSON expressions (`runtime.size_exprs`)."""
    kind, lhs, rhs, what = _check_parts(entry)
    return kind, _json(lhs), _json(rhs), what


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


def materialize(expr: AffineExpr, values: Sequence[SSAValue | int],
                emit: Callable[[Operation], SSAValue]) -> SSAValue | int:
    """`expr` computed from the sizes `values` (its symbols' values: ints or `index` values):
    an int where everything is constant, else the last of the `arith` ops given to `emit`
    (each op once, in order; constants as `arith.constant`s)."""
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineSymExpr):
        return values[expr.position]
    assert isinstance(expr, AffineBinaryOpExpr), f"an affine expression of symbols: {expr}"
    lhs, rhs = materialize(expr.lhs, values, emit), materialize(expr.rhs, values, emit)
    if isinstance(lhs, int) and isinstance(rhs, int):
        return int(AffineBinaryOpExpr(expr.kind, AffineExpr.constant(lhs),
                                      AffineExpr.constant(rhs)).eval([], []))
    operands = [value if isinstance(value, SSAValue)
                else emit(arith.ConstantOp(IntegerAttr(value, IndexType())))
                for value in (lhs, rhs)]
    kinds = {
        AffineBinaryOpKind.Add: arith.AddiOp,
        AffineBinaryOpKind.Mul: arith.MuliOp,
        AffineBinaryOpKind.Mod: arith.RemSIOp,
        AffineBinaryOpKind.FloorDiv: arith.FloorDivSIOp,
        AffineBinaryOpKind.CeilDiv: arith.CeilDivSIOp,
    }
    return emit(kinds[expr.kind](operands[0], operands[1]))
