"""ONNX Mod (`graph.mod`): onnx's own node cases through the compiled path. Integer cases (both
`fmod` modes, signed and unsigned, broadcast) match the expected outputs exactly; a
floating-point Mod is refused naming the node (dlc's scalar ops have no float remainder)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from dlc.driver.errors import CompileError

import dlc


def _mod_cases() -> list[object]:
    import onnx.backend.test.loader as loader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = loader.load_model_tests(kind="node")
    return [t for t in tests if t.name.startswith("test_mod_") and t.data_sets]


CASES = _mod_cases()


def test_there_are_integer_and_float_cases() -> None:
    kinds = {np.issubdtype(t.data_sets[0][0][0].dtype, np.integer) for t in CASES}  # type: ignore[attr-defined]
    assert kinds == {True, False}


@pytest.mark.parametrize("case", CASES, ids=lambda t: t.name)  # type: ignore[attr-defined]
def test_onnx_mod_cases(case: object) -> None:
    inputs, outputs = case.data_sets[0]  # type: ignore[attr-defined]
    if not np.issubdtype(inputs[0].dtype, np.integer):
        with pytest.raises(CompileError, match=r"\(Mod, opset \d+\): expected integer operands,"
                                               r" found .*: a floating-point Mod is not "
                                               r"supported"):
            dlc.compile(case.model, threads=1, jobs=1)  # type: ignore[attr-defined]
        return
    executable = dlc.compile(case.model, threads=1, jobs=1)  # type: ignore[attr-defined]
    got = executable(*inputs)
    np.testing.assert_array_equal(got, outputs[0])
    assert got.dtype == outputs[0].dtype
