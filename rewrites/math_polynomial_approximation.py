"""The pass `math-polynomial-approximation`: f32 `math.exp`, `math.erf` and `math.tanh` as arith
polynomials.

Counterpart: MLIR's `PolynomialApproximation` patterns (`-test-math-polynomial-approximation`),
TVM's `fast_exp`/`fast_erf`/`fast_tanh`, tinygrad's transcendental decompositions. LLVM has no
vector exp, erf or tanh of its own: `llvm.exp` on `<16 x float>` becomes 16 calls of libm's
`expf`, and `erf` and `tanh` are libm calls per element; a softmax, a GELU or an LSTM's gates
then spend most of their time there. Expanded into
arith ops (multiply-adds, an exponent built with integer ops), they vectorize with the
loop around them.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    f32,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

EXP_MAX = 88.8
"""exp's argument is clamped to [EXP_MIN, EXP_MAX]; from about 88.73 (where exp(x) exceeds the
largest float) the product overflows to +inf."""
EXP_MIN = -87.5
"""At the lower clamp n = round(x log2(e)) = -126: 2^(n-1) is built with the exponent field
n + 126 = 0 (the float 0; never negative, so no integer max is needed), so that exp is exactly 0
wherever n = -126 (below about -86.99, where the true result is under 1.7e-38, near the
smallest normal float) and a normal float everywhere else. A tiny result
there would turn into denormals once scaled down (a softmax row divides it by its sum, and a
causal mask's -inf gives exactly such inputs), and a matmul reading denormals runs tens of
times slower on x86 (microcode assists)."""
SHIFTER = 1.5 * 2.0**23
"""A float whose ulp is 1 and which leaves room for +-2^22: `x + SHIFTER` rounds x to the
nearest integer k, and the bits of the sum are SHIFTER's plus k (the magic-number rounding of
ORT's MLAS and oneDNN); SHIFTER's low 9 bits are 0."""
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4
"""ln 2 split in two (Cody and Waite) so that x - n ln 2 loses no bits."""
EXP_POLYNOMIAL = (1.3814570847898722e-3, 8.368730545043945e-3, 4.166838899254799e-2,
                  1.666652113199234e-1, 4.999999403953552e-1)
"""exp(r) ~ 1 + r + r^2 P(r) on [-ln2/2, ln2/2], P of degree 4 (exp's of degree 6), highest
first: fitted to the minimax relative error (Lawson's iteration; 3.7e-9 with these f32
coefficients, 1/32 ulp) where Cephes' degree-5 P (1.1e-9) took one multiply-add more per
exp for error that f32 rounding hides."""
ERF_TAYLOR = tuple(2 / pymath.sqrt(pymath.pi) * c
                   for c in (-1 / 1320, 1 / 216, -1 / 42, 1 / 10, -1 / 3, 1.0))
"""erf(x) = x * Q(x^2) below |x| = 0.5 (Taylor series, the next term under 2e-8), highest first."""
ERF_P = 0.3275911
ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
"""Abramowitz and Stegun 7.1.26: erf(x) = 1 - t A(t) exp(-x^2), t = 1 / (1 + p x), x >= 0,
absolute error under 1.5e-7 (used from |x| = 0.5, where erf is above 0.52)."""
TANH_CLAMP = 7.99881172180175781
"""tanh's argument is clamped to [-TANH_CLAMP, TANH_CLAMP], where the rational function reaches
1 - 3.4e-7 (tanh(7.999) rounds to 1 - 6e-8 in f32)."""
TANH_TINY = 0.0004
"""Below this magnitude tanh(x) is x (to f32 precision)."""
TANH_P = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
          5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
          4.89352455891786e-03)
TANH_Q = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
          4.89352518554385e-03)
"""Eigen's (and MLIR's TanhApproximation) rational approximation: tanh(x) ~ x P(x^2) / Q(x^2),
highest first; error under 3.5e-7 over the whole line."""


class _Builder:
    """Emits f32 arith ops before the op being rewritten."""

    def __init__(self, rewriter: PatternRewriter, type_: Attribute) -> None:
        self.rewriter = rewriter
        self.type = type_
        self.int_type: Attribute = i32
        self.ops: list[Operation] = []

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self.emit(arith.ConstantOp(FloatAttr(value, f32)))

    def int_const(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IntegerType(32))))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddfOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MulfOp(a, b))

    def horner(self, x: SSAValue, coefficients: tuple[float, ...]) -> SSAValue:
        """c0 x^k + ... + ck, highest coefficient first."""
        result = self.const(coefficients[0])
        for coefficient in coefficients[1:]:
            result = self.add(self.mul(result, x), self.const(coefficient))
        return result

    def exp(self, x: SSAValue) -> SSAValue:
        clamped = self.emit(arith.MinimumfOp(
            self.emit(arith.MaximumfOp(x, self.const(EXP_MIN))), self.const(EXP_MAX)))
        # n = round(x log2(e)) by the shifter: x log2(e) + (SHIFTER + 126) rounds to an integer
        # (its ulp is 1 there), whose low mantissa bits are n + 126 (no floor, no fptosi,
        # which LLVM splits into lanes: a saturating conversion)
        shifted = self.add(self.mul(clamped, self.const(1 / pymath.log(2))),
                           self.const(SHIFTER + 126.0))
        n = self.emit(arith.SubfOp(shifted, self.const(SHIFTER + 126.0)))
        # r = x - n ln2 in two parts, each a multiply-add (n ln2_hi is exact)
        r = self.add(self.mul(n, self.const(-LN2_HI)), clamped)
        r = self.add(self.mul(n, self.const(-LN2_LO)), r)
        p = self.horner(r, EXP_POLYNOMIAL)
        # 2 exp(r) = 2 ((r^2 P(r) + r) + 1) as one multiply-add (scaling by 2 is exact)
        y = self.add(self.mul(p, self.mul(r, r)), r)
        y = self.add(self.mul(y, self.const(2.0)), self.const(2.0))
        # exp(x) = 2 exp(r) 2^(n - 1): n reaches 128 below the overflow, past the largest
        # exponent. The exponent field n + 126 is at least 0 (EXP_MIN), and a field of 0 makes
        # 2^(n-1) the float 0. It is the low 9 bits of the shifted sum's bits (SHIFTER's are
        # 0 there), so one shift by 23 leaves it alone in the exponent field, SHIFTER's bits
        # shifted out. A NaN x makes the polynomial NaN, whatever the bits.
        bits = self.emit(arith.ShLIOp(self.emit(arith.BitcastOp(shifted, self.int_type)),
                                      self.int_const(23)))
        # a NaN goes through the clamps (maximumf/minimumf propagate it) into the polynomial
        return self.mul(y, self.emit(arith.BitcastOp(bits, self.type)))

    def erf(self, x: SSAValue) -> SSAValue:
        magnitude = self.emit(math.AbsFOp(x))
        square = self.mul(x, x)
        small = self.mul(x, self.horner(square, ERF_TAYLOR))
        t = self.emit(arith.DivfOp(
            self.const(1.0), self.add(self.const(1.0), self.mul(magnitude, self.const(ERF_P)))))
        tail = self.mul(self.mul(t, self.horner(t, ERF_A)),
                        self.exp(self.emit(arith.NegfOp(square))))
        large = self.emit(math.CopySignOp(self.emit(arith.SubfOp(self.const(1.0), tail)), x))
        return self.where_negative(self.emit(arith.SubfOp(magnitude, self.const(0.5))),
                                   small, large)

    def tanh(self, x: SSAValue) -> SSAValue:
        clamped = self.emit(arith.MinimumfOp(
            self.emit(arith.MaximumfOp(x, self.const(-TANH_CLAMP))), self.const(TANH_CLAMP)))
        square = self.mul(clamped, clamped)
        ratio = self.emit(arith.DivfOp(self.mul(clamped, self.horner(square, TANH_P)),
                                       self.horner(square, TANH_Q)))
        magnitude = self.emit(math.AbsFOp(x))
        return self.where_negative(self.emit(arith.SubfOp(magnitude, self.const(TANH_TINY))),
                                   x, ratio)

    def where_negative(self, d: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a` where `d`'s sign bit is set, else `b`: a blend of bits by the mask the sign bit
        spreads to (an arithmetic shift), so that no compare is needed."""
        mask = self.emit(arith.ShRSIOp(self.emit(arith.BitcastOp(d, self.int_type)),
                                       self.int_const(31)))
        a_bits = self.emit(arith.BitcastOp(a, self.int_type))
        b_bits = self.emit(arith.BitcastOp(b, self.int_type))
        # b ^ ((a ^ b) & mask): a where the mask is all ones, b where it is zero
        chosen = self.emit(arith.XOrIOp(b_bits, self.emit(
            arith.AndIOp(self.emit(arith.XOrIOp(a_bits, b_bits)), mask))))
        return self.emit(arith.BitcastOp(chosen, self.type))

    def replace(self, op: Operation, result: SSAValue) -> None:
        self.rewriter.replace(op, self.ops, [result])


EXPANSIONS: dict[type[Operation], Callable[[_Builder, SSAValue], SSAValue]] = {
    math.ExpOp: _Builder.exp,
    math.ErfOp: _Builder.erf,
    math.TanhOp: _Builder.tanh,
}
"""The math ops this pass expands, and the builder method that writes each one's polynomial."""


class PolynomialApproximation(RewritePattern):
    """Replaces a scalar f32 op of `EXPANSIONS` by its polynomial."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        expand = EXPANSIONS.get(type(op))
        if expand is None or not isinstance(op.results[0].type, Float32Type):
            return
        builder = _Builder(rewriter, op.results[0].type)
        builder.replace(op, expand(builder, op.operands[0]))


@dataclass(frozen=True)
class MathPolynomialApproximationPass(ModulePass):
    """Expand f32 `math.exp`, `math.erf` and `math.tanh` into arith polynomials that vectorize.

    *Input invariant*: any IR with scalar f32 `math` ops (dlc runs it on loop-level kernels,
    whose ops are scalar until `convert-loop-to-llvm` vectorizes them, polynomials included;
    vector-typed ops are left alone: xDSL's `arith.fptosi` takes scalars only).

    *Output IR*: `math.exp` becomes Cody-Waite range reduction `x = n ln2 + r` (argument clamped
    to [-87.5, 88.8]; n = round(x log2(e)) by the shifter `x log2(e) + 1.5 2^23 + 126`, no
    floor), a degree-6 polynomial for 2 exp(r) (the factor 2 folded into its last
    multiply-add) and 2^(n-1) as the float bits `(n + 126) << 23`: the shifted sum's bits
    shifted by 23 (its low 9 bits are n + 126; no `fptosi`, no integer max); every step a
    multiply-add that the vectorizer contracts; above 88.72 the result is +inf, below about
    -86.99 exactly 0 (exponent field 0: never a tiny value that scales into denormals), and NaN
    stays NaN.
    `math.erf` becomes a Taylor polynomial below |x| = 0.5 and Abramowitz-Stegun 7.1.26 (with
    the exp above) from there, `math.copysign` giving the sign. `math.tanh` becomes
    x P(x^2) / Q(x^2) (Eigen's rational approximation, argument clamped to [-7.9988, 7.9988])
    and x itself below |x| = 0.0004 (a sign-bit blend, no compare); NaN stays NaN. Other types
    are left alone.

    *Invariants*: results within about 2 ulp of libm's for exp (relative), 1.5e-7 absolute
    for erf (2e-8 below 0.5), 3.5e-7 for tanh; no libm call is left for these ops.
    """

    name: ClassVar[str] = "math-polynomial-approximation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            PolynomialApproximation(), apply_recursively=False,
        ).rewrite_module(op)
