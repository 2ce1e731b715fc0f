"""graph-conv-split-bands: a conv whose kernel taps read zero padding over whole bands of its
output as one conv per band, each with only the taps that read the image (ONNX Runtime's
NCHWc conv skips those taps the same way, per output row).

A dilated conv on a map not much larger than its dilation reads mostly padding: DeepLabV3's
ASPP runs a 3x3 conv with dilation 12 and padding 12 over a 16x16 map, where the top kernel
row reads the image only for output rows 12 to 15 and the bottom one only for rows 0 to 3;
three quarters of its multiply-adds are `w * 0`. Along one axis the output splits into
bands within which every tap reads either the image at every position or padding at every
position; each band is the conv of the input rows it reads (a `graph.slice`, no padding along
that axis) with the kernel rows that read the image, and the bands are concatenated. The
pattern re-applies to the bands, so both spatial axes are split (9 convs for the ASPP conv:
a 1x1 conv in the middle, 2x1, 1x2 and 2x2 ones at the edges and corners).
`graph-simplify`'s `DropPaddingOnlyTaps` covers the case where a tap reads padding at every
output position; this pass the one where it does so at some.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import ConcatOp, Conv2DOp
from dlc.dialects.graph.ops_tensor import SliceOp
from dlc.dialects.graph.utils import build_constant, constant_array, shape_of
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import region_dce


@dataclass(frozen=True)
class Band:
    """Output positions [start, stop) along one axis, which all read the image with the
    kernel taps [first, last] and only padding with the others."""

    start: int
    stop: int
    first: int
    last: int


def bands(size: int, out: int, kernel: int, stride: int, dilation: int, pad: int
          ) -> list[Band] | None:
    """The bands of one axis of a conv (input `size`, output `out`, `pad` before the image),
    in order; None when some output position reads no image at all (only padding: the band
    would be the bias alone).

    Tap `k` reads input `o * stride + k * dilation - pad`, inside the image for the outputs
    `o` of an interval (computed in closed form: O(kernel), whatever the sizes, so that an
    absurd padding or size costs no time here); the band edges are the ends of those
    intervals."""
    valid: list[tuple[int, int] | None] = []
    for k in range(kernel):
        offset = k * dilation - pad  # o * stride + offset in [0, size)
        first = max(0, -(offset // stride))
        stop = min(out, (size - 1 - offset) // stride + 1)
        valid.append((first, stop) if first < stop else None)
    edges = sorted({0, out} | {v[0] for v in valid if v} | {v[1] for v in valid if v})
    result: list[Band] = []
    for start, stop in zip(edges, edges[1:], strict=False):
        taps = [k for k, v in enumerate(valid) if v and v[0] <= start < v[1]]
        if not taps:
            return None
        result.append(Band(start, stop, taps[0], taps[-1]))
    return result


@dataclass
class SplitConvIntoBands(RewritePattern):
    """`conv2d(x, w)` whose taps read padding over bands of the output along H (else W) →
    `concat(conv2d(slice(x), w[taps of band]) for each band)` along that axis, when the
    multiply-adds saved are at least `min_saved_macs` per extra conv and `min_saved_fraction` of
    the conv's, and every band has at least `min_band_outputs` output positions."""

    min_saved_macs: int
    min_saved_fraction: float
    min_band_outputs: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DOp, rewriter: PatternRewriter) -> None:
        layout, kernel_layout = op.layout_value(), op.kernel_layout_value()
        in_shape, out_shape = shape_of(op.input), shape_of(op.result)
        w_shape = shape_of(op.weight)
        macs = 1
        for d in (*out_shape, *w_shape):
            macs *= d
        macs //= w_shape[kernel_layout.index("O")]  # each output: (C / groups) * KH * KW
        padding = list(op.padding_tuple())
        for axis in (0, 1):
            dim = "HW"[axis]
            x_axis, w_axis = layout.index(dim), kernel_layout.index(dim)
            size, out, kernel = in_shape[x_axis], out_shape[x_axis], w_shape[w_axis]
            stride, dilation = op.strides_tuple()[axis], op.dilation_tuple()[axis]
            found = bands(size, out, kernel, stride, dilation, padding[axis])
            if found is None or len(found) < 2:
                continue
            other = out_shape[layout.index("HW"[1 - axis])]
            if not self._pays(found, macs, out * kernel, other):
                continue
            ops: list[Operation] = []
            results = [self._band_conv(op, band, axis, ops) for band in found]
            concat = ConcatOp(results, x_axis)
            ops.append(concat)
            rewriter.replace(op, ops, [concat.result])
            return

    def _pays(self, found: list[Band], macs: int, taps: int, other: int) -> bool:
        """Whether splitting into `found` saves enough of the conv's `macs` (over `taps`
        output-tap pairs along the axis) with bands of enough outputs (`other` along the
        other axis): a band of few outputs reads its weights for little work, and the bands
        together read the taps they share once each."""
        used = sum((b.stop - b.start) * (b.last - b.first + 1) for b in found)
        saved = macs - macs * used // taps
        return (saved >= self.min_saved_macs * (len(found) - 1)
                and saved >= macs * self.min_saved_fraction
                and all((b.stop - b.start) * other >= self.min_band_outputs for b in found))

    @staticmethod
    def _band_conv(op: Conv2DOp, band: Band, axis: int, ops: list[Operation]) -> SSAValue:
        """The conv of `band` along `axis` (0: H, 1: W): the input positions it reads, sliced,
        the band's taps of the weight, no padding along `axis`."""
        layout, kernel_layout = op.layout_value(), op.kernel_layout_value()
        dim = "HW"[axis]
        x_axis, w_axis = layout.index(dim), kernel_layout.index(dim)
        stride, dilation = op.strides_tuple()[axis], op.dilation_tuple()[axis]
        padding = list(op.padding_tuple())
        start = band.start * stride + band.first * dilation - padding[axis]
        stop = (band.stop - 1) * stride + band.last * dilation - padding[axis] + 1
        in_shape = shape_of(op.input)
        x = op.input
        if (start, stop) != (0, in_shape[x_axis]):
            starts, sizes = [0] * len(in_shape), list(in_shape)
            starts[x_axis], sizes[x_axis] = start, stop - start
            window = SliceOp(op.input, starts, sizes, [1] * len(in_shape))
            ops.append(window)
            x = window.result
        weight = _taps(op.weight, w_axis, band.first, band.last, ops)
        padding[axis] = padding[axis + 2] = 0
        dilations = list(op.dilation_tuple())
        if band.first == band.last:
            dilations[axis] = 1  # one tap: its dilation means nothing
        conv = Conv2DOp(x, weight, op.bias, strides=op.strides_tuple(), padding=padding,
                        dilation=dilations, groups=op.groups_value(), layout=layout,
                        kernel_layout=kernel_layout)
        conv.location = op.location
        ops.append(conv)
        return conv.result


