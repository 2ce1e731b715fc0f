"""The schedule primitives that change how a loop runs: `parallel`, `vectorize`, `bind`.

Counterpart: TVM's `Schedule.parallel`, `Schedule.vectorize`, `Schedule.bind`; they only set
`loop.for`'s `kind` (and `thread`) after checking that the loop may run that way. Code generation
(convert-loop-to-llvm, convert-loop-to-target-gpu) does the rest.
"""

from __future__ import annotations

from dlc.dialects.loop.ops import THREAD_AXES, BlockOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.schedule.common import (
    ScheduleError,
    axis_iteration_kinds,
    check_spatial,
    constant_value,
    depends_on,
    enclosing_loops,
    is_defined_outside,
    is_pure,
    require_kind,
)
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, StringAttr, VectorType
from xdsl.ir import Operation, SSAValue


def parallel(loop: ForOp) -> None:
    """Marks `loop` parallel: its iterations run concurrently on CPU threads.

    Preconditions: the loop is serial; its axis is spatial (no block lists it as a reduction axis,
    and every store inside into a buffer from outside the loop depends on its induction
    variable, so no two iterations write the same element); no loop around it or inside it is
    already parallel (one level of CPU parallelism).
    """
    require_kind(loop, ("serial",), "parallelize")
    check_spatial(loop, "parallelize")
    for other in [*enclosing_loops(loop), *_loops_inside(loop)]:
        if other.kind.data == "parallel":
            where = "inside" if loop.is_ancestor(other) else "around"
            raise ScheduleError(
                f"cannot parallelize: expected no parallel loop {where} it, found "
                f'loop "{other.axis.data}"',
                loop,
            )
    loop.properties["kind"] = StringAttr("parallel")


def bind(loop: ForOp, thread: str) -> None:
    """Binds `loop` to a GPU axis: each iteration is one GPU block or thread.

    Preconditions: `thread` is one of blockIdx.{x,y,z}, threadIdx.{x,y,z}; the loop is serial;
    its axis is spatial (as for `parallel`); no loop around or inside it is bound to the same
    GPU axis.
    """
    if thread not in THREAD_AXES:
        raise ScheduleError(
            f"cannot bind: expected a thread axis among {', '.join(THREAD_AXES)}, "
            f"found '{thread}'",
            loop,
        )
    require_kind(loop, ("serial",), "bind")
    check_spatial(loop, "bind")
    for other in [*enclosing_loops(loop), *_loops_inside(loop)]:
        if other.kind.data == "bound" and other.thread is not None and other.thread.data == thread:
            raise ScheduleError(
                f"cannot bind: expected no other loop bound to {thread}, found "
                f'loop "{other.axis.data}"',
                loop,
            )
    loop.properties["kind"] = StringAttr("bound")
    loop.properties["thread"] = StringAttr(thread)


def vectorize(loop: ForOp, strided_loads: bool = False) -> None:
    """Marks `loop` vectorized: its iterations become the lanes of vector operations.

    What is accepted (everything else fails, naming the op that is not):
    - the loop is serial, has step 1, constant bounds or a constant bound on its trip count
      (`ForOp.trip_bound`: a split's partial tile, `0 to minui(16, ub - i)`, whose lanes past
      the trip count the code generator masks), and is innermost (no `loop.for` inside);
    - its body holds only `loop.block`s, `loop.load`/`loop.store` (scalar), and side-effect-free
      ops without regions (`arith`, `math`);
    - the induction variable is used only through `arith.addi` with loop-invariant values, and
      such *lane* indices appear only as the last index of a load or store (a contiguous vector
      access), or through an unsigned division of a lane index by a positive constant that is
      only the last index of loads (each element read for that many lanes: a nearest
      upsampling's row), or, with `strided_loads`, through an `arith.muli` of a lane index by a
      positive constant (plus loop-invariant values) that is only the last index of loads (a
      strided read: a stride-2 conv's input row, which the code generator shuffles from
      contiguous vectors); a load whose indices are all invariant is a broadcast;
    - every store into a buffer from outside the loop has its lane index last (a store that does
      not depend on the loop would be a reduction across lanes, which is not vectorized).
    """
    require_kind(loop, ("serial",), "vectorize")
    if "reduction" in axis_iteration_kinds(loop):
        raise ScheduleError(
            "cannot vectorize: expected a spatial axis, found a reduction axis (a reduction "
            "across lanes)",
            loop,
        )
    inner = _loops_inside(loop)
    if inner:
        raise ScheduleError(
            f'cannot vectorize: expected an innermost loop, found loop "{inner[0].axis.data}" '
            "inside",
            loop,
        )
    step = constant_value(loop.step)
    if loop.trip_bound() is None:
        raise ScheduleError(
            "cannot vectorize: expected constant bounds or an upper bound that is the minimum "
            "of a constant and a runtime value, found neither",
            loop,
        )
    if step != 1:
        raise ScheduleError(f"cannot vectorize: expected step 1, found {step}", loop)
    lanes = _lane_values(loop)
    repeated = _repeated_lanes(loop, lanes)
    if strided_loads:
        repeated |= _strided_lanes(loop, lanes)
    for op in loop.walk():
        if op is loop or isinstance(op, BlockOp) or op.name == "loop.yield":
            continue
        if isinstance(op, LoadOp | StoreOp):
            _check_access(loop, op, lanes, repeated)
        elif op.results and op.results[0] in repeated:
            continue
        elif not is_pure(op):
            raise ScheduleError(
                f"cannot vectorize: expected only blocks, loads, stores and side-effect-free "
                f"ops in the body, found '{op.name}'",
                loop,
            )
        elif op.name != "arith.addi" and any(operand in lanes for operand in op.operands):
            raise ScheduleError(
                f"cannot vectorize: expected the induction variable to be used only in "
                f"'arith.addi' and as the last index of loads and stores, found it used by "
                f"'{op.name}'",
                loop,
            )
    loop.properties["kind"] = StringAttr("vectorized")


