"""The one exception the ONNX frontend raises for anything wrong with a model it is given."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException


class OnnxImportError(DiagnosticException):
    """A model cannot be imported: the message names the node, its op and what was wrong.

    It is a `DiagnosticException`, so that `tools.diagnostics.run_tool` prints it as a diagnostic
    (`dlc-translate: error: ...`) and exits 1, without a traceback.
    """
