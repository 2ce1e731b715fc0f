"""Valid extents: where the padding of a data-dependent op's result goes (XLA's dynamic padder).

`graph.nonzero` and `graph.non_max_suppression` pad their result to a static bound along one
axis and give the number of valid entries as a count (`ops_dynamic.py`). An op that does not look
at the padding along that axis carries the valid extent to its result ("the first `count`
entries along axis a are valid"): elementwise and broadcast ops, casts, transposes, gathers
taking the padded tensor as indices (the padding holds valid indices) or as data along another
axis, slices and concats along other axes, and reshapes that keep the axis (squeeze, unsqueeze,
flatten of other axes). Every other consumer would see the padding: a reduction or a matmul
over the axis, a window or a pad along it, control flow. It is an `ExtentError` naming the op
and the node, as is a Shape or Size of such a value (the ONNX importer asks `extent_of`).

`mark_valid_extents` checks a function and makes its results trimmable: a result with a valid
extent gets `dlc.valid_extent = array<i64: axis, count>` and the count is appended as a result
marked `dlc.extent_count` (and named `<result>_count` after the result's ONNX name); the graph
interpreter and the compiled executables return the result
cut to the count and do not return the count (`dialects/contracts.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from dlc.dialects.contracts import (
    EXTENT_COUNT_ATTR,
    ONNX_NAME_ATTR,
    ONNX_NODE_ATTR,
    VALID_EXTENT_ATTR,
)
from dlc.dialects.graph.attrs import FusionKind, fusion_kind
from dlc.dialects.graph.ops import ConcatOp, FlattenOp, ReshapeOp, TransposeOp
from dlc.dialects.graph.ops_dynamic import NonMaxSuppressionOp, NonZeroOp
from dlc.dialects.graph.ops_tensor import BroadcastToOp, CastOp, GatherOp, SliceOp
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    NameLoc,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException


class ExtentError(VerifyException):
    """An op consumes the padding of a data-dependent op's result."""


@dataclass(frozen=True)
class Extent:
    """Along `axis`, only the first `count` (a 0-d i64 value) entries are valid; `source` is
    the data-dependent op they come from (for messages)."""

    axis: int
    count: SSAValue
    source: str


def _describe(op: Operation) -> str:
    """`'graph.reduce' op (node 'r')`: the op, and its ONNX node where known."""
    node = op.attributes.get(ONNX_NODE_ATTR)
    name = node.data if isinstance(node, StringAttr) else None
    if name is None and isinstance(op.location, NameLoc):
        name = op.location.desc.data
    return f"'{op.name}' op" + (f" (node '{name}')" if name else "")


def _error(op: Operation, extent: Extent, why: str) -> ExtentError:
    return ExtentError(
        f"{_describe(op)} consumes the data-dependent extent of {extent.source} along axis "
        f"{extent.axis} ({why}); dlc pads such results to a static bound, and only ops that "
        "ignore the padding may use them (elementwise ops, casts, transposes, gathers, and "
        "slices, concats and reshapes of other axes)"
    )


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def extent_of(value: SSAValue, cache: dict[SSAValue, Extent | None] | None = None) -> Extent | None:
    """The valid extent of `value`, following its producers back to a data-dependent op; None
    when it has none. Raises ExtentError where a producer consumes an extent it cannot carry.
    `cache` (value -> extent) is shared between calls that walk the same function."""
    cache = {} if cache is None else cache
    stack = [value]
    while stack:  # producers first, without recursion (graphs are deep)
        top = stack[-1]
        if top in cache:
            stack.pop()
            continue
        op = top.owner
        pending = [x for x in op.operands if x not in cache] if isinstance(op, Operation) else []
        if pending:
            stack.extend(pending)
            continue
        cache[top] = _extent_here(top, cache)
        stack.pop()
    return cache[value]


def _extent_here(value: SSAValue, cache: dict[SSAValue, Extent | None]) -> Extent | None:
    """The extent of `value` once its producer's operands are in `cache`."""
    op = value.owner
    if not isinstance(op, Operation):
        return None
    extents = [cache[x] for x in op.operands]
    padded = next((e for e in extents if e is not None), None)
    if isinstance(op, NonZeroOp | NonMaxSuppressionOp):
        if padded is not None:
            raise _error(op, padded, "its count would include the padding")
        if value is not op.results[0]:
            return None
        return Extent(1 if isinstance(op, NonZeroOp) else 0, op.results[1], _describe(op))
    if padded is None:
        return None
    if len(op.results) != 1 or op.regions:
        raise _error(op, padded, "it is not known to ignore the padding")
    return result_extent(op, extents)


