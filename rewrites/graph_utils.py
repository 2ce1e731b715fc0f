"""Helpers shared by the graph-level passes: constants, permutations, op evaluation, block order.

Nothing here is a pass; the graph passes (`graph-fold-constants`, `graph-fold-batch-norm`,
`graph-simplify`, `graph-convert-layout`, `graph-fuse-ops`) import what they need.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from dialects.graph.attrs import from_numpy_dtype, to_numpy_dtype
from dialects.graph.interpreter import IMPLEMENTATIONS
from dialects.graph.ops import ConstantOp

# ---------------------------------------------------------------------------------------------
# Types and uses
# ---------------------------------------------------------------------------------------------


def tensor_type(value: SSAValue) -> TensorType | None:
    """The type of `value` when it is a static-shape ranked tensor, else None."""
    type = value.type
    if isinstance(type, TensorType) and all(dim >= 0 for dim in type.get_shape()):
        return type
    return None


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value (the graph verifier guarantees one)."""
    type = value.type
    assert isinstance(type, TensorType), f"expected a tensor value, found {type}"
    return tuple(type.get_shape())


def num_elements(value: SSAValue) -> int:
    """The element count of a tensor value."""
    return math.prod(shape_of(value))


def users(value: SSAValue) -> list[Operation]:
    """The distinct ops that use `value`, in no particular order."""
    seen: dict[int, Operation] = {}
    for use in value.uses:
        seen.setdefault(id(use.operation), use.operation)
    return list(seen.values())


def op_users(op: Operation) -> list[Operation]:
    """The distinct ops that use any result of `op`."""
    seen: dict[int, Operation] = {}
    for result in op.results:
        for use in result.uses:
            seen.setdefault(id(use.operation), use.operation)
    return list(seen.values())


def pass_error(op: Operation, message: str) -> PassFailedException:
    """A pass failure naming `op`: `'graph.conv2d' op <message>`."""
    return PassFailedException(f"'{op.name}' op {message}")


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
    bits = np.ascontiguousarray(array).view(np.uint8).reshape(array.size, -1)
    return bool(np.all(bits == bits[0]))


def splat_value(value: SSAValue) -> float | int | None:
    """The single value every element of a constant `value` holds, or None.

    None when `value` is not defined by a `graph.constant` or its elements differ.
    """
    array = constant_array(value)
    if array is None or array.size == 0 or not is_splat(array):
        return None
    return array.flat[0].item()


def build_constant(array: np.ndarray) -> ConstantOp:
    """A `graph.constant` holding `array`; a splat array is stored as one element.

    The element type is `array`'s dtype (ints signless, bool as i1).
    """
    array = np.asarray(array)
    if array.size > 1 and is_splat(array):
        data = np.ascontiguousarray(array.reshape(-1)[:1])
        data = data.astype(data.dtype.newbyteorder("<"), copy=False)
        type = TensorType(from_numpy_dtype(data.dtype), array.shape)
        if array.dtype == np.bool_:
            return ConstantOp.from_array(array)
        return ConstantOp(DenseIntOrFPElementsAttr(type, BytesAttr(data.tobytes())))
    return ConstantOp.from_array(array)


def constant_like(array: np.ndarray, element_type: Attribute) -> np.ndarray:
    """`array` cast to the NumPy dtype of `element_type`."""
    return np.asarray(array).astype(to_numpy_dtype(element_type), copy=False)


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
    how a pass rebuilds an op it does not know by name.
    """
    return type(op).create(
        operands=list(operands),
        result_types=list(result_types),
        attributes=dict(op.attributes),
        properties=dict(op.properties),
    )


# ---------------------------------------------------------------------------------------------
# Block order
# ---------------------------------------------------------------------------------------------


def topologically_sort(block: Block) -> bool:
    """Reorder `block`'s ops so that every op comes after the producers of its operands.

    Stable: ops already in order keep their relative order; the terminator stays last.
    Returns whether anything moved. Ops with regions count as using every value their
    regions use from outside.
    """
    ops = list(block.ops)
    position = {id(op): index for index, op in enumerate(ops)}
    in_block = set(position)

    def producers(op: Operation) -> list[Operation]:
        found: list[Operation] = []
        for nested in op.walk():
            for operand in nested.operands:
                owner = operand.owner
                if isinstance(owner, Operation) and id(owner) in in_block and owner is not op:
                    found.append(owner)
        return found

    deps = {id(op): {id(p) for p in producers(op)} for op in ops}
    if all(position[d] < position[id(op)] for op in ops for d in deps[id(op)]):
        return False
    dependents: dict[int, list[Operation]] = {id(op): [] for op in ops}
    for op in ops:
        for dep in deps[id(op)]:
            dependents[dep].append(op)
    remaining = {id(op): len(deps[id(op)]) for op in ops}
    ready = [(position[id(op)], op) for op in ops if remaining[id(op)] == 0]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:
        _, op = heapq.heappop(ready)
        order.append(op)
        for dependent in dependents[id(op)]:
            remaining[id(dependent)] -= 1
            if remaining[id(dependent)] == 0:
                heapq.heappush(ready, (position[id(dependent)], dependent))
    assert len(order) == len(ops), "the block's ops form a cycle"
    for op in ops:
        op.detach()
    for op in order:
        block.add_op(op)
    return True
