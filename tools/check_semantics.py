"""`dlc-opt --check-semantics`: run the module with the graph interpreter between passes.

Before the first pass, every public function with a body runs on seeded random inputs made from
its argument types; after each pass it runs again on the same inputs, and the first pass that
changes a result beyond the tolerance is reported (the pass, the function, the output and its
largest absolute and relative errors). The tolerance is atol + rtol times the output's largest
magnitude (see `compare`).

A module the interpreter cannot run from the start (not graph level, non-tensor arguments, an op
without an implementation) is an error. When a pass takes the module out of the interpreter's
reach (e.g. convert-graph-to-tensor-expr), checking stops there with a note on stderr: the passes
before it were checked, the ones after it are not.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from dlc.tools.diagnostics import ToolError
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-4


def random_inputs(function: func.FuncOp, rng: np.random.Generator) -> list[np.ndarray]:
    """One random array per argument of `function`, from its tensor type.

    Floats are standard normal; signed integers in [-4, 4], unsigned in [0, 8]; i1 random
    booleans. Raises ValueError for a non-tensor argument or an element type NumPy cannot hold.
    """
    from dlc.dialects.graph.attrs import to_numpy_dtype

    inputs: list[np.ndarray] = []
    for index, type in enumerate(function.function_type.inputs.data):
        if not isinstance(type, TensorType):
            raise ValueError(f"argument #{index} has type {type}, not a tensor")
        dtype = to_numpy_dtype(type.get_element_type())
        shape = tuple(type.get_shape())
        if dtype == np.bool_:
            inputs.append(rng.random(shape) < 0.5)
        elif dtype.kind == "f":
            inputs.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "u":
            inputs.append(rng.integers(0, 9, shape).astype(dtype))
        else:
            inputs.append(rng.integers(-4, 5, shape).astype(dtype))
    return inputs


def public_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The module's public functions with a body, in order."""
    found: list[func.FuncOp] = []
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            visibility = op.sym_visibility
            if visibility is None or visibility.data == "public":
                found.append(op)
    return found


@dataclass(frozen=True)
class Mismatch:
    """How one output differs from the reference."""

    output: int
    message: str


def compare(reference: np.ndarray, actual: np.ndarray, rtol: float, atol: float) -> str | None:
    """None when `actual` matches `reference`, else a description of the difference.

    Floats match when every |actual - reference| <= atol + rtol * max|reference| (the largest
    finite magnitude of the output: a pass that reorders a sum changes small results of large
    cancelling terms by more than their own rtol), with NaN where the reference has NaN.
    Integers and booleans must be equal.
    """
    if reference.shape != actual.shape or reference.dtype != actual.dtype:
        return (
            f"expected a {reference.dtype} array of shape {reference.shape}, found "
            f"{actual.dtype} of shape {actual.shape}"
        )
    if reference.size == 0:
        return None
    if reference.dtype.kind != "f":
        differing = int(np.count_nonzero(reference != actual))
        if differing == 0:
            return None
        index = np.unravel_index(int(np.argmax(reference != actual)), reference.shape)
        return (
            f"{differing} of {reference.size} elements differ, e.g. at {tuple(map(int, index))}: "
            f"expected {reference[index]}, found {actual[index]}"
        )
    ref64, act64 = reference.astype(np.float64), actual.astype(np.float64)
    finite = np.abs(ref64[np.isfinite(ref64)])
    scale = float(np.max(finite)) if finite.size else 0.0
    with np.errstate(invalid="ignore"):
        same = (act64 == ref64) | (np.isnan(act64) & np.isnan(ref64))
        error = np.where(same, 0.0, np.abs(act64 - ref64))
        error = np.where(np.isnan(error), np.inf, error)
        beyond = error > atol + rtol * scale
        if not bool(np.any(beyond)):
            return None
        nonzero = np.abs(ref64) > 0
        relative = error[nonzero] / np.abs(ref64[nonzero])
    worst = np.unravel_index(int(np.argmax(error)), reference.shape)
    max_relative = f"{float(np.max(relative)):.3g}" if relative.size else "n/a (expected zeros)"
    return (
        f"max abs error {float(np.max(error)):.3g}, max rel error {max_relative} "
        f"({int(np.count_nonzero(beyond))} of {reference.size} elements beyond atol {atol:g} + "
        f"rtol {rtol:g} * {scale:.3g}, the largest |expected|); at {tuple(map(int, worst))}: "
        f"expected {ref64[worst]:.7g}, found {act64[worst]:.7g}"
    )


@dataclass
class SemanticsChecker:
    """Runs a module's public functions before and after each pass and compares the results."""

    seed: int = 0
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    inputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    reference: dict[str, list[np.ndarray]] = field(default_factory=dict)
    stopped_after: str | None = None
    checked_passes: list[str] = field(default_factory=list)

    def _run(self, module: ModuleOp, name: str) -> list[np.ndarray]:
        from dlc.dialects.graph.interpreter import run_module

        return run_module(module, self.inputs[name], entry=name)

    def start(self, module: ModuleOp) -> None:
        """Record the reference results; ToolError when the interpreter cannot run the module."""
        self.inputs.clear()
        self.reference.clear()
        self.stopped_after = None
        self.checked_passes = []
        functions = public_functions(module)
        if not functions:
            raise ToolError("--check-semantics: the module has no public function to run")
        rng = np.random.default_rng(self.seed)
        for function in functions:
            name = function.sym_name.data
            try:
                self.inputs[name] = random_inputs(function, rng)
                self.reference[name] = self._run(module, name)
            except Exception as e:  # noqa: BLE001 - any failure means: not checkable
                raise ToolError(
                    f"--check-semantics: cannot run @{name} of the input with the graph "
                    f"interpreter: {e}"
                ) from None

    def check(self, module: ModuleOp, pass_name: str) -> None:
        """Compare after `pass_name`; ToolError on the first differing output."""
        if self.stopped_after is not None or not self.reference:
            return
        names = {f.sym_name.data for f in public_functions(module)}
        for name, expected in self.reference.items():
            if name not in names:
                self._stop(pass_name, f"@{name} is no longer a public function with a body")
                return
            try:
                actual = self._run(module, name)
            except Exception as e:  # noqa: BLE001 - the IR left the interpreter's reach
                self._stop(pass_name, f"the graph interpreter cannot run @{name}: {e}")
                return
            self._compare(pass_name, name, expected, actual)
        self.checked_passes.append(pass_name)

    def _compare(
        self, pass_name: str, name: str, expected: Sequence[np.ndarray],
        actual: Sequence[np.ndarray],
    ) -> None:
        if len(expected) != len(actual):
            raise ToolError(
                f"--check-semantics: pass '{pass_name}' changed the results of @{name}: "
                f"expected {len(expected)} outputs, found {len(actual)}"
            )
        for index, (ref, act) in enumerate(zip(expected, actual, strict=True)):
            problem = compare(np.asarray(ref), np.asarray(act), self.rtol, self.atol)
            if problem is not None:
                raise ToolError(
                    f"--check-semantics: pass '{pass_name}' changed the results of @{name}: "
                    f"output #{index}: {problem} (inputs: seed {self.seed})"
                )

    def _stop(self, pass_name: str, reason: str) -> None:
        self.stopped_after = pass_name
        checked = ", ".join(self.checked_passes) or "none"
        print(
            f"dlc-opt: note: --check-semantics stopped after pass '{pass_name}': {reason}; "
            f"passes checked before it: {checked}",
            file=sys.stderr,
        )