def result_extent(op: Operation, extents: Sequence[Extent | None]) -> Extent | None:
    """The valid extent of the one result of `op` whose operands have `extents`, or an
    ExtentError when the op would read the padding."""
    given = [(i, e) for i, e in enumerate(extents) if e is not None]
    if not given:
        return None
    index, extent = given[0]
    operand = op.operands[index]
    rank, axis = len(_shape(operand)), extent.axis
    if isinstance(op, CastOp) or (fusion_kind(op) in (FusionKind.ELEMENTWISE,
                                                     FusionKind.BROADCAST)
                                  and not isinstance(op, BroadcastToOp | ReshapeOp)):
        return _broadcast_extent(op, extents)
    if isinstance(op, BroadcastToOp):
        result = _shape(op.results[0])
        moved = axis + len(result) - rank
        return Extent(moved, extent.count, extent.source)
    if isinstance(op, TransposeOp):
        perm = [int(p) for p in op.perm.get_values()]
        return Extent(perm.index(axis), extent.count, extent.source)
    if isinstance(op, GatherOp):
        gather_axis = int(op.axis.value.data) % len(_shape(op.x))
        if len(given) > 1:
            raise _error(op, extent, "it gathers padded data at padded indices")
        if index == 1:
            return Extent(gather_axis + axis, extent.count, extent.source)
        if axis == gather_axis:
            raise _error(op, extent, "it gathers along the padded axis")
        moved = axis if axis < gather_axis else axis - 1 + len(_shape(op.indices))
        return Extent(moved, extent.count, extent.source)
    if isinstance(op, SliceOp):
        start = int(op.starts.get_values()[axis])
        size = int(op.sizes.get_values()[axis])
        step = int(op.steps.get_values()[axis])
        if (start, size, step) != (0, _shape(operand)[axis], 1):
            raise _error(op, extent, "it slices the padded axis")
        return extent
    if isinstance(op, ConcatOp):
        concat_axis = int(op.axis.value.data) % rank
        if concat_axis == axis:
            raise _error(op, extent, "it concatenates along the padded axis")
        if any(e is None or (e.axis, e.count) != (axis, extent.count) for e in extents):
            raise _error(op, extent, "its other operands are not padded alike")
        return extent
    if isinstance(op, ReshapeOp | FlattenOp):
        return _reshaped_extent(op, extent)
    raise _error(op, extent, "it is not known to ignore the padding")


def _broadcast_extent(op: Operation, extents: Sequence[Extent | None]) -> Extent:
    """Elementwise ops: operands align at their last axis (NumPy broadcasting); every padded
    operand must be padded alike, and the others of size 1 along that axis (or without it)."""
    result_rank = len(_shape(op.results[0]))
    moved: set[tuple[int, SSAValue]] = set()
    first: Extent | None = None
    for operand, extent in zip(op.operands, extents, strict=True):
        if extent is not None:
            moved.add((extent.axis + result_rank - len(_shape(operand)), extent.count))
            first = first or extent
    assert first is not None
    if len(moved) != 1:
        raise _error(op, first, "its operands are padded differently")
    ((axis, count),) = moved
    for operand, extent in zip(op.operands, extents, strict=True):
        shape = _shape(operand)
        local = axis - (result_rank - len(shape))
        if extent is None and local >= 0 and shape[local] != 1:
            raise _error(op, first, "another operand is not broadcast along the padded axis")
    return Extent(axis, count, first.source)


def _reshaped_extent(op: Operation, extent: Extent) -> Extent:
    """A reshape keeps the padded axis when some result axis has its size and the same product
    of sizes before it (squeezing, unsqueezing or merging other axes)."""
    before, after = _shape(op.operands[0]), _shape(op.results[0])
    outer = math.prod(before[: extent.axis])
    for axis in range(len(after)):
        if after[axis] == before[extent.axis] and math.prod(after[:axis]) == outer:
            return Extent(axis, extent.count, extent.source)
    raise _error(op, extent, "it merges or splits the padded axis")


