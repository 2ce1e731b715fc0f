"""graph-fold-qdq: fold quantize/dequantize pairs around float convs and matmuls into integer ops.

What ONNX Runtime's QDQ transformer (`QDQ -> QLinearConv`) and TVM's QNN canonicalization do:
`quantize(conv2d(dequantize(x), dequantize(w), b))` computes, up to the float rounding of the
float conv, the same int8 values as an integer conv of x and w accumulated in int32 and
requantized. The integer form reads int8 activations, never materializes float ones, and its
requantization (cast, multiply, quantize) is an elementwise tail that `graph-fuse-ops` puts into
the conv's epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.interpreter_quant import dequantize
from dlc.dialects.graph.ops import AddOp, ConstantOp, Conv2DOp, MatmulOp, MulOp, ReluOp, TransposeOp
from dlc.dialects.graph.ops_quant import (
    Conv2DIntegerOp,
    DequantizeOp,
    MatmulIntegerOp,
    QuantizeOp,
)
from dlc.dialects.graph.ops_tensor import CastOp
from dlc.dialects.graph.utils import constant_array, shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import region_dce


@dataclass
class _Dequantized:
    """A `graph.dequantize` whose scale and zero point are constants."""

    op: DequantizeOp
    scale: np.ndarray
    zero_point: np.ndarray


def _dequantized(value: SSAValue) -> _Dequantized | None:
    op = value.owner
    if not isinstance(op, DequantizeOp):
        return None
    scale, zero_point = constant_array(op.scale), constant_array(op.zero_point)
    if scale is None or zero_point is None:
        return None
    return _Dequantized(op, np.asarray(scale, np.float32), np.asarray(zero_point))


def _quantized_weight(value: SSAValue) -> tuple[_Dequantized, np.ndarray, int] | None:
    """A weight that is the dequantize of a constant, possibly transposed (Gemm's transB): its
    dequantize, its integer values as the consumer sees them, and the axis of its per-channel
    scales in that view."""
    perm: tuple[int, ...] | None = None
    if isinstance(value.owner, TransposeOp) and value.has_one_use():
        perm = tuple(int(p) for p in value.owner.perm.get_values())
        value = value.owner.x
    dq = _dequantized(value)
    if dq is None or (data := constant_array(dq.op.x)) is None:
        return None
    rank = len(shape_of(value))
    axis = dq.op.axis_value() % rank
    weight = np.asarray(data)
    if perm is not None:
        weight = np.transpose(weight, perm)
        axis = perm.index(axis)
    return dq, weight, axis


def _only_user(value: SSAValue) -> bool:
    return value.has_one_use()


def _float_bias(value: SSAValue | None) -> np.ndarray | None | bool:
    """A bias's float values (a constant, or the dequantize of a constant); None when there is
    no bias; False when it is not known at compile time."""
    if value is None:
        return None
    if (array := constant_array(value)) is not None:
        return np.asarray(array, np.float32)
    dq = _dequantized(value)
    if dq is None or (data := constant_array(dq.op.x)) is None:
        return False
    return dequantize(np.asarray(data), dq.scale, dq.zero_point, dq.op.axis_value())


@dataclass
class _Match:
    """`quantize([relu](core[+ bias]))` with a quantized input, constant quantized weights."""

    core: Conv2DOp | MatmulOp
    x: _Dequantized
    w: _Dequantized
    weight: np.ndarray
    bias: np.ndarray | None
    relu: bool


def _match(q: QuantizeOp) -> _Match | None:
    value, relu = q.x, False
    if isinstance(value.owner, ReluOp) and _only_user(value):
        value, relu = value.owner.x, True
    bias_value: SSAValue | None = None
    if isinstance(value.owner, AddOp) and _only_user(value):
        add = value.owner
        for core_value, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            if isinstance(core_value.owner, MatmulOp):
                value, bias_value = core_value, other
                break
        else:
            return None
    core = value.owner
    if not isinstance(core, Conv2DOp | MatmulOp) or not _only_user(value):
        return None
    if isinstance(core, Conv2DOp):
        if core.layout_value() != "NCHW" or core.kernel_layout_value() != "OIHW":
            return None
        x_value, w_value, bias_value = core.input, core.weight, core.bias
    else:
        x_value, w_value = core.lhs, core.rhs
    x, quantized_weight = _dequantized(x_value), _quantized_weight(w_value)
    if x is None or quantized_weight is None or x.scale.ndim != 0:
        return None
    w, weight, axis = quantized_weight
    out_axis = 0 if isinstance(core, Conv2DOp) else len(shape_of(w_value)) - 1
    if w.scale.ndim == 1 and axis != out_axis:
        return None
    bias = _float_bias(bias_value)
    if bias is False:
        return None
    out_shape = shape_of(core.result)
    if isinstance(core, MatmulOp) and bias is not None:
        # Only a bias along the output columns folds into the accumulator.
        assert isinstance(bias, np.ndarray)
        if bias.size != out_shape[-1] and bias.size != 1:
            return None
        bias = np.broadcast_to(bias.reshape(-1), (out_shape[-1],))
    assert bias is None or isinstance(bias, np.ndarray)
    return _Match(core, x, w, weight, bias, relu)


class FoldQdqIntoIntegerOp(RewritePattern):
    """`quantize([relu](conv2d(dq(x), dq(w)[, b])))` and `quantize([relu](matmul(dq(x), dq(w))
    [+ b]))` → the integer op, `cast`, `mul` by sx * sw / sy, [relu], `quantize(·, 1, zy)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter) -> None:
        y_scale = constant_array(op.scale)
        if y_scale is None or np.ndim(y_scale) != 0:
            return
        match = _match(op)
        if match is None:
            return
        core, x, w = match.core, match.x, match.w
        acc_scale = (x.scale * w.scale).astype(np.float32)  # ORT's float32 product
        new_ops: list[Operation] = []

        def const(array: np.ndarray, name: str) -> SSAValue:
            constant = ConstantOp.from_array(array)
            constant.result.name_hint = name
            new_ops.append(constant)
            return constant.result

        weight = const(match.weight, "weight_q")
        w_zero_point = const(w.zero_point.reshape(-1) if w.zero_point.ndim else w.zero_point,
                             "weight_zero_point")
        bias = None
        if match.bias is not None:
            levels = np.rint(match.bias.astype(np.float64) / acc_scale.astype(np.float64))
            bias = const(np.clip(levels, -(2**31), 2**31 - 1).astype(np.int32), "bias_q")
        out_shape = shape_of(core.result)
        multiplier = (acc_scale / np.float32(y_scale)).astype(np.float32)
        channel_axis = 1 if isinstance(core, Conv2DOp) else len(out_shape) - 1
        if multiplier.ndim == 1:
            shape = [1] * len(out_shape)
            shape[channel_axis] = multiplier.size
            multiplier = multiplier.reshape(shape)
        multiplier_value = const(multiplier, "multiplier")
        one = const(np.array(1.0, np.float32), "one")
        if isinstance(core, Conv2DOp):
            integer: Operation = Conv2DIntegerOp(
                x.op.x, weight, x.op.zero_point, w_zero_point, bias,
                strides=core.strides_tuple(), padding=core.padding_tuple(),
                dilation=core.dilation_tuple(), groups=core.groups_value())
        else:
            integer = MatmulIntegerOp(x.op.x, weight, x.op.zero_point, w_zero_point)
        integer.location = core.location
        integer.results[0].name_hint = "acc"
        new_ops.append(integer)
        acc = integer.results[0]
        if bias is not None and isinstance(core, MatmulOp):
            new_ops.append(add := AddOp(acc, bias))
            acc = add.result
        new_ops.append(cast := CastOp(acc, f32))
        new_ops.append(scaled := MulOp(cast.result, multiplier_value))
        scaled.result.name_hint = "scaled"
        value = scaled.result
        if match.relu:
            new_ops.append(relu := ReluOp(value))
            value = relu.result
        requantized = QuantizeOp(value, one, op.zero_point, op.axis_value())
        requantized.location = op.location
        new_ops.append(requantized)
        rewriter.replace_op(op, new_ops, [requantized.result])


@dataclass(frozen=True)
class GraphFoldQdqPass(ModulePass):
    """Fold QDQ pairs around float convs and matmuls into integer ops with a fused requantize.

    *Input invariant*: any module. A pattern folds when the quantize's scale is a per-tensor
    constant; the conv/matmul input is a `graph.dequantize` with constant per-tensor scale and
    zero point; its weight is a `graph.dequantize` of a constant (per tensor, or per output
    channel: axis 0 of an OIHW conv weight, the last axis of a matmul rhs); the bias (if any) is
    a constant or the dequantize of one; every intermediate value has one user. Conv2d must be
    NCHW / OIHW.

    *Output IR*: `quantize([relu](conv2d(dequantize(x, sx, zx), dequantize(w, sw, zw), b)), sy,
    zy)` → `quantize([relu](f32(conv2d_integer(x, w, zx, zw, round(b / (sx sw)))) * (sx sw /
    sy)), 1, zy)`; the same for `matmul` (and `matmul + b`) with `matmul_integer` and the bias
    added to the int32 accumulator. The multiplier is computed in float32 as ONNX Runtime does.
    Dead dequantizes are removed.

    *Invariants*: each output differs from the float QDQ computation by at most one
    quantization step (the float conv's rounding against the exact integer sum); the integer
    op's result has one user, the cast of its fused requantize tail.
    """

    name: ClassVar[str] = "graph-fold-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldQdqIntoIntegerOp(), post_walk_func=region_dce).rewrite_module(op)
