"""The schedule primitive `tensorize`: replace an inner loop nest by a tensor intrinsic.

Counterpart: TVM's `Schedule.tensorize(loop, intrin)`, which matches the subtree under `loop`
against the intrinsic's description block and replaces it with the implementation. Here the
description is data (target/intrinsics.py): the nest's axes and extents, each operand's element
type and element strides. The match checks the band of loops under `loop` (one per axis of the
intrinsic, constant bounds from 0 with step 1, extents equal to the axes', in any order), the
statement of its one block (`acc[..] = acc[..] + ext(a[..]) * ext(b[..])`, the extensions
following the element types: `extui` for u8, `extsi` for s8, `extf` for f16/bf16) and the access
pattern of each operand (how each loop moves its index, flattened row-major). The nest is then
replaced by the block alone, its loads vector loads at the loops' first iteration and its
statement one `loop.intrinsic`:

    loop.for %j.i = 0 to 16 axis "j.i" { loop.for %k.i = 0 to 4 axis "k.i" {
      loop.block "matmul" ... {
        %a = loop.load %A[%i, %k]        // k = k.o * 4 + k.i
        %b = loop.load %B[%jo, %ko, %l]  // l = j.i * 4 + k.i
        %c = loop.load %C[%i, %j] ...  %s = arith.addi %c, (muli (extui %a), (extsi %b))
        loop.store %s, %C[%i, %j] } } }
  ->
    loop.block "matmul" ... {
      %a = loop.load %A[%i, %k0] : ... -> vector<4xi8>
      %b = loop.load %B[%jo, %ko, %l0] : ... -> vector<64xi8>
      %c = loop.load %C[%i, %j0] : ... -> vector<16xi32>
      %s = loop.intrinsic "x86.avx512.vpdpbusd" %c, %a, %b : ... -> vector<16xi32>
      loop.store %s, %C[%i, %j0] : vector<16xi32> -> ... }
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlc.dialects.loop.ops import (
    BlockOp,
    ForOp,
    IntrinsicOp,
    LoadOp,
    MatrixLoadOp,
    StoreOp,
    intrinsic_element_type,
)
from dlc.rewrites.schedule.common import (
    ScheduleError,
    constant_value,
    depends_on,
    describe,
    index_constant,
    is_pure,
    same_value,
)
from dlc.target.intrinsics import (
    ELEMENT_TYPES,
    WARP_SIZE,
    Fragment,
    Intrinsic,
    IntrinsicError,
    IntrinsicOperand,
    MatrixLoad,
    MatrixTiling,
    get_intrinsic,
    matrix_tiling,
)
from xdsl.dialects import arith
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import ArrayAttr, IndexType, MemRefType, StringAttr, VectorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import IsTerminator

if TYPE_CHECKING:
    from dlc.rewrites.ir_builder import IRBuilder

_EXTENSIONS: dict[str, type[Operation] | None] = {
    "u8": arith.ExtUIOp, "s8": arith.ExtSIOp, "f16": arith.ExtFOp, "bf16": arith.ExtFOp,
    "i32": None, "f32": None,
}
"""The op that widens a loaded element of each type to the accumulator's (None: none)."""


@dataclass
class IntrinsicMatch:
    """A nest that fits an intrinsic: its loops by axis, its block, and the three loads (acc,
    a, b) and the store of its statement."""

    intrinsic: Intrinsic
    loops: dict[str, ForOp]
    band: list[ForOp]
    block: BlockOp
    loads: tuple[LoadOp, LoadOp, LoadOp]
    store: StoreOp


