"""Where the elements of a memref of static shape are: strides and offset in elements (MLIR's
`getStridesAndOffset`). Read by the LLVM lowering (addresses) and the C-like printers (offsets).

Bottom layer: imports only xDSL.
"""

from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects.builtin import AffineMapAttr, MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.ir.affine import AffineMap


class MemRefLayoutError(ValueError):
    """A memref whose layout is not static (its message says what was expected and found)."""


class MemRefLayout(NamedTuple):
    """The layout of a memref, in elements.

    Attributes:
        strides: the distance between neighbours along each dimension.
        offset: the position of element [0, ..., 0] after the base.
        row_major: whether the layout is the contiguous row-major one (offset 0).
    """

    strides: list[int]
    offset: int
    row_major: bool


def row_major_strides(shape: list[int] | tuple[int, ...]) -> list[int]:
    """The strides of a contiguous row-major array of `shape`."""
    strides = [1] * len(shape)
    for dim in range(len(shape) - 2, -1, -1):
        strides[dim] = strides[dim + 1] * shape[dim + 1]
    return strides


def is_identity_layout(memref_type: MemRefType) -> bool:
    """Whether `memref_type` has the identity layout (none given, or the identity map)."""
    layout = memref_type.layout
    return isinstance(layout, NoneAttr) or (
        isinstance(layout, AffineMapAttr)
        and layout.data == AffineMap.identity(memref_type.get_num_dims()))


def has_runtime_strides(type_: object) -> bool:
    """Whether `type_` is a memref of the identity layout whose strides depend on runtime sizes
    (a dynamic dim after the leading one: `memref<?x3x?x?xf32>`); `memref_layout` refuses
    these, `loop-linearize-runtime-strides` rewrites their accesses."""
    return (isinstance(type_, MemRefType) and is_identity_layout(type_)
            and any(size < 0 for size in type_.get_shape()[1:]))


def memref_layout(memref_type: MemRefType) -> MemRefLayout:
    """The strides and offset of a memref of static shape with an identity or static strided
    layout, or of an identity layout whose leading dim alone is dynamic (row-major strides never
    use the leading dim's size: a buffer of runtime rows); a `MemRefLayoutError` for any other."""
    shape = memref_type.get_shape()
    leading_only = all(size >= 0 for size in shape[1:]) and isinstance(memref_type.layout, NoneAttr)
    if not (memref_type.has_static_shape() or leading_only):
        hint = (" (its accesses are linearized by loop-linearize-runtime-strides)"
                if has_runtime_strides(memref_type) else "")
        raise MemRefLayoutError(
            f"expected a memref of static shape (or of a dynamic leading dim), found "
            f"{memref_type}{hint}")
    row_major = row_major_strides(memref_type.get_shape())
    layout = memref_type.layout
    if is_identity_layout(memref_type):
        return MemRefLayout(row_major, 0, True)
    if isinstance(layout, StridedLayoutAttr):
        strides = layout.get_strides()
        offset = layout.get_offset()
        if offset is not None and all(s is not None for s in strides):
            static = [s for s in strides if s is not None]
            return MemRefLayout(static, offset, static == row_major and offset == 0)
    raise MemRefLayoutError(
        f"expected an identity or static strided layout, found {memref_type}"
    )
