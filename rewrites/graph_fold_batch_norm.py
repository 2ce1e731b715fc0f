"""graph-fold-batch-norm: fold inference batch norms and per-channel scales into conv2d / matmul.

Relay's SimplifyInference + FoldScaleAxis, for the patterns CNNs produce: `batch_norm(conv2d)`
becomes a conv2d with rescaled weights and a bias, a following `mul`/`div` by a per-channel
constant rescales the weights again, a following `add`/`sub` of one moves into the bias. A batch
norm that follows no conv becomes `x * s + t` with per-channel constants, which fuses as a
broadcast op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.attrs import is_float_type, to_numpy_dtype
from dlc.dialects.graph.ops import (
    AddOp,
    BatchNormOp,
    Conv2DOp,
    DivOp,
    MatmulOp,
    MulOp,
    SubOp,
    broadcast_shapes,
)
from dlc.dialects.graph.utils import build_constant, constant_array, shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import region_dce


def batch_norm_affine(op: BatchNormOp) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-channel (s, t) with `batch_norm(x) == x * s + t`, or None if a parameter is not constant.

    Computed in float64 from the constants, returned in float64.
    """
    params = [constant_array(v) for v in (op.scale, op.bias, op.mean, op.var)]
    if any(p is None for p in params):
        return None
    scale, bias, mean, var = (np.asarray(p, dtype=np.float64) for p in params)
    # A negative variance (an invalid model) gives NaN, as the unfolded op and ONNX Runtime do,
    # and a zero one with epsilon 0 inf: quietly, as theirs.
    with np.errstate(invalid="ignore", divide="ignore"):
        s = scale / np.sqrt(var + np.float64(np.float32(op.epsilon_value())))
        return s, bias - mean * s