def tensorize(loop: ForOp, intrinsic: str, features: frozenset[str],
              matrix_loads: bool = False) -> BlockOp:
    """Replaces the nest under `loop` by the intrinsic named `intrinsic` of the library.

    Preconditions: the intrinsic exists and the target has its features (`features`, LLVM's
    names, or `sm_80`... for a GPU); the nest fits it (`match_intrinsic`); for a warp-level
    entry (PTX `mma.sync`), no loop around the nest is bound to `threadIdx.x` (the warp's lanes
    become that axis). Returns the block, now holding the call.

    A warp-level entry replaces the nest by a loop over the warp's 32 lanes, bound to
    `threadIdx.x`, around the block: each lane loads its fragment of each operand (the
    elements the entry's fragment layout gives it, one scalar load each, at the indices the
    original loads computed for those axis values), calls `loop.intrinsic` on the fragments,
    and stores its fragment of the result where the accumulator was:

        loop.for %i = 0 to 16 { loop.for %j = 0 to 8 { loop.for %k = 0 to 16 {
          loop.block "mm" { C[i, j] += extf(A[i, k]) * extf(B[j, k]) } } } }
      ->
        loop.for %lane = 0 to 32 axis "mm.lane" kind bound thread "threadIdx.x" {
          loop.block "mm" {
            // a0..a7 at (i, k) = (lane/4 + {0,0,8,8,0,0,8,8}, lane%4*2 + {0,1,0,1,8,9,8,9})
            %a = vector.insert ... : vector<8xf16>   %b = ... vector<4xf16>
            %c = ... vector<4xf32>  (c0..c3 at (lane/4 + {0,0,8,8}, lane%4*2 + {0,1,0,1}))
            %d = loop.intrinsic "ptx.mma.m16n8k16.f16" %c, %a, %b
            loop.store (vector.extract %d[e]), C[...] for each e } }

    With `matrix_loads`, a factor of 16-bit elements in shared memory whose fragment layout a
    PTX `ldmatrix` gives (`target.intrinsics.matrix_tiling`, the stored rows running along
    the operand's contiguous axis, `k` for both factors of m16n8k16) is loaded by one
    `loop.matrix_load` instead of scalar loads: each lane passes the address of the row it
    stands for (lanes 8q..8q+7: rows 0..7 of matrix q, whose origin the tiling gives), e.g.
    for A: `%a = loop.matrix_load "ptx.ldmatrix.x4" %A[i, k]` with i = lane % 8 + 8 * (q % 2),
    k = 8 * (q / 2), q = lane / 8. The caller guarantees that those rows are 16-byte aligned
    (the loop interpreter checks it).
    """
    entry = _entry(intrinsic, loop)
    missing = entry.missing_features(features)
    if missing:
        raise ScheduleError(
            f'cannot tensorize with "{entry.name}": expected a target with '
            f"{', '.join(sorted(entry.features))}, found one without {', '.join(missing)}",
            loop,
        )
    match = match_intrinsic(loop, entry)
    if entry.warp_level:
        return _rewrite_warp(loop, match, matrix_loads)
    _rewrite(loop, match)
    return match.block


def _entry(name: str, payload: Operation) -> Intrinsic:
    try:
        return get_intrinsic(name)
    except IntrinsicError as error:
        raise ScheduleError(f"cannot tensorize: {error}", payload) from None


def match_intrinsic(loop: ForOp, entry: Intrinsic | str) -> IntrinsicMatch:
    """How the nest under `loop` fits `entry`, or a ScheduleError naming the block (or loop)
    and what does not fit."""
    if isinstance(entry, str):
        entry = _entry(entry, loop)
    band, block = _band(loop, len(entry.axes), entry)
    acc_load, lhs, rhs, store = _statement(block, entry)
    for loops in _assignments(band, entry):
        ivs = {axis: inner.induction_var for axis, inner in loops.items()}
        for a_load, b_load in ((lhs, rhs), (rhs, lhs)):
            loads = (acc_load, a_load, b_load)
            if all(_fits(load, operand, ivs, entry) is None
                   for load, operand in zip(loads, entry.operands, strict=True)):
                return IntrinsicMatch(entry, loops, band, block, loads, store)
    # Report the first mismatch of the first assignment, in the operands' order.
    loops = next(iter(_assignments(band, entry)))
    ivs = {axis: inner.induction_var for axis, inner in loops.items()}
    for load, operand in zip((acc_load, lhs, rhs), entry.operands, strict=True):
        reason = _fits(load, operand, ivs, entry)
        if reason is not None:
            raise ScheduleError(f'cannot tensorize with "{entry.name}": {reason}', block)
    raise AssertionError("unreachable: the first assignment fits")


