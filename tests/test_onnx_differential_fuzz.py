"""Differential fuzzing against ONNX Runtime: random small ONNX models (tests/onnx/fuzz.py), one
op or a chain of 2-4, compiled by dlc and compared with ONNX Runtime. Derandomized: case i of a
run is generated from (seed, i). A quick run is unmarked; a few hundred cases are marked slow;
`tools/fuzz` runs more and saves the failing models."""

from __future__ import annotations

import pytest

from tests.onnx.fuzz import OPS, generate, run_case

QUICK_CASES = 30
SLOW_CASES = 300


def _check(seed: int, index: int) -> None:
    result = run_case(generate(seed, index))
    assert result.status in ("passed", "invalid"), (
        f"case {index} of seed {seed} ({result.case.summary}): {result.status}: {result.detail}")


@pytest.mark.parametrize("index", range(QUICK_CASES))
def test_quick_fuzz_case_matches_onnxruntime(index: int) -> None:
    _check(seed=1, index=index)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(SLOW_CASES))
def test_fuzz_case_matches_onnxruntime(index: int) -> None:
    _check(seed=2, index=index)


def test_generation_is_deterministic_and_covers_every_family() -> None:
    first, again = generate(5, 3), generate(5, 3)
    assert first.model.SerializeToString() == again.model.SerializeToString()
    assert all((a == b).all() for a, b in zip(first.inputs, again.inputs, strict=True))
    for family in OPS:
        case = generate(0, 0, [family])
        assert case.summary.startswith(family), case.summary


@pytest.mark.parametrize(("seed", "index"), [
    (0, 123),  # Slice, step -1 and start -5 on an axis of 4: one element (ONNX clamps to 0)
    (0, 1404),  # a Slice with a negative step whose start is below -dim, too
])
def test_found_by_the_fuzzer(seed: int, index: int) -> None:
    _check(seed, index)
