"""Property tests of the schedule primitives: random legal schedules never change results.

Random sequences of split/reorder/tile/fuse/unroll/parallel/vectorize (and the buffer
primitives) with random factors are applied to random shapes of matmul, an elementwise chain and
a conv-like 2-D reduction; the unscheduled program run by dialects/loop/interpreter.py is the
oracle; the scheduled one must match it under that interpreter and under this file's evaluator
(`_evaluate`), which also runs parallel and bound loops iteration by iteration on private copies
of memory (two iterations writing one element is a race) and vectorized loops in lockstep.
Allocations start as NaN, so a schedule that reads an element before it is written shows in the
outputs. A primitive that refuses (ScheduleError) must leave the IR exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dlc.dialects import get_all_dialects, make_context
from dlc.dialects.arith_numpy import ARITH_MATH_OPS
from dlc.dialects.loop.interpreter import LoopInterpreter
from dlc.dialects.loop.ops import (
    THREAD_AXES,
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    StoreOp,
    YieldOp,
)
from dlc.rewrites.loop_interpret_transforms import LoopInterpretTransformsPass
from dlc.rewrites.schedule import (
    ScheduleError,
    bind,
    cache_read,
    cache_write,
    compute_at,
    compute_inline,
    decompose_reduction,
    fuse,
    get_loops,
    match_blocks,
    pack,
    parallel,
    reorder,
    reverse_compute_at,
    split,
    tile,
    unroll,
    vectorize,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, ModuleOp, VectorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

REPO = Path(__file__).resolve().parent.parent
TRANSFORM_TESTS = REPO / "tests" / "filecheck" / "transform"


CTX = make_context()


def parse(text: str) -> ModuleOp:
    return Parser(CTX, text).parse_module()


# ----------------------------------------------------------------------------------------------
# A small evaluator of loop-level IR
# ----------------------------------------------------------------------------------------------

_INT_BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: lambda a, b: a // b,
    arith.RemUIOp: lambda a, b: a % b,
    arith.MinUIOp: min,
    arith.MaxUIOp: max,
}
_FLOAT_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.MaximumfOp: np.maximum,
}


def _run_block(block: Block, env: dict[SSAValue, Any]) -> None:
    for op in block.ops:
        _run_op(op, env)


def _run_loop(op: ForOp, env: dict[SSAValue, Any]) -> None:
    """Serial loops in order. Parallel and bound loops run each iteration on its own copy of
    memory, then merge what each wrote, failing if two wrote the same element (a race; reading
    what another iteration writes shows as a wrong result). Vectorized loops run in lockstep
    (each op for every lane before the next op), as vector code does."""
    body = op.body.block
    ivs = list(range(env[op.lb], env[op.ub], env[op.step]))
    kind = op.kind.data
    if kind in ("parallel", "bound"):
        _run_concurrently(op, ivs, env)
        return
    if kind != "vectorized":
        for iv in ivs:
            env[op.induction_var] = iv
            _run_block(body, env)
        return
    lanes = [{**env, op.induction_var: iv} for iv in ivs]
    for nested in _flatten(body):
        for lane in lanes:
            _run_op(nested, lane)


def _run_concurrently(op: ForOp, ivs: list[int], env: dict[SSAValue, Any]) -> None:
    arrays = {id(v): v for v in env.values() if isinstance(v, np.ndarray)}
    writes: dict[tuple[int, tuple[int, ...]], Any] = {}
    for iv in ivs:
        copies = {key: array.copy() for key, array in arrays.items()}
        private = {
            value: copies[id(v)] if isinstance(v, np.ndarray) else v for value, v in env.items()
        }
        private[op.induction_var] = iv
        _run_block(op.body.block, private)
        for key, array in arrays.items():
            after = copies[key]
            changed = ~((after == array) | (np.isnan(after) & np.isnan(array)))
            for index in map(tuple, np.argwhere(changed)):
                assert (key, index) not in writes, (
                    f'iterations of {op.kind.data} loop "{op.axis.data}" write the same element'
                )
                writes[(key, index)] = after[index]
    for (key, index), value in writes.items():
        arrays[key][index] = value


def _flatten(block: Block) -> list[Operation]:
    ops: list[Operation] = []
    for op in block.ops:
        ops.extend(_flatten(op.body.block) if isinstance(op, BlockOp) else [op])
    return ops


def _run_op(op: Operation, env: dict[SSAValue, Any]) -> None:
    if isinstance(op, ForOp):
        _run_loop(op, env)
    elif isinstance(op, BlockOp):
        _run_block(op.body.block, env)
    elif isinstance(op, LoadOp):
        buffer = env[op.memref]
        index = tuple(env[i] for i in op.indices)
        if isinstance(op.result.type, VectorType):
            width = op.result.type.get_shape()[0]
            env[op.result] = buffer[index[:-1] + (slice(index[-1], index[-1] + width),)]
        else:
            env[op.result] = buffer[index]
    elif isinstance(op, StoreOp):
        index = tuple(env[i] for i in op.indices)
        assert all(0 <= i < n for i, n in zip(index, env[op.memref].shape, strict=True))
        env[op.memref][index] = env[op.value]
    elif isinstance(op, arith.ConstantOp):
        value = op.value
        assert isinstance(value, IntegerAttr | FloatAttr)
        is_int = isinstance(value, IntegerAttr)
        env[op.result] = value.value.data if is_int else np.float32(value.value.data)
    elif type(op) in _INT_BINARY:
        env[op.results[0]] = _INT_BINARY[type(op)](env[op.operands[0]], env[op.operands[1]])
    elif type(op) in _FLOAT_BINARY:
        lhs, rhs = env[op.operands[0]], env[op.operands[1]]
        env[op.results[0]] = np.float32(_FLOAT_BINARY[type(op)](lhs, rhs))
    elif isinstance(op, AllocOp):
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        env[op.result] = np.full(memref_type.get_shape(), np.nan, dtype=np.float32)
    elif isinstance(op, YieldOp | ReturnOp | DeallocOp):
        return
    elif op.name in ARITH_MATH_OPS:  # the guards of partial tiles: cmpi, minui, select
        env[op.results[0]] = ARITH_MATH_OPS[op.name](op, [env[v] for v in op.operands])
    else:
        raise NotImplementedError(op.name)


def _evaluate(module: ModuleOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Runs the module's one function on copies of `inputs` (by argument name)."""
    (func,) = [op for op in module.ops if isinstance(op, FuncOp)]
    arrays = {name: array.copy() for name, array in inputs.items()}
    env: dict[SSAValue, Any] = {}
    for arg in func.body.block.args:
        assert arg.name_hint is not None
        env[arg] = arrays[arg.name_hint]
    _run_block(func.body.block, env)
    return arrays


