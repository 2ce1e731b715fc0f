"""Heterogeneous execution: `dlc.compile(model, target="opencl", fallback="llvm")` on PoCL.

The model has one op the OpenCL target lacks (a custom op computed by an external C function,
which only the CPU can call); it runs on the CPU between two OpenCL regions, and the whole
matches NumPy. Skipped, with the reason, without pyopencl or a C compiler.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.runtime.opencl import unavailable_reason as opencl_unavailable_reason
from onnx import TensorProto, helper, numpy_helper

import dlc
from dlc.custom_op import ExternFunction, register_op, unregister_op

DOMAIN = "com.dlc.hetero"

SOURCE = """
void dlc_hetero_scale(const float *x, const float *w, float *out) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) out[i * 6 + j] = x[i * 6 + j] * w[j] + 1.0f;
}
"""




@pytest.fixture
def scale_op(tmp_path: Path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc) to build the external library")
    (tmp_path / "scale.c").write_text(SOURCE)
    library = tmp_path / "libhetero.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(tmp_path / "scale.c")],
                   check=True)
    register_op("ScaleRows", domain=DOMAIN, shape=lambda x, w: (x.shape, x.dtype),
                reference=lambda x, w: x * w + 1,
                extern=ExternFunction("dlc_hetero_scale", str(library)))
    yield
    unregister_op("ScaleRows", DOMAIN)


def hetero_model(w: np.ndarray, w2: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"]),
         helper.make_node("ScaleRows", ["a", "w"], ["b"], domain=DOMAIN),
         helper.make_node("MatMul", ["b", "w2"], ["c"]),
         helper.make_node("Sigmoid", ["c"], ["y"])],
        "hetero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w2, "w2")],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)]
    )


@pytest.mark.skipif(opencl_unavailable_reason() is not None,
                    reason=f"{opencl_unavailable_reason()}")
def test_op_opencl_lacks_runs_on_the_cpu(scale_op: None) -> None:
    rng = np.random.default_rng(5)
    w = rng.standard_normal(6).astype(np.float32)
    w2 = rng.standard_normal((6, 6)).astype(np.float32)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    expected = 1 / (1 + np.exp(-((np.maximum(x, 0) * w + 1) @ w2)))
    compiled = dlc.compile(hetero_model(w, w2), target="opencl", fallback="llvm", cache=False)
    targets = [region.target for region in compiled.regions.values()]
    assert targets == ["opencl", "llvm", "opencl"]
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-5)


def test_unknown_target_lists_the_known_ones(scale_op: None) -> None:
    model = hetero_model(np.ones(6, np.float32), np.ones((6, 6), np.float32))
    with pytest.raises(dlc.CompileError, match=r"unknown partition target 'tpu' \(known targets: "
                                               r"cblas, llvm, onednn, opencl\)"):
        dlc.compile(model, target="tpu", fallback="llvm")
