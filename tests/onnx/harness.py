"""The ONNX conformance harness: onnx's backend node cases, run through dlc and ONNX Runtime.

A case is imported with `frontends.onnx.import_onnx` and run by the graph interpreter; graph
inputs that the importer needs at import time (shapes, axes, pads given as inputs in the node
cases) are bound to the case's values, as a deployment would freeze them. The same case also
runs through ONNX Runtime, so that the figures can be read against it.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from dlc.frontends.onnx import OnnxImportError
from dlc.frontends.onnx.binding import import_binding
from onnx import numpy_helper

FAMILIES: tuple[str, ...] = (
    "Conv", "ConvTranspose", "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt",
    "Reciprocal", "Exp", "Log", "Erf", "Abs", "Neg", "Relu", "LeakyRelu", "PRelu", "Elu",
    "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu", "Clip", "Min", "Max", "Sum", "Mean",
    "Mod",
    "BatchNormalization", "InstanceNormalization", "LayerNormalization", "LRN", "MaxPool",
    "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Softmax", "LogSoftmax", "Reshape",
    "Transpose", "Concat", "Flatten", "Squeeze", "Unsqueeze", "Gather", "GatherElements",
    "GatherND", "Slice", "Split", "Expand", "Tile", "Where", "Equal", "Less", "Greater", "Cast",
    "Identity", "Dropout",
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "Pad", "Resize", "Upsample",
    "Constant", "ConstantOfShape", "Shape", "Range", "Einsum", "ArgMax", "TopK", "NonZero",
    "NonMaxSuppression",
    "If", "Loop", "Scan",
    "LSTM", "GRU", "RNN",
)
"""The ONNX ops whose node cases form dlc's conformance suite (the frontend issue's list, and
Mod, which the dynamic-shapes issue names)."""

EXPECTED_FAILURES_FILE = Path(__file__).parent / "expected_failures.txt"

_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


@dataclass(frozen=True)
class Case:
    """One node case: its name, family (the ONNX op it tests), model, data and tolerances."""

    name: str
    family: str
    model: onnx.ModelProto
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]
    rtol: float
    atol: float


@dataclass
class Outcome:
    """What happened to one case on one path: passed, or the reason it did not."""

    passed: bool
    detail: str = ""
    bound: list[str] = field(default_factory=list)


def _array(value: object) -> np.ndarray:
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, list | tuple):  # a sequence (Loop and If cases): an array of objects
        holder = np.empty(len(value), dtype=object)
        holder[:] = [np.asarray(v) for v in value]
        return holder
    if value is None:  # an empty optional
        return np.empty(0, dtype=object)
    return np.asarray(value)


@functools.cache
def load_cases() -> tuple[Case, ...]:
    """Every node case (first data set) of the families in FAMILIES, sorted by name."""
    import onnx.backend.test.loader as loader

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tests = loader.load_model_tests(kind="node")
    single = {t.name: t.model.graph.node[0].op_type for t in tests
              if len(t.model.graph.node) == 1}
    cases = []
    for test in tests:
        family = _family(test.name, test.model, single)
        if family not in FAMILIES or not test.data_sets:
            continue
        inputs, outputs = test.data_sets[0]
        cases.append(Case(test.name, family, test.model, tuple(_array(a) for a in inputs),
                          tuple(_array(a) for a in outputs), test.rtol, test.atol))
    return tuple(sorted(cases, key=lambda c: c.name))


def _family(name: str, model: onnx.ModelProto, single: dict[str, str]) -> str | None:
    """The op a case tests: its one node's, or for an expanded function body its base case's."""
    if len(model.graph.node) == 1:
        return model.graph.node[0].op_type
    base = _EXPANDED.sub("", name)
    if base != name:
        return single.get(base)
    listed = {n.op_type for n in model.graph.node} & set(FAMILIES)
    return listed.pop() if len(listed) == 1 else None


def cases_of(family: str) -> list[Case]:
    """The cases of one family."""
    return [c for c in load_cases() if c.family == family]


def expected_failures() -> dict[str, str]:
    """Case name -> reason, from expected_failures.txt (`name  # reason`)."""
    failures: dict[str, str] = {}
    for line in EXPECTED_FAILURES_FILE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition("#")
        failures[name.strip()] = reason.strip()
    return failures


# ---------------------------------------------------------------------------------------------
# Running a case
# ---------------------------------------------------------------------------------------------


def import_case(case: Case) -> tuple[onnx.ModelProto, object, list[str]]:
    """(model as imported, module, bound inputs): the model with the graph inputs the importer
    needs at import time bound to the case's values (`frontends.onnx.binding`)."""
    values = dict(zip([i.name for i in case.model.graph.input], case.inputs, strict=False))
    return import_binding(case.model, values)


def compare(case: Case, got: Sequence[np.ndarray]) -> str:
    """"" when `got` matches the case's outputs at its tolerances, else what differs."""
    if len(got) != len(case.outputs):
        return f"{len(got)} outputs, expected {len(case.outputs)}"
    for index, (value, want) in enumerate(zip(got, case.outputs, strict=True)):
        value = np.asarray(value)
        if value.shape != want.shape:
            return f"output {index}: shape {value.shape}, expected {want.shape}"
        if value.dtype != want.dtype:
            return f"output {index}: dtype {value.dtype}, expected {want.dtype}"
        if want.dtype.kind in "biu" or want.dtype == np.bool_:
            ok = np.array_equal(value, want)
        else:
            ok = np.allclose(value, want, rtol=case.rtol, atol=case.atol, equal_nan=True)
        if not ok:
            with np.errstate(all="ignore"):
                diff = np.nanmax(np.abs(value.astype(np.float64) - want.astype(np.float64)))
            return f"output {index}: max abs difference {diff}"
    return ""