# ----------------------------------------------------------------------------------------------
# Payloads
# ----------------------------------------------------------------------------------------------


def matmul(m: int, n: int, k: int) -> str:
    """C = A @ B: spatial i, j; init block, then the reduction over k."""
    a, b, c = f"memref<{m}x{k}xf32>", f"memref<{k}x{n}xf32>", f"memref<{m}x{n}xf32>"
    return f"""
func.func @matmul(%A: {a}, %B: {b}, %C: {c}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm = arith.constant {m} : index
  %cn = arith.constant {n} : index
  %ck = arith.constant {k} : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %cm step %c1 axis "i" {{
    loop.for %j = %c0 to %cn step %c1 axis "j" {{
      loop.block "matmul.init" reads() writes(%C : {c}) spatial ["i", "j"] {{
        loop.store %zero, %C[%i, %j] : f32 -> {c}
      }}
      loop.for %k = %c0 to %ck step %c1 axis "k" {{
        loop.block "matmul" reads(%A, %B : {a}, {b}) writes(%C : {c})
            spatial ["i", "j"] reduction ["k"] {{
          %a = loop.load %A[%i, %k] : {a} -> f32
          %b = loop.load %B[%k, %j] : {b} -> f32
          %c = loop.load %C[%i, %j] : {c} -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> {c}
        }}
      }}
    }}
  }}
  func.return
}}
"""


