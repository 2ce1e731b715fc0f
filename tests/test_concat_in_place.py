"""Concatenations done in place (`loop-plan-memory`'s `concat_in_place`): the producers of a
concat's pieces write straight into the output, and the concat kernel is not called.

Numerics against ONNX's reference evaluator on random channel counts, batches and plane sizes:
pieces that are aligned runs of the output (in place), pieces at unaligned offsets or split by a
batch (copied as before), a piece that another node also reads, a concat that is a graph output.
"""

from __future__ import annotations

import numpy as np
import onnx
from dlc.dialects.contracts import CONCAT_AXIS_ATTR
from dlc.frontends.onnx.importer import import_onnx
from dlc.pipelines import PIPELINES
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects import func

import dlc
from tests.test_graph_passes import apply


def fire_model(batch: int, channels: int, size: int, squeeze: tuple[int, int],
               extra_reader: bool, concat_is_output: bool) -> onnx.ModelProto:
    """SqueezeNet's fire module: two convs of one input (1x1 + ReLU, 3x3) concatenated along
    the channels, then a 1x1 conv of the concat (unless the concat is the output); with
    `extra_reader`, the first piece is also a second output (times 2)."""
    rng = np.random.default_rng(batch * 1000 + channels * 10 + size)
    first, second = squeeze
    weights = {
        "w1": rng.standard_normal((first, channels, 1, 1)),
        "w2": rng.standard_normal((second, channels, 3, 3)),
        "w3": rng.standard_normal((4, first + second, 1, 1)),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"]),
        helper.make_node("Relu", ["c1"], ["p1"]),
        helper.make_node("Conv", ["x", "w2"], ["p2"], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["p1", "p2"], ["cat"], axis=1),
    ]
    outputs = [("cat", first + second)]
    if not concat_is_output:
        nodes.append(helper.make_node("Conv", ["cat", "w3"], ["y"]))
        outputs = [("y", 4)]
    if extra_reader:
        nodes.append(helper.make_node("Add", ["p1", "p1"], ["twice"]))
        outputs.append(("twice", first))
    graph = helper.make_graph(
        nodes, "fire",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, channels, size, size])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [batch, c, size, size])
         for name, c in outputs],
        [numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def concat_calls_after_planning(model: onnx.ModelProto) -> tuple[int, int]:
    """(calls of concat kernels, concat kernels) left in the module after the cpu pipeline's
    `loop-plan-memory`."""
    module = import_onnx(model)
    spec = PIPELINES["cpu"].spec
    apply(module, spec[: spec.index("loop-plan-memory") + len("loop-plan-memory")])
    kernels = {
        op.sym_name.data for op in module.walk()
        if isinstance(op, func.FuncOp) and CONCAT_AXIS_ATTR in op.attributes
    }
    calls = [op for op in module.walk()
             if isinstance(op, func.CallOp) and op.callee.root_reference.data in kernels]
    return len(calls), len(kernels)


def test_aligned_pieces_of_one_batch_are_written_in_place() -> None:
    # 4x4 planes: every channel is 64 bytes, so each piece starts at an aligned offset.
    assert concat_calls_after_planning(fire_model(1, 3, 4, (5, 7), False, False)) == (0, 0)
    # The piece also read by another node stays in place (read from the output's bytes).
    assert concat_calls_after_planning(fire_model(1, 3, 4, (5, 7), True, False)) == (0, 0)


def test_other_concats_keep_their_kernel() -> None:
    # Two batches: each piece is two runs of the output.
    assert concat_calls_after_planning(fire_model(2, 3, 4, (5, 7), False, False)) == (1, 1)
    # 3x3 planes, 3 channels first: the second piece starts at byte 108.
    assert concat_calls_after_planning(fire_model(1, 3, 3, (3, 7), False, False)) == (1, 1)
    # The concat is the model's output, which the caller owns: no planned buffer to place in.
    assert concat_calls_after_planning(fire_model(1, 3, 4, (5, 7), False, True)) == (1, 1)


@settings(max_examples=12, deadline=None)
@given(
    batch=st.sampled_from([1, 2]),
    channels=st.integers(1, 6),
    size=st.sampled_from([3, 4, 7, 8]),
    squeeze=st.tuples(st.integers(1, 20), st.integers(1, 20)),
    extra_reader=st.booleans(),
    concat_is_output=st.booleans(),
)
def test_fire_module_matches_the_reference(batch: int, channels: int, size: int,
                                           squeeze: tuple[int, int], extra_reader: bool,
                                           concat_is_output: bool) -> None:
    model = fire_model(batch, channels, size, squeeze, extra_reader, concat_is_output)
    x = np.random.default_rng(1).standard_normal((batch, channels, size, size))
    x = x.astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, {"x": x})
    got = dlc.compile(model, threads=2, cache=False)(x)
    got = got if isinstance(got, list | tuple) else [got]
    for actual, reference in zip(got, expected, strict=True):
        np.testing.assert_allclose(actual, reference, rtol=1e-4, atol=1e-4)