def _band(loop: ForOp, depth: int, entry: Intrinsic) -> tuple[list[ForOp], BlockOp]:
    """The `depth` perfectly nested loops from `loop` down, and the one block inside them."""
    band = [loop]
    while True:
        inner = band[-1]
        bounds = inner.constant_bounds()
        if bounds is None or bounds[0] != 0 or bounds[2] != 1:
            raise ScheduleError(
                f'cannot tensorize with "{entry.name}": expected constant bounds from 0 with '
                f"step 1, found {_bounds_text(bounds)}",
                inner,
            )
        if inner.kind.data not in ("serial", "unrolled"):
            raise ScheduleError(
                f'cannot tensorize with "{entry.name}": expected a serial loop, found kind '
                f"{inner.kind.data}",
                inner,
            )
        structural = [
            op for op in inner.body.block.ops
            if not op.has_trait(IsTerminator) and not (is_pure(op) and not op.regions)
        ]
        if len(band) < depth:
            if len(structural) != 1 or not isinstance(structural[0], ForOp):
                raise ScheduleError(
                    f'cannot tensorize with "{entry.name}": expected {depth} perfectly nested '
                    f"loops ({_axes_text(entry)}), found {len(band)} around "
                    f"{_found_text(structural)}",
                    loop,
                )
            band.append(structural[0])
            continue
        if len(structural) != 1 or not isinstance(structural[0], BlockOp):
            raise ScheduleError(
                f'cannot tensorize with "{entry.name}": expected one block inside the '
                f"{depth} loops ({_axes_text(entry)}), found {_found_text(structural)}",
                loop,
            )
        return band, structural[0]


def _bounds_text(bounds: tuple[int, int, int] | None) -> str:
    if bounds is None:
        return "bounds that are not constants"
    lb, ub, step = bounds
    return f"{lb} to {ub} step {step}"


def _axes_text(entry: Intrinsic) -> str:
    return ", ".join(f"{axis} {extent}" for axis, extent, _ in entry.axes)


def _found_text(ops: Sequence[Operation]) -> str:
    return ", ".join(describe(op) for op in ops) or "nothing"


def _assignments(band: list[ForOp], entry: Intrinsic) -> list[dict[str, ForOp]]:
    """The ways to give each axis of `entry` a loop of the band with its extent."""
    extents = [inner.trip_count() for inner in band]
    found: list[dict[str, ForOp]] = []
    for order in itertools.permutations(range(len(band))):
        if all(extents[order[n]] == extent for n, (_, extent, _) in enumerate(entry.axes)):
            found.append({axis: band[order[n]] for n, (axis, _, _) in enumerate(entry.axes)})
    if not found:
        loops = ", ".join(f'"{inner.axis.data}" {extent}' for inner, extent in
                          zip(band, extents, strict=True))
        raise ScheduleError(
            f'cannot tensorize with "{entry.name}": expected loops of extents '
            f"{_axes_text(entry)}, found {loops}",
            band[0],
        )
    return found