def elementwise(m: int, n: int) -> str:
    """Y = relu(X * X + Z) through an intermediate T = X * X (a producer and a consumer)."""
    t = f"memref<{m}x{n}xf32>"
    return f"""
func.func @elementwise(%X: {t}, %Z: {t}, %Y: {t}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm = arith.constant {m} : index
  %cn = arith.constant {n} : index
  %zero = arith.constant 0.0 : f32
  %T = loop.alloc global : {t}
  loop.for %i = %c0 to %cm step %c1 axis "i" {{
    loop.for %j = %c0 to %cn step %c1 axis "j" {{
      loop.block "square" reads(%X : {t}) writes(%T : {t}) spatial ["i", "j"] {{
        %x = loop.load %X[%i, %j] : {t} -> f32
        %sq = arith.mulf %x, %x : f32
        loop.store %sq, %T[%i, %j] : f32 -> {t}
      }}
    }}
  }}
  loop.for %i2 = %c0 to %cm step %c1 axis "i" {{
    loop.for %j2 = %c0 to %cn step %c1 axis "j" {{
      loop.block "add_relu" reads(%T, %Z : {t}, {t}) writes(%Y : {t}) spatial ["i", "j"] {{
        %v = loop.load %T[%i2, %j2] : {t} -> f32
        %z = loop.load %Z[%i2, %j2] : {t} -> f32
        %s = arith.addf %v, %z : f32
        %r = arith.maximumf %s, %zero : f32
        loop.store %r, %Y[%i2, %j2] : f32 -> {t}
      }}
    }}
  }}
  func.return
}}
"""


def conv2d(h: int, w: int, r: int, s: int) -> str:
    """O[i, j] = sum_{p, q} X[i + p, j + q] * W[p, q]: spatial i, j; reduction p, q."""
    x = f"memref<{h + r - 1}x{w + s - 1}xf32>"
    wt, o = f"memref<{r}x{s}xf32>", f"memref<{h}x{w}xf32>"
    return f"""
func.func @conv(%X: {x}, %W: {wt}, %O: {o}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ch = arith.constant {h} : index
  %cw = arith.constant {w} : index
  %cr = arith.constant {r} : index
  %cs = arith.constant {s} : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %ch step %c1 axis "i" {{
    loop.for %j = %c0 to %cw step %c1 axis "j" {{
      loop.block "conv.init" reads() writes(%O : {o}) spatial ["i", "j"] {{
        loop.store %zero, %O[%i, %j] : f32 -> {o}
      }}
      loop.for %p = %c0 to %cr step %c1 axis "p" {{
        loop.for %q = %c0 to %cs step %c1 axis "q" {{
          loop.block "conv" reads(%X, %W : {x}, {wt}) writes(%O : {o})
              spatial ["i", "j"] reduction ["p", "q"] {{
            %ip = arith.addi %i, %p : index
            %jq = arith.addi %j, %q : index
            %xv = loop.load %X[%ip, %jq] : {x} -> f32
            %wv = loop.load %W[%p, %q] : {wt} -> f32
            %o = loop.load %O[%i, %j] : {o} -> f32
            %m = arith.mulf %xv, %wv : f32
            %a = arith.addf %o, %m : f32
            loop.store %a, %O[%i, %j] : f32 -> {o}
          }}
        }}
      }}
    }}
  }}
  func.return
}}
"""


