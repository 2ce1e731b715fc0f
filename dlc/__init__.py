"""dlc: a deep-learning compiler in the class of Apache TVM, built the MLIR way on xDSL.

The public API is a thin façade over the compiler's parts:
- `dlc.compile(model, target="llvm", entry=None, *, input_shapes=None, threads=0, ...)`: compile
  an ONNX model (`.onnx` path or ModelProto), an `.mlir` file or an xDSL module for the host CPU
  and return an `Executable`: `m(x, ...)` with inputs in order, `m.run({"name": x})` returning
  the outputs by name, `m.export("model.so")` writing a shared library with the weights inside;
- `dlc.load(path)`: open such a library with ctypes and NumPy alone (no LLVM, no xDSL).
"""

from dlc.api import CompileError, compile, load
from runtime.executable import Executable, ExecutableError

__all__ = ["CompileError", "Executable", "ExecutableError", "compile", "load"]
