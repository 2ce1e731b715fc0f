"""The one exception the ONNX frontend raises for anything wrong with a model it is given."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException


class OnnxImportError(DiagnosticException):
    """A model cannot be imported: the message names the node, its op and what was wrong.

    It is a `DiagnosticException`, so that `tools.diagnostics.run_tool` prints it as a diagnostic
    (`dlc-translate: error: ...`) and exits 1, without a traceback.
    """


class NotConstantError(OnnxImportError):
    """A node needs the contents of a value at import time (a shape, axes, pads, ...), but the
    value is computed at run time. `value_name` is the ONNX name of that value: a caller that
    knows the value (a test harness with the inputs at hand) may bind it and import again."""

    def __init__(self, message: str, value_name: str) -> None:
        super().__init__(message)
        self.value_name = value_name