def _feed(model: onnx.ModelProto, case: Case) -> list[np.ndarray]:
    names = [i.name for i in case.model.graph.input]
    given = dict(zip(names, case.inputs, strict=False))
    initializers = {i.name for i in model.graph.initializer}
    return [given[i.name] for i in model.graph.input if i.name not in initializers]


def run_interpreter(case: Case) -> Outcome:
    """Import the case and run it through the graph interpreter."""
    from dlc.dialects.graph.interpreter import run_module

    try:
        model, module, bound = import_case(case)
    except OnnxImportError as e:
        return Outcome(False, f"import: {e}")
    try:
        got = run_module(module, _feed(model, case))  # type: ignore[arg-type]
    except Exception as e:  # noqa: BLE001 - any interpreter failure is this case's outcome
        return Outcome(False, f"interpreter: {type(e).__name__}: {e}", bound)
    problem = compare(case, got)
    return Outcome(not problem, problem, bound)


def run_compiled(case: Case, compile_fn: Callable[[object], object]) -> Outcome:
    """Compile the case's model as it is, with nothing frozen, by `compile_fn` (dlc.compile),
    and run it on all the case's inputs: inputs whose values decide shapes are passed at run
    time (dlc.compile's executable specializes on them; `bound` lists them)."""
    given = dict(zip([i.name for i in case.model.graph.input], case.inputs, strict=False))
    bound: list[str] = []
    try:
        compiled = compile_fn(case.model)
        names = compiled.input_names  # type: ignore[attr-defined]
        got = compiled(*(given[n] for n in names))  # type: ignore[operator]
        bound = list(getattr(compiled, "value_inputs", ()))
    except Exception as e:  # noqa: BLE001 - a compiled-path failure is this case's outcome
        return Outcome(False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    if isinstance(got, np.ndarray):
        got = [got]
    problem = compare(case, list(got))  # type: ignore[arg-type]
    return Outcome(not problem, problem, bound)


def run_onnxruntime(case: Case) -> Outcome:
    """Run the case through ONNX Runtime (CPU), as a yardstick."""
    try:
        import onnxruntime
    except ImportError:
        return Outcome(False, "onnxruntime is not installed")
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    try:
        session = onnxruntime.InferenceSession(case.model.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"])
        names = [i.name for i in case.model.graph.input]
        feeds = dict(zip(names, case.inputs, strict=False))
        got = session.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - ORT rejecting a case is an outcome
        return Outcome(False, f"onnxruntime: {type(e).__name__}: {str(e)[:200]}")
    problem = compare(case, got)
    return Outcome(not problem, problem)


# ---------------------------------------------------------------------------------------------
# The figures: what ran, per family, printed at the end of the session
# ---------------------------------------------------------------------------------------------


@dataclass
class Record:
    """The outcomes of one case: through the interpreter, ONNX Runtime, and dlc.compile."""

    case: Case
    interpreter: Outcome
    onnxruntime: Outcome
    compiled: Outcome | None = None


RECORDS: dict[str, Record] = {}
"""Every case run in this session, by name (filled by the conformance tests)."""


def summary_lines(records: dict[str, Record]) -> list[str]:
    """A table per family: cases attempted, passed, ORT passed, and passed among ORT's."""
    by_family: dict[str, list[Record]] = {}
    for record in records.values():
        by_family.setdefault(record.case.family, []).append(record)
    header = f"{'family':24} {'cases':>5} {'dlc':>5} {'ORT':>5} {'dlc&ORT':>7} {'compiled':>8}"
    lines = [header]
    totals = [0, 0, 0, 0, 0]
    for family in sorted(by_family):
        rows = by_family[family]
        counts = [
            len(rows),
            sum(r.interpreter.passed for r in rows),
            sum(r.onnxruntime.passed for r in rows),
            sum(r.interpreter.passed and r.onnxruntime.passed for r in rows),
            sum(bool(r.compiled and r.compiled.passed) for r in rows),
        ]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        lines.append(f"{family:24} {counts[0]:5} {counts[1]:5} {counts[2]:5} {counts[3]:7} "
                     f"{counts[4]:8}")
    lines.append(f"{'total':24} {totals[0]:5} {totals[1]:5} {totals[2]:5} {totals[3]:7} "
                 f"{totals[4]:8}")
    if totals[2]:
        lines.append(f"dlc passes {totals[3]} of the {totals[2]} cases ONNX Runtime passes "
                     f"({100 * totals[3] / totals[2]:.1f}%), and {totals[1]} of {totals[0]} "
                     "attempted")
    bound = sum(bool(r.interpreter.bound) for r in records.values())
    if bound:
        lines.append(f"{bound} cases had graph inputs bound at import time (shapes, axes, pads) "
                     "in the interpreter column")
    compiled = [r for r in records.values() if r.compiled is not None]
    if compiled and totals[2]:
        both = sum(bool(r.compiled and r.compiled.passed) and r.onnxruntime.passed
                   for r in records.values())
        runtime = sum(bool(r.compiled and r.compiled.passed and r.compiled.bound)
                      for r in records.values())
        lines.append(f"compiled with nothing frozen: {both} of the {totals[2]} cases ONNX "
                     f"Runtime passes ({100 * both / totals[2]:.1f}%); {runtime} of them take "
                     "shape-deciding values at run time (one specialization per value)")
    return lines
