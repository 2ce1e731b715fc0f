"""The tensor intrinsics dlc can tensorize a loop nest into, described as data.

Counterpart: TVM's `TensorIntrin.register(name, desc, impl)` (the desc a TensorIR block, the impl
the call it becomes) and its x86 `dot_16x1x16_uint8_int8_int32` / CUDA `mma_sync` intrinsics.
Here an entry says, as data, the loop nest it implements (its axes, their extents and iteration
kinds), the access pattern of each operand (its element type and the element stride of each
axis in the operand's last dimension: 0 where the axis does not move it), the statement it
computes (`acc[...] += ext(a[...]) * ext(b[...])`, the extension following the element
types), the call it emits (an LLVM intrinsic with how each operand is passed, or a PTX
instruction with the fragment layout of each operand over a warp's lanes) and the target
features it needs. `transform.loop.tensorize` (rewrites/schedule/tensorize.py) matches a nest
against an entry; the LLVM lowering of `loop.intrinsic` (rewrites/llvm_lowering/intrinsic.py),
its NVVM lowering (rewrites/target_gpu_lower_to_nvvm.py) and the loop interpreter read the
same entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

ELEMENT_TYPES: dict[str, str] = {
    "u8": "i8", "s8": "i8", "s16": "i16", "i32": "i32", "f16": "f16", "bf16": "bf16",
    "f32": "f32",
}
"""The element types an operand may have, and the builtin type of its buffer (unsigned and
signed bytes are both `i8` buffers: the extension of the load, `extui` or `extsi`, says which)."""


@dataclass(frozen=True)
class Fragment:
    """The part of an operand's tile one lane of a warp holds in registers (PTX ISA, "Matrix
    fragments for mma.m16n8k16" and "mma.m16n8k32"): with `group = lane // 4` and
    `thread = lane % 4`, element `e` of the lane's fragment is at
    `group_axis = group + offsets[e][0]` and `thread_axis = thread * thread_scale +
    offsets[e][1]`; the fragment's elements are packed into 32-bit registers in order.

    Attributes:
        group_axis: the intrinsic axis the lane's group (lane // 4) moves.
        thread_axis: the axis its thread in the group (lane % 4) moves.
        thread_scale: elements of `thread_axis` per thread of the group.
        offsets: per fragment element, its (group_axis, thread_axis) offset.
    """

    group_axis: str
    thread_axis: str
    thread_scale: int
    offsets: tuple[tuple[int, int], ...]

    @property
    def elements(self) -> int:
        """The elements each lane holds."""
        return len(self.offsets)

    def coordinates(self, lane: int, element: int) -> dict[str, int]:
        """The axis values of element `element` of lane `lane`'s fragment."""
        group_offset, thread_offset = self.offsets[element]
        return {self.group_axis: lane // 4 + group_offset,
                self.thread_axis: (lane % 4) * self.thread_scale + thread_offset}


WARP_SIZE = 32
"""Lanes of the warp that runs one warp-level (`mma.sync`) intrinsic."""


@dataclass(frozen=True)
class IntrinsicOperand:
    """One operand of an intrinsic.

    Attributes:
        role: "acc" (read and written: the accumulator), "a" or "b" (read).
        element: one of `ELEMENT_TYPES`.
        strides: the element stride of each axis in the operand's buffer, row-major flattened
            (0: the axis does not move the operand, which is then broadcast along it). Operands
            passed as vectors must lie in the buffer's last dimension; for a "fragment" the
            largest stride is a leading dimension, which may be any larger stride (a tile of
            a bigger row-major matrix).
        passing: how the LLVM call receives the operand: "vector" (its elements bitcast to
            `llvm_type`), "splat32" (its elements, 32 bits in all, as one word broadcast to
            every lane of `llvm_type`), or "fragment" (a PTX register fragment).
        llvm_type: the LLVM vector type of the argument, as (lanes, element): `(16, "i32")`.
        fragment: for a warp-level intrinsic, which elements of the operand's tile each lane
            holds (PTX's fragment layout).
    """

    role: str
    element: str
    strides: Mapping[str, int]
    passing: str = "vector"
    llvm_type: tuple[int, str] = (0, "")
    fragment: Fragment | None = None

    def lanes(self, extents: Mapping[str, int]) -> int:
        """The number of contiguous elements the operand covers (its vector length)."""
        return 1 + sum((extents[axis] - 1) * stride for axis, stride in self.strides.items())


