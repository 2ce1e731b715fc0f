"""`graph-conv-split-bands`: convs whose taps read padding over bands of the output split into
one conv per band; results kept (the graph interpreter before and after the pass, on random
geometries) and compiled (DeepLab's ASPP conv against the interpreter)."""

from __future__ import annotations

import numpy as np
from dlc.dialects import make_context
from dlc.dialects.graph.ops import Conv2DOp
from dlc.rewrites.graph_conv_split_bands import Band, bands
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

import dlc
from tests.test_graph_passes import check_pass, inputs_for


def dilated_conv(c: int, o: int, hw: tuple[int, int], kernel: tuple[int, int], stride: int,
                 dilation: int, pads: tuple[int, int, int, int], groups: int,
                 constant: bool, seed: int = 0) -> str:
    """A conv2d (NCHW/OIHW, with bias) whose weight is an argument or a random constant."""
    h, w = hw
    kh, kw = kernel
    top, left, bottom, right = pads
    oh = (h + top + bottom - dilation * (kh - 1) - 1) // stride + 1
    ow = (w + left + right - dilation * (kw - 1) - 1) // stride + 1
    x_t, w_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{o}x{c // groups}x{kh}x{kw}xf32>"
    y_t, b_t = f"tensor<1x{o}x{oh}x{ow}xf32>", f"tensor<{o}xf32>"
    if constant:
        values = np.random.default_rng(seed).standard_normal((o, c // groups, kh, kw))
        literal = np.array2string(values.astype(np.float32), separator=", ", threshold=1 << 30,
                                  floatmode="unique").replace("\n", "")
        args, weight = f"%x: {x_t}, %b: {b_t}", f"  %w = graph.constant dense<{literal}> : {w_t}\n"
    else:
        args, weight = f"%x: {x_t}, %w: {w_t}, %b: {b_t}", ""
    return f"""func.func @main({args}) -> {y_t} {{
{weight}  %r = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>,
      dilation = array<i64: {dilation}, {dilation}>,
      padding = array<i64: {top}, {left}, {bottom}, {right}>, groups = {groups} : i64}}
      : ({x_t}, {w_t}, {b_t}) -> {y_t}
  func.return %r : {y_t}
}}"""


def test_bands_of_the_aspp_conv() -> None:
    # dilation 12, padding 12 over 16 rows: the top tap reads rows 12-15, the bottom one 0-3
    assert bands(16, 16, 3, 1, 12, 12) == [Band(0, 4, 1, 2), Band(4, 12, 1, 1),
                                           Band(12, 16, 0, 1)]
    assert bands(8, 8, 3, 1, 1, 1) == [Band(0, 1, 1, 2), Band(1, 7, 0, 2), Band(7, 8, 0, 1)]
    assert bands(4, 6, 3, 1, 1, 4) is None  # output row 0 reads only padding
    assert bands(5, 5, 1, 1, 1, 0) == [Band(0, 5, 0, 0)]


def enumerated_bands(size: int, out: int, kernel: int, stride: int, dilation: int, pad: int
                     ) -> list[Band] | None:
    """`bands` by enumerating every output position (the definition)."""
    valid = [[o for o in range(out) if 0 <= o * stride + k * dilation - pad < size]
             for k in range(kernel)]
    edges = sorted({0, out} | {v[0] for v in valid if v} | {v[-1] + 1 for v in valid if v})
    result = []
    for start, stop in zip(edges, edges[1:], strict=False):
        taps = [k for k in range(kernel) if valid[k] and valid[k][0] <= start <= valid[k][-1]]
        if not taps:
            return None
        result.append(Band(start, stop, taps[0], taps[-1]))
    return result


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 40), kernel=st.integers(1, 7), stride=st.integers(1, 4),
       dilation=st.integers(1, 13), pad=st.integers(0, 30), extra=st.integers(0, 30))
def test_bands_match_their_definition(size: int, kernel: int, stride: int, dilation: int,
                                      pad: int, extra: int) -> None:
    """The closed-form intervals give the bands that enumerating the outputs gives."""
    out = (size + pad + extra - dilation * (kernel - 1) - 1) // stride + 1
    if out > 0:
        assert bands(size, out, kernel, stride, dilation, pad) == enumerated_bands(
            size, out, kernel, stride, dilation, pad)


def test_bands_of_an_absurd_padding_take_no_time() -> None:
    """A fuzzed padding of 2^31 (dlc's test of models too large to run) is found bandless at
    once: the bands do not enumerate the 2^31 outputs (that took all memory)."""
    assert bands(32, 2**31 + 1, 3, 1, 1, 2**31) is None
    n = 2**31
    assert bands(n, n, 3, 1, 1, 1) == [Band(0, 1, 1, 2), Band(1, n - 1, 0, 2),
                                       Band(n - 1, n, 0, 1)]



@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.sampled_from([1, 2]), c=st.integers(1, 2), o=st.integers(1, 2),
       h=st.integers(1, 9), w=st.integers(1, 9), kh=st.integers(1, 3), kw=st.integers(1, 3),
       stride=st.integers(1, 2), dilation=st.integers(1, 5),
       pads=st.tuples(*[st.integers(0, 6)] * 4), constant=st.booleans())
def test_the_pass_keeps_results(groups: int, c: int, o: int, h: int, w: int, kh: int, kw: int,
                                stride: int, dilation: int, pads: tuple[int, int, int, int],
                                constant: bool) -> None:
    top, left, bottom, right = pads
    if (h + top + bottom < dilation * (kh - 1) + 1
            or w + left + right < dilation * (kw - 1) + 1):
        return
    text = dilated_conv(c * groups, o * groups, (h, w), (kh, kw), stride, dilation, pads,
                        groups, constant)
    module = Parser(make_context(), text).parse_module()
    before = _macs(module)
    check_pass(module, "graph-conv-split-bands{min_saved_macs=0 min_saved_fraction=0.0 "
                       "min_band_outputs=1}")
    assert _macs(module) <= before


def _macs(module: object) -> int:
    """The multiply-adds of the module's convs."""
    total = 0
    for conv in (op for op in module.walk() if isinstance(op, Conv2DOp)):  # type: ignore[attr-defined]
        out, weight = conv.result.type.get_shape(), conv.weight.type.get_shape()
        total += int(np.prod(out)) * int(np.prod(weight)) // weight[0]
    return total


def test_aspp_conv_splits_into_nine_and_compiles() -> None:
    from dlc.dialects.graph.interpreter import run_module
    from dlc.rewrites.graph_conv_split_bands import GraphConvSplitBandsPass

    text = dilated_conv(64, 32, (16, 16), (3, 3), 1, 12, (12, 12, 12, 12), 1, True, seed=5)
    module = Parser(make_context(), text).parse_module()
    inputs = inputs_for(module, seed=3)
    (expected,) = run_module(module, inputs)
    split = module.clone()
    GraphConvSplitBandsPass(min_saved_macs=0, min_band_outputs=1).apply(make_context(), split)
    assert sum(isinstance(op, Conv2DOp) for op in split.walk()) == 9
    actual = dlc.compile(module, threads=2, cache=False)(*inputs)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-4, atol=1e-4)
