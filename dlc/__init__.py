"""dlc: a deep-learning compiler in the class of Apache TVM, built the MLIR way on xDSL.

The public API is a thin façade over the compiler's parts:
- `dlc.compile(model, target="host", entry=None, *, input_shapes=None, threads=0, ...)`: compile
  an ONNX model (`.onnx` path or ModelProto), an `.mlir` file or an xDSL module and return an
  `Executable`: `m(x, ...)` with inputs in order, `m.run({"name": x})` returning the outputs by
  name, `m.export("model.so")` writing a shared library with the weights inside;
- `dlc.load(path)`: open such a library with ctypes and NumPy alone (no LLVM, no xDSL);
- `dlc.quantize(model, calibration, output)`: post-training int8 quantization into a QDQ ONNX
  model (calibrated min-max, percentile or entropy ranges; a per-layer error report).

The compiler's layers are subpackages: `dlc.dialects`, `dlc.target`, `dlc.frontends`,
`dlc.rewrites`, `dlc.codegen`, `dlc.pipelines`, `dlc.runtime`, `dlc.driver`, `dlc.autotune`,
`dlc.tools`. In the repository they are the top-level folders (the layout the project keeps);
installed, setuptools' package-dir mapping puts them under `dlc/`. Importing `dlc` imports none
of them: the façade's names load on first use (PEP 562), so that `import dlc.runtime` needs
only NumPy and `dlc-opt` starts fast.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isfile(os.path.join(_CHECKOUT, "pyproject.toml")) and os.path.isdir(
    os.path.join(_CHECKOUT, "dialects")
):
    # Run from a checkout (tools/dlc-opt, pytest): the sibling folders are dlc's subpackages.
    __path__.append(_CHECKOUT)  # noqa: F821 - a package's __path__

_FACADE: dict[str, str] = {
    "compile": "dlc.api",
    "load": "dlc.api",
    "quantize": "dlc.quantization",
    "QuantizationError": "dlc.quantization",
    "CompileError": "dlc.driver.errors",
    "Executable": "dlc.runtime.executable",
    "ExecutableError": "dlc.runtime.executable",
}
"""The public names, by the module that defines them."""

if TYPE_CHECKING:
    from dlc.api import compile, load
    from dlc.driver.errors import CompileError
    from dlc.quantization import QuantizationError, quantize
    from dlc.runtime.executable import Executable, ExecutableError

__all__ = ["CompileError", "Executable", "ExecutableError", "QuantizationError", "compile", "load",
           "quantize"]


def __getattr__(name: str) -> Any:
    module = _FACADE.get(name)
    if module is None:
        raise AttributeError(f"module 'dlc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
