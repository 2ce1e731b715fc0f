"""Helpers shared by the graph-level passes: constants, permutations, op evaluation.

Nothing here is a pass; the graph passes (`graph-fold-constants`, `graph-fold-batch-norm`,
`graph-simplify`, `graph-convert-layout`, `graph-fuse-ops`) import what they need.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph.attrs import from_numpy_dtype, to_numpy_dtype
from dlc.dialects.graph.interpreter import IMPLEMENTATIONS
from dlc.dialects.graph.ops import ConstantOp
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

# ---------------------------------------------------------------------------------------------
# Types and uses
# ---------------------------------------------------------------------------------------------


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value (the graph verifier guarantees one)."""
    type = value.type
    assert isinstance(type, TensorType), f"expected a tensor value, found {type}"
    return tuple(type.get_shape())


def reshape_target(value: SSAValue) -> tuple[int, ...]:
    """`value`'s shape as a `graph.reshape`'s `shape` making it: its dynamic leading dim (the
    batch) as -1."""
    return tuple(-1 if dim < 0 else dim for dim in shape_of(value))


def num_elements(value: SSAValue) -> int:
    """The element count of a tensor value."""
    return math.prod(shape_of(value))


def op_users(op: Operation) -> list[Operation]:
    """The distinct ops that use any result of `op`."""
    seen: dict[int, Operation] = {}
    for result in op.results:
        for use in result.uses:
            seen.setdefault(id(use.operation), use.operation)
    return list(seen.values())


# ---------------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------------


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The array held by `value` when a `graph.constant` defines it, else None."""
    owner = value.owner
    if isinstance(owner, ConstantOp):
        return owner.to_array()
    return None


def is_splat(array: np.ndarray) -> bool:
    """Whether every element of `array` has the bit pattern of the first one."""
    if array.size <= 1:
        return True
    flat = np.ascontiguousarray(array).reshape(-1)
    itemsize = flat.dtype.itemsize
    if itemsize in (1, 2, 4, 8):
        bits = flat.view(np.dtype(f"u{itemsize}"))
        # Most arrays that are not splats differ early: look at a prefix before the whole.
        return bool(np.all(bits[:64] == bits[0])) and bool(np.all(bits == bits[0]))
    rows = flat.view(np.uint8).reshape(flat.size, itemsize)
    return bool(np.all(rows == rows[0]))


def splat_element(value: SSAValue) -> np.ndarray | None:
    """The one stored element of a splat `graph.constant` (a 0-d array), read without expanding.

    None when `value` is not a constant stored as a single element (`dense<1.0> : tensor<..>`).
    """
    owner = value.owner
    if not isinstance(owner, ConstantOp) or not isinstance(owner.value, DenseIntOrFPElementsAttr):
        return None
    type = owner.result.type
    assert isinstance(type, TensorType)
    dtype = to_numpy_dtype(type.get_element_type())
    raw = owner.value.data.data
    if len(raw) != max(1, dtype.itemsize) or math.prod(type.get_shape()) <= 1:
        return None
    if dtype == np.bool_:
        return np.array(raw[0] != 0)
    return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)[0:1].reshape(())


def splat_value(value: SSAValue) -> float | int | None:
    """The single value every element of a constant `value` holds, or None.

    None when `value` is not defined by a `graph.constant` or its elements differ.
    """
    element = splat_element(value)
    if element is not None:
        return element.item()
    array = constant_array(value)
    if array is None or array.size == 0 or not is_splat(array):
        return None
    return array.flat[0].item()


def splat_constant(element: np.ndarray, shape: Sequence[int]) -> ConstantOp:
    """A `graph.constant` of `shape` whose every element is `element` (stored once)."""
    element = np.asarray(element).reshape(())
    if element.dtype == np.bool_ or math.prod(shape) <= 1:
        return ConstantOp.from_array(np.full(shape, element, dtype=element.dtype))
    data = element.astype(element.dtype.newbyteorder("<")).tobytes()
    type = TensorType(from_numpy_dtype(element.dtype), list(shape))
    return ConstantOp(DenseIntOrFPElementsAttr(type, BytesAttr(data)))


def build_constant(array: np.ndarray) -> ConstantOp:
    """A `graph.constant` holding `array`; a splat array is stored as one element.

    The element type is `array`'s dtype (ints signless, bool as i1).
    """
    array = np.ascontiguousarray(array)
    if array.size > 1 and is_splat(array):
        return splat_constant(array.reshape(-1)[0], array.shape)
    return ConstantOp.from_array(array)


# ---------------------------------------------------------------------------------------------
# Evaluation with the graph interpreter
# ---------------------------------------------------------------------------------------------


def evaluate_op(op: Operation, operands: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Run `op` on `operands` with the graph interpreter's implementation of it.

    Returns None when the interpreter has no implementation for the op, when the op fails on
    these operands, or when a result does not match its declared type (an op the interpreter
    cannot be trusted with is left alone).
    """
    implementation = IMPLEMENTATIONS.get(type(op))
    if implementation is None:
        return None
    try:
        with np.errstate(all="ignore"):
            produced = implementation(op, list(operands))
    except Exception:  # noqa: BLE001 - an op that cannot run is simply not folded
        return None
    results = (
        [np.asarray(produced)]
        if isinstance(produced, np.ndarray | np.generic)
        else [np.asarray(r) for r in produced]
    )
    if len(results) != len(op.results):
        return None
    for value, result in zip(op.results, results, strict=True):
        declared = value.type
        if not isinstance(declared, TensorType):
            return None
        if result.shape != tuple(declared.get_shape()):
            return None
        if result.dtype != to_numpy_dtype(declared.get_element_type()):
            return None
    return results


# ---------------------------------------------------------------------------------------------
# Permutations
# ---------------------------------------------------------------------------------------------


def inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    """The permutation that undoes `perm`: transpose(transpose(x, p), inverse(p)) == x."""
    inverse = [0] * len(perm)
    for index, axis in enumerate(perm):
        inverse[axis] = index
    return tuple(inverse)


def compose_permutations(first: Sequence[int], second: Sequence[int]) -> tuple[int, ...]:
    """The single perm of transpose(transpose(x, first), second): axis i is first[second[i]]."""
    return tuple(first[axis] for axis in second)


def is_identity_permutation(perm: Sequence[int]) -> bool:
    """Whether `perm` is 0, 1, ..., n-1."""
    return all(axis == index for index, axis in enumerate(perm))


def layout_permutation(source: str, target: str) -> tuple[int, ...]:
    """The perm that transposes a tensor in layout `source` into layout `target`.

    `layout_permutation("NCHW", "NHWC") == (0, 2, 3, 1)`.
    """
    return tuple(source.index(letter) for letter in target)


def permute_layout(layout: str, perm: Sequence[int]) -> str:
    """The layout of transpose(x, perm) when x has `layout`."""
    return "".join(layout[axis] for axis in perm)


# ---------------------------------------------------------------------------------------------
# Rebuilding ops generically
# ---------------------------------------------------------------------------------------------


def recreate(
    op: Operation, operands: Sequence[SSAValue], result_types: Sequence[Attribute]
) -> Operation:
    """A new op of `op`'s class with `operands` and `result_types` and `op`'s attributes.

    For ops whose attributes do not depend on the operand shapes (elementwise ops), this is
    how a pass rebuilds an op it does not know by name. The new op keeps `op`'s location (the
    ONNX node it came from, which profiles name).
    """
    new = type(op).create(
        operands=list(operands),
        result_types=list(result_types),
        attributes=dict(op.attributes),
        properties=dict(op.properties),
    )
    new.location = op.location
    return new
