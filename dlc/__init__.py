"""dlc: a deep-learning compiler in the class of Apache TVM, built the MLIR way on xDSL.

The public API is a thin façade over the compiler's parts:
- `dlc.compile(module_or_path, target="llvm", entry=None)`: compile for the host CPU and return an
  `Executable` (callable on NumPy arrays, `.export(path)` writes a shared library);
- `dlc.load(path)`: open such a library with ctypes alone (no LLVM needed).
"""

from dlc.api import CompileError, compile, load
from runtime.executable import Executable, ExecutableError

__all__ = ["CompileError", "Executable", "ExecutableError", "compile", "load"]