def _channel_vector(value: SSAValue, result_shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """The constant `value` as a vector along `axis` of `result_shape`, when it broadcasts so.

    None unless `value` is a `graph.constant` whose broadcast against `result_shape` is
    `result_shape` itself and which is constant along every other axis (a per-channel or a
    scalar constant). Returned in float64 with `result_shape[axis]` entries.
    """
    array = constant_array(value)
    if array is None or array.ndim > len(result_shape):
        return None
    if broadcast_shapes(array.shape, result_shape) != result_shape:
        return None
    padded = array.reshape((1,) * (len(result_shape) - array.ndim) + array.shape)
    if any(dim != 1 for index, dim in enumerate(padded.shape) if index != axis):
        return None
    vector = padded.reshape(-1).astype(np.float64)
    return np.broadcast_to(vector, (result_shape[axis],)) if vector.size == 1 else vector


def _scaled_conv(
    conv: Conv2DOp, scale: np.ndarray | None, shift: np.ndarray | None
) -> list[Operation] | None:
    """`conv` with weights multiplied by `scale` and the bias scaled, then shifted by `shift`.

    `scale` and `shift` are per output channel (float64); None leaves that part unchanged.
    Returns the new weight and bias constants and the new conv (last), or None when the weight
    (or the bias, if any) is not a constant.
    """
    weight = constant_array(conv.weight)
    if weight is None:
        return None
    out_axis = conv.kernel_layout_value().index("O")
    channels = weight.shape[out_axis]
    if conv.bias is not None:
        bias_array = constant_array(conv.bias)
        if bias_array is None:
            return None
        bias = bias_array.astype(np.float64)
    else:
        bias = np.zeros(channels, dtype=np.float64)
    new_weight = weight
    if scale is not None:
        shape = [1] * weight.ndim
        shape[out_axis] = channels
        new_weight = (weight.astype(np.float64) * scale.reshape(shape)).astype(weight.dtype)
        bias = bias * scale
    if shift is not None:
        bias = bias + shift
    weight_op = build_constant(new_weight)
    weight_op.result.name_hint = conv.weight.name_hint
    bias_op = build_constant(bias.astype(weight.dtype))
    bias_op.result.name_hint = conv.bias.name_hint if conv.bias is not None else "bias"
    new_conv = Conv2DOp(
        conv.input, weight_op, bias_op,
        strides=conv.strides_tuple(), padding=conv.padding_tuple(),
        dilation=conv.dilation_tuple(), groups=conv.groups_value(),
        layout=conv.layout_value(), kernel_layout=conv.kernel_layout_value(),
    )
    new_conv.location = conv.location  # the ONNX node name profiles and diagnostics show
    return [weight_op, bias_op, new_conv]


def _scaled_matmul(matmul: MatmulOp, scale: np.ndarray) -> list[Operation] | None:
    """`matmul` with the columns of its constant 2-D rhs multiplied by `scale`.

    Returns the new weight constant and the new matmul (last), or None when the rhs is not a
    2-D constant.
    """
    weight = constant_array(matmul.rhs)
    if weight is None or weight.ndim != 2:
        return None
    new_weight = (weight.astype(np.float64) * scale.reshape(1, -1)).astype(weight.dtype)
    weight_op = build_constant(new_weight)
    weight_op.result.name_hint = matmul.rhs.name_hint
    new_matmul = MatmulOp(matmul.lhs, weight_op)
    new_matmul.location = matmul.location
    return [weight_op, new_matmul]


def _is_float(value: SSAValue) -> bool:
    type = value.type
    return isinstance(type, TensorType) and is_float_type(type.get_element_type())


def _dtype(value: SSAValue) -> np.dtype:
    type = value.type
    assert isinstance(type, TensorType), f"expected a tensor, found {type}"
    return to_numpy_dtype(type.get_element_type())


def _single_user_producer(value: SSAValue, kind: type[Operation]) -> Operation | None:
    """The op of class `kind` defining `value` when `value` is its only result use."""
    owner = value.owner
    if isinstance(owner, kind) and value.has_one_use():
        return owner
    return None


class FoldBatchNormIntoConv(RewritePattern):
    """`batch_norm(conv2d(x, w, b))` → `conv2d(x, w * s, b * s + t)` (conv layout with C at 1)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormOp, rewriter: PatternRewriter) -> None:
        conv = _single_user_producer(op.x, Conv2DOp)
        if not isinstance(conv, Conv2DOp) or conv.layout_value().index("C") != 1:
            return
        affine = batch_norm_affine(op)
        if affine is None:
            return
        new_ops = _scaled_conv(conv, *affine)
        if new_ops is not None:
            rewriter.replace(op, new_ops)


class FoldBatchNormIntoMatmul(RewritePattern):
    """`batch_norm(matmul(x, w))` on N×C → `matmul(x, w * s) + t` (w a constant C-column matrix)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormOp, rewriter: PatternRewriter) -> None:
        matmul = _single_user_producer(op.x, MatmulOp)
        if not isinstance(matmul, MatmulOp) or len(shape_of(matmul.result)) != 2:
            return
        affine = batch_norm_affine(op)
        if affine is None:
            return
        scale, shift = affine
        new_ops = _scaled_matmul(matmul, scale)
        if new_ops is None:
            return
        new_matmul = new_ops[-1]
        shift_op = build_constant(shift.astype(_dtype(matmul.result)))
        add = AddOp(new_matmul, shift_op)
        rewriter.replace(op, [*new_ops, shift_op, add])


