"""graph-fold-qdq: fold quantize/dequantize pairs around float convs and matmuls into integer ops.

What ONNX Runtime's QDQ transformer (`QDQ -> QLinearConv`) and TVM's QNN canonicalization do:
`quantize(conv2d(dequantize(x), dequantize(w), b))` computes, up to the float rounding of the
float conv, the same int8 values as an integer conv of x and w accumulated in int32 and
requantized. The integer form reads int8 activations, never materializes float ones, and its
requantization (cast, multiply, quantize) is an elementwise tail that `graph-fuse-ops` puts into
the conv's epilogue.

ORT's QDQ transformer also fuses uint8 Mul and Add into QLinearMul / QLinearAdd and Softmax into
QLinearSoftmax,
whose rounding differs from the float QDQ graph on ties (Mul) and by design (Softmax's exp
table and `floor(1 / y_scale)` multiplier); the differences compound to several steps at a
transformer's output. ONNX leaves the fused form's float order open, so dlc folds these the
way ORT does and its int8 results agree with ORT's (benchmarks/quantize.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.graph.interpreter_quant import dequantize
from dlc.dialects.graph.ops import (
    AddOp,
    ConstantOp,
    Conv2DOp,
    DivOp,
    MatmulOp,
    MaxPool2DOp,
    MulOp,
    ReduceOp,
    ReluOp,
    SoftmaxOp,
    SubOp,
    TransposeOp,
)
from dlc.dialects.graph.ops_quant import (
    UI8,
    Conv2DIntegerOp,
    DequantizeOp,
    MatmulIntegerOp,
    QuantizeOp,
)
from dlc.dialects.graph.ops_tensor import CastOp, GatherOp
from dlc.dialects.graph.utils import constant_array, shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32, f64, i32
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

    def integer_operands(self, new_ops: list[Operation]
                         ) -> tuple[np.ndarray, SSAValue, SSAValue, SSAValue | None]:
        """(accumulator scale sx * sw, the int8 weight, its zero point, the int32 bias
        `round(b / (sx sw))` or None), the constants appended to `new_ops`."""
        w = self.w
        acc_scale = (self.x.scale * w.scale).astype(np.float32)  # ORT's float32 product
        weight = _named_constant(self.weight, "weight_q", new_ops)
        w_zero_point = _named_constant(
            w.zero_point.reshape(-1) if w.zero_point.ndim else w.zero_point,
            "weight_zero_point", new_ops)
        bias = None
        if self.bias is not None:
            levels = np.rint(self.bias.astype(np.float64) / acc_scale.astype(np.float64))
            bias = _named_constant(np.clip(levels, -(2**31), 2**31 - 1).astype(np.int32),
                                   "bias_q", new_ops)
        return acc_scale, weight, w_zero_point, bias


def _named_constant(array: np.ndarray, name: str, new_ops: list[Operation]) -> SSAValue:
    """A `graph.constant` of `array` named `name`, appended to `new_ops`."""
    constant = ConstantOp.from_array(array)
    constant.result.name_hint = name
    new_ops.append(constant)
    return constant.result


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
    match = _match_core(core, bias_value)
    if match is not None:
        match.relu = relu
    return match


def _match_core(core: Conv2DOp | MatmulOp, bias_value: SSAValue | None) -> _Match | None:
    """The integer form's operands of a conv (its bias operand) or matmul (`bias_value`, an
    added bias) whose input and weight are dequantizes of constants' scales."""
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
    return _Match(core, x, w, weight, bias, False)


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
        core, x = match.core, match.x
        new_ops: list[Operation] = []
        acc_scale, weight, w_zero_point, bias = match.integer_operands(new_ops)

        def const(array: np.ndarray, name: str) -> SSAValue:
            return _named_constant(array, name, new_ops)

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
        rewriter.replace(op, new_ops, [requantized.result])