def _statement(block: BlockOp, entry: Intrinsic) -> tuple[LoadOp, LoadOp, LoadOp, StoreOp]:
    """(acc load, one factor's load, the other's, store) of `acc = acc + ext(x) * ext(y)`."""
    name = block.block_name.data

    def fail(found: str) -> ScheduleError:
        return ScheduleError(
            f'cannot tensorize with "{entry.name}": expected block "{name}" to compute '
            f"acc = acc + ext(a) * ext(b) ({entry.acc.element} += {entry.operands[1].element} "
            f"* {entry.operands[2].element}), found {found}",
            block,
        )

    stores = [op for op in block.body.block.ops if isinstance(op, StoreOp)]
    if len(stores) != 1:
        raise fail(f"{len(stores)} stores")
    store = stores[0]
    add = store.value.owner
    is_float = entry.acc.element == "f32"
    add_type, mul_type = (arith.AddfOp, arith.MulfOp) if is_float else (arith.AddiOp, arith.MuliOp)
    if not isinstance(add, add_type):
        raise fail(f"a stored value that is not an '{add_type.name}'")
    acc_load = mul = None
    for x, y in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if (isinstance(x.owner, LoadOp) and x.owner.memref is store.memref
                and _same_indices(x.owner, store) and isinstance(y.owner, mul_type)):
            acc_load, mul = x.owner, y.owner
            break
    if acc_load is None or mul is None:
        raise fail(f"a sum that is not the stored element plus a '{mul_type.name}'")
    used: set[Operation] = {store, add, acc_load, mul}
    factors: list[LoadOp] = []
    for factor in (mul.lhs, mul.rhs):
        owner = factor.owner
        if isinstance(owner, arith.ExtUIOp | arith.ExtSIOp | arith.ExtFOp):
            used.add(owner)
            owner = owner.input.owner
        if not isinstance(owner, LoadOp):
            raise fail(f"a factor computed by {describe(owner)}"  # type: ignore[arg-type]
                       if isinstance(owner, Operation) else "a factor that is not loaded")
        used.add(owner)
        factors.append(owner)
    extra = [op for op in block.body.block.ops
             if op not in used and not op.has_trait(IsTerminator) and not _is_index_op(op)]
    if extra:
        raise fail(f"also {_found_text(extra)}")
    return acc_load, factors[0], factors[1], store


def _is_index_op(op: Operation) -> bool:
    return is_pure(op) and not op.regions and all(
        isinstance(result.type, IndexType) for result in op.results)


def _same_indices(load: LoadOp, store: StoreOp) -> bool:
    return len(load.indices) == len(store.indices) and all(
        same_value(x, y) for x, y in zip(load.indices, store.indices, strict=True))


def _element_of(load: LoadOp) -> str:
    """The library's element name of what `load` reads, from its extension: u8 / s8 / ..."""
    users = [use.operation for use in load.result.uses]
    extension = users[0] if len(users) == 1 else None
    element = load.result.type
    if isinstance(extension, arith.ExtUIOp) and element == intrinsic_element_type("i8"):
        return "u8"
    if isinstance(extension, arith.ExtSIOp) and element == intrinsic_element_type("i8"):
        return "s8"
    for name, builtin in ELEMENT_TYPES.items():
        if name not in ("u8", "s8") and element == intrinsic_element_type(builtin):
            return name
    return str(element)


def _fits(load: LoadOp, operand: IntrinsicOperand, ivs: dict[str, SSAValue],
          entry: Intrinsic) -> str | None:
    """None if `load` reads as `operand` of `entry` with loops `ivs`, else why not."""
    what = f"operand '{operand.role}' (the load of {load.memref.type})"
    element = _element_of(load)
    if element != operand.element:
        return f"expected {what} of element type {operand.element}, found {element}"
    memref_type = load.memref.type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    row_major = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        row_major[d] = row_major[d + 1] * shape[d + 1]
    for axis, iv in ivs.items():
        coefficients = [_coefficient(index, iv, set(ivs.values())) for index in load.indices]
        if any(c is None for c in coefficients):
            return (f"expected the indices of {what} to be affine in the loops, found one that "
                    f'is not in "{axis}"')
        flat = sum(c * s for c, s in zip(coefficients, row_major, strict=True))  # type: ignore
        expected = operand.strides.get(axis, 0)
        if operand.passing == "fragment":
            # a lane gathers its fragment element by element: any layout that gives each
            # element of the tile its own place will do (B stored [k][j] as well as [j][k])
            if (flat == 0) != (expected == 0):
                return (f"expected {what} to {'move' if expected else 'not move'} per step of "
                        f"axis {axis}, found {flat} elements")
            continue
        if flat != expected:
            return (f"expected {what} to move {expected} elements per step of axis {axis}, "
                    f"found {flat}")
        if operand.passing != "fragment" and any(coefficients[:-1]):
            return (f"expected {what} to move along its last dimension only (a vector), "
                    f"found an axis {axis} moving another dimension")
    lanes = entry.lanes(operand)
    if operand.passing != "fragment" and shape[-1] < lanes:
        return (f"expected {what} to have at least {lanes} elements in its last dimension, "
                f"found {shape[-1]}")
    return None


