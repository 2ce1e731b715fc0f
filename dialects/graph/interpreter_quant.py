"""NumPy implementations of the quantized ops of `ops_quant.py`, registered with the graph
interpreter (the exact integer semantics every lowering is checked against).

Importing this module registers them; `dialects.graph` imports it.
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.interpreter import _conv2d, _matmul, implements
from dlc.dialects.graph.ops_quant import (
    Conv2DIntegerOp,
    DequantizeOp,
    LookupOp,
    MatmulIntegerOp,
    QuantizeOp,
)


def along_axis(param: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A rank-0 or rank-1 (per-channel) parameter shaped to broadcast along `axis` of a tensor
    of `rank`."""
    if param.ndim == 0:
        return param
    shape = [1] * rank
    shape[axis % rank] = param.shape[0]
    return param.reshape(shape)


def quantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int = 1
             ) -> np.ndarray:
    """`saturate(round_half_to_even(x / scale) + zero_point)` in the zero point's dtype; the
    division in float32, as ONNX Runtime does it. NaN quantizes to the type's lowest value, as
    the compiled code's clamp makes it."""
    info = np.iinfo(zero_point.dtype)
    s = along_axis(np.asarray(scale, np.float32), x.ndim, axis)
    z = along_axis(zero_point.astype(np.float32), x.ndim, axis)
    q = np.rint(x.astype(np.float32) / s) + z
    q = np.where(np.isnan(q), info.min, q)
    return np.asarray(np.clip(q, info.min, info.max)).astype(zero_point.dtype)  # 0-d stays


def dequantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int = 1
               ) -> np.ndarray:
    """`(x - zero_point) * scale` in float32 (the difference exact in int64)."""
    s = along_axis(np.asarray(scale, np.float32), x.ndim, axis)
    z = along_axis(zero_point.astype(np.int64), x.ndim, axis)
    return np.asarray((x.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


@implements(QuantizeOp)
def _quantize(op: QuantizeOp, args: list[np.ndarray]) -> np.ndarray:
    x, scale, zero_point = args
    return quantize(x, scale, zero_point, op.axis_value())


@implements(DequantizeOp)
def _dequantize(op: DequantizeOp, args: list[np.ndarray]) -> np.ndarray:
    x, scale, zero_point = args
    return dequantize(x, scale, zero_point, op.axis_value())


def _shifted(x: np.ndarray, zero_point: np.ndarray, rank_axis: int | None) -> np.ndarray:
    z = zero_point.astype(np.int32).reshape(-1)
    if z.size == 1:
        return x.astype(np.int32) - z[0]
    assert rank_axis is not None
    return x.astype(np.int32) - along_axis(z, x.ndim, rank_axis)


@implements(Conv2DIntegerOp)
def _conv2d_integer(op: Conv2DIntegerOp, args: list[np.ndarray]) -> np.ndarray:
    x, w, xz, wz, *bias = args
    output_channels = op.kernel_layout_value().index("O")
    return _conv2d(op, [_shifted(x, xz, None), _shifted(w, wz, output_channels), *bias])  # type: ignore[arg-type]


@implements(MatmulIntegerOp)
def _matmul_integer(op: MatmulIntegerOp, args: list[np.ndarray]) -> np.ndarray:
    a, b, az, bz = args
    return _matmul(op, [_shifted(a, az, None), _shifted(b, bz, -1)])  # type: ignore[arg-type]


@implements(LookupOp)
def _lookup(op: LookupOp, args: list[np.ndarray]) -> np.ndarray:
    x, table = args
    return np.asarray(table[x.astype(np.int64) - op.lowest()])