def _folds_with_its_quantize(value: SSAValue) -> bool:
    """Whether a conv's result reaches (through a ReLU) a quantize that
    `FoldQdqIntoIntegerOp` folds together with the conv."""
    if not value.has_one_use():
        return False
    user = next(iter(value.uses)).operation
    if isinstance(user, ReluOp) and user.result.has_one_use():
        user = next(iter(user.result.uses)).operation
    if not isinstance(user, QuantizeOp):
        return False
    y_scale = constant_array(user.scale)
    return y_scale is not None and np.ndim(y_scale) == 0 and _match(user) is not None


class FoldQdqConvFloatOutput(RewritePattern):
    """`conv2d(dq(x), dq(w)[, b])` whose float result's one user is an add (a residual sum:
    `dlc quantize` quantizes a ResNet block once, after conv + shortcut + ReLU) →
    `f32(conv2d_integer(x, w, zx, zw, round(b / (sx sw)))) * (sx sw)`: the int32 accumulator
    dequantized, an elementwise tail that the sum, the ReLU and the quantize after it join in
    the conv's epilogue. Equal to the float conv of the dequantized values up to the float
    conv's own rounding (the integer sum is exact)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter) -> None:
        if (_folds_with_its_quantize(op.result) or not op.result.has_one_use()
                or not isinstance(next(iter(op.result.uses)).operation, AddOp)):
            return
        match = _match_core(op, op.bias)
        if match is None:
            return
        x = match.x
        new_ops: list[Operation] = []
        acc_scale, weight, w_zero_point, bias = match.integer_operands(new_ops)

        def const(array: np.ndarray, name: str) -> SSAValue:
            return _named_constant(array, name, new_ops)

        scale = acc_scale
        if scale.ndim == 1:
            scale = scale.reshape(1, -1, *[1] * (len(shape_of(op.result)) - 2))
        scale_value = const(scale, "acc_scale")
        integer = Conv2DIntegerOp(
            x.op.x, weight, x.op.zero_point, w_zero_point, bias, strides=op.strides_tuple(),
            padding=op.padding_tuple(), dilation=op.dilation_tuple(),
            groups=op.groups_value())
        integer.location = op.location
        integer.results[0].name_hint = "acc"
        cast = CastOp(integer.results[0], f32)
        scaled = MulOp(cast.result, scale_value)
        scaled.result.name_hint = "dequantized"
        new_ops += [integer, cast, scaled]
        rewriter.replace(op, new_ops, [scaled.result])


def _per_tensor(value: SSAValue) -> _Dequantized | None:
    """`value`'s dequantize when its scale and zero point are per-tensor constants."""
    dq = _dequantized(value)
    if dq is None or dq.scale.ndim != 0 or dq.zero_point.ndim != 0:
        return None
    return dq


def _name(ops: list[Operation], *names: str) -> None:
    """Name the first results of the last `len(names) + 1` ops (the last is the quantize)."""
    for op, name in zip(ops[-len(names) - 1:], names, strict=False):
        op.results[0].name_hint = name


def _levels(dq: _Dequantized, new_ops: list[Operation]) -> SSAValue:
    """`f32(x - zero_point)` of a dequantize's integer input: exact (|x - zp| <= 255)."""
    one = ConstantOp.from_array(np.array(1.0, np.float32))
    levels = DequantizeOp(dq.op.x, one.result, dq.op.zero_point, dq.op.axis_value())
    one.result.name_hint, levels.results[0].name_hint = "one", "levels"
    new_ops += [one, levels]
    return levels.results[0]