def _coefficient(value: SSAValue, iv: SSAValue, ivs: set[SSAValue]) -> int | None:
    """How much `value` moves per step of `iv` when it is affine in the loops, else None."""
    if value is iv:
        return 1
    if not depends_on(value, ivs):
        return 0
    owner = value.owner
    if isinstance(owner, arith.AddiOp | arith.SubiOp):
        lhs, rhs = _coefficient(owner.lhs, iv, ivs), _coefficient(owner.rhs, iv, ivs)
        if lhs is None or rhs is None:
            return None
        return lhs + rhs if isinstance(owner, arith.AddiOp) else lhs - rhs
    if isinstance(owner, arith.MuliOp):
        for x, y in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            factor = constant_value(y)
            if factor is not None:
                inner = _coefficient(x, iv, ivs)
                return None if inner is None else inner * factor
    if value in ivs:
        return 0
    return None


def _rewrite(loop: ForOp, match: IntrinsicMatch) -> None:
    """Replaces the band by its block, at the loops' first iteration, computing with the
    intrinsic (the match holds, nothing has changed yet)."""
    block, entry = match.block, match.intrinsic
    zero = index_constant(0, loop)
    for inner in match.band:
        inner.induction_var.replace_all_uses_with(zero)
    parent = loop.parent_block()
    assert parent is not None
    hoisted = [op for inner in match.band for op in inner.body.block.ops
               if op is not block and not isinstance(op, ForOp)
               and not op.has_trait(IsTerminator)]
    for op in [*hoisted, block]:
        op.detach()
        parent.insert_op_before(op, loop)
    loop.detach()
    loop.erase(safe_erase=False)

    vectors: list[SSAValue] = []
    for load, operand in zip(match.loads, entry.operands, strict=True):
        vector_type = VectorType(
            intrinsic_element_type(ELEMENT_TYPES[operand.element]), [entry.lanes(operand)])
        vector = LoadOp(load.memref, list(load.indices), vector_type)
        block.body.block.insert_op_before(vector, match.store)
        vectors.append(vector.result)
    call = IntrinsicOp(entry.name, *vectors)
    store = StoreOp(call.result, match.store.memref, list(match.store.indices))
    block.body.block.insert_op_before(call, match.store)
    block.body.block.insert_op_before(store, match.store)
    _erase_statement(match.store)
    _drop_axes(block, block, match)


def _erase_statement(store: StoreOp) -> None:
    """Erases the old store and the ops only it used (the scalar statement)."""
    pending: list[Operation] = [store]
    while pending:
        op = pending.pop()
        operands = [operand.owner for operand in op.operands]
        op.detach()
        op.erase()
        for owner in operands:
            if (isinstance(owner, Operation) and owner.parent is not None
                    and not any(result.uses for result in owner.results)
                    and (is_pure(owner) or isinstance(owner, LoadOp | arith.ExtSIOp))
                    and not isinstance(owner, arith.ConstantOp)):
                pending.append(owner)