def _inputs(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    (func,) = [op for op in module.ops if isinstance(op, FuncOp)]
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for arg in func.body.block.args:
        memref_type = arg.type
        assert isinstance(memref_type, MemRefType) and arg.name_hint is not None
        arrays[arg.name_hint] = rng.standard_normal(memref_type.get_shape()).astype(np.float32)
    return arrays


def test_evaluator_matches_numpy() -> None:
    """The evaluator itself: the unscheduled payloads compute what NumPy computes."""
    module = parse(matmul(3, 5, 4))
    inputs = _inputs(module, 0)
    out = _evaluate(module, inputs)
    np.testing.assert_allclose(out["C"], inputs["A"] @ inputs["B"], rtol=1e-5)
    module = parse(elementwise(2, 3))
    inputs = _inputs(module, 1)
    out = _evaluate(module, inputs)
    expected = np.maximum(inputs["X"] * inputs["X"] + inputs["Z"], 0)
    np.testing.assert_allclose(out["Y"], expected, rtol=1e-6)
    module = parse(conv2d(3, 4, 2, 3))
    inputs = _inputs(module, 2)
    out = _evaluate(module, inputs)
    x, w = inputs["X"], inputs["W"]
    expected = np.array([[np.sum(x[i:i + 2, j:j + 3] * w) for j in range(4)] for i in range(3)])
    np.testing.assert_allclose(out["O"], expected, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# Random schedules
# ----------------------------------------------------------------------------------------------

Step = tuple[str, int, int, int, int]
"""(primitive, block choice, loop choice, another choice, factor): read against the current IR."""


def _blocks(module: ModuleOp) -> list[BlockOp]:
    return [op for op in module.walk() if isinstance(op, BlockOp)]


def _apply_step(module: ModuleOp, step: Step) -> bool:
    """Applies one random primitive; returns whether it applied (False: refused, untouched)."""
    name, block_choice, loop_choice, other_choice, factor = step
    blocks = _blocks(module)
    block = blocks[block_choice % len(blocks)]
    loops = get_loops(block)
    loop = loops[loop_choice % len(loops)] if loops else None
    other = loops[other_choice % len(loops)] if loops else None
    others = [b for b in blocks if b is not block]
    other_block = others[other_choice % len(others)] if others else None
    foreign = get_loops(other_block) if other_block is not None else []
    foreign_loop = foreign[loop_choice % len(foreign)] if foreign else None
    actions: dict[str, Callable[[], object]] = {
        "split": lambda: split(_need(loop), [factor]),
        "split2": lambda: split(_need(loop), [factor, 1 + other_choice % 3]),
        "reorder": lambda: reorder([_need(other), _need(loop)]),
        "tile": lambda: tile(_need(loop), _need(other), [factor, 1 + other_choice % 4]),
        "fuse": lambda: fuse(_need(loop), _need(_next(loops, loop_choice))),
        "unroll": lambda: unroll(_need(loop), None if factor > 4 else factor),
        "parallel": lambda: parallel(_need(loop)),
        "vectorize": lambda: vectorize(_need(loop)),
        "bind": lambda: bind(_need(loop), THREAD_AXES[factor % len(THREAD_AXES)]),
        "decompose_reduction": lambda: decompose_reduction(block, _need(loop)),
        "compute_inline": lambda: compute_inline(block),
        "compute_at": lambda: compute_at(block, _need(foreign_loop)),
        "reverse_compute_at": lambda: reverse_compute_at(block, _need(foreign_loop)),
        "cache_read": lambda: cache_read(block, other_choice % max(1, len(block.reads)), "local"),
        "cache_write": lambda: cache_write(block, "local"),
        "pack": lambda: pack(block, other_choice % max(1, len(block.reads)),
                             _pack_tiles(block, other_choice % max(1, len(block.reads)), factor)),
    }
    before = str(module)
    try:
        actions[name]()
    except ScheduleError:
        assert str(module) == before, f"{name} refused but changed the payload"
        return False
    module.verify()
    _check_dominance(module)
    return True


def _check_dominance(module: ModuleOp) -> None:
    """Every operand is defined before its use, in the same block or an enclosing one."""

    def visit(block: Block, available: set[SSAValue]) -> None:
        available = available | set(block.args)
        for op in block.ops:
            for operand in op.operands:
                assert operand in available, f"{op.name} uses a value not defined before it"
            for region in op.regions:
                for nested in region.blocks:
                    visit(nested, available)
            available |= set(op.results)

    visit(module.body.block, set())


class _Refused(ScheduleError):
    pass


def _next(loops: list[ForOp], choice: int) -> ForOp | None:
    """The loop after the chosen one, if any."""
    position = choice % len(loops) + 1 if loops else 0
    return loops[position] if 0 < position < len(loops) else None


def _need(op: ForOp | None) -> ForOp:
    if op is None:
        raise _Refused("no such loop")
    return op


def _pack_tiles(block: BlockOp, index: int, factor: int) -> list[int]:
    if not block.reads:
        raise _Refused("nothing to pack")
    memref_type = block.reads[index].type
    assert isinstance(memref_type, MemRefType)
    shape = memref_type.get_shape()
    return [0] * (len(shape) - 1) + [factor if shape[-1] % factor == 0 else 0]


LOOP_STEPS = ["split", "split2", "reorder", "tile", "fuse", "unroll", "parallel", "vectorize",
              "bind", "decompose_reduction"]
BUFFER_STEPS = ["compute_inline", "compute_at", "reverse_compute_at", "cache_read", "cache_write",
                "pack"]


def _steps(names: list[str]) -> st.SearchStrategy[list[Step]]:
    step = st.tuples(
        st.sampled_from(names), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99),
        st.integers(1, 6),
    )
    return st.lists(step, min_size=1, max_size=8)


def _run_with_loop_interpreter(
    module: ModuleOp, inputs: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Runs the module's one function with dialects/loop/interpreter.py (strict: bounds, use
    after free), on copies of `inputs` by argument name."""
    (function,) = [op for op in module.ops if isinstance(op, FuncOp)]
    arrays = {name: array.copy() for name, array in inputs.items()}
    names = [arg.name_hint for arg in function.body.block.args]
    LoopInterpreter(module).call(function.sym_name.data, [arrays[str(n)] for n in names])
    return arrays


def _check_schedule(source: str, steps: list[Step], seed: int) -> None:
    """The oracle is the loop interpreter on the unscheduled program; the scheduled one must
    match it both under the loop interpreter (every loop serial) and under `_evaluate` (parallel
    loops iteration-private, vectorized loops in lockstep)."""
    reference = parse(source)
    inputs = _inputs(reference, seed)
    expected = _run_with_loop_interpreter(reference, inputs)
    module = parse(source)
    for step in steps:
        _apply_step(module, step)
    for got in (_run_with_loop_interpreter(module, inputs), _evaluate(module, inputs)):
        for name, array in expected.items():
            np.testing.assert_allclose(got[name], array, rtol=1e-4, atol=1e-5, err_msg=name)


_SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
_SMALL = st.integers(1, 6)


@_SETTINGS
@given(m=_SMALL, n=_SMALL, k=_SMALL, steps=_steps(LOOP_STEPS + BUFFER_STEPS),
       seed=st.integers(0, 9))
def test_random_schedules_of_matmul_keep_results(
    m: int, n: int, k: int, steps: list[Step], seed: int
) -> None:
    _check_schedule(matmul(m, n, k), steps, seed)


@_SETTINGS
@given(m=_SMALL, n=_SMALL, steps=_steps(LOOP_STEPS + BUFFER_STEPS), seed=st.integers(0, 9))
def test_random_schedules_of_elementwise_keep_results(
    m: int, n: int, steps: list[Step], seed: int
) -> None:
    _check_schedule(elementwise(m, n), steps, seed)


@_SETTINGS
@given(h=st.integers(1, 4), w=st.integers(1, 4), r=st.integers(1, 3), s=st.integers(1, 3),
       steps=_steps(LOOP_STEPS + BUFFER_STEPS), seed=st.integers(0, 9))
def test_random_schedules_of_conv_keep_results(
    h: int, w: int, r: int, s: int, steps: list[Step], seed: int
) -> None:
    _check_schedule(conv2d(h, w, r, s), steps, seed)


_PAYLOADS = st.one_of(
    st.builds(matmul, _SMALL, _SMALL, _SMALL),
    st.builds(elementwise, _SMALL, _SMALL),
    st.builds(conv2d, st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3)),
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=_PAYLOADS, steps=_steps(LOOP_STEPS + BUFFER_STEPS), seed=st.integers(0, 9))
def test_many_random_schedules_keep_results(source: str, steps: list[Step], seed: int) -> None:
    _check_schedule(source, steps, seed)


# ----------------------------------------------------------------------------------------------
# The transform ops and the interpreter pass
# ----------------------------------------------------------------------------------------------


def _example_lines(doc: str) -> list[str]:
    """The transform ops of a docstring's `Example:` (continuation lines joined)."""
    lines = doc.split("Example:", 1)[1].splitlines()
    ops: list[str] = []
    for line in lines:
        if line.startswith("        ") and not line.startswith("         "):
            text = line.strip()
            if text.startswith(("%", "transform.")):
                ops.append(text)
                continue
        if line.startswith("            ") and ops and line.strip()[:1] in (":", "-"):
            ops[-1] += " " + line.strip()
            continue
        if ops and not line.startswith("        "):
            break
    return ops


def test_every_transform_op_has_its_filecheck_file_and_a_tested_example() -> None:
    from dlc.dialects.transform_loop import ParamConstantOp, TransformLoop

    ops_test = (REPO / "tests" / "filecheck" / "dialects" / "transform_loop" / "ops.mlir")
    roundtrip = " ".join(ops_test.read_text().split())
    for op in [*TransformLoop.operations, ParamConstantOp]:
        assert op.__name__.endswith("Op") and op.__doc__, op.__name__
        examples = _example_lines(op.__doc__)
        assert examples, f"{op.__name__} has no transform op in its Example"
        for example in examples:
            assert " ".join(example.split()) in roundtrip, f"{op.__name__}: {example}"
    mnemonics = {op.name.removeprefix("transform.loop.") for op in TransformLoop.operations}
    files = {path.stem for path in TRANSFORM_TESTS.glob("*.mlir")}
    assert files == mnemonics, (sorted(mnemonics - files), sorted(files - mnemonics))


def test_transform_dialect_keeps_upstream_ops() -> None:
    from xdsl.dialects.transform import Transform

    dialect = get_all_dialects()["transform"]()
    names = {op.name for op in dialect.operations}
    assert {op.name for op in Transform.operations} <= names
    assert "transform.loop.split" in names and "transform.loop.compute_at" in names


MATMUL_SCHEDULE = """
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %tile = transform.param.constant TILE : i64 -> !transform.param<i64>
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %init = transform.loop.decompose_reduction %b, %i
      : (!transform.any_op, !transform.any_op) -> !transform.any_op
  %j0, %j1 = transform.loop.split %j [%tile]
      : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
  transform.loop.reorder %j0, %k, %j1 : !transform.any_op, !transform.any_op, !transform.any_op
  transform.loop.vectorize %j1 : !transform.any_op
  transform.loop.parallel %i : !transform.any_op
  %k0, %k1 = transform.loop.split %k [2]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.unroll %k1 : !transform.any_op
  transform.yield
}
"""


@pytest.mark.parametrize("tile", [4, 8])
def test_interpreter_pass_runs_a_gemm_schedule(tile: int) -> None:
    """A GEMM schedule through the pass, with a tile size as a parameter: the loop IR computes
    the same product, the loops are where the schedule put them, the script is gone."""
    source = matmul(6, 16, 6)
    reference = parse(source)
    module = parse(source + MATMUL_SCHEDULE.replace("TILE", str(tile)))
    LoopInterpretTransformsPass().apply(CTX, module)
    module.verify()
    assert not any(op.name.startswith("transform.") for op in module.walk())
    block = match_blocks(module, "matmul")[0]
    loops = [(loop.axis.data, loop.kind.data) for loop in get_loops(block)]
    assert loops == [("i", "parallel"), ("j.0", "serial"), ("k.0", "serial"),
                     ("j.1", "vectorized")]
    assert len(match_blocks(module, "matmul")) == 2  # k.1 unrolled by 2
    inputs = _inputs(reference, tile)
    np.testing.assert_allclose(
        _evaluate(module, inputs)["C"], _evaluate(reference, inputs)["C"], rtol=1e-5
    )


APPLY_RULES_SCHEDULE = """
transform.named_sequence @__transform_main(%root: !transform.any_op) {{
  %rows = transform.param.constant {rows} : i64 -> !transform.param<i64>
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.apply_rules %i [{threads}, %rows, {accumulators}, {pack_rows}, {l2_kib}]
      : !transform.any_op, !transform.param<i64>
  transform.yield
}}
"""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 9), n=st.integers(4, 34), k=st.integers(1, 4),
       threads=st.integers(1, 2), rows=st.integers(1, 8), accumulators=st.integers(2, 28),
       pack_rows=st.integers(0, 1), l2_kib=st.sampled_from([0, 1, 64]), seed=st.integers(0, 9))
