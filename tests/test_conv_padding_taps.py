"""graph-simplify's `DropPaddingOnlyTaps`: conv taps that read only zero padding are cut from
the weight; results kept (the graph interpreter before and after, on random geometries)."""

from __future__ import annotations

import numpy as np
from dlc.dialects import make_context
from dlc.dialects.graph.canonicalize import image_taps
from dlc.dialects.graph.ops import Conv2DOp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from tests.test_graph_passes import check_pass


def dilated_conv(c: int, o: int, h: int, w: int, k: int, stride: int, dilation: int,
                 pads: tuple[int, int, int, int], groups: int, seed: int) -> str:
    top, left, bottom, right = pads
    oh = (h + top + bottom - dilation * (k - 1) - 1) // stride + 1
    ow = (w + left + right - dilation * (k - 1) - 1) // stride + 1
    weight = np.random.default_rng(seed).standard_normal((o, c // groups, k, k))
    dense = np.array2string(weight, separator=", ", threshold=1 << 20,
                            formatter={"float_kind": lambda v: f"{v:.6e}"})
    x_t, w_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<{o}x{c // groups}x{k}x{k}xf32>"
    y_t = f"tensor<1x{o}x{oh}x{ow}xf32>"
    return f"""func.func @main(%x: {x_t}) -> {y_t} {{
  %w = graph.constant dense<{dense}> : {w_t}
  %r = graph.conv2d %x, %w {{strides = array<i64: {stride}, {stride}>,
      dilation = array<i64: {dilation}, {dilation}>,
      padding = array<i64: {top}, {left}, {bottom}, {right}>,
      groups = {groups} : i64}} : ({x_t}, {w_t}) -> {y_t}
  func.return %r : {y_t}
}}"""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.sampled_from([1, 2]), h=st.integers(1, 6), w=st.integers(1, 6),
       k=st.integers(1, 3), stride=st.integers(1, 3), dilation=st.integers(1, 8),
       pads=st.tuples(*[st.integers(0, 8)] * 4), seed=st.integers(0, 99))
def test_graph_simplify_keeps_conv_results(groups: int, h: int, w: int, k: int, stride: int,
                                           dilation: int, pads: tuple[int, int, int, int],
                                           seed: int) -> None:
    top, left, bottom, right = pads
    if min(h + top + bottom, w + left + right) < dilation * (k - 1) + 1:
        return
    module = Parser(make_context(), dilated_conv(2 * groups, 2 * groups, h, w, k, stride,
                                                 dilation, pads, groups, seed)).parse_module()
    check_pass(module, "graph-simplify")
    (conv,) = [op for op in module.walk() if isinstance(op, Conv2DOp)]
    assert tuple(conv.result.type.get_shape()[2:]) == (  # type: ignore[attr-defined]
        (h + top + bottom - dilation * (k - 1) - 1) // stride + 1,
        (w + left + right - dilation * (k - 1) - 1) // stride + 1,
    )


def test_aspp_conv_becomes_one_by_one() -> None:
    """DeepLab's ASPP branch with dilation 24 on a 16x16 map: only the centre tap is left."""
    module = Parser(make_context(), dilated_conv(4, 4, 16, 16, 3, 1, 24, (24,) * 4, 1, 0)
                    ).parse_module()
    check_pass(module, "graph-simplify")
    (conv,) = [op for op in module.walk() if isinstance(op, Conv2DOp)]
    assert tuple(conv.weight.type.get_shape()) == (4, 4, 1, 1)  # type: ignore[attr-defined]
    assert conv.padding_tuple() == (0, 0, 0, 0) and conv.dilation_tuple() == (1, 1)


def test_image_taps() -> None:
    assert image_taps(16, 16, 3, 1, 12, 12) == (0, 2)  # dilation 12: every tap reads the image
    assert image_taps(16, 16, 3, 1, 36, 36) == (1, 1)
    assert image_taps(4, 4, 3, 1, 1, 1) == (0, 2)
    assert image_taps(2, 1, 3, 1, 4, 4) == (1, 1)
