"""A differential fuzzer: random small ONNX models, compiled by dlc and run by ONNX Runtime.

Each case is one op or a chain of 2-4 ops over float32 tensors, its shapes and attributes drawn
within the ONNX spec (opset 17) from a NumPy generator seeded by (seed, case index), so a case is
reproduced by its seed and index alone. ONNX Runtime's outputs are the reference; dlc's
(`dlc.compile`) must match them within a tolerance (`tests.onnx.harness.compare`). A model ONNX
Runtime rejects is the generator's fault and counts as `invalid`, not against dlc.

Used by tests/test_onnx_differential_fuzz.py (a quick unmarked run and a slow one) and by
`tools/fuzz`, which runs it longer and saves each failing model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.onnx.harness import Case, Outcome, run_compiled
from tests.onnx.models import model as make_model
from tests.onnx.models import tensor

RTOL = 1e-3
ATOL = 1e-4

Shape = tuple[int, ...]


@dataclass
class Builder:
    """The model under construction: nodes, graph inputs with their data, initializers."""

    rng: np.random.Generator
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    inputs: list[tuple[str, np.ndarray]] = field(default_factory=list)
    initializers: dict[str, np.ndarray] = field(default_factory=dict)
    counter: int = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def data(self, shape: Shape, low: float | None = None) -> np.ndarray:
        """Random float32 data: standard normal, or uniform in [low, low + 2) when `low`."""
        if low is not None:
            return (low + 2 * self.rng.random(shape)).astype(np.float32)
        return self.rng.standard_normal(shape).astype(np.float32)

    def input(self, shape: Shape, low: float | None = None) -> str:
        name = self.name("in")
        self.inputs.append((name, np.asarray(self.data(shape, low))))
        return name

    def const(self, array: np.ndarray) -> str:
        name = self.name("c")
        self.initializers[name] = np.asarray(array)  # a NumPy scalar is not an array
        return name

    def operand(self, shape: Shape, low: float | None = None) -> str:
        """A second operand: a graph input or an initializer, at random."""
        if self.rng.random() < 0.5:
            return self.input(shape, low)
        return self.const(self.data(shape, low))

    def node(self, op_type: str, inputs: Sequence[str], **attributes: object) -> str:
        out = self.name("t")
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attributes))
        return out

    def pick(self, items: Sequence[object]) -> object:
        return items[int(self.rng.integers(len(items)))]


# An op generator: (builder, input name, input shape) -> output name. `shape` is None for the
# first op of a chain, which then makes its own input.
OpGen = Callable[[Builder, str | None, Shape | None], str]


def _rank_shape(b: Builder, rank: int, low: int = 1, high: int = 6) -> Shape:
    return tuple(int(d) for d in b.rng.integers(low, high + 1, rank))


def _start(b: Builder, x: str | None, shape: Shape | None, rank: int | None = None) -> tuple[str,
                                                                                         Shape]:
    """The op's input: the chain's value, or a new graph input of a random shape."""
    if x is not None and shape is not None:
        return x, shape
    new_shape = _rank_shape(b, rank if rank is not None else int(b.rng.integers(1, 5)))
    return b.input(new_shape), new_shape


UNARY = ("Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Sqrt", "Log", "Erf", "LeakyRelu",
         "Elu", "HardSigmoid", "HardSwish", "Reciprocal")
BINARY = ("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow")


def unary(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    op = str(b.pick(UNARY))
    if op in ("Sqrt", "Log", "Reciprocal"):  # keep to the domain: |x| + 0.5
        x = b.node("Add", [b.node("Abs", [x]), b.const(np.float32(0.5))])
    if op == "Exp":
        x = b.node("Tanh", [x])
    attributes: dict[str, object] = {}
    if op == "LeakyRelu":
        attributes["alpha"] = float(b.pick([0.01, 0.2, 1.5, -0.5]))
    elif op == "Elu":
        attributes["alpha"] = float(b.pick([1.0, 0.5, 2.0]))
    elif op == "HardSigmoid":
        attributes.update(alpha=float(b.pick([0.2, 0.5])), beta=float(b.pick([0.5, 0.1])))
    return b.node(op, [x], **attributes)


def _broadcast_shape(b: Builder, shape: Shape) -> Shape:
    """A shape that broadcasts against `shape`: a suffix of it, some dimensions set to 1."""
    keep = int(b.rng.integers(0, len(shape) + 1))
    suffix = shape[len(shape) - keep:]
    return tuple(1 if b.rng.random() < 0.3 else d for d in suffix)


def binary(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    op = str(b.pick(BINARY))
    other_shape = _broadcast_shape(b, shape)
    if op == "Div":
        other = b.operand(other_shape, low=0.5)
    elif op == "Pow":
        x = b.node("Add", [b.node("Abs", [x]), b.const(np.float32(0.5))])
        other = b.const(np.asarray(b.pick([2.0, 0.5, 3.0, -1.0]), np.float32).reshape(
            (1,) * len(other_shape)))
    else:
        other = b.operand(other_shape)
    if op not in ("Pow",) and b.rng.random() < 0.3:
        return b.node(op, [other, x])  # the broadcast operand first
    return b.node(op, [x, other])


def matmul(b: Builder, x: str | None, shape: Shape | None) -> str:
    if shape is None or len(shape) < 2:
        x, shape = _start(b, None, None, rank=int(b.rng.integers(2, 4)))
    assert x is not None
    n = int(b.rng.integers(1, 7))
    w_shape = (shape[-1], n)
    if len(shape) == 3 and b.rng.random() < 0.3:
        w_shape = (shape[0], shape[-1], n)  # batched
    return b.node("MatMul", [x, b.operand(w_shape)])


def gemm(b: Builder, x: str | None, shape: Shape | None) -> str:
    trans_a = int(b.rng.integers(0, 2))
    if shape is None or len(shape) != 2:
        x, shape = _start(b, None, None, rank=2)
    assert x is not None
    m, k = (shape[1], shape[0]) if trans_a else shape
    n = int(b.rng.integers(1, 7))
    trans_b = int(b.rng.integers(0, 2))
    w = b.operand((n, k) if trans_b else (k, n))
    inputs = [x, w]
    if b.rng.random() < 0.7:
        inputs.append(b.const(b.data(tuple(b.pick([(n,), (1, n), (m, n), (m, 1), ()])))))
    return b.node("Gemm", inputs, transA=trans_a, transB=trans_b,
                  alpha=float(b.pick([1.0, 0.5, 2.0])), beta=float(b.pick([1.0, 0.5, -1.0])))


def _spatial(b: Builder, shape: Shape | None, x: str | None) -> tuple[str, Shape]:
    if shape is None or len(shape) != 4 or shape[2] < 1 or shape[3] < 1:
        n, c = int(b.rng.integers(1, 3)), int(b.rng.integers(1, 5))
        h, w = int(b.rng.integers(3, 10)), int(b.rng.integers(3, 10))
        new_shape = (n, c, h, w)
        return b.input(new_shape), new_shape
    assert x is not None
    return x, shape


def _window(b: Builder, size: Sequence[int], pool: bool) -> dict[str, list[int]] | None:
    """kernel_shape, strides, pads and dilations fitting spatial `size`, or None."""
    kernel, strides, dilations, pads_begin, pads_end = [], [], [], [], []
    for extent in size:
        k = int(b.rng.integers(1, min(extent, 4) + 1))
        d = int(b.rng.integers(1, 3)) if b.rng.random() < 0.3 else 1
        if (k - 1) * d + 1 > extent + 2:
            d = 1
        s = int(b.rng.integers(1, 4))
        limit = k - 1 if pool else 2  # a pool's pads are smaller than its kernel
        p0, p1 = (int(b.rng.integers(0, limit + 1)) for _ in range(2))
        if extent + p0 + p1 < (k - 1) * d + 1:
            return None
        kernel.append(k)
        strides.append(s)
        dilations.append(d)
        pads_begin.append(p0)
        pads_end.append(p1)
    return {"kernel_shape": kernel, "strides": strides, "dilations": dilations,
            "pads": pads_begin + pads_end}


def conv(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _spatial(b, shape, x)
    c = shape[1]
    window = _window(b, shape[2:], pool=False) or {"kernel_shape": [1, 1]}
    groups = int(b.pick([g for g in range(1, c + 1) if c % g == 0]))
    m = groups * int(b.rng.integers(1, 4))
    if groups == c and b.rng.random() < 0.5:
        m = c  # depthwise
    kernel = window["kernel_shape"]
    w = b.const(b.data((m, c // groups, *kernel)) * 0.5)
    inputs = [x, w] + ([b.const(b.data((m,)))] if b.rng.random() < 0.6 else [])
    if b.rng.random() < 0.15:
        window.pop("pads", None)
        window["auto_pad"] = str(b.pick(["SAME_UPPER", "SAME_LOWER", "VALID"]))  # type: ignore
        if window["auto_pad"] != "VALID":
            window["dilations"] = [1, 1]
    return b.node("Conv", inputs, group=groups, **window)


def pool(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _spatial(b, shape, x)
    op = str(b.pick(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"]))
    if op.startswith("Global"):
        return b.node(op, [x])
    window = _window(b, shape[2:], pool=True) or {"kernel_shape": [1, 1]}
    attributes: dict[str, object] = dict(window)
    if op == "AveragePool":
        attributes.pop("dilations", None)  # AveragePool's dilations are opset 19
        attributes["count_include_pad"] = int(b.rng.integers(0, 2))
    if b.rng.random() < 0.2:
        attributes["ceil_mode"] = 1
    return b.node(op, [x], **attributes)


def reduce(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    op = str(b.pick(["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"]))
    rank = len(shape)
    count = int(b.rng.integers(1, rank + 1))
    axes = sorted(int(a) for a in b.rng.choice(rank, count, replace=False))
    axes = [a - rank if b.rng.random() < 0.3 else a for a in axes]
    keepdims = int(b.rng.integers(0, 2))
    if op == "ReduceSum":  # axes are an input from opset 13
        return b.node(op, [x, b.const(np.asarray(axes, np.int64))], keepdims=keepdims)
    return b.node(op, [x], axes=axes, keepdims=keepdims)


def softmax(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    axis = int(b.rng.integers(-len(shape), len(shape)))
    return b.node(str(b.pick(["Softmax", "LogSoftmax"])), [x], axis=axis)


def transpose(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    perm = [int(p) for p in b.rng.permutation(len(shape))]
    return b.node("Transpose", [x], perm=perm)


def reshape(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    if b.rng.random() < 0.25:
        return b.node("Flatten", [x], axis=int(b.rng.integers(0, len(shape) + 1)))
    size = math.prod(shape)
    factors = [d for d in range(1, size + 1) if size % d == 0]
    first = int(b.pick(factors))
    target = [first, size // first]
    if b.rng.random() < 0.5:
        target[int(b.rng.integers(0, 2))] = -1
    return b.node("Reshape", [x, b.const(np.asarray(target, np.int64))])


def concat(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    axis = int(b.rng.integers(0, len(shape)))
    others = []
    for _ in range(int(b.rng.integers(1, 3))):
        other = list(shape)
        other[axis] = int(b.rng.integers(1, 4))
        others.append(b.operand(tuple(other)))
    return b.node("Concat", [x, *others], axis=axis - len(shape) if b.rng.random() < 0.3
                  else axis)


def slice_(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    rank = len(shape)
    axes = sorted(int(a) for a in b.rng.choice(rank, int(b.rng.integers(1, rank + 1)),
                                                replace=False))
    starts, ends, steps = [], [], []
    for axis in axes:
        extent = shape[axis]
        step = int(b.pick([1, 1, 2, -1, -2]))
        start = int(b.rng.integers(-extent - 1, extent + 2))
        end = int(b.rng.integers(-extent - 1, extent + 2))
        if b.rng.random() < 0.15:
            end = int(b.pick([2**62, -(2**62)]))
        if step > 0 and start >= end or step < 0 and start <= end:
            start, end = end, start
        starts.append(start)
        ends.append(end)
        steps.append(step)
    i64 = lambda v: b.const(np.asarray(v, np.int64))  # noqa: E731
    return b.node("Slice", [x, i64(starts), i64(ends), i64(axes), i64(steps)])


def pad(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    mode = str(b.pick(["constant", "reflect", "edge"]))
    rank = len(shape)
    pads = []
    for side in range(2):
        for axis in range(rank):
            high = shape[axis] - 1 if mode == "reflect" else 3
            low = -(shape[axis] - 1) if b.rng.random() < 0.2 and side == 0 else 0
            pads.append(int(b.rng.integers(min(low, 0), max(high, 0) + 1)))
    inputs = [x, b.const(np.asarray(pads, np.int64))]
    if mode == "constant" and b.rng.random() < 0.5:
        inputs.append(b.const(np.float32(b.rng.standard_normal())))
    return b.node("Pad", inputs, mode=mode)


def clip(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    low, high = sorted(float(v) for v in b.rng.standard_normal(2))
    choice = int(b.rng.integers(0, 4))
    inputs = [x]
    if choice in (1, 3):
        inputs.append(b.const(np.float32(low)))
    elif choice == 2:
        inputs.append("")
    if choice in (2, 3):
        inputs.append(b.const(np.float32(high)))
    return b.node("Clip", inputs)


def where(b: Builder, x: str | None, shape: Shape | None) -> str:
    x, shape = _start(b, x, shape)
    condition = b.node(str(b.pick(["Greater", "Less", "Equal"])),
                       [x, b.operand(_broadcast_shape(b, shape))])
    other = b.operand(_broadcast_shape(b, shape))
    if b.rng.random() < 0.5:
        return b.node("Where", [condition, x, other])
    return b.node("Where", [condition, other, x])


OPS: dict[str, OpGen] = {
    "unary": unary, "binary": binary, "matmul": matmul, "gemm": gemm, "conv": conv,
    "pool": pool, "reduce": reduce, "softmax": softmax, "transpose": transpose,
    "reshape": reshape, "concat": concat, "slice": slice_, "pad": pad, "clip": clip,
    "where": where,
}
"""The op families the fuzzer draws from, by the names `tools/fuzz --ops` takes."""


@dataclass(frozen=True)
class FuzzCase:
    """One generated case: its seed and index, the model, its input data, a summary."""

    seed: int
    index: int
    model: onnx.ModelProto
    inputs: tuple[np.ndarray, ...]
    summary: str


def _shape_of(model: onnx.ModelProto, name: str) -> Shape | None:
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    for value in (*inferred.graph.value_info, *inferred.graph.output):
        if value.name == name:
            dims = value.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                return tuple(d.dim_value for d in dims)
    return None


def _assemble(b: Builder, output: str, shape: Shape | None = None) -> onnx.ModelProto:
    """The model so far; its output has `shape`'s rank, with symbolic dimensions: ONNX's shape
    inference and ONNX Runtime differ on some shapes (a MaxPool with ceil_mode whose last window
    starts past the input), and dlc must not be held to the former."""
    dims = None if shape is None else [f"d{i}" for i in range(len(shape))]
    return make_model(
        b.nodes, [tensor(name, data.shape) for name, data in b.inputs],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, dims)], b.initializers)


def generate(seed: int, index: int, ops: Sequence[str] | None = None) -> FuzzCase:
    """Case `index` of the run seeded `seed`: a chain of 1-4 ops drawn from `ops` (default all)."""
    b = Builder(np.random.default_rng([seed, index]))
    families = list(ops or OPS)
    length = 1 if b.rng.random() < 0.4 else int(b.rng.integers(2, 5))
    x: str | None = None
    shape: Shape | None = None
    chosen: list[str] = []
    for _ in range(length):
        family = str(b.pick(families))
        x = OPS[family](b, x, shape)
        chosen.append(family)
        shape = _shape_of(_assemble(b, x), x)
        if shape is None or not shape or math.prod(shape) == 0 or math.prod(shape) > 20000:
            break  # the chain ends at a scalar, an empty tensor or a big one
    assert x is not None
    model = _assemble(b, x, shape)
    ops_text = "->".join(n.op_type for n in model.graph.node)
    return FuzzCase(seed, index, model, tuple(d for _, d in b.inputs),
                    f"{'+'.join(chosen)}: {ops_text}")


@dataclass(frozen=True)
class FuzzResult:
    """What one case did: `passed`, `mismatch`, `crash` (dlc raised), `unsupported` (dlc's
    importer has no converter for an op) or `invalid` (ONNX Runtime rejected the model)."""

    case: FuzzCase
    status: str
    detail: str = ""


def run_case(case: FuzzCase, compile_fn: Callable[[object], object] | None = None) -> FuzzResult:
    """Runs `case` through ONNX Runtime and dlc and compares (see the module docstring)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    try:
        onnx.checker.check_model(case.model, full_check=True)
        session = onnxruntime.InferenceSession(
            case.model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        names = [i.name for i in case.model.graph.input]
        expected = session.run(None, dict(zip(names, case.inputs, strict=True)))
    except Exception as e:  # noqa: BLE001 - a model ORT rejects is the generator's fault
        return FuzzResult(case, "invalid", f"{type(e).__name__}: {str(e)[:300]}")
    if compile_fn is None:
        import dlc

        def compile_fn(module: object) -> object:
            return dlc.compile(module, cache=False, jobs=1)  # type: ignore[arg-type]

    reference = Case(f"fuzz_{case.seed}_{case.index}", "fuzz", case.model, case.inputs,
                     tuple(np.asarray(e) for e in expected), RTOL, ATOL)
    outcome: Outcome = run_compiled(reference, compile_fn)
    if outcome.passed:
        return FuzzResult(case, "passed")
    if outcome.detail.startswith("output") or " outputs, expected " in outcome.detail:
        return FuzzResult(case, "mismatch", outcome.detail)
    if outcome.detail.startswith("OnnxImportError: unsupported ONNX op"):
        return FuzzResult(case, "unsupported", outcome.detail)
    return FuzzResult(case, "crash", outcome.detail)