def test_apply_rules_with_random_knobs_keeps_results(
    m: int, n: int, k: int, threads: int, rows: int, accumulators: int, pack_rows: int,
    l2_kib: int, seed: int,
) -> None:
    """`transform.loop.apply_rules` with random knobs on random GEMM shapes: the scheduled
    program computes what the unscheduled one does (loop interpreter and lockstep evaluator)."""
    source = matmul(m, n, k)
    reference = parse(source)
    inputs = _inputs(reference, seed)
    expected = _run_with_loop_interpreter(reference, inputs)
    script = APPLY_RULES_SCHEDULE.format(rows=rows, threads=threads, accumulators=accumulators,
                                         pack_rows=pack_rows, l2_kib=l2_kib)
    module = parse(source + script)
    LoopInterpretTransformsPass().apply(CTX, module)
    module.verify()
    assert any(op.name == "loop.alloc" for op in module.walk()), "the register tile"
    for got in (_run_with_loop_interpreter(module, inputs), _evaluate(module, inputs)):
        np.testing.assert_allclose(got["C"], expected["C"], rtol=1e-4, atol=1e-5)


def test_failing_transform_leaves_payload_untouched_through_the_pass() -> None:
    source = matmul(4, 4, 4)
    script = """
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %i0, %j0, %i1, %j1 = transform.loop.tile %i, %k [2, 2]
      : (!transform.any_op, !transform.any_op)
      -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}
"""
    module = parse(source + script)
    before = str(module)
    with pytest.raises(DiagnosticException, match="'transform.loop.tile' op failed on loop"):
        LoopInterpretTransformsPass().apply(CTX, module)
    assert str(module) == before


