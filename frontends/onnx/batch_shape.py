"""Runtime sizes at import time: `Shape` of a value with a dynamic batch or runtime dims, moved
into a `Reshape` target.

Exporters write `x.view(x.size(0), ...)` as `Shape -> Gather -> Unsqueeze -> Concat -> Reshape`.
With a dynamic batch (`import_onnx(dynamic_batch=True)`) the importer folds such a chain as it
folds static shapes, with one symbolic element: `BATCH`, the batch's size, known only at run
time. The shape arrays are NumPy object arrays whose elements are ints or `BATCH`; only ops that
move elements (Gather, Slice, Concat, Squeeze, Unsqueeze, Identity, a Cast to an integer or
a float type (the sizes stay exact: a grid's `arange` of one), Reshape and Where of such
arrays), the Shape of one, and comparisons whose answer is known (`BATCH` is never
-1) fold them (`fold_symbolic`), a result without `BATCH` becoming an ordinary int64 constant
(`Shape -> Gather(1)`: a static dim). A `Reshape`, `Expand` or `ConstantOfShape` whose shape
starts with `BATCH` keeps the batch (`reshape_target`: the converters' leading -1: a view, a
broadcast to the batch). Any other use of `BATCH` (arithmetic on it, a shape that moves it off
the leading axis) is not per row: the importer raises `DynamicInputError`, and the driver falls
back to shapes per call (TVM Relax's symbolic shapes do this arithmetic; dlc does not).

With runtime dims (`import_onnx(dynamic_shapes=True)`) the same folding runs with one `Symbol`
per runtime dim: those of the inputs' `dim_param`s, carried from each node's operands to the
dims of its results that equal them (`carry_symbols`: elementwise ops, transposes, slices,
concats, reshapes that keep them, a conv's batch), a fresh one for any other. A `Reshape`
whose target holds the operand's symbols in order, static dims regrouped between them (a
channel shuffle's `x.view(n, g, c // g, h, w)`), keeps each runtime dim
(`symbolic_reshape_target`).
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.ops import dynamic_reshape_segments, reshape_groups_of


class Symbol:
    """A size known only at run time as an element of a shape array: the dynamic batch
    (`BATCH`), or a runtime dim of a value (`import_onnx(dynamic_shapes=True)`: one symbol per
    dim of the model's inputs' `dim_param`s, carried to the dims that equal them). Symbols are
    equal only to themselves. They have no arithmetic: NumPy raises TypeError on `BATCH * 2`,
    which the importer turns into a fallback."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BATCH = Symbol("BATCH")
"""The dynamic batch's size (`import_onnx(dynamic_batch=True)`)."""

MOVING_OPS = frozenset({"Gather", "Slice", "Concat", "Squeeze", "Unsqueeze", "Identity", "Cast",
                        "Reshape", "Shape", "Equal", "Where"})
"""The ONNX ops `fold_symbolic` folds on shape arrays holding `BATCH`: those that move elements,
the shape of such an array, and the two that an exporter's `x.expand(n, -1)` adds (PyTorch's
`Equal(target, -1)` and `Where` that put 1 for each -1; `BATCH`, a size of at least 1, is never
-1)."""


def symbolic_shape(shape: tuple[int, ...], start: int = 0, end: int | None = None
                   ) -> np.ndarray:
    """`Shape` of a value of `shape` whose leading dim (< 0) is the dynamic batch, sliced by
    `start`/`end` (Shape v15): an object array, or an int64 one when the slice leaves the
    batch out."""
    elements: list[object] = [BATCH, *shape[1:]]
    return as_shape_array(elements[slice(start, end)])


def as_shape_array(elements: object) -> np.ndarray:
    """`elements` as an int64 array when none is a `Symbol`, else as an object array."""
    array = np.array(elements, dtype=object)
    if not has_batch(array):
        return array.astype(np.int64)
    return array


def has_batch(array: np.ndarray | None) -> bool:
    """Whether `array` is a shape array holding a `Symbol` (`BATCH`, or a runtime dim)."""
    return array is not None and array.dtype == object and any(
        isinstance(element, Symbol) for element in array.reshape(-1))


