"""TopK with NaN and ±inf: compiled code and the graph interpreter agree with ONNX Runtime.

NaN ranks above every number (as NumPy's sort and ORT order it): first for largest=1, last for
largest=0; equal values keep input order. Each compile is reused over many random inputs.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from dlc.dialects.graph.interpreter import run_module as run_graph
from dlc.frontends.onnx import import_onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import dlc
from tests.onnx.models import model, tensor

ort = pytest.importorskip("onnxruntime")

SHAPE, K = (3, 7), 4
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0], np.float32)


def topk_model(largest: int, k: int = K, shape: tuple[int, ...] = SHAPE) -> onnx.ModelProto:
    out = [*shape[:-1], k]
    return model(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=largest)],
        [tensor("x", list(shape))],
        [tensor("v", out), tensor("i", out, TensorProto.INT64)],
        {"k": np.array([k], np.int64)},
    )


def sprinkled(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Small integers (ties) with NaN, ±inf and ±0 sprinkled in."""
    x = rng.integers(-3, 4, shape).astype(np.float32)
    mask = rng.random(shape) < 0.4
    x[mask] = rng.choice(SPECIALS, int(mask.sum()))
    return x


def assert_same(got: list[np.ndarray], want: list[np.ndarray], x: np.ndarray) -> None:
    np.testing.assert_array_equal(got[1], want[1], err_msg=f"indices, x={x!r}")
    np.testing.assert_array_equal(got[0], want[0], err_msg=f"values, x={x!r}")


@pytest.fixture(scope="module", params=[1, 0], ids=["largest", "smallest"])
def case(request: pytest.FixtureRequest) -> tuple[onnx.ModelProto, object, object]:
    proto = topk_model(request.param)
    reference = ort.InferenceSession(proto.SerializeToString(),
                                     providers=["CPUExecutionProvider"])
    return proto, dlc.compile(proto, cache=False, jobs=1), reference


@pytest.mark.parametrize("largest, values, indices", [
    (1, [np.nan, 4], [5, 4]), (0, [0, 1], [0, 1]),
])
def test_issue_example(largest: int, values: list[float], indices: list[int]) -> None:
    proto = topk_model(largest, k=2, shape=(6,))
    x = np.array([0, 1, 2, 3, 4, np.nan], np.float32)
    want = [np.array(values, np.float32), np.array(indices, np.int64)]
    assert_same(list(dlc.compile(proto, cache=False, jobs=1)(x)), want, x)
    assert_same(list(run_graph(import_onnx(proto), [x])), want, x)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_compiled_and_interpreter_match_onnxruntime(
    case: tuple[onnx.ModelProto, object, object], seed: int
) -> None:
    proto, executable, reference = case
    x = sprinkled(np.random.default_rng(seed), SHAPE)
    want = reference.run(None, {"x": x})  # type: ignore[attr-defined]
    assert_same(list(executable(x)), want, x)  # type: ignore[operator]
    assert_same(list(run_graph(import_onnx(proto), [x])), want, x)