def _rewrite_warp(loop: ForOp, match: IntrinsicMatch, matrix_loads: bool) -> BlockOp:
    """Replaces the band by a loop over the warp's lanes around a block that gathers each
    lane's fragments (by `loop.matrix_load` where `matrix_loads` and the operand allows),
    calls the warp-level intrinsic and scatters the result's fragment."""
    from dlc.rewrites.gpu_schedule_rules import Cloner
    from dlc.rewrites.ir_builder import IRBuilder
    from dlc.rewrites.schedule.common import enclosing_loops

    block, entry = match.block, match.intrinsic
    for outer in enclosing_loops(loop):
        if outer.kind.data == "bound" and outer.thread is not None and \
                outer.thread.data == "threadIdx.x":
            raise ScheduleError(
                f'cannot tensorize with "{entry.name}": expected no loop around the nest bound '
                f'to threadIdx.x (the warp\'s lanes), found loop "{outer.axis.data}"',
                loop,
            )
    ivs = {axis: inner.induction_var for axis, inner in match.loops.items()}
    name = block.block_name.data
    at = IRBuilder.before(loop, anchor=loop)
    lane_loop, inner = at.loop(0, WARP_SIZE, f"{name}.lane", "bound", "threadIdx.x")
    lane = lane_loop.induction_var
    group, thread = inner.div(lane, 4), inner.rem(lane, 4)
    group.name_hint, thread.name_hint = "group", "thread"

    def body(b: IRBuilder) -> None:
        cloner = Cloner(loop, {}, b)
        cached: dict[tuple[str, int, int], SSAValue] = {}

        def axis_value(kind: str, scale: int, offset: int) -> SSAValue:
            """group + offset, or thread * scale + offset, built once."""
            if kind == "thread" and (kind, scale, 0) not in cached:
                cached[(kind, scale, 0)] = b.mul(thread, scale)
            key = (kind, scale, offset)
            if key not in cached:
                cached[key] = b.add(group if kind == "group" else cached[(kind, scale, 0)],
                                    offset)
            return cached[key]

        def at_axes(load: LoadOp | StoreOp, where: dict[str, SSAValue]) -> list[SSAValue]:
            """The indices of `load` with the axes at `where` (the others at 0)."""
            cloner.mapping = {iv: where.get(axis) or b.const(0) for axis, iv in ivs.items()}
            return [cloner.value(index) for index in load.indices]

        def indices(load: LoadOp | StoreOp, fragment: Fragment, element: int) -> list[SSAValue]:
            group_offset, thread_offset = fragment.offsets[element]
            return at_axes(load, {
                fragment.group_axis: axis_value("group", 1, group_offset),
                fragment.thread_axis: axis_value("thread", fragment.thread_scale,
                                                 thread_offset)})

        fragments: list[SSAValue] = []
        for load, operand in zip(match.loads, entry.operands, strict=True):
            fragment = operand.fragment
            assert fragment is not None
            element_type = intrinsic_element_type(ELEMENT_TYPES[operand.element])
            tiling = _matrix_tiling(load, operand, ivs) if matrix_loads else None
            if tiling is not None:
                where = matrix_row_address(b, lane, tiling)
                loaded = b.value(MatrixLoadOp(tiling.load.name, load.memref,
                                              at_axes(load, where)))
                loaded.name_hint = f"{operand.role}_fragment"
                fragments.append(loaded)
                continue
            vector: SSAValue | None = None
            for element in range(fragment.elements):
                scalar = b.value(LoadOp(load.memref, indices(load, fragment, element),
                                        element_type))
                if vector is None:
                    vector = b.value(vector_dialect.BroadcastOp(
                        scalar, VectorType(element_type, [fragment.elements])))
                else:
                    vector = b.value(vector_dialect.InsertOp(scalar, vector, [element]))
            assert vector is not None
            vector.name_hint = f"{operand.role}_fragment"
            fragments.append(vector)
        result = b.value(IntrinsicOp(entry.name, *fragments), "d_fragment")
        fragment = entry.acc.fragment
        assert fragment is not None
        for element in range(fragment.elements):
            value = b.value(vector_dialect.ExtractOp(result, [element], result.type.element_type))
            b.insert(StoreOp(value, match.store.memref, indices(match.store, fragment, element)))

    new_block = inner.block(name, body)
    _drop_axes(block, new_block, match)
    loop.detach()
    loop.erase(safe_erase=False)
    return new_block


