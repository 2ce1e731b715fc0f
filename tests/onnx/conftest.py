"""pytest hooks of the ONNX tests: the conformance figures at the end of the session."""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.onnx.harness import RECORDS, summary_lines

    if not RECORDS:
        return
    terminalreporter.section("ONNX node conformance")
    for line in summary_lines(RECORDS):
        terminalreporter.write_line(line)