def fold_symbolic(op_type: str, arrays: list[np.ndarray | None], attrs: dict[str, object]
                  ) -> np.ndarray | None:
    """The result of `op_type` (one of `MOVING_OPS`) on constant `arrays` (None: an absent
    optional input), one of them holding `BATCH`, with the node's `attrs`; None when the node
    does not just move elements (a float Cast, a Gather of non-constant indices)."""
    if any(a is None for a in arrays[:1]):
        return None
    data = arrays[0]
    assert data is not None
    if op_type == "Identity":
        return data
    if op_type == "Cast":
        to = attrs.get("to")
        return data if to in (1, 6, 7, 11) else None  # FLOAT, INT32, INT64, DOUBLE
    if op_type == "Gather":
        if len(arrays) < 2 or arrays[1] is None:
            return None
        axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
        return as_shape_array(np.take(data, arrays[1].astype(np.int64), axis=axis))
    if op_type == "Concat":
        if any(a is None for a in arrays):
            return None
        axis = int(attrs.get("axis", 0))  # type: ignore[call-overload]
        return as_shape_array(np.concatenate(
            [a.astype(object) for a in arrays if a is not None], axis=axis))
    if op_type in ("Squeeze", "Unsqueeze"):
        axes = arrays[1] if len(arrays) > 1 and arrays[1] is not None else attrs.get("axes")
        return _squeezed(data, op_type, axes)
    if op_type == "Slice":
        return _sliced(data, arrays[1:])
    if op_type == "Equal":
        return _equal(arrays)
    return _reshaped(op_type, data, arrays, attrs)


def _reshaped(op_type: str, data: np.ndarray, arrays: list[np.ndarray | None],
              attrs: dict[str, object]) -> np.ndarray | None:
    """Shape, Reshape or Where (by a constant condition) of a shape array holding `BATCH`."""
    if op_type == "Shape":
        start, end = int(attrs.get("start", 0)), attrs.get("end")  # type: ignore[call-overload]
        return np.array(data.shape[start:None if end is None else int(end)], np.int64)  # type: ignore[call-overload]
    if op_type == "Reshape":
        if len(arrays) < 2 or arrays[1] is None or has_batch(arrays[1]):
            return None
        return as_shape_array(data.reshape([int(d) for d in arrays[1].reshape(-1)]))
    if op_type == "Where":
        if len(arrays) < 3 or any(a is None for a in arrays) or has_batch(arrays[0]):
            return None
        condition, lhs, rhs = (np.asarray(a) for a in arrays)  # type: ignore[arg-type]
        return as_shape_array(np.where(condition.astype(bool), lhs.astype(object),
                                       rhs.astype(object)))
    return None


def _equal(arrays: list[np.ndarray | None]) -> np.ndarray | None:
    """Equal of two shape arrays, elementwise, when every comparison is known: a `Symbol`
    equals itself and is never below 1 (a size), so it differs from -1 and 0; against another
    positive size or another symbol it is unknown (None)."""
    if len(arrays) != 2 or arrays[0] is None or arrays[1] is None:
        return None
    lhs, rhs = np.broadcast_arrays(arrays[0].astype(object), arrays[1].astype(object))

    def equal(a: object, b: object) -> bool | None:
        if isinstance(a, Symbol) and isinstance(b, Symbol):
            return True if a is b else None
        if isinstance(a, Symbol) or isinstance(b, Symbol):
            other = b if isinstance(a, Symbol) else a
            return False if int(other) < 1 else None  # type: ignore[call-overload]
        return bool(a == b)

    results = [equal(a, b) for a, b in zip(lhs.reshape(-1), rhs.reshape(-1), strict=True)]
    if any(r is None for r in results):
        return None
    return np.array(results, bool).reshape(lhs.shape)


def _squeezed(data: np.ndarray, op_type: str, axes: object) -> np.ndarray | None:
    """Squeeze or Unsqueeze of a shape array over `axes` (None: Squeeze's every unit axis)."""
    if axes is None:
        return as_shape_array(np.squeeze(data)) if op_type == "Squeeze" else None
    listed = [int(a) for a in np.asarray(axes).reshape(-1)]
    if op_type == "Squeeze":
        return as_shape_array(np.squeeze(data, axis=tuple(listed)))
    rank = data.ndim + len(listed)
    result = data
    for axis in sorted(a % rank for a in listed):
        result = np.expand_dims(result, axis)
    return as_shape_array(result)