def test_library_and_errors(tmp_path: Path) -> None:
    library = tmp_path / "schedule.mlir"
    library.write_text(MATMUL_SCHEDULE.replace("TILE", "4").replace("__transform_main", "gemm"))
    module = parse(matmul(2, 8, 2))
    LoopInterpretTransformsPass(entry_point="gemm", library=str(library)).apply(CTX, module)
    assert any(
        isinstance(op, ForOp) and op.kind.data == "vectorized" for op in module.walk()
    )
    with pytest.raises(DiagnosticException, match="cannot read library"):
        LoopInterpretTransformsPass(library=str(tmp_path / "missing.mlir")).apply(CTX, module)
    library.write_text("transform.named_sequence @broken(")
    with pytest.raises(DiagnosticException, match="cannot parse library"):
        LoopInterpretTransformsPass(library=str(library)).apply(CTX, module)


# ----------------------------------------------------------------------------------------------
# Regressions: parallel after fuse and after multi-level splits
# ----------------------------------------------------------------------------------------------


def _parallel_after(source: str, schedule: Callable[[BlockOp], ForOp], seed: int) -> ModuleOp:
    """Schedules the payload's "matmul" block with `schedule` (which returns the loop to make
    parallel), makes it parallel, and checks the result against the loop interpreter on the
    unscheduled payload, both serially and under the race-checking evaluator."""
    reference = parse(source)
    inputs = _inputs(reference, seed)
    expected = _run_with_loop_interpreter(reference, inputs)
    module = parse(source)
    loop = schedule(match_blocks(module, "matmul")[0])
    parallel(loop)
    module.verify()
    assert loop.kind.data == "parallel"
    for got in (_run_with_loop_interpreter(module, inputs), _evaluate(module, inputs)):
        np.testing.assert_allclose(got["C"], expected["C"], rtol=1e-4, atol=1e-5)
    return module