class FoldQdqMul(RewritePattern):
    """`quantize(mul(dq(a, sa, za), dq(b, sb, zb)), sc, zc)` (per-tensor, one element type) →
    `quantize(f32((a - za) (b - zb)) * (sa sb / sc) + zc, 1, 0)` for uint8 (ORT 1.32 fuses
    no int8 Mul, and neither does dlc): ONNX Runtime's QLinearMul
    (MLAS: the integer product, one float32 multiplier computed as `sa * sb / sc`, the zero
    point added in float, round half to even, saturate). The float QDQ form rounds the product
    of the two dequantized values and then divides by sc; on the exact ties that quantized
    products hit (a multiplier near 1/2 or 1) the two orders round to different levels, which
    the next layers widen to several steps."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter) -> None:
        mul = op.x.owner
        c_scale = constant_array(op.scale)
        if (not isinstance(mul, MulOp) or not _only_user(op.x) or c_scale is None
                or np.ndim(c_scale) != 0 or constant_array(op.zero_point) is None):
            return
        a, b = _per_tensor(mul.lhs), _per_tensor(mul.rhs)
        element = op.result.type.get_element_type()
        if (a is None or b is None or element != UI8
                or any(d.op.x.type.get_element_type() != element for d in (a, b))):
            return
        zero_point = np.asarray(constant_array(op.zero_point))
        multiplier = (a.scale * b.scale) / np.float32(c_scale)  # float32, in MLAS's order
        new_ops: list[Operation] = []
        product = MulOp(_levels(a, new_ops), _levels(b, new_ops))
        ratio = ConstantOp.from_array(np.asarray(multiplier, np.float32))
        scaled = MulOp(product.result, ratio.result)
        offset = ConstantOp.from_array(np.asarray(zero_point, np.float32))
        shifted = AddOp(scaled.result, offset.result)
        one = ConstantOp.from_array(np.array(1.0, np.float32))
        zero = ConstantOp.from_array(np.zeros((), zero_point.dtype))
        requantized = QuantizeOp(shifted.result, one.result, zero.result, op.axis_value())
        requantized.location = op.location
        new_ops += [product, ratio, scaled, offset, shifted, one, zero, requantized]
        _name(new_ops, "product", "multiplier", "scaled", "zero_point_f", "shifted", "one",
              "zero")
        rewriter.replace(op, new_ops, [requantized.result])


class FoldQdqAdd(RewritePattern):
    """`quantize(add(dequantize(a, sa, za), dequantize(b, sb, zb)), sc, zc)` (uint8, per tensor,
    operands of one shape) → ONNX Runtime's QLinearAdd (MLAS's AVX2 kernel): with float32
    ratios `rA = sa / sc`, `rB = sb / sc` and `k = zc - (rA za + rB zb)`, the output level is
    `round(fma(a, rA, fma(b, rB, k)))`, saturated. Each fma is computed exactly in float64 and
    rounded once to float32 (exact: the products have at most 32 significant bits and the sums
    stay within 53)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter) -> None:
        add = op.x.owner
        c_scale, c_zero = constant_array(op.scale), constant_array(op.zero_point)
        if (not isinstance(add, AddOp) or not _only_user(op.x) or c_scale is None
                or np.ndim(c_scale) != 0 or c_zero is None):
            return
        a, b = _per_tensor(add.lhs), _per_tensor(add.rhs)
        element = op.result.type.get_element_type()
        if (a is None or b is None or element != UI8
                or any(d.op.x.type.get_element_type() != element for d in (a, b))
                or shape_of(add.lhs) != shape_of(add.rhs)):
            return
        f = np.float32
        ratio_a, ratio_b = f(a.scale / f(c_scale)), f(b.scale / f(c_scale))
        fixed = f(f(np.asarray(c_zero, np.int64)) - f(f(ratio_a * f(a.zero_point))
                                                      + f(ratio_b * f(b.zero_point))))
        new_ops: list[Operation] = []

        def const(value: float | np.floating, dtype: type = np.float64) -> SSAValue:
            constant = ConstantOp.from_array(np.asarray(value, dtype))
            new_ops.append(constant)
            return constant.result

        def raw_f64(dq: _Dequantized) -> SSAValue:
            levels = DequantizeOp(dq.op.x, const(1.0, np.float32),
                                  const(0, np.asarray(dq.zero_point).dtype.type),
                                  dq.op.axis_value())
            wide = CastOp(levels.results[0], f64)
            new_ops.extend([levels, wide])
            return wide.result

        def fma(x: SSAValue, ratio: np.floating, addend: SSAValue) -> SSAValue:
            product = MulOp(x, const(ratio))
            total = AddOp(product.result, addend)
            rounded = CastOp(total.result, f32)
            new_ops.extend([product, total, rounded])
            return rounded.result

        inner = fma(raw_f64(b), ratio_b, const(fixed))
        inner_wide = CastOp(inner, f64)
        new_ops.append(inner_wide)
        outer = fma(raw_f64(a), ratio_a, inner_wide.result)
        requantized = QuantizeOp(outer, const(1.0, np.float32),
                                 const(0, np.asarray(c_zero).dtype.type), op.axis_value())
        requantized.location = op.location
        new_ops.append(requantized)
        rewriter.replace(op, new_ops, [requantized.result])