def _sliced(data: np.ndarray, bounds: list[np.ndarray | None]) -> np.ndarray | None:
    """Slice (v10+) of a shape array by constant starts, ends, axes and steps."""
    if len(bounds) < 2 or bounds[0] is None or bounds[1] is None:
        return None
    starts, ends = bounds[0].astype(np.int64), bounds[1].astype(np.int64)
    axes = bounds[2] if len(bounds) > 2 and bounds[2] is not None else np.arange(len(starts))
    steps = bounds[3] if len(bounds) > 3 and bounds[3] is not None else np.ones_like(starts)
    index = [slice(None)] * data.ndim
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=True):
        index[int(axis)] = slice(int(start), int(end), int(step))
    return as_shape_array(data[tuple(index)])


def reshape_target(target: np.ndarray) -> np.ndarray | None:
    """The int64 target of a Reshape whose target is the shape array `target`: `BATCH` first
    becomes -1 (the converter keeps the dynamic leading dim); None when `BATCH` is elsewhere
    or more than once (the batch would mix with other axes)."""
    elements = list(target.reshape(-1))
    if not elements or elements[0] is not BATCH or any(e is BATCH for e in elements[1:]):
        return None
    return np.array([-1, *(int(e) for e in elements[1:])], dtype=np.int64)  # type: ignore[call-overload]


def symbolic_reshape_target(shape: list[int], symbols: list[Symbol | None],
                            target: list[object], allow_zero: bool
                            ) -> tuple[list[int], list[int]] | None:
    """`graph.reshape`'s shape and groups for a value of `shape` (runtime dims negative,
    `symbols` theirs) reshaped to the ONNX Reshape target `target` (ints and symbols): -1 for
    each runtime dim, kept (`dynamic_reshape_segments`), static dims elsewhere, a 0 copying
    the operand's dim (unless `allow_zero`), one -1 inferred within its static segment, or
    standing for consecutive runtime dims the target leaves out (a detector head's
    `x.view(n, c, -1)` of `?xcx?x?`: the height and width merged, the -1 their product),
    with the static dims beside them that the target's static dims around it leave (a YOLOv5
    head's `y.view(n, -1, 8)` of `?x3x?x?x8`: 3 x H x W). The groups are `[]` where the
    shape's segments pair the dims so alone, else the `groups` attribute that says how. None
    when the target does not keep the runtime dims so (a symbol of another dim, in another
    order: the sizes would need other arithmetic)."""
    elements: list[object] = [
        (symbols[axis] if shape[axis] < 0 else shape[axis])
        if isinstance(element, (int, np.integer)) and element == 0 and not allow_zero
        and axis < len(shape) else element
        for axis, element in enumerate(target)]
    kept = [symbol for symbol, dim in zip(symbols, shape, strict=True) if dim < 0]
    present = [e for e in elements if isinstance(e, Symbol)]
    if any(k is None for k in kept) or len({id(k) for k in kept}) != len(kept):
        return None
    infer = [axis for axis, e in enumerate(elements) if not isinstance(e, Symbol) and e == -1]
    if present != kept:
        return _merged_target(shape, kept, elements, infer)
    result = [-1 if isinstance(e, Symbol) else int(e) for e in elements]  # type: ignore[call-overload]
    if len(infer) > 1 or any(d < -1 for d in result):
        return None
    if infer:
        # the static segment holding the -1: between the runtime dims around it
        out_bounds = [axis for axis, e in enumerate(elements) if isinstance(e, Symbol)]
        in_bounds = [axis for axis, dim in enumerate(shape) if dim < 0]
        rank = sum(1 for axis in out_bounds if axis < infer[0])
        in_lo = in_bounds[rank - 1] + 1 if rank else 0
        in_hi = in_bounds[rank] if rank < len(in_bounds) else len(shape)
        out_lo = out_bounds[rank - 1] + 1 if rank else 0
        out_hi = out_bounds[rank] if rank < len(out_bounds) else len(result)
        whole = int(np.prod(shape[in_lo:in_hi], dtype=np.int64))
        known = int(np.prod([d for a, d in enumerate(result[out_lo:out_hi], out_lo)
                             if a != infer[0]], dtype=np.int64))
        if known <= 0 or whole % known:
            return None
        result[infer[0]] = whole // known
    return (result, []) if dynamic_reshape_segments(shape, result) is not None else None


