"""Bad ONNX input is a clear error, never a crash: the bundled small CNN with one or two random
mutations (an attribute out of range, an input dimension or dtype changed, an op type swapped,
an input rewired, an initializer cut, a node dropped) either compiles and runs, or fails with
dlc's own error types (`CompileError` at compile time, `ExecutableError` when called), whose
message is not empty. A Python exception of another type, or a crash of the process, fails.

This found a Conv padding of 2^31 that compiled into 16 TiB of buffers and crashed when run
(now refused by `Executable.check_memory`)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.driver.errors import CompileError
from dlc.runtime.executable import ExecutableError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import numpy_helper

import dlc

SMALL_CNN = Path(__file__).resolve().parent.parent / "examples" / "small_cnn.onnx"
BASE = onnx.load(SMALL_CNN)

MUTATIONS = ("attribute", "dimension", "op_type", "rewire", "initializer", "drop", "dtype")


def mutate(model: onnx.ModelProto, kind: str, data: st.DataObject) -> None:
    """Applies one mutation of `kind` to `model` in place, its choices drawn from `data`."""
    graph = model.graph
    pick = lambda items: data.draw(st.sampled_from(list(items)))  # noqa: E731
    if kind == "attribute":
        node = pick([n for n in graph.node if n.attribute] or graph.node)
        for attribute in [pick(node.attribute)] if node.attribute else []:
            value = pick([0, -1, 7, 100, 2**31])
            if attribute.ints:
                attribute.ints[data.draw(st.integers(0, len(attribute.ints) - 1))] = value
            elif attribute.type == onnx.AttributeProto.INT:
                attribute.i = value
            elif attribute.type == onnx.AttributeProto.FLOAT:
                attribute.f = pick([0.0, -1.0, float("nan")])
    elif kind == "dimension":
        dims = graph.input[0].type.tensor_type.shape.dim
        dims[data.draw(st.integers(0, len(dims) - 1))].dim_value = pick([0, 1, 3, 1000])
    elif kind == "op_type":
        pick(graph.node).op_type = pick(["Conv", "Relu", "MatMul", "Add", "Foo", "MaxPool",
                                         "Gemm", "Reshape"])
    elif kind == "rewire":
        node = pick(graph.node)
        if node.input:
            outputs = [name for n in graph.node for name in n.output]
            node.input[data.draw(st.integers(0, len(node.input) - 1))] = pick(
                [*outputs, "no_such_value", ""])
    elif kind == "initializer":
        tensor = pick(graph.initializer)
        array = numpy_helper.to_array(tensor).reshape(-1)
        graph.initializer.remove(tensor)
        graph.initializer.append(
            numpy_helper.from_array(array[: max(1, array.size // 2)].copy(), tensor.name))
    elif kind == "drop":
        graph.node.remove(pick(graph.node))
    elif kind == "dtype":
        graph.input[0].type.tensor_type.elem_type = pick(
            [onnx.TensorProto.INT64, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, 0])


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), kinds=st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=2))
def test_mutated_models_compile_and_run_or_fail_clearly(
    data: st.DataObject, kinds: list[str]
) -> None:
    model = copy.deepcopy(BASE)
    for kind in kinds:
        mutate(model, kind, data)
    try:
        executable = dlc.compile(model, cache=False, jobs=1)
    except CompileError as e:
        assert str(e).strip()
        return
    inputs = []
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        shape = [d.dim_value for d in tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        inputs.append(np.ones(shape, dtype))
    try:
        executable(*inputs)
    except ExecutableError as e:
        assert str(e).strip()
