"""Squeeze-excite blocks (global average pool, two 1x1 convs, a gate broadcast over the plane)
compiled, against the graph interpreter; the gate's sigmoid is stored per channel, not
recomputed per point of the plane (tensor-expr-inline's broadcast rule,
tests/filecheck/rewrites/tensor-expr-inline.mlir)."""

from __future__ import annotations

import numpy as np
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

import dlc
from tests.test_graph_passes import inputs_for


def squeeze_excite(c: int, h: int, w: int, squeeze: int, gate: str) -> str:
    x_t, p_t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<1x{c}x1x1xf32>"
    q_t = f"tensor<1x{squeeze}x1x1xf32>"
    return f"""func.func @main(%x: {x_t}, %w1: tensor<{squeeze}x{c}x1x1xf32>,
    %b1: tensor<{squeeze}xf32>, %w2: tensor<{c}x{squeeze}x1x1xf32>, %b2: tensor<{c}xf32>)
    -> {x_t} {{
  %p = graph.global_avg_pool2d %x : ({x_t}) -> {p_t}
  %h = graph.conv2d %p, %w1, %b1 : ({p_t}, tensor<{squeeze}x{c}x1x1xf32>,
      tensor<{squeeze}xf32>) -> {q_t}
  %hs = graph.sigmoid %h : {q_t}
  %a = graph.mul %h, %hs : ({q_t}, {q_t}) -> {q_t}
  %s = graph.conv2d %a, %w2, %b2 : ({q_t}, tensor<{c}x{squeeze}x1x1xf32>,
      tensor<{c}xf32>) -> {p_t}
  %g = graph.{gate} %s : {p_t}
  %y = graph.mul %x, %g : ({x_t}, {p_t}) -> {x_t}
  func.return %y : {x_t}
}}"""


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(c=st.sampled_from([8, 24, 40]), h=st.integers(1, 12), w=st.integers(1, 12),
       squeeze=st.integers(1, 6), gate=st.sampled_from(["sigmoid", "tanh"]))
def test_compiled_squeeze_excite_matches_the_interpreter(c: int, h: int, w: int, squeeze: int,
                                                        gate: str) -> None:
    module = Parser(make_context(), squeeze_excite(c, h, w, squeeze, gate)).parse_module()
    inputs = inputs_for(module, seed=c + h + w)
    (expected,) = run_module(module, inputs)
    actual = dlc.compile(module, threads=2, cache=False)(*inputs)
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-5)
