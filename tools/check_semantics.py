"""`dlc-opt --check-semantics`: run the module with an interpreter of its level between passes.

Before the first pass, every public function with a body runs on seeded random inputs made from
its argument types; after each pass it runs again on the same inputs, and the first pass that
changes a result beyond the tolerance is reported (the pass, the function, the output and its
largest absolute and relative errors). The tolerance is atol + rtol times the output's largest
magnitude (see `compare`).

The module runs with the interpreter of the level it is at after each pass (`module_level`): the
graph interpreter (dialects/graph/interpreter.py), the tensor_expr evaluator
(dialects/tensor_expr/interpreter.py) or the loop interpreter (dialects/loop/interpreter.py; its
functions are destination-passing: the last `dlc.num_outputs` arguments are allocated here,
filled with NaN, and are the results). A pass that leaves IR the interpreter finds undefined (a
read out of bounds, a division by zero, ...) is named as breaking the function. The loop
interpreter runs op by op in Python: a function whose argument buffers hold more than
`max_loop_elements` elements is skipped at the loop level, with a note.

A module the interpreter cannot run from the start (non-tensor arguments, an op without an
implementation, llvm dialect IR) is an error. When a pass takes the module out of the
interpreters' reach (an op none implements, e.g. target_gpu, or the llvm dialect), checking
stops there with a note on stderr: the passes before it were checked, the ones after it are not.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from dlc.tools.diagnostics import ToolError
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-4
DEFAULT_MAX_LOOP_ELEMENTS = 1 << 15
"""The most elements (inputs and outputs together) a function may have for the loop
interpreter to run it."""


def checked_level(module: ModuleOp) -> str:
    """The level `module` is at for checking: `llvm` when it holds any llvm dialect op, else
    `graph`, `tensor_expr` or `loop` (`dlc.pipelines.module_level`)."""
    from dlc.pipelines import module_level

    if any(op.name.startswith("llvm.") for op in module.walk()):
        return "llvm"
    return module_level(module)


def input_types(function: func.FuncOp) -> list[Attribute]:
    """The types of `function`'s inputs: all its arguments, except a destination-passing
    function's last `dlc.num_outputs` ones (its outputs)."""
    from dlc.dialects.contracts import NUM_OUTPUTS_ATTR

    types = list(function.function_type.inputs.data)
    outputs = function.attributes.get(NUM_OUTPUTS_ATTR)
    if isinstance(outputs, IntegerAttr) and not function.function_type.outputs.data:
        return types[: len(types) - outputs.value.data]
    return types


