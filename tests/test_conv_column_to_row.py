"""`graph-conv-column-to-row`: convs down a width-1 column run as convs along a row; results
kept (the graph interpreter before and after the pass, on random geometries) and compiled."""

from __future__ import annotations

import numpy as np
from dlc.dialects import make_context
from dlc.dialects.graph.ops import Conv2DOp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

import dlc
from tests.test_graph_passes import check_pass, inputs_for


def column_conv(c: int, o: int, h: int, kh: int, stride: int, dilation: int, top: int,
                bottom: int, groups: int, bias: bool) -> str:
    out = (h + top + bottom - dilation * (kh - 1) - 1) // stride + 1
    x_t, w_t = f"tensor<1x{c}x{h}x1xf32>", f"tensor<{o}x{c // groups}x{kh}x1xf32>"
    y_t, b_t = f"tensor<1x{o}x{out}x1xf32>", f"tensor<{o}xf32>"
    operands, types = ("%x, %w, %b", f"{x_t}, {w_t}, {b_t}") if bias else ("%x, %w",
                                                                           f"{x_t}, {w_t}")
    return f"""func.func @main(%x: {x_t}, %w: {w_t}, %b: {b_t}) -> {y_t} {{
  %r = graph.conv2d {operands} {{strides = array<i64: {stride}, 1>,
      dilation = array<i64: {dilation}, 1>, padding = array<i64: {top}, 0, {bottom}, 0>,
      groups = {groups} : i64}} : ({types}) -> {y_t}
  func.return %r : {y_t}
}}"""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.sampled_from([1, 2]), c=st.integers(1, 3), o=st.integers(1, 3),
       h=st.integers(2, 12), kh=st.integers(1, 5), stride=st.integers(1, 3),
       dilation=st.integers(1, 2), top=st.integers(0, 2), bottom=st.integers(0, 2),
       bias=st.booleans())
def test_the_pass_keeps_results(groups: int, c: int, o: int, h: int, kh: int, stride: int,
                                dilation: int, top: int, bottom: int, bias: bool) -> None:
    if h + top + bottom < dilation * (kh - 1) + 1:
        return
    text = column_conv(c * groups, o * groups, h, kh, stride, dilation, top, bottom, groups,
                       bias)
    module = Parser(make_context(), text).parse_module()
    check_pass(module, "graph-conv-column-to-row")
    (conv,) = [op for op in module.walk() if isinstance(op, Conv2DOp)]
    assert conv.input.type.get_shape()[2] == 1  # type: ignore[attr-defined]


def test_compiled_column_conv_matches_the_interpreter() -> None:
    from dlc.dialects.graph.interpreter import run_module

    text = column_conv(8, 16, 40, 5, 1, 1, 2, 2, 1, True)
    module = Parser(make_context(), text).parse_module()
    inputs = inputs_for(module, seed=3)
    (expected,) = run_module(module, inputs)
    actual = dlc.compile(module, threads=2, cache=False)(*inputs)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-5)
