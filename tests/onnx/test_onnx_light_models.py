"""The nine `light_*` model graphs shipped with onnx (ResNet-50, DenseNet-121, Inception v1/v2,
SqueezeNet, ShuffleNet, VGG-19, AlexNet, ZFNet-512): imported, run through the graph interpreter
and compiled for the CPU with `dlc.compile` on onnx's input `arange(n).reshape(shape) / n`, and
compared with their `*_output_0.pb`."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.dialects.graph.interpreter import run_module
from dlc.frontends.onnx import import_onnx
from onnx import numpy_helper

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.stem for p in LIGHT.glob("light_*.onnx"))


def test_all_nine_models_are_found() -> None:
    assert len(MODELS) == 9, MODELS


def _input_and_expected(proto: onnx.ModelProto, name: str) -> tuple[np.ndarray, np.ndarray]:
    initializers = {i.name for i in proto.graph.initializer}
    (data,) = [i for i in proto.graph.input if i.name not in initializers]
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    count = int(np.prod(shape))
    x = (np.arange(count).reshape(shape) / count).astype(np.float32)
    want = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"{name}_output_0.pb")))
    return x, want


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_light_model_matches_its_expected_output(name: str) -> None:
    proto = onnx.load(LIGHT / f"{name}.onnx")
    start = time.perf_counter()
    module = import_onnx(proto)
    assert time.perf_counter() - start < 10.0, "import took too long"
    x, want = _input_and_expected(proto, name)
    (got,) = run_module(module, [x])
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_light_model_compiled_matches_its_expected_output(name: str) -> None:
    import dlc

    proto = onnx.load(LIGHT / f"{name}.onnx")
    x, want = _input_and_expected(proto, name)
    got = dlc.compile(proto)(x)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)
