"""ONNX node conformance: onnx's backend node cases of every listed family, imported by dlc and
run through the graph interpreter (and ONNX Runtime, for the figures), then through dlc.compile.

Cases that fail for a known reason are listed in expected_failures.txt; a listed case that
passes fails its family's test, so that the list stays exact.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.onnx.harness import (
    FAMILIES,
    RECORDS,
    Record,
    cases_of,
    expected_failures,
    load_cases,
    run_compiled,
    run_interpreter,
    run_onnxruntime,
)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_family_through_interpreter(family: str) -> None:
    expected = expected_failures()
    cases = cases_of(family)
    assert cases, f"no ONNX node cases found for {family}"
    unexpected, fixed = [], []
    for case in cases:
        outcome = run_interpreter(case)
        RECORDS[case.name] = Record(case, outcome, run_onnxruntime(case))
        if outcome.passed and case.name in expected:
            fixed.append(f"{case.name} passes: remove it from expected_failures.txt")
        elif not outcome.passed and case.name not in expected:
            unexpected.append(f"{case.name}: {outcome.detail}")
    assert not unexpected and not fixed, "\n".join(unexpected + fixed)


@pytest.mark.slow
def test_expected_failures_are_cases_with_reasons() -> None:
    names = {case.name for case in load_cases()}
    for name, reason in expected_failures().items():
        assert name in names, f"expected_failures.txt lists {name}, which is no listed case"
        assert reason, f"expected_failures.txt gives no reason for {name}"


def _dlc_compile() -> Callable[[object], object]:
    import dlc

    return dlc.compile


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_family_through_compiled_path(family: str) -> None:
    compile_fn = _dlc_compile()
    expected = expected_failures()
    failures = []
    cases = [case for case in cases_of(family) if case.name not in expected]
    for case in cases:
        outcome = run_compiled(case, compile_fn)
        if case.name in RECORDS:
            RECORDS[case.name].compiled = outcome
        if not outcome.passed:
            failures.append(f"{case.name}: {outcome.detail}")
    if failures:
        pytest.xfail(f"compiled path: {failures[0]} ({len(failures)} of {len(cases)} cases "
                     "fail)")
