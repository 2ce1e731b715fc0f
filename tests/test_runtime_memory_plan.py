"""`loop-plan-memory`'s plan of buffers of runtime size (`plan_runtime`): one workspace whose
layout the entry computes at each call. Checked on random entries: for random lifetimes and
sizes made of runtime dims, the layout the planned IR computes at random sizes never overlaps two
buffers live at the same call, keeps every buffer inside the workspace and every offset aligned."""

from __future__ import annotations

from dlc.dialects import make_context
from dlc.dialects.arith_numpy import ARITH_MATH_OPS
from dlc.dialects.loop import AllocOp
from dlc.rewrites.loop_plan_memory import LoopPlanMemoryPass
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i8
from xdsl.parser import Parser

SIZES = ("%n", "%h", "%w", "%h2", "%w2")
"""The runtime sizes a buffer's dims take: the arguments and values computed from them."""

_buffer = st.tuples(
    st.lists(st.sampled_from(SIZES), min_size=1, max_size=3),  # its runtime dims
    st.sampled_from([1, 3, 8]),  # its static dim
    st.integers(0, 7),  # the step it is allocated before
    st.integers(0, 4),  # how many more steps it lives
)


def _entry(buffers: list[tuple[list[str], int, int, int]]) -> str:
    """An entry function of 8 steps (calls), each buffer allocated before its first step and
    used by each step it lives through, freed after its last; the sizes %h2, %w2 are computed
    after the first step (so that the plan moves them)."""
    lines: list[str] = []
    declarations: list[str] = []
    for step in range(8):
        if step == 1:
            lines += ["  %two = arith.constant 2 : index",
                      "  %h2 = arith.floordivsi %h, %two : index",
                      "  %w2 = arith.ceildivsi %w, %two : index"]
        live = []
        for k, (dims, static, start, length) in enumerate(buffers):
            type_ = f"memref<{'x'.join(['?'] * len(dims))}x{static}xf32>"
            first = max(start, 1) if {"%h2", "%w2"} & set(dims) else start
            if step == first:
                lines.append(f"  %b{k} = loop.alloc global sizes({', '.join(dims)}) : {type_}")
            if first <= step <= min(first + length, 7):
                live.append((f"%b{k}", type_))
        types = ", ".join(t for _, t in live)
        lines.append(f"  func.call @step{step}({', '.join(v for v, _ in live)}) : "
                     f"({types}) -> ()")
        declarations.append(f"func.func private @step{step}({types})")
        for k, (dims, static, start, length) in enumerate(buffers):
            first = max(start, 1) if {"%h2", "%w2"} & set(dims) else start
            if step == min(first + length, 7):
                type_ = f"memref<{'x'.join(['?'] * len(dims))}x{static}xf32>"
                lines.append(f"  loop.dealloc %b{k} : {type_}")
    body = "\n".join(lines)
    return (
        "func.func @main(%x: memref<4xf32>, %n: index, %h: index, %w: index) attributes "
        "{dlc.num_outputs = 0 : i64} {\n" + body + "\n  func.return\n}\n"
        + "\n".join(declarations)
    )


def _layout(function: func.FuncOp, sizes: dict[str, int]
            ) -> dict[str, tuple[str, int, int, int]]:
    """Where the planned `function` puts each buffer at the runtime `sizes` (its arguments by
    name): (the workspace allocated, the buffer's byte offset in it, its bytes, the
    workspace's bytes). A workspace may be a view in another (the rows workspace)."""
    values: dict[object, int] = {arg: sizes[arg.name_hint] for arg in function.args
                                 if arg.name_hint in sizes}
    placed: dict[object, tuple[str, int, int, int]] = {}
    for op in function.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            values[op.result] = op.value.value.data
        elif op.name in ARITH_MATH_OPS:
            values[op.results[0]] = int(ARITH_MATH_OPS[op.name](
                op, [values[operand] for operand in op.operands]))
        elif isinstance(op, AllocOp) and op.sizes:
            assert op.result.name_hint.endswith("_workspace"), "every buffer is planned"
            (size,) = op.sizes
            placed[op.result] = (op.result.name_hint, 0, values[size], values[size])
        elif isinstance(op, memref.ViewOp):
            memref_type = op.result.type
            assert isinstance(memref_type, MemRefType)
            count = memref_type.get_shape()[-1] * (1 if memref_type.element_type == i8 else 4)
            for size in op.sizes:
                count *= values[size]
            root, base, _, total = placed[op.source]
            placed[op.result] = (root, base + values[op.byte_shift], count, total)
    return {value.name_hint or "": where for value, where in placed.items()}


@settings(max_examples=60, deadline=None)
@given(st.lists(_buffer, min_size=2, max_size=8),
       st.lists(st.tuples(st.integers(1, 4), st.integers(1, 300), st.integers(1, 300)),
                min_size=1, max_size=4))
def test_the_runtime_layout_never_overlaps_live_buffers(
    buffers: list[tuple[list[str], int, int, int]], calls: list[tuple[int, int, int]]
) -> None:
    text = _entry(buffers)
    module = Parser(make_context(), text).parse_module()
    live_at: dict[str, set[int]] = {}
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and
                op.sym_name.data == "main")
    for step, call in enumerate(op for op in main.body.block.ops
                                if isinstance(op, func.CallOp)):
        for operand in call.arguments:
            live_at.setdefault(operand.name_hint or "", set()).add(step)
    LoopPlanMemoryPass().apply(make_context(), module)
    assert isinstance(module, ModuleOp)
    main.verify()
    for n, h, w in calls:
        placed = _layout(main, {"n": n, "h": h, "w": w})
        assert set(live_at) <= set(placed)
        for name in live_at:
            _, offset, nbytes, total = placed[name]
            assert offset % 64 == 0 and 0 <= offset and offset + nbytes <= total, name
        names = sorted(live_at)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                (ra, oa, sa, _), (rb, ob, sb, _) = placed[a], placed[b]
                if live_at[a] & live_at[b] and ra == rb:
                    assert oa + sa <= ob or ob + sb <= oa, (a, b, n, h, w)

def test_buffers_never_live_together_share_a_slot_sized_by_the_call() -> None:
    """A chain of three buffers, the first and last of sizes that compare differently at
    different sizes (n x h and n x w): they share bytes, and the slot fits the larger of the
    two at each call."""
    module = Parser(make_context(), _entry([(["%n", "%h"], 8, 0, 1), (["%n", "%h"], 1, 1, 1),
                                             (["%n", "%w"], 8, 3, 1)])).parse_module()
    main = next(iter(module.ops))
    assert isinstance(main, func.FuncOp)
    LoopPlanMemoryPass().apply(make_context(), module)
    for h, w in ((10, 3), (3, 10)):
        placed = _layout(main, {"n": 2, "h": h, "w": w})
        assert placed["b0"][1] == placed["b2"][1] != placed["b1"][1]
        assert placed["b1"][1] == 2 * 8 * 4 * max(h, w)  # after the larger of b0 and b2
        assert placed["b0"][3] == 2 * 8 * 4 * max(h, w) + 64 * -(-2 * h * 4 // 64)