def _fuse_spatial(block: BlockOp) -> ForOp:
    i, j, _ = get_loops(block)
    return fuse(i, j)


def _split_fuse_spatial(block: BlockOp) -> ForOp:
    decompose_reduction(block, get_loops(block)[0])
    i, j, k = get_loops(block)
    i0, i1 = split(i, [2])
    j0, j1 = split(j, [4])
    reorder([i0, j0, i1, j1, k])
    return fuse(i0, j0)


def _split3(block: BlockOp) -> ForOp:
    i, _, _ = get_loops(block)
    return split(i, [4, 2])[0]


def _split3_reordered(block: BlockOp) -> ForOp:
    decompose_reduction(block, get_loops(block)[0])
    i, j, k = get_loops(block)
    i0, i1, i2 = split(i, [4, 2])
    j0, j1 = split(j, [4])
    reorder([i0, j0, i1, k, i2, j1])
    return i0


def _split3_uneven(block: BlockOp) -> ForOp:
    i, _, _ = get_loops(block)
    return split(i, [3, 2])[0]


@pytest.mark.parametrize(
    "schedule", [_fuse_spatial, _split_fuse_spatial, _split3, _split3_reordered, _split3_uneven]
)
def test_parallel_after_fuse_and_multi_level_split(schedule: Callable[[BlockOp], ForOp]) -> None:
    """`fuse %i, %j` (split first or not) and a 3-level split of i (also reordered, and with
    factors that do not divide the extent: tail loops bounded by minui) can be made parallel;
    results match and no two iterations write one element."""
    _parallel_after(matmul(16, 8, 4), schedule, 3)


def test_parallel_refuses_overlap_after_multi_level_split() -> None:
    """A store at i + 1 after a 3-level split of i reaches the next outer iteration's tile."""
    module = parse("""
func.func @shift(%X: memref<17xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.block "shift" reads() writes(%X : memref<17xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<17xf32> -> f32
      %n = arith.addi %i, %c1 : index
      loop.store %x, %X[%n] : f32 -> memref<17xf32>
    }
  }
  func.return
}
""")
    (i,) = get_loops(match_blocks(module, "shift")[0])
    outer = split(i, [4, 2])[0]
    before = str(module)
    with pytest.raises(ScheduleError, match="may overlap"):
        parallel(outer)
    assert str(module) == before