def _loops_inside(loop: ForOp) -> list[ForOp]:
    return [op for op in loop.walk() if isinstance(op, ForOp) and op is not loop]


def _lane_values(loop: ForOp) -> set[SSAValue]:
    """The induction variable and the `arith.addi`s of it with loop-invariant values."""
    iv = loop.induction_var
    lanes: set[SSAValue] = {iv}
    for op in loop.walk():
        if op.name != "arith.addi" or not any(operand in lanes for operand in op.operands):
            continue
        lane_operands = [operand for operand in op.operands if operand in lanes]
        others = [operand for operand in op.operands if operand not in lanes]
        if len(lane_operands) != 1 or any(_varies(other, loop) for other in others):
            raise ScheduleError(
                "cannot vectorize: expected the induction variable to be added only to "
                "loop-invariant values, found a sum of two lane indices",
                loop,
            )
        lanes.add(op.results[0])
    return lanes


def _repeated_lanes(loop: ForOp, lanes: set[SSAValue]) -> set[SSAValue]:
    """The `arith.divui`s of a lane index by a positive constant whose only uses are the last
    index of loads."""
    repeated: set[SSAValue] = set()
    for op in loop.walk():
        if not isinstance(op, arith.DivUIOp) or op.lhs not in lanes:
            continue
        divisor = op.rhs.owner
        if not (isinstance(divisor, arith.ConstantOp) and isinstance(divisor.value, IntegerAttr)
                and divisor.value.value.data > 0):
            continue
        if all(isinstance(use.operation, LoadOp) and use.index == len(use.operation.operands) - 1
               and use.operation.indices and use.operation.indices[-1] is op.result
               for use in op.result.uses):
            repeated.add(op.result)
    return repeated


def _strided_lanes(loop: ForOp, lanes: set[SSAValue]) -> set[SSAValue]:
    """The `arith.muli`s of a lane index by a positive constant, and the `arith.addi`s of those
    with loop-invariant values, whose uses are only each other and the last index of loads
    (the vectorizer reads such lanes as contiguous vectors and shuffles them, or gathers)."""
    strided: set[SSAValue] = set()
    for op in loop.walk():
        if isinstance(op, arith.MuliOp) and len(op.operands) == 2:
            for lane, factor in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
                owner = factor.owner
                if lane in lanes and isinstance(owner, arith.ConstantOp) and isinstance(
                        owner.value, IntegerAttr) and owner.value.value.data > 0:
                    strided.add(op.result)
        elif isinstance(op, arith.AddiOp) and any(v in strided for v in op.operands) and not any(
                _varies(v, loop) and v not in strided for v in op.operands):
            strided.add(op.result)
    for value in list(strided):
        for use in value.uses:
            user = use.operation
            is_last_index = isinstance(user, LoadOp) and user.indices and \
                user.indices[-1] is value and use.index == len(user.operands) - 1
            if not is_last_index and not (user.results and user.results[0] in strided):
                return set()
    return strided


def _varies(value: SSAValue, loop: ForOp) -> bool:
    """Whether `value` may differ between iterations of `loop`."""
    if is_defined_outside(value, loop):
        return False
    return depends_on(value, {loop.induction_var}) or not isinstance(value.owner, Operation) \
        or not is_pure(value.owner)


def _check_access(loop: ForOp, op: LoadOp | StoreOp, lanes: set[SSAValue],
                  repeated: set[SSAValue]) -> None:
    kind = "load" if isinstance(op, LoadOp) else "store"
    value_type = op.result.type if isinstance(op, LoadOp) else op.value.type
    if isinstance(value_type, VectorType):
        raise ScheduleError(
            f"cannot vectorize: expected scalar loads and stores, found a vector {kind}", loop
        )
    indices = list(op.indices)
    if any(index in lanes for index in indices[:-1]):
        raise ScheduleError(
            f"cannot vectorize: expected the lane index only as the last index, found a "
            f"strided {kind} of {op.memref.type}",
            loop,
        )
    if any(_varies(index, loop) and index not in lanes | repeated for index in indices):
        raise ScheduleError(
            f"cannot vectorize: expected the indices of a {kind} to be loop-invariant or the "
            f"lane index, found another index computation in a {kind} of {op.memref.type}",
            loop,
        )
    if (
        isinstance(op, StoreOp)
        and is_defined_outside(op.memref, loop)
        and (not indices or indices[-1] not in lanes)
    ):
        raise ScheduleError(
            f"cannot vectorize: expected every store to be indexed by the lane index last, "
            f"found a store into {op.memref.type} that is not (a reduction across lanes)",
            loop,
        )