def softmax_table(x_scale: float, length: int) -> np.ndarray:
    """ONNX Runtime's QLinearSoftmax lookup table for input scale `x_scale` and `length`
    elements per softmax: entry i is `exp((i - 255 + shift) * x_scale)` in double, stored as
    float32, with `shift = max(0, log(FLT_MAX / length) - 5) / x_scale` (a common factor that
    keeps the sum of `length` entries finite and away from denormals)."""
    shift = max(0.0, float(np.log(np.float64(np.finfo(np.float32).max) / length)) - 5.0)
    shift /= float(x_scale)
    levels = np.arange(256, dtype=np.float64)
    return np.exp((levels - 255.0 + shift) * np.float64(x_scale)).astype(np.float32)


class FoldQdqSoftmax(RewritePattern):
    """`quantize(softmax(dq(x, sx, zx)), sy, zy)` (per tensor) → ONNX Runtime's QLinearSoftmax:
    `t = table[x - max(x) + 255]` (`softmax_table`), `quantize(t * floor(1 / sy) / sum(t), 1,
    zy)`. That is ORT's integer softmax, not the float QDQ graph's: the exp comes from a
    256-entry table of the input levels, and the output scale is `1 / floor(1 / sy)` (for a
    calibrated [0, 1] output, sy = 1/255: the same), so outputs may differ from the float form
    by one step; dlc follows ORT, whose QDQ transformer makes this fusion, so that QDQ models
    agree with ORT's int8 run."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter) -> None:
        softmax = op.x.owner
        y_scale = constant_array(op.scale)
        if (not isinstance(softmax, SoftmaxOp) or not _only_user(op.x) or y_scale is None
                or np.ndim(y_scale) != 0 or constant_array(op.zero_point) is None):
            return
        x = _per_tensor(softmax.x)
        if x is None or x.op.x.type.get_element_type() != op.result.type.get_element_type():
            return
        shape = shape_of(softmax.result)
        axis = softmax.axis.value.data % len(shape)
        new_ops: list[Operation] = []
        one = ConstantOp.from_array(np.array(1.0, np.float32))
        zero = ConstantOp.from_array(np.zeros((), x.zero_point.dtype))
        levels = DequantizeOp(x.op.x, one.result, zero.result, x.op.axis_value())
        top = ReduceOp(levels.results[0], "max", [axis])
        below = SubOp(levels.results[0], top.result)
        base = ConstantOp.from_array(np.array(255.0, np.float32))
        index_f = AddOp(below.result, base.result)
        index = CastOp(index_f.result, i32)
        table = ConstantOp.from_array(softmax_table(float(x.scale), shape[axis]))
        exps = GatherOp(table.result, index.result, 0)
        total = ReduceOp(exps.result, "sum", [axis])
        inverse = np.floor(np.float32(1.0) / np.float32(y_scale)).astype(np.float32)
        factor = ConstantOp.from_array(np.asarray(inverse, np.float32))
        scaled = MulOp(exps.result, factor.result)
        probs = DivOp(scaled.result, total.result)
        requantized = QuantizeOp(probs.result, one.result, op.zero_point, op.axis_value())
        requantized.location = op.location
        new_ops += [one, zero, levels, top, below, base, index_f, index, table, exps, total,
                    factor, scaled, probs, requantized]
        _name(new_ops, "one", "zero", "levels", "row_max", "below_max", "offset", "index_f",
              "index", "exp_table", "exps", "row_sum", "inverse_scale", "scaled", "probs")
        rewriter.replace(op, new_ops, [requantized.result])


class FoldQdqMaxPool(RewritePattern):
    """`quantize(max_pool2d(dequantize(x, s, z)), s, z)` (per tensor, one scale, zero point and
    element type on both sides) → `max_pool2d(x)` on the integer tensor, as ONNX Runtime's QDQ
    transformer drops the pair around a MaxPool and runs it on int8. Dequantizing is monotone
    (s > 0), so the max of the dequantized window is the dequantize of the integer max, and
    quantizing it with the same s and z gives that integer back exactly; padding holds the
    integer type's minimum, which never wins, as -inf never does. Not for average pools, whose
    mean rounds."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter) -> None:
        pool = op.x.owner
        if not isinstance(pool, MaxPool2DOp) or not _only_user(op.x):
            return
        x = _per_tensor(pool.x)
        y_scale, y_zero = constant_array(op.scale), constant_array(op.zero_point)
        if x is None or y_scale is None or y_zero is None or np.ndim(y_scale) != 0:
            return
        y_zero = np.asarray(y_zero)
        if (x.op.x.type.get_element_type() != op.result.type.get_element_type()
                or y_zero.ndim != 0 or y_zero.dtype != x.zero_point.dtype
                or not x.scale > 0 or x.scale != np.float32(y_scale)
                or x.zero_point != y_zero):
            return
        integer = MaxPool2DOp(
            x.op.x, kernel=pool.kernel_tuple(), strides=pool.strides_tuple(),
            padding=pool.padding_tuple(), dilation=pool.dilation_tuple(),
            ceil_mode=pool.ceil_mode_value(), layout=pool.layout_value())
        integer.location = pool.location
        rewriter.replace(op, [integer], [integer.result])