def _merged_target(shape: list[int], kept: list[Symbol | None], elements: list[object],
                   infer: list[int]) -> tuple[list[int], list[int]] | None:
    """`symbolic_reshape_target` of a target that leaves out some of the operand's runtime
    symbols: its one -1 must stand for a run of them, consecutive and in place (the target's
    symbols before it come before the run, those after it after), with the operand's static
    dims around the run that the target's static dims between its neighbouring symbols and
    the -1 do not take (by product, the fewest)."""
    if len(infer) != 1 or any(isinstance(e, (int, np.integer)) and e < -1 for e in elements):
        return None
    position = infer[0]
    before = [e for e in elements[:position] if isinstance(e, Symbol)]
    after = [e for e in elements[position + 1:] if isinstance(e, Symbol)]
    run = kept[len(before):len(kept) - len(after)]
    if kept[:len(before)] != before or kept[len(kept) - len(after):] != after or not run:
        return None
    axis_of = {id(symbol): axis for axis, symbol in enumerate(_symbols_by_axis(shape, kept))
               if symbol is not None}
    lo = axis_of[id(before[-1])] + 1 if before else 0
    hi = axis_of[id(after[0])] if after else len(shape)
    out_lo = max((a for a in range(position) if isinstance(elements[a], Symbol)), default=-1) + 1
    out_hi = next((a for a in range(position + 1, len(elements))
                   if isinstance(elements[a], Symbol)), len(elements))
    lead = _static_run(shape, range(lo, hi), _product(elements[out_lo:position]))
    tail = _static_run(shape, range(hi - 1, lo - 1, -1), _product(elements[position + 1:out_hi]))
    if lead is None or tail is None or lo + lead >= hi - tail:
        return None
    result = [-1 if isinstance(e, Symbol) else int(e) for e in elements]  # type: ignore[call-overload]
    groups = [bound for symbol in before for bound in (axis_of[id(symbol)],
                                                       axis_of[id(symbol)] + 1)]
    groups += [lo + lead, hi - tail]
    groups += [bound for symbol in after for bound in (axis_of[id(symbol)],
                                                       axis_of[id(symbol)] + 1)]
    if dynamic_reshape_segments(shape, result, groups) is None:
        return None
    inferred = dynamic_reshape_segments(shape, result)
    same = inferred is not None and reshape_groups_of(inferred, shape, result) == groups
    return result, [] if same else groups


def _symbols_by_axis(shape: list[int], kept: list[Symbol | None]) -> list[Symbol | None]:
    """`kept` (the runtime dims' symbols, in order) placed at their axes of `shape`."""
    symbols = iter(kept)
    return [next(symbols) if dim < 0 else None for dim in shape]


def _product(elements: list[object]) -> int | None:
    """The product of static target elements (None where one is not a positive int)."""
    if any(not isinstance(e, (int, np.integer)) or e <= 0 for e in elements):
        return None
    return int(np.prod(np.array(elements, dtype=np.int64)))


def _static_run(shape: list[int], axes: range, product: int | None) -> int | None:
    """How many of `axes` (in order), all static, make `product` (the fewest: 0 for 1)."""
    if product is None:
        return None
    count, total = 0, 1
    for axis in axes:
        if total == product:
            return count
        if shape[axis] < 0 or total * shape[axis] > product:
            return None
        total *= shape[axis]
        count += 1
    return count if total == product else None


ELEMENTWISE_OPS = frozenset({
    "Abs", "Add", "Ceil", "Clip", "Div", "Elu", "Erf", "Exp", "Floor", "HardSigmoid",
    "HardSwish", "Identity", "LeakyRelu", "Log", "Max", "Min", "Mul", "Neg", "Pow",
    "Reciprocal", "Relu", "Round", "Sigmoid", "Sqrt", "Sub", "Tanh", "Dropout", "Gelu", "Mean",
    "PRelu", "Sum", "Cast", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Where",
})
"""The elementwise and broadcasting ONNX ops that runtime dims flow through (the importer's
`SHAPE_POLYMORPHIC_OPS` among them)."""

SAME_DIMS_OPS = ELEMENTWISE_OPS | {"BatchNormalization", "LayerNormalization",
                                   "InstanceNormalization", "Softmax", "LogSoftmax", "Gelu"}
"""The ops whose result's runtime dims are their operands' (broadcast, right-aligned)."""

BATCH_ONLY_OPS = frozenset({"Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
                            "GlobalMaxPool", "Resize", "Upsample"})
"""The ops whose result keeps only its operand's leading dim (the batch)."""