class FoldChannelAffineIntoConv(RewritePattern):
    """`conv2d(...) * c`, `/ c`, `+ c`, `- c` with a per-channel (or scalar) constant c → conv2d.

    A mul/div rescales the weights and the bias; an add/sub shifts the bias. The constant must
    broadcast to the conv's own result shape (x op c has the conv's type). `c - conv` and
    `c / conv` do not fold.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: AddOp | SubOp | MulOp | DivOp, rewriter: PatternRewriter
    ) -> None:
        sides = [(op.lhs, op.rhs)]
        if isinstance(op, AddOp | MulOp):
            sides.append((op.rhs, op.lhs))
        for conv_value, constant in sides:
            conv = _single_user_producer(conv_value, Conv2DOp)
            if not isinstance(conv, Conv2DOp) or op.result.type != conv.result.type:
                continue
            if not _is_float(conv.result):
                continue
            axis = conv.layout_value().index("C")
            vector = _channel_vector(constant, shape_of(conv.result), axis)
            if vector is None:
                continue
            scale = shift = None
            if isinstance(op, MulOp):
                scale = vector
            elif isinstance(op, DivOp):
                scale = 1.0 / vector
            elif isinstance(op, AddOp):
                shift = vector
            else:
                shift = -vector
            new_ops = _scaled_conv(conv, scale, shift)
            if new_ops is not None:
                rewriter.replace(op, new_ops)
                return


class FoldChannelScaleIntoMatmul(RewritePattern):
    """`matmul(x, w) * c` with c constant per column (or scalar) → `matmul(x, w * c)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        for matmul_value, constant in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            matmul = _single_user_producer(matmul_value, MatmulOp)
            if not isinstance(matmul, MatmulOp) or op.result.type != matmul.result.type:
                continue
            shape = shape_of(matmul.result)
            if len(shape) != 2 or not _is_float(matmul.result):
                continue
            vector = _channel_vector(constant, shape, 1)
            if vector is None:
                continue
            new_ops = _scaled_matmul(matmul, vector)
            if new_ops is not None:
                rewriter.replace(op, new_ops)
                return


class DecomposeBatchNorm(RewritePattern):
    """A batch norm with constant parameters left on its own → `x * s + t` (per-channel s, t).

    s and t have shape C×1×…×1, so they broadcast along axis 1 like the batch norm's parameters.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormOp, rewriter: PatternRewriter) -> None:
        affine = batch_norm_affine(op)
        if affine is None:
            return
        scale, shift = affine
        dtype = _dtype(op.result)
        rank = len(shape_of(op.x))
        shape = (scale.size,) + (1,) * (rank - 2)
        scale_op = build_constant(scale.astype(dtype).reshape(shape))
        shift_op = build_constant(shift.astype(dtype).reshape(shape))
        mul = MulOp(op.x, scale_op)
        add = AddOp(mul, shift_op)
        rewriter.replace(op, [scale_op, mul, shift_op, add])


def fold_batch_norm_patterns() -> list[RewritePattern]:
    """The folding patterns, most specific first (decomposition last)."""
    return [
        FoldBatchNormIntoConv(),
        FoldBatchNormIntoMatmul(),
        FoldChannelAffineIntoConv(),
        FoldChannelScaleIntoMatmul(),
    ]


@dataclass(frozen=True)
class GraphFoldBatchNormPass(ModulePass):
    """Fold inference batch norms and per-channel constant scales/shifts into conv2d and matmul.

    *Input invariant*: any module. A batch norm folds only when its scale, bias, mean and var
    are `graph.constant`s; into a conv2d only when the conv's weight (and bias, if any) are
    constants, its layout has C at axis 1 (the batch norm's channel axis) and the batch norm is
    the conv result's only user; into a matmul only for a 2-D N×C result with a constant 2-D
    rhs.

    *Output IR*:
    - `batch_norm(conv2d(x, w[, b]))` → `conv2d(x, w * s, b * s + t)` where
      s = scale / sqrt(var + epsilon) and t = bias - mean * s, per output channel;
    - `conv2d(...) * c`, `c * conv2d(...)`, `conv2d(...) / c` with c constant per channel (or a
      scalar) → weights and bias rescaled; `conv2d(...) + c`, `c + conv2d(...)`,
      `conv2d(...) - c` → bias shifted (repeatedly, so bn, then mul, then add all fold);
    - `batch_norm(matmul(x, w))` → `add(matmul(x, w * s), t)`; `matmul(x, w) * c` → `matmul(x,
      w * c)`;
    - every other batch norm with constant parameters → `add(mul(x, s), t)` with s, t of shape
      C×1×…×1 (then it fuses like any broadcast op), when `decompose` is set (default).
    The new weights and biases are computed in float64 and stored in the weight's dtype.

    *Invariants*: results change only by rounding (the folded arithmetic is done once in
    float64 instead of per element in float32); no conv2d gains a second user; a folded
    conv2d always has a bias.

    Options:
        decompose: rewrite batch norms that fold into nothing as mul + add (default true).
    """

    name: ClassVar[str] = "graph-fold-batch-norm"

    decompose: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(fold_batch_norm_patterns()),
            post_walk_func=region_dce,
        ).rewrite_module(op)
        if self.decompose:
            PatternRewriteWalker(DecomposeBatchNorm(), post_walk_func=region_dce).rewrite_module(op)
            # x * s + t after a conv2d folds now.
            PatternRewriteWalker(
                GreedyRewritePatternApplier(fold_batch_norm_patterns()),
                post_walk_func=region_dce,
            ).rewrite_module(op)