@dataclass(frozen=True)
class GraphFoldQdqPass(ModulePass):
    """Fold QDQ pairs around float convs and matmuls into integer ops with a fused requantize,
    and around uint8 muls and softmaxes into ONNX Runtime's integer forms of them.

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
    A conv of dequantizes whose float result goes to an add (a residual sum, quantized after
    it) → `f32(conv2d_integer(...)) * (sx sw)` (`FoldQdqConvFloatOutput`). Dead dequantizes
    are removed. `quantize(mul(dequantize(a), dequantize(b)), sc, zc)` (uint8,
    per tensor) → `quantize(f32(a - za) * f32(b - zb) * (sa sb / sc) + zc, 1, 0)`
    (`FoldQdqMul`, ORT's QLinearMul); a uint8 add of two same-shaped dequantizes → ORT's
    QLinearAdd (`FoldQdqAdd`: two float32 fused multiply-adds);
    `quantize(softmax(dequantize(x)), sy, zy)` (per tensor) → ORT's QLinearSoftmax
    (`FoldQdqSoftmax`: an exp table of the levels, multiplier floor(1 / sy));
    `quantize(max_pool2d(dequantize(x, s, z)), s, z)` (per tensor, the same s, z and element
    type on both sides) → `max_pool2d(x)` on the integers (`FoldQdqMaxPool`, exact).

    *Invariants*: each conv/matmul/mul/add output differs from the float QDQ computation by
    at most one quantization step (float rounding against the exact integer sum or product,
    ties); a softmax output by at most one step plus the rounding of `1 / floor(1 / sy)`
    against sy (for the calibrated sy = 1/255: one step); a max pool's output is exact; the
    results are then those of ONNX Runtime's int8 run. The integer conv's or matmul's result
    has one user, the cast of its fused requantize tail.
    """

    name: ClassVar[str] = "graph-fold-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldQdqIntoIntegerOp(), FoldQdqConvFloatOutput(),
                                         FoldQdqMul(), FoldQdqAdd(), FoldQdqSoftmax(),
                                         FoldQdqMaxPool()]),
            post_walk_func=region_dce).rewrite_module(op)