def random_inputs(function: func.FuncOp, rng: np.random.Generator) -> list[np.ndarray]:
    """One random array per input of `function` (`input_types`), from its tensor or memref type.

    Floats are standard normal; signed integers in [-4, 4], unsigned in [0, 8]; i1 random
    booleans. Raises ValueError for an argument of another type or an element type NumPy cannot
    hold.
    """
    from dlc.dialects.graph.attrs import to_numpy_dtype

    inputs: list[np.ndarray] = []
    for index, type in enumerate(input_types(function)):
        if not isinstance(type, TensorType | MemRefType):
            raise ValueError(f"argument #{index} has type {type}, not a tensor or memref")
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
    max_loop_elements: int = DEFAULT_MAX_LOOP_ELEMENTS
    inputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    reference: dict[str, list[np.ndarray]] = field(default_factory=dict)
    stopped_after: str | None = None
    checked_passes: list[str] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)
    """Functions too big for the loop interpreter (noted once, then no longer run)."""

    def _run(self, module: ModuleOp, name: str, level: str) -> list[np.ndarray]:
        """@name of `module` run by the interpreter of `level` on its recorded inputs."""
        if level == "graph":
            from dlc.dialects.graph.interpreter import run_module

            return run_module(module, self.inputs[name], entry=name)
        if level == "tensor_expr":
            from dlc.dialects.tensor_expr.interpreter import run_module as run_tensor_expr

            return run_tensor_expr(module, self.inputs[name], entry=name)
        if level == "loop":
            from dlc.dialects.loop.interpreter import run_function as run_loop

            function = _function(module, name)
            buffers = [
                _as_buffer(value, type)
                for value, type in zip(self.inputs[name], input_types(function), strict=False)
            ]
            return run_loop(module, name, buffers)
        raise _Unreachable(f"the module is at the {level} dialect, which no interpreter runs")

    def _too_big(self, module: ModuleOp, name: str, level: str) -> int | None:
        """The element count of @name's arguments when the loop interpreter should not run it."""
        if level != "loop":
            return None
        elements = sum(
            math.prod(type.get_shape())
            for type in _function(module, name).function_type.inputs.data
            if isinstance(type, MemRefType | TensorType)
        )
        return elements if elements > self.max_loop_elements else None

    def _skip_note(self, name: str, elements: int, where: str) -> None:
        self.skipped.add(name)
        print(
            f"dlc-opt: note: --check-semantics skips @{name} at the loop level {where}: its "
            f"arguments hold {elements} elements, more than --check-semantics-max-elements "
            f"{self.max_loop_elements}",
            file=sys.stderr,
        )

    def start(self, module: ModuleOp) -> None:
        """Record the reference results; ToolError when the interpreter cannot run the module."""
        self.inputs.clear()
        self.reference.clear()
        self.skipped.clear()
        self.stopped_after = None
        self.checked_passes = []
        functions = public_functions(module)
        if not functions:
            raise ToolError("--check-semantics: the module has no public function to run")
        level = checked_level(module)
        rng = np.random.default_rng(self.seed)
        for function in functions:
            name = function.sym_name.data
            try:
                self.inputs[name] = random_inputs(function, rng)
                if (elements := self._too_big(module, name, level)) is not None:
                    self._skip_note(name, elements, "of the input")
                    continue
                self.reference[name] = self._run(module, name, level)
            except Exception as e:  # noqa: BLE001 - any failure means: not checkable
                raise ToolError(
                    f"--check-semantics: cannot run @{name} of the input with the "
                    f"{_interpreter(level)}: {e}"
                ) from None

    def check(self, module: ModuleOp, pass_name: str) -> None:
        """Compare after `pass_name`; ToolError on the first differing output, or when the
        interpreter finds the IR undefined (e.g. a read out of bounds)."""
        from dlc.dialects.loop.interpreter import LoopInterpreterError, LoopUnsupportedError
        from dlc.dialects.tensor_expr.interpreter import (
            TensorExprInterpreterError,
            TensorExprUnsupportedError,
        )

        if self.stopped_after is not None or not self.reference:
            return
        level = checked_level(module)
        if level == "llvm":
            self._stop(pass_name, "the module is at the llvm dialect, which no interpreter runs")
            return
        names = {f.sym_name.data for f in public_functions(module)}
        for name, expected in self.reference.items():
            if name not in names:
                self._stop(pass_name, f"@{name} is no longer a public function with a body")
                return
            if name in self.skipped:
                continue
            if (elements := self._too_big(module, name, level)) is not None:
                self._skip_note(name, elements, f"from pass '{pass_name}' on")
                continue
            try:
                actual = self._run(module, name, level)
            except (LoopUnsupportedError, TensorExprUnsupportedError) as e:
                self._stop(pass_name, f"the {_interpreter(level)} cannot run @{name}: {e}")
                return
            except (LoopInterpreterError, TensorExprInterpreterError) as e:
                raise ToolError(
                    f"--check-semantics: pass '{pass_name}' broke @{name}: the "
                    f"{_interpreter(level)} found: {e} (inputs: seed {self.seed})"
                ) from None
            except Exception as e:  # noqa: BLE001 - the IR left the interpreter's reach
                self._stop(pass_name, f"the {_interpreter(level)} cannot run @{name}: {e}")
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
            ref, act = np.asarray(ref), np.asarray(act)
            if _same_bits(ref.dtype, act.dtype):  # signless below the graph: ui8 is i8
                act = act.view(ref.dtype)
            problem = compare(ref, act, self.rtol, self.atol)
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


class _Unreachable(Exception):
    """The module is at a level no interpreter runs."""


def _interpreter(level: str) -> str:
    return {"graph": "graph interpreter", "tensor_expr": "tensor_expr interpreter",
            "loop": "loop interpreter"}.get(level, f"{level} interpreter")


def _function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise ValueError(f"expected a function @{name} in the module, found none")


def _same_bits(a: np.dtype, b: np.dtype) -> bool:
    """Two different integer dtypes of one width (a signed and an unsigned one)."""
    return a != b and a.kind in "iu" and b.kind in "iu" and a.itemsize == b.itemsize


def _as_buffer(value: np.ndarray, type: Attribute) -> np.ndarray:
    """A fresh copy of `value` as the loop interpreter expects an argument of memref `type`."""
    from dlc.dialects.arith_numpy import numpy_dtype

    array = np.array(value, copy=True)
    if not isinstance(type, MemRefType):
        return array
    dtype = numpy_dtype(type.get_element_type())
    if _same_bits(array.dtype, dtype):
        return array.view(dtype)
    return array.astype(dtype, copy=False)