def _taps(weight: SSAValue, axis: int, first: int, last: int, ops: list[Operation]
          ) -> SSAValue:
    """The taps [first, last] of `weight` along `axis`: a new constant when it is one, else a
    slice."""
    shape = shape_of(weight)
    array = constant_array(weight)
    if array is not None:
        window = [slice(None)] * len(shape)
        window[axis] = slice(first, last + 1)
        op: Operation = build_constant(array[tuple(window)])
    else:
        starts, sizes = [0] * len(shape), list(shape)
        starts[axis], sizes[axis] = first, last - first + 1
        op = SliceOp(weight, starts, sizes, [1] * len(shape))
    ops.append(op)
    return op.results[0]


@dataclass(frozen=True)
class GraphConvSplitBandsPass(ModulePass):
    """Split convs whose kernel taps read only zero padding over bands of the output into one
    conv per band, each with the taps that read the image.

    *Input invariant*: any module.

    *Output IR*: each `graph.conv2d` for which, along H (then W), the output splits into
    bands within each of which every kernel tap reads the image at every position or at none,
    and every position reads the image through some tap, and for which the multiply-adds of
    the taps that read only padding are at least `min-saved-macs` per extra conv and
    `min-saved-fraction` of the conv's, and whose every band has `min-band-outputs` output
    positions, becomes one
    `graph.conv2d` per band over a `graph.slice` of the input rows that band reads (no
    padding along that axis; the weight cut to the band's taps: a new constant when the
    weight is a `graph.constant`, else a `graph.slice`; dilation 1 when one tap is left)
    and a `graph.concat` of the bands along the axis. The bands are split along W the same way.

    *Invariants*: results are unchanged except for the dropped `w * 0` products (which a
    non-finite weight would have made NaN); every band keeps the conv's bias, strides, groups
    and layouts.

    Options:
        min_saved_macs: the multiply-adds that an extra conv must save (the convs a split
            makes each cost a kernel call and a pass over their output; default 2^20, about
            ten microseconds of one core).
        min_saved_fraction: the share of the conv's multiply-adds that a split along one
            axis must save (default 1/4: a 'same' 3x3 conv, whose border taps read padding
            over one row or column, is left whole; the bands of a split are smaller convs,
            whose kernels run less efficiently).
        min_band_outputs: the output positions (of one channel) each band must have
            (default 16, a vector's worth: a band reads the weights of its taps from memory,
            and with few outputs it does little work per weight read; the 3x3 convs of a 2x2
            map stay whole, DeepLab's ASPP conv on a 16x16 map splits into bands of 16 to 64).
    """

    name: ClassVar[str] = "graph-conv-split-bands"

    min_saved_macs: int = 1 << 20
    min_saved_fraction: float = 0.25
    min_band_outputs: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = SplitConvIntoBands(self.min_saved_macs, self.min_saved_fraction,
                                     self.min_band_outputs)
        PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_module(op)
