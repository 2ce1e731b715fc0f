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


class DynamicInputError(OnnxImportError):
    """A graph input has a dynamic or undeclared shape and no static shape was given for it.
    `input_name` names the input: a caller that knows the call's shapes (`driver.specialize`)
    may give them and import again."""

    def __init__(self, message: str, input_name: str) -> None:
        super().__init__(message)
        self.input_name = input_name


class ShapeHintWarning(UserWarning):
    """A graph output is declared with a shape that the importer's inference contradicts.

    ONNX exporters write declared output shapes that are stale or partly unknown (`-1`); like
    ONNX Runtime, dlc treats them as hints: the inferred shape is used and this warning says
    where the two disagree (`run_tool` prints it as `<tool>: warning: ...`).
    """
