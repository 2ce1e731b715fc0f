"""Attribute-level vocabulary of the graph dialect: fusion kinds and element-type helpers.

The fusion kinds are TVM's `OpPatternKind` (relay/op/op_attr_types.h), in the same order, so that
the kind of a fused group is the maximum of the kinds of its ops.
"""

from __future__ import annotations

from enum import IntEnum

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    bf16,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation


class FusionKind(IntEnum):
    """How an op may be fused with its neighbours (TVM's `OpPatternKind`).

    Ordered from the most to the least fusable; the values are TVM's, so `max` over the ops of a
    group gives the group's dominant kind.

    - ELEMENTWISE: each output element depends on the input element at the same index.
    - BROADCAST: like ELEMENTWISE, but an input may be broadcast along some axes.
    - INJECTIVE: each output element depends on a single input element (reshape, transpose, concat).
    - REDUCTION: a commutative reduction along some axes (TVM's COMM_REDUCE).
    - OUT_FUSABLE: a complex op (conv2d, matmul, pools) whose output can take elementwise
      consumers (TVM's OUT_ELEMWISE_FUSABLE).
    - OPAQUE: never fused (softmax, constants, foreign ops).
    """

    ELEMENTWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    REDUCTION = 3
    OUT_FUSABLE = 4
    OPAQUE = 8

    @property
    def mnemonic(self) -> str:
        """The lower-case spelling used in the `kind` attribute of `graph.fused`."""
        return self.name.lower()

    @classmethod
    def from_mnemonic(cls, text: str) -> FusionKind:
        """The kind spelled `text` (`"out_fusable"` → OUT_FUSABLE); ValueError when unknown."""
        try:
            return cls[text.upper()]
        except KeyError:
            known = ", ".join(kind.mnemonic for kind in cls)
            raise ValueError(f"unknown fusion kind '{text}', expected one of {known}") from None


def fusion_kind(op: Operation) -> FusionKind:
    """The fusion kind of `op`: its class's `fusion_kind`, OPAQUE for ops outside the dialect.

    A `graph.fused` op reports the `kind` attribute of its group when it has one.
    """
    group_kind = getattr(op, "group_fusion_kind", None)
    if callable(group_kind):
        kind = group_kind()
        if isinstance(kind, FusionKind):
            return kind
    declared = getattr(type(op), "fusion_kind", None)
    if isinstance(declared, FusionKind):
        return declared
    return FusionKind.OPAQUE


BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
"""The NumPy dtype of `bf16` values: `ml_dtypes.bfloat16` (ONNX's own choice; `astype` from
float32 rounds to nearest, ties to even, and keeps NaN a NaN)."""

LOW_PRECISION_FLOATS: tuple[type[Attribute], ...] = (Float16Type, BFloat16Type)
"""The 16-bit float types. Graph ops on them compute in f32 and round each result once."""

_FLOAT_DTYPES: dict[type[Attribute], np.dtype] = {
    Float16Type: np.dtype(np.float16),
    BFloat16Type: BFLOAT16,
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}

_SIGNED_INT_DTYPES = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_UNSIGNED_INT_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def to_numpy_dtype(element_type: Attribute) -> np.dtype:
    """The NumPy dtype that holds values of a builtin element type (signless ints are signed).

    `bf16` is `BFLOAT16` (`ml_dtypes.bfloat16`). Raises ValueError for types NumPy cannot hold
    (i4, index, ...).
    """
    if (dtype := _FLOAT_DTYPES.get(type(element_type))) is not None:
        return dtype
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        table = (
            _UNSIGNED_INT_DTYPES
            if element_type.signedness.data == Signedness.UNSIGNED
            else _SIGNED_INT_DTYPES
        )
        if width in table:
            return np.dtype(table[width])
    raise ValueError(f"element type {element_type} has no NumPy dtype")


def from_numpy_dtype(dtype: np.dtype | type) -> Attribute:
    """The builtin element type of a NumPy dtype (ints become signless, uints unsigned)."""
    dtype = np.dtype(dtype)
    floats: dict[np.dtype, AnyFloat] = {
        np.dtype(np.float16): f16,
        BFLOAT16: bf16,
        np.dtype(np.float32): f32,
        np.dtype(np.float64): f64,
    }
    if dtype in floats:
        return floats[dtype]
    if dtype == np.bool_:
        return IntegerType(1)
    if dtype.kind == "i":
        return IntegerType(dtype.itemsize * 8)
    if dtype.kind == "u":
        return IntegerType(dtype.itemsize * 8, Signedness.UNSIGNED)
    raise ValueError(f"NumPy dtype {dtype} has no builtin element type")


def is_low_precision_float(element_type: Attribute) -> bool:
    """Whether `element_type` is `f16` or `bf16`."""
    return isinstance(element_type, LOW_PRECISION_FLOATS)


def is_float_type(element_type: Attribute) -> bool:
    """Whether `element_type` is a builtin floating-point type."""
    return isinstance(element_type, AnyFloat)
