"""graph.lookup and graph-fold-lookup-tables: the op's semantics in the interpreter, and chains
of elementwise ops over one int8/uint8 tensor, folded into tables and compiled, computing
exactly what the graph means (the interpreter's values) on every input value."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import run_module
from dlc.frontends.onnx.importer import import_onnx
from dlc.pipelines import parse_pipeline
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.parser import Parser

import dlc

_LOOKUP = """
func.func @main(%x: tensor<2x3x{source}>, %t: tensor<256xf32>) -> tensor<2x3xf32> {{
  %y = graph.lookup %x, %t : (tensor<2x3x{source}>, tensor<256xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}}
"""


@pytest.mark.parametrize(("source", "dtype"), [("ui8", np.uint8), ("i8", np.int8)])
def test_entry_k_holds_the_value_at_the_lowest_plus_k(source: str, dtype: type) -> None:
    module = Parser(make_context(), _LOOKUP.format(source=source)).parse_module()
    info = np.iinfo(dtype)
    x = np.array([[info.min, -1 if info.min else 1, 0], [1, 100, info.max]]).astype(dtype)
    table = np.arange(256, dtype=np.float32) * 2
    (y,) = run_module(module, [x, table])
    np.testing.assert_array_equal(y, (x.astype(np.float32) - info.min) * 2)


_TRANSCENDENTAL = ("Erf", "Tanh", "Sigmoid", "Exp")
_UNARY = (*_TRANSCENDENTAL, "Neg", "Abs", "Relu", "Sqrt")
_TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def _qdq_chain(ops: list[str], shape: list[int], source: type, result: type,
               params: tuple[float, int, float, int]) -> object:
    """x (8-bit) -> DequantizeLinear -> ops... -> QuantizeLinear -> y."""
    scale, zero, out_scale, out_zero = params
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["v0"])]
    for index, op in enumerate(ops):
        nodes.append(helper.make_node(op, [f"v{index}"], [f"v{index + 1}"]))
    nodes.append(helper.make_node("QuantizeLinear", [f"v{len(ops)}", "so", "zo"], ["y"]))
    initializers = [
        numpy_helper.from_array(np.array(scale, np.float32), "s"),
        numpy_helper.from_array(np.array(zero, source), "z"),
        numpy_helper.from_array(np.array(out_scale, np.float32), "so"),
        numpy_helper.from_array(np.array(out_zero, result), "zo"),
    ]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", _TYPES[source], shape)],
        [helper.make_tensor_value_info("y", _TYPES[result], shape)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_a_folded_chain_computes_the_graphs_values_exactly(data: st.DataObject) -> None:
    ops = data.draw(st.lists(st.sampled_from(_UNARY), min_size=1, max_size=3))
    source, result = (data.draw(st.sampled_from([np.uint8, np.int8])) for _ in range(2))
    shape = data.draw(st.lists(st.integers(1, 40), min_size=1, max_size=3))
    params = (data.draw(st.floats(0.001, 0.2)), data.draw(st.integers(-20, 20)) % 128,
              data.draw(st.floats(0.001, 0.2)), data.draw(st.integers(0, 100)))
    model = _qdq_chain(ops, shape, source, result, params)
    info = np.iinfo(source)
    x = np.random.default_rng(data.draw(st.integers(0, 99))).integers(
        info.min, info.max + 1, shape).astype(source)
    x.reshape(-1)[0] = info.min
    (expected,) = run_module(import_onnx(model), [x])

    module = import_onnx(model)
    for each in parse_pipeline("graph-fold-qdq,graph-fold-lookup-tables"):
        each.apply(Context(), module)
    # Dequantize, quantize and plain ops cost less than a lookup; a polynomial more.
    folded = any(op.name == "graph.lookup" for op in module.walk())
    assert folded == any(op in _TRANSCENDENTAL for op in ops)
    (interpreted,) = run_module(module, [x])
    np.testing.assert_array_equal(interpreted, expected)

    got = dlc.compile(model, threads=1, cache=False)(x)
    np.testing.assert_array_equal(got, expected)