def mark_valid_extents(function: func.FuncOp) -> bool:
    """Check `function`'s uses of data-dependent extents and mark its results that carry one
    (module docstring); returns whether it changed. A function already marked is left alone."""
    results = function.res_attrs.data if function.res_attrs is not None else ()
    if any(VALID_EXTENT_ATTR in attrs.data or EXTENT_COUNT_ATTR in attrs.data
           for attrs in results if isinstance(attrs, DictionaryAttr)):
        return False
    if not any(isinstance(op, NonZeroOp | NonMaxSuppressionOp) for op in function.walk()):
        return False
    cache: dict[SSAValue, Extent | None] = {}
    for op in function.walk():
        for value in op.results:
            extent_of(value, cache)
    _check_region_results(function, cache)
    returned = function.body.blocks[0].last_op if function.body.blocks else None
    if not isinstance(returned, func.ReturnOp):
        return False
    return _return_counts(function, returned, cache)


def _check_region_results(function: func.FuncOp, cache: dict[SSAValue, Extent | None]) -> None:
    """A padded value read outside its region is caught by `extent_of`; one that a region
    yields cannot be trimmed: the region op reports it."""
    for op in function.walk():
        if not op.regions or isinstance(op, func.FuncOp):
            continue
        for inner in op.walk():
            if not (inner.name.endswith("yield") or isinstance(inner, func.ReturnOp)):
                continue
            found = next((e for e in (extent_of(v, cache) for v in inner.operands) if e), None)
            if found is not None:
                raise _error(op, found, "a region result cannot be trimmed")


def _return_counts(function: func.FuncOp, returned: func.ReturnOp,
                   cache: dict[SSAValue, Extent | None]) -> bool:
    """Mark the padded results of `function` and return their counts as more results."""
    values = list(returned.operands)
    attrs: list[DictionaryAttr] = (
        list(function.res_attrs.data) if function.res_attrs is not None
        else [DictionaryAttr({}) for _ in values])
    counts: list[SSAValue] = []
    for index, value in enumerate(values):
        extent = extent_of(value, cache)
        if extent is None:
            continue
        if extent.count not in counts:
            counts.append(extent.count)
        position = len(values) + counts.index(extent.count)
        marked: dict[str, Attribute] = dict(attrs[index].data)
        marked[VALID_EXTENT_ATTR] = DenseArrayBase.from_list(i64, [extent.axis, position])
        attrs[index] = DictionaryAttr(marked)
    if not counts:
        return False
    returned.operands = (*values, *counts)
    for count in counts:  # named after the first result it trims: `<name>_count`
        first = next(attrs[i] for i, v in enumerate(values)
                     if (e := extent_of(v, cache)) is not None and e.count == count)
        name = first.data.get(ONNX_NAME_ATTR)
        marks: dict[str, Attribute] = {EXTENT_COUNT_ATTR: UnitAttr()}
        if isinstance(name, StringAttr):
            marks[ONNX_NAME_ATTR] = StringAttr(f"{name.data}_count")
        attrs.append(DictionaryAttr(marks))
    function.res_attrs = ArrayAttr(attrs)
    function.function_type = func.FunctionType.from_lists(
        function.function_type.inputs.data, [v.type for v in returned.operands])
    return True


def valid_extents(function: func.FuncOp) -> tuple[dict[int, tuple[int, int]], set[int]]:
    """({result: (axis, count result)}, count results) of a marked function."""
    trims: dict[int, tuple[int, int]] = {}
    counts: set[int] = set()
    if function.res_attrs is None:
        return trims, counts
    for index, attrs in enumerate(function.res_attrs.data):
        marked = attrs.data.get(VALID_EXTENT_ATTR)
        if isinstance(marked, DenseArrayBase):
            axis, count = (int(v) for v in marked.get_values())
            trims[index] = (axis, count)
        if EXTENT_COUNT_ATTR in attrs.data:
            counts.add(index)
    return trims, counts


def trim_results(function: func.FuncOp, results: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`results` of a marked function as the model defines them: each trimmed to its count, the
    counts left out (the runtime's `Executable` does the same from the metadata)."""
    trims, counts = valid_extents(function)
    out: list[np.ndarray] = []
    for index, result in enumerate(results):
        if index in counts:
            continue
        if index in trims:
            axis, count = trims[index]
            result = np.asarray(result)[(slice(None),) * axis + (slice(0, int(results[count])),)]
        out.append(result)
    return out