@dataclass(frozen=True)
class Intrinsic:
    """A tensor intrinsic: the nest it implements and the call it becomes.

    Attributes:
        name: what `transform.loop.tensorize` and `loop.intrinsic` call it.
        summary: one line for messages and docs.
        arch: "x86_64" or "nvptx".
        axes: the nest's axes as (name, extent, kind), kind "spatial" or "reduction".
        operands: the accumulator first, then a and b.
        features: the target features it needs (LLVM's names).
        llvm_intrinsic: the LLVM intrinsic the call lowers to ("" for a PTX instruction).
        ptx: the PTX instruction (for the GPU path; "" on the CPU).
        warp_level: whether one call is made by a whole warp (mma.sync), each thread holding a
            fragment (its operands' `fragment` layouts): `tensorize` distributes such a nest
            over the lanes of a warp, and it runs only on a GPU (the loop interpreter models
            it with `warp_reference`).
    """

    name: str
    summary: str
    arch: str
    axes: tuple[tuple[str, int, str], ...]
    operands: tuple[IntrinsicOperand, IntrinsicOperand, IntrinsicOperand]
    features: frozenset[str]
    llvm_intrinsic: str = ""
    ptx: str = ""
    warp_level: bool = False
    reference: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] = field(
        default=lambda acc, a, b: acc, repr=False, compare=False)
    """`acc + a . b` over the flat operand vectors, in NumPy (the loop interpreter's semantics
    of the call)."""

    @property
    def extents(self) -> dict[str, int]:
        return {axis: extent for axis, extent, _ in self.axes}

    @property
    def acc(self) -> IntrinsicOperand:
        return self.operands[0]

    def lanes(self, operand: IntrinsicOperand) -> int:
        """The contiguous elements `operand` covers."""
        return operand.lanes(self.extents)

    def vector_lanes(self, operand: IntrinsicOperand) -> int:
        """The length of the vector `loop.intrinsic` takes for `operand`: a lane's fragment for
        a warp-level entry, else the contiguous elements the operand covers."""
        if operand.fragment is not None:
            return operand.fragment.elements
        return self.lanes(operand)

    def missing_features(self, features: frozenset[str]) -> list[str]:
        """The features the intrinsic needs that `features` lacks, sorted."""
        return sorted(self.features - features)