def _matrix_tiling(load: LoadOp, operand: IntrinsicOperand, ivs: dict[str, SSAValue]
                   ) -> MatrixTiling | None:
    """How a `ldmatrix` loads `operand`'s fragment from `load`'s buffer, or None where none
    can: a factor of 16-bit elements in shared memory, its contiguous axis (the one moving
    only the last index, by 1; `ivs`: the loop of each axis) along the rows the instruction
    reads (`.trans` where that is the fragment's group axis: B stored [k][j])."""
    from dlc.rewrites.gpu_common import buffer_scope

    fragment = operand.fragment
    if operand.role == "acc" or fragment is None or buffer_scope(load.memref) != "shared":
        return None
    if getattr(load.result.type, "bitwidth", 0) != 16:
        return None
    contiguous = [axis for axis, value in ivs.items()
                  if _coefficient(load.indices[-1], value, set(ivs.values())) == 1
                  and not any(depends_on(index, {value}) for index in load.indices[:-1])]
    if len(contiguous) != 1:
        return None
    return matrix_tiling(fragment, contiguous[0])


def matrix_row_address(b: IRBuilder, lane: SSAValue, tiling: MatrixTiling
                       ) -> dict[str, SSAValue]:
    """The axis values of the row whose address `lane` gives to the matrix load: its matrix
    q = lane % (8 * matrices) / 8 selects the matrix's origin (a sum over the bits of q where
    the origins are linear in them, as for the mma fragments: `8 * (q % 2)`; else a chain of
    selects), plus lane % 8 rows."""
    rows = MatrixLoad.ROWS
    count = tiling.load.matrices
    matrix = b.div(b.rem(lane, rows * count), rows)
    matrix.name_hint = "matrix"
    where: dict[str, SSAValue] = {}
    for axis in (tiling.row_axis, tiling.column_axis):
        origins = [dict(origin)[axis] for origin in tiling.origins]
        bits = list(range(count.bit_length() - 1))
        steps = {bit: origins[1 << bit] - origins[0] for bit in bits}
        terms: list[SSAValue] = [b.rem(lane, rows)] if axis == tiling.row_axis else []
        if all(origins[q] == origins[0] + sum(steps[bit] for bit in bits if q >> bit & 1)
               for q in range(count)):
            terms += [b.mul(b.rem(b.div(matrix, 1 << bit), 2), step)
                      for bit, step in steps.items() if step]
            offset = origins[0]
        else:
            value = b.const(origins[-1])
            for q in reversed(range(count - 1)):
                is_q = b.value(arith.CmpiOp(matrix, b.const(q), "eq"))
                value = b.value(arith.SelectOp(is_q, b.const(origins[q]), value))
            terms.append(value)
            offset = 0
        total = terms[0] if terms else b.const(offset)
        for term in terms[1:]:
            total = b.add(total, term)
        where[axis] = b.add(total, offset) if terms else total
    return where


def _drop_axes(source: BlockOp, target: BlockOp, match: IntrinsicMatch) -> None:
    """`target`'s spatial and reduction axes: `source`'s, less those of the loops the
    intrinsic replaced (`match.loops`)."""
    removed = {inner.axis.data for inner in match.loops.values()}
    for prop in ("spatial_axes", "reduction_axes"):
        names = source.properties[prop]
        assert isinstance(names, ArrayAttr)
        target.properties[prop] = ArrayAttr(
            [name for name in names.data
             if isinstance(name, StringAttr) and name.data not in removed])
