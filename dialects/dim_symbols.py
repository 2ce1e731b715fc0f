"""Named dynamic dims of an entry function: `dlc.dim_symbols` (MLIR's `?` dims, bound to symbols
as the ONNX `dim_param`s name them), its verifier and the queries the lowering and runtimes ask.

Bottom layer: imports only xdsl.
"""

from __future__ import annotations

from collections.abc import Sequence

from dlc.dialects.contracts import DIM_SYMBOLS_ATTR
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException


def has_dynamic_leading_dim(type: Attribute) -> bool:
    """Whether `type` is a tensor or memref type whose leading dim is dynamic (`?`)."""
    shape = _shape(type)
    return bool(shape) and shape[0] < 0


def has_runtime_extent(type: Attribute) -> bool:
    """Whether `type` is a tensor or memref type with a dynamic dim after its leading one (a
    runtime height or width: what the static-plane rewrites leave alone)."""
    shape = _shape(type)
    return bool(shape) and any(dim < 0 for dim in shape[1:])


def symbols_attr(symbols: Sequence[str]) -> ArrayAttr[StringAttr]:
    """`["N", "", ...]`: one symbol per dim, `""` for a static one."""
    return ArrayAttr([StringAttr(s) for s in symbols])


def dim_symbols(attrs: DictionaryAttr | None, rank: int) -> tuple[str, ...]:
    """The symbols in one argument's or result's attributes (`""` for every dim without one)."""
    if attrs is None or DIM_SYMBOLS_ATTR not in attrs.data:
        return ("",) * rank
    value = attrs.data[DIM_SYMBOLS_ATTR]
    assert isinstance(value, ArrayAttr)
    return tuple(s.data for s in value.data if isinstance(s, StringAttr))


def _shape(type: Attribute) -> tuple[int, ...] | None:
    if isinstance(type, TensorType | MemRefType):
        return tuple(type.get_shape())
    return None


def _attr_list(attrs: ArrayAttr[DictionaryAttr] | None, count: int) -> list[DictionaryAttr | None]:
    return list(attrs.data) if attrs is not None else [None] * count


def verify_dim_symbols(func: FuncOp) -> None:
    """Each `dlc.dim_symbols` of `func`'s arguments and results has one symbol per dim, a
    non-empty one exactly at the dynamic dims; a dynamic dim of an argument must have one.

    Raises:
        VerifyException: naming the function, the argument or result and the dim.
    """
    groups = (
        ("argument", func.function_type.inputs.data, func.arg_attrs),
        ("result", func.function_type.outputs.data, func.res_attrs),
    )
    for kind, types, attrs in groups:
        for index, (type, attr) in enumerate(
            zip(types, _attr_list(attrs, len(types)), strict=True)
        ):
            shape = _shape(type)
            if shape is None:
                continue
            where = f"'func.func' op @{func.sym_name.data} {kind} #{index} ({type})"
            given = attr is not None and DIM_SYMBOLS_ATTR in attr.data
            symbols = dim_symbols(attr, len(shape))
            if given and len(symbols) != len(shape):
                raise VerifyException(
                    f"{where}: expected {len(shape)} dim symbols, found {len(symbols)}"
                )
            for axis, (dim, symbol) in enumerate(zip(shape, symbols, strict=True)):
                if dim < 0 and not symbol and (given or kind == "argument"):
                    raise VerifyException(f"{where}: expected a symbol for dynamic dim {axis}")
                if dim >= 0 and symbol:
                    raise VerifyException(
                        f"{where}: expected no symbol for static dim {axis}, found '{symbol}'"
                    )


def argument_symbols(func: FuncOp) -> list[tuple[str, ...]]:
    """The dim symbols of each of `func`'s arguments (`""` at static dims and non-shaped ones)."""
    types = func.function_type.inputs.data
    return [
        dim_symbols(attr, len(_shape(type) or ()))
        for type, attr in zip(types, _attr_list(func.arg_attrs, len(types)), strict=True)
    ]


def fits_shape(shape: Sequence[int], declared: Sequence[int]) -> bool:
    """Whether an array of `shape` fits a type of shape `declared`: same rank, same static dims
    (a dynamic dim takes any size)."""
    return len(shape) == len(declared) and all(
        want < 0 or want == got for got, want in zip(shape, declared, strict=True)
    )


def bind_symbols(symbols: Sequence[Sequence[str]], shapes: Sequence[Sequence[int]]
                 ) -> dict[str, int]:
    """The size of each symbol in a call whose inputs have `shapes` (`argument_symbols` order).

    Raises:
        ValueError: two dims with one symbol differ: `input #1 dim 0 ('N') is 3, but input #0
            dim 0 is 2`.
    """
    sizes: dict[str, tuple[int, int, int]] = {}
    for index, (names, shape) in enumerate(zip(symbols, shapes, strict=True)):
        for axis, (symbol, size) in enumerate(zip(names, shape, strict=False)):
            if not symbol:
                continue
            if symbol not in sizes:
                sizes[symbol] = (int(size), index, axis)
                continue
            bound, where, at = sizes[symbol]
            if bound != size:
                raise ValueError(
                    f"input #{index} dim {axis} ('{symbol}') is {size}, but input #{where} dim "
                    f"{at} is {bound}"
                )
    return {symbol: size for symbol, (size, _, _) in sizes.items()}