def _flat_dot(spatial: int, reduction: int, acc_type: type, widen: Callable[[np.ndarray],
              np.ndarray], views: tuple[type, type] | None = None
              ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The reference of a 1-D dot intrinsic: `acc[j] += sum_k a[k] * b[j * R + k]`, the bytes of
    a and b read as the `views` dtypes (u8, s8) whatever their arrays' dtypes."""

    def reference(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if views is not None:
            a, b = np.asarray(a).view(views[0]), np.asarray(b).view(views[1])
        products = widen(b).reshape(spatial, reduction) * widen(a).reshape(1, reduction)
        with np.errstate(over="ignore"):
            return (acc + products.sum(axis=1, dtype=acc_type)).astype(acc_type)

    return reference


def warp_reference(entry: Intrinsic, acc: np.ndarray, a: np.ndarray, b: np.ndarray
                   ) -> np.ndarray:
    """What a warp-level entry computes from the fragments of all its lanes (arrays of
    `WARP_SIZE` rows, a lane's fragment per row): the tiles gathered by the fragment layouts,
    `acc + a . b` over the reduction axis, and the result's fragments (a model of `mma.sync`,
    used by the loop interpreter)."""
    extents = entry.extents

    def tile(operand: IntrinsicOperand, fragments: np.ndarray) -> np.ndarray:
        fragment = operand.fragment
        assert fragment is not None
        axes = [axis for axis, _, _ in entry.axes if operand.strides.get(axis, 0)]
        values = np.zeros([extents[axis] for axis in axes], dtype=fragments.dtype)
        for lane in range(WARP_SIZE):
            for element in range(fragment.elements):
                where = fragment.coordinates(lane, element)
                values[tuple(where[axis] for axis in axes)] = fragments[lane, element]
        return values

    acc_operand, a_operand, b_operand = entry.operands
    wide = np.float32 if acc_operand.element == "f32" else np.int64
    a_tile = tile(a_operand, np.asarray(a)).astype(wide)  # (i, k)
    b_tile = tile(b_operand, np.asarray(b)).astype(wide)  # (j, k)
    c_tile = tile(acc_operand, np.asarray(acc)).astype(wide)  # (i, j)
    d_tile = c_tile + a_tile @ b_tile.T
    fragment = acc_operand.fragment
    assert fragment is not None
    result = np.empty_like(np.asarray(acc))
    for lane in range(WARP_SIZE):
        for element in range(fragment.elements):
            where = fragment.coordinates(lane, element)
            result[lane, element] = d_tile[where["i"], where["j"]]
    return result


def _bf16_to_f32(values: np.ndarray) -> np.ndarray:
    """bf16 values as f32: raw 16-bit patterns (uint16 arrays) widened, other arrays cast."""
    if values.dtype == np.uint16:
        return (values.astype(np.uint32) << 16).view(np.float32)
    return values.astype(np.float32)


VPDPBUSD = Intrinsic(
    name="x86.avx512.vpdpbusd",
    summary="AVX-512 VNNI: 16 i32 lanes, each += the dot of 4 u8 (broadcast) by 4 s8",
    arch="x86_64",
    axes=(("j", 16, "spatial"), ("k", 4, "reduction")),
    operands=(
        IntrinsicOperand("acc", "i32", {"j": 1, "k": 0}, "vector", (16, "i32")),
        IntrinsicOperand("a", "u8", {"j": 0, "k": 1}, "splat32", (16, "i32")),
        IntrinsicOperand("b", "s8", {"j": 4, "k": 1}, "vector", (16, "i32")),
    ),
    features=frozenset({"avx512vnni"}),
    llvm_intrinsic="llvm.x86.avx512.vpdpbusd.512",
    reference=_flat_dot(16, 4, np.int32, lambda x: x.astype(np.int32), (np.uint8, np.int8)),
)
"""`vpdpbusd zmm`: acc[j] += sum_k u8(a[k]) * s8(b[4j + k]), j < 16, k < 4, wrapping (not
saturating) i32 sums. a is 4 bytes broadcast to all lanes; b 64 bytes: 16 blocks of 4."""

def _pairwise_dot(spatial: int, reduction: int
                  ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The reference of a lane-wise dot intrinsic: `acc[j] += sum_k a[j * R + k] * b[j * R + k]`
    over signed 16-bit a and b (arrays of any dtype, read as int16), wrapping i32 sums."""

    def reference(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = np.asarray(a).astype(np.int16).astype(np.int64).reshape(spatial, reduction)
        b = np.asarray(b).astype(np.int16).astype(np.int64).reshape(spatial, reduction)
        total = np.asarray(acc).astype(np.int64) + (a * b).sum(axis=1)
        return (total & 0xFFFFFFFF).astype(np.uint32).view(np.int32)

    return reference


VPDPWSSD = Intrinsic(
    name="x86.avx512.vpdpwssd",
    summary="AVX-512 VNNI: 16 i32 lanes, each += the dot of its own 2 s16 by 2 s16",
    arch="x86_64",
    axes=(("j", 16, "spatial"), ("k", 2, "reduction")),
    operands=(
        IntrinsicOperand("acc", "i32", {"j": 1, "k": 0}, "vector", (16, "i32")),
        IntrinsicOperand("a", "s16", {"j": 2, "k": 1}, "vector", (16, "i32")),
        IntrinsicOperand("b", "s16", {"j": 2, "k": 1}, "vector", (16, "i32")),
    ),
    features=frozenset({"avx512vnni"}),
    llvm_intrinsic="llvm.x86.avx512.vpdpwssd.512",
    reference=_pairwise_dot(16, 2),
)
"""`vpdpwssd zmm`: acc[j] += s16(a[2j]) * s16(b[2j]) + s16(a[2j + 1]) * s16(b[2j + 1]),
j < 16, wrapping i32 sums. Unlike vpdpbusd, both operands are per lane (64 bytes each): the
vectorizer makes one of an i32 product of factors that fit in 16 bits accumulated by an add
(`LoopVectorizer.pair_dot`: each i32 lane is the pair (low half, high half), the high half of
one factor zeroed)."""

VDPBF16PS = Intrinsic(
    name="x86.avx512.vdpbf16ps",
    summary="AVX-512 BF16: 16 f32 lanes, each += the dot of 2 bf16 (broadcast) by 2 bf16",
    arch="x86_64",
    axes=(("j", 16, "spatial"), ("k", 2, "reduction")),
    operands=(
        IntrinsicOperand("acc", "f32", {"j": 1, "k": 0}, "vector", (16, "f32")),
        IntrinsicOperand("a", "bf16", {"j": 0, "k": 1}, "splat32", (16, "i32")),
        IntrinsicOperand("b", "bf16", {"j": 2, "k": 1}, "vector", (16, "i32")),
    ),
    features=frozenset({"avx512bf16"}),
    llvm_intrinsic="llvm.x86.avx512bf16.dpbf16ps.512",
    reference=_flat_dot(16, 2, np.float32, _bf16_to_f32),
)
"""`vdpbf16ps zmm`: acc[j] += a[0] * b[2j] + a[1] * b[2j + 1] in f32 (bf16 products are exact
in f32; the instruction rounds once per pair and flushes denormals, so it may differ from the
scalar nest in the last bit). a and b are passed as `<16 x i32>` (their bf16 bit patterns,
`vector<32xi16>` in dlc, bitcast): xDSL's LLVM printer has no `bfloat`, and LLVM upgrades that
older signature of the intrinsic to `<32 x bfloat>` when it parses the module."""

_C_FRAGMENT = Fragment("i", "j", 2, ((0, 0), (0, 1), (8, 0), (8, 1)))
"""The 16x8 accumulator of mma.m16n8k16 and m16n8k32: c0, c1 in row `group`, c2, c3 eight rows
below, at columns `2 * thread` and `2 * thread + 1`."""

_A16_FRAGMENT = Fragment(
    "i", "k", 2, ((0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)))
"""A (16x16, 16-bit) of mma.m16n8k16: a0..a7 at rows group, group + 8 and columns 2 * thread
(+1), then the same eight columns to the right."""

_B16_FRAGMENT = Fragment("j", "k", 2, ((0, 0), (0, 1), (0, 8), (0, 9)))
"""B (16x8, 16-bit) of mma.m16n8k16: b0..b3 in column `group` at rows 2 * thread (+1) and
eight rows below."""

_A8_FRAGMENT = Fragment("i", "k", 4, tuple(
    (8 * ((e // 4) % 2), 16 * (e // 8) + e % 4) for e in range(16)))
"""A (16x32, 8-bit) of mma.m16n8k32: a0..a3 at row group, columns 4 * thread .. +3; a4..a7
eight rows below; a8..a15 the same sixteen columns to the right."""

_B8_FRAGMENT = Fragment("j", "k", 4, tuple((0, 16 * (e // 4) + e % 4) for e in range(8)))
"""B (32x8, 8-bit) of mma.m16n8k32: b0..b3 in column group at rows 4 * thread .. +3, b4..b7
sixteen rows below."""

MMA_M16N8K16_F16 = Intrinsic(
    name="ptx.mma.m16n8k16.f16",
    summary="PTX mma.sync m16n8k16: a 16x8 f32 tile += 16x16 f16 (row) x 16x8 f16 (col)",
    arch="nvptx",
    axes=(("i", 16, "spatial"), ("j", 8, "spatial"), ("k", 16, "reduction")),
    operands=(
        IntrinsicOperand("acc", "f32", {"i": 8, "j": 1, "k": 0}, "fragment",
                         fragment=_C_FRAGMENT),
        IntrinsicOperand("a", "f16", {"i": 16, "j": 0, "k": 1}, "fragment",
                         fragment=_A16_FRAGMENT),
        IntrinsicOperand("b", "f16", {"i": 0, "j": 16, "k": 1}, "fragment",
                         fragment=_B16_FRAGMENT),
    ),
    features=frozenset({"sm_80"}),
    ptx="mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    warp_level=True,
)
"""Warp-level: C[i, j] += sum_k A[i, k] * B[k, j], A row-major, B stored column-major (as
`Bt[j, k]`), one 16x8 f32 tile per warp."""

MMA_M16N8K16_BF16 = Intrinsic(
    name="ptx.mma.m16n8k16.bf16",
    summary="PTX mma.sync m16n8k16: a 16x8 f32 tile += 16x16 bf16 (row) x 16x8 bf16 (col)",
    arch="nvptx",
    axes=MMA_M16N8K16_F16.axes,
    operands=(
        IntrinsicOperand("acc", "f32", {"i": 8, "j": 1, "k": 0}, "fragment",
                         fragment=_C_FRAGMENT),
        IntrinsicOperand("a", "bf16", {"i": 16, "j": 0, "k": 1}, "fragment",
                         fragment=_A16_FRAGMENT),
        IntrinsicOperand("b", "bf16", {"i": 0, "j": 16, "k": 1}, "fragment",
                         fragment=_B16_FRAGMENT),
    ),
    features=frozenset({"sm_80"}),
    ptx="mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    warp_level=True,
)

MMA_M16N8K32_S8 = Intrinsic(
    name="ptx.mma.m16n8k32.s8",
    summary="PTX mma.sync m16n8k32: a 16x8 s32 tile += 16x32 s8 (row) x 32x8 s8 (col)",
    arch="nvptx",
    axes=(("i", 16, "spatial"), ("j", 8, "spatial"), ("k", 32, "reduction")),
    operands=(
        IntrinsicOperand("acc", "i32", {"i": 8, "j": 1, "k": 0}, "fragment",
                         fragment=_C_FRAGMENT),
        IntrinsicOperand("a", "s8", {"i": 32, "j": 0, "k": 1}, "fragment",
                         fragment=_A8_FRAGMENT),
        IntrinsicOperand("b", "s8", {"i": 0, "j": 32, "k": 1}, "fragment",
                         fragment=_B8_FRAGMENT),
    ),
    features=frozenset({"sm_80"}),
    ptx="mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
    warp_level=True,
)

INTRINSICS: dict[str, Intrinsic] = {
    entry.name: entry
    for entry in (VPDPBUSD, VPDPWSSD, VDPBF16PS, MMA_M16N8K16_F16, MMA_M16N8K16_BF16,
                  MMA_M16N8K32_S8)
}
"""The intrinsic library, by name."""


# ----------------------------------------------------------------------------------------------
# Warp-level matrix loads: PTX ldmatrix
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatrixLoad:
    """A warp-level load of 8x8 matrices of 16-bit elements from shared memory into the
    lanes' registers (PTX `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16`), as data.

    PTX semantics (PTX ISA, "Warp-level matrix load instruction: ldmatrix"): lanes `8q` to
    `8q + 7` give the addresses of rows 0 to 7 of matrix q (a row: 8 contiguous 16-bit
    elements, 16 bytes, 16-byte aligned; the addresses of lanes past `8 * matrices` are
    ignored); each lane then holds two elements of each matrix q, its elements `2q` and
    `2q + 1`, at the positions `result` gives over the stored matrix's `row` and `column`:
    row `lane // 4`, columns `2 * (lane % 4) + {0, 1}`, or with `.trans` the transposed
    positions (row `2 * (lane % 4) + {0, 1}`, column `lane // 4`). That is the layout of the
    16-bit `mma.sync` fragments, which a warp thus loads in one instruction per operand.

    Attributes:
        name: what `loop.matrix_load` calls it.
        ptx: the PTX instruction.
        matrices: the 8x8 matrices loaded (1, 2 or 4); each lane receives 2 per matrix.
        result: where a lane's two elements of one matrix lie (axes "row", "column").
        features: the target features it needs.
    """

    name: str
    ptx: str
    matrices: int
    result: Fragment
    features: frozenset[str] = frozenset({"sm_75"})

    ROWS: ClassVar[int] = 8
    """Rows (and columns) of each matrix; a row is `ROWS` contiguous elements."""

    @property
    def elements(self) -> int:
        """The elements each lane receives."""
        return self.result.elements * self.matrices

    @property
    def transpose(self) -> bool:
        return self.result.group_axis == "column"

    def address_row(self, lane: int) -> tuple[int, int]:
        """(matrix, row) whose address lane `lane` gives (lanes past `8 * matrices` repeat
        the first ones: PTX ignores their addresses)."""
        return divmod(lane % (self.ROWS * self.matrices), self.ROWS)

    def position(self, lane: int, element: int) -> tuple[int, int, int]:
        """(matrix, row, column) in the stored matrices of element `element` of lane `lane`."""
        matrix, pair = divmod(element, self.result.elements)
        where = self.result.coordinates(lane, pair)
        return matrix, where["row"], where["column"]


def matrix_load_reference(entry: MatrixLoad, rows: np.ndarray) -> np.ndarray:
    """What each lane receives (an array of `WARP_SIZE` rows of `entry.elements`) from the
    8-element rows at the lanes' addresses (`rows[lane]`): a model of `ldmatrix`, used by
    the loop interpreter."""
    matrices = np.zeros((entry.matrices, MatrixLoad.ROWS, MatrixLoad.ROWS), dtype=rows.dtype)
    for lane in range(MatrixLoad.ROWS * entry.matrices):
        matrix, row = entry.address_row(lane)
        matrices[matrix, row] = rows[lane]
    result = np.empty((WARP_SIZE, entry.elements), dtype=rows.dtype)
    for lane in range(WARP_SIZE):
        for element in range(entry.elements):
            result[lane, element] = matrices[entry.position(lane, element)]
    return result


def _ldmatrix(matrices: int, transpose: bool) -> MatrixLoad:
    suffix = ".trans" if transpose else ""
    rows, columns = ("column", "row") if transpose else ("row", "column")
    return MatrixLoad(
        name=f"ptx.ldmatrix.x{matrices}{suffix}",
        ptx=f"ldmatrix.sync.aligned.m8n8.x{matrices}{suffix}.shared.b16",
        matrices=matrices,
        result=Fragment(rows, columns, 2, ((0, 0), (0, 1))),
    )


MATRIX_LOADS: dict[str, MatrixLoad] = {
    entry.name: entry
    for entry in (_ldmatrix(n, t) for t in (False, True) for n in (1, 2, 4))
}
"""The warp-level matrix loads, by name."""


@dataclass(frozen=True)
class MatrixTiling:
    """How one `MatrixLoad` loads an operand's fragment: the stored matrices' rows and
    columns run along the operand's axes `row_axis` and `column_axis` (the column axis must
    be contiguous in memory), matrix q starting at `origins[q]` (axis -> value)."""

    load: MatrixLoad
    row_axis: str
    column_axis: str
    origins: tuple[tuple[tuple[str, int], ...], ...]


def matrix_tiling(fragment: Fragment, contiguous_axis: str) -> MatrixTiling | None:
    """The `MATRIX_LOADS` entry (and its placement) whose result is `fragment` for every lane
    and element, the stored rows running along `contiguous_axis`; None where none fits (not
    two 16-bit elements per matrix, elements of a matrix not 8x8-aligned...)."""
    axes = (fragment.group_axis, fragment.thread_axis)
    if contiguous_axis not in axes:
        return None
    column_axis = contiguous_axis
    row_axis = axes[1 - axes.index(contiguous_axis)]
    for load in MATRIX_LOADS.values():
        if load.elements != fragment.elements:
            continue
        wanted_transpose = column_axis == fragment.group_axis
        if load.transpose != wanted_transpose:
            continue
        origins = []
        for matrix in range(load.matrices):
            _, row, column = load.position(0, 2 * matrix)
            first = fragment.coordinates(0, 2 * matrix)
            origins.append(((row_axis, first[row_axis] - row),
                            (column_axis, first[column_axis] - column)))
        tiling = MatrixTiling(load, row_axis, column_axis, tuple(origins))
        if all(_tiling_gives(tiling, fragment, lane) for lane in range(WARP_SIZE)):
            return tiling
    return None


def _tiling_gives(tiling: MatrixTiling, fragment: Fragment, lane: int) -> bool:
    for element in range(fragment.elements):
        matrix, row, column = tiling.load.position(lane, element)
        origin = dict(tiling.origins[matrix])
        if origin[tiling.row_axis] % MatrixLoad.ROWS or origin[tiling.column_axis] % \
                MatrixLoad.ROWS:
            return False
        expected = {tiling.row_axis: origin[tiling.row_axis] + row,
                    tiling.column_axis: origin[tiling.column_axis] + column}
        if fragment.coordinates(lane, element) != expected:
            return False
    return True


def get_matrix_load(name: str) -> MatrixLoad:
    """The matrix load named `name`.

    Raises:
        IntrinsicError: no entry has that name.
    """
    entry = MATRIX_LOADS.get(name)
    if entry is None:
        raise IntrinsicError(
            f"expected a matrix load among {', '.join(sorted(MATRIX_LOADS))}, found '{name}'")
    return entry


class IntrinsicError(ValueError):
    """An unknown intrinsic name (the message lists the known ones)."""


def get_intrinsic(name: str) -> Intrinsic:
    """The entry named `name`.

    Raises:
        IntrinsicError: no entry has that name.
    """
    entry = INTRINSICS.get(name)
    if entry is None:
        raise IntrinsicError(
            f"expected an intrinsic among {', '.join(sorted(INTRINSICS))}, found '{name}'")
    return entry