def _two_operand_symbols(op_type: str, first: tuple[Symbol | None, ...],
                         second: tuple[Symbol | None, ...], rank: int, axis: int
                         ) -> list[Symbol | None]:
    """The symbols of a Gather's result (the data's dims around the indices') or a MatMul's
    (the batch dims, right-aligned, the lhs's rows, the rhs's columns)."""
    if op_type == "Gather":
        axis %= max(len(first), 1)
        return [*first[:axis], *second, *first[axis + 1:]]
    if rank < 2:
        return [None] * rank
    batch: list[Symbol | None] = [None] * (rank - 2)
    for known in (first[:-2], second[:-2]):
        for at, symbol in enumerate(known):
            position = len(batch) - len(known) + at
            batch[position] = batch[position] or symbol
    return [*batch, first[-2] if len(first) >= 2 else None,
            second[-1] if len(second) >= 2 else None]


def _reshaped_symbols(first: tuple[Symbol | None, ...], operand: tuple[int, ...],
                      shape: tuple[int, ...]) -> list[Symbol | None]:
    """The symbols of a reshape's result (of `shape`) from its operand's (`first`, of
    `operand`): each runtime dim kept has its symbol, one merging several a new size."""
    carried: list[Symbol | None] = [None] * len(shape)
    runtime = [axis for axis, dim in enumerate(operand) if dim < 0]
    for ins, outs in dynamic_reshape_segments(operand, shape) or ():
        merged = [axis for axis in ins if axis in runtime]
        if len(merged) == 1 and outs and shape[outs[0]] < 0:
            carried[outs[0]] = first[merged[0]]
    return carried


def carry_symbols(node: object, symbols: dict[str, tuple[Symbol | None, ...]],
                  shapes: dict[str, tuple[int, ...]]) -> None:
    """Records in `symbols` the symbols of the runtime dims of `node`'s results that equal
    runtime dims of its operands (`shapes`: the types' shapes of both, by name): see
    `SAME_DIMS_OPS`, `BATCH_ONLY_OPS`, and Transpose, Slice, Split, Concat, Reshape, Unsqueeze,
    Squeeze, Gather (the data's dims around the indices'), GatherElements (the indices'
    dims), MatMul (the batch dims, the lhs's
    rows, the rhs's columns). A dim no rule gives gets a fresh symbol when it is first asked
    for."""
    import onnx

    assert isinstance(node, onnx.NodeProto)
    inputs = [name for name in node.input if name in shapes]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    for out in (name for name in node.output if name in shapes):
        shape = shapes[out]
        if all(d >= 0 for d in shape) or not inputs:
            continue
        first = symbols.get(inputs[0])
        carried: list[Symbol | None] = [None] * len(shape)
        if node.op_type in SAME_DIMS_OPS:
            for axis in range(len(shape)):
                for name in inputs:
                    known, rank = symbols.get(name), len(shapes[name])
                    at = axis - (len(shape) - rank)
                    if known is not None and at >= 0 and known[at] is not None:
                        carried[axis] = known[at]
                        break
        elif node.op_type == "GatherElements" and len(inputs) == 2:
            carried = list(symbols.get(inputs[1]) or carried)  # the indices' shape
        elif first is None:
            continue
        elif node.op_type == "Transpose":
            perm = list(attrs.get("perm", reversed(range(len(shape)))))
            carried = [first[axis] for axis in perm]
        elif node.op_type in ("Slice", "Split", "Concat") and len(first) == len(shape):
            carried = [symbol if dim < 0 else None for symbol, dim in zip(first, shape,
                                                                          strict=True)]
            joined = None if node.op_type == "Slice" else int(attrs.get("axis", 0))
            carried = [None if joined is not None and axis == joined % len(shape) else symbol
                       for axis, symbol in enumerate(carried)]  # the axis split or joined
        elif node.op_type in ("Reshape", "Unsqueeze", "Squeeze"):
            carried = _reshaped_symbols(first, shapes[inputs[0]], shape)
        elif node.op_type in ("Gather", "MatMul") and len(inputs) == 2:
            second = symbols.get(inputs[1]) or (None,) * len(shapes[inputs[1]])
            carried = _two_operand_symbols(node.op_type, first, second, len(shape),
                                           int(attrs.get("axis", 0)))
        elif node.op_type in BATCH_ONLY_OPS and shape and shape[0] < 0:
            carried[0] = first[0]
        if any(symbol is not None for symbol in carried):
            symbols[out] = tuple(carried)
