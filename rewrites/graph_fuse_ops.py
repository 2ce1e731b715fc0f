"""graph-fuse-ops: partition each function's graph ops into fused groups (TVM's FuseOps).

The rules are TVM's, read from each op's fusion kind (so new ops are picked up by declaring one):
an OUT_FUSABLE op (conv2d, matmul, pools) takes the elementwise/broadcast chain after it; an
elementwise/broadcast op joins an injective or reduction consumer (a reduction's prologue) or the
epilogue of an out-fusable op, and the epilogue first when both are open (TVM fuses an
out-fusable op with its elementwise successors before it groups injective ops); injective ops
join injective consumers; reductions and OPAQUE ops take nothing after them. An op joins the
group of its consumers only when all of its users are in that one group, so no value is computed
twice and every group is convex.

One rule goes past TVM's: groups that all work row by row merge (`merge_row_groups`). A row
reduction (over the trailing axes, keeping them as 1s) whose result is broadcast back over the
rows it reduced, together with the reduction's own input, is the shape of a layer norm, an RMS
norm or a decomposed softmax (mean, x - mean, the mean of its squares, the scaled result: four
groups by the rules above, four kernels each streaming the tensor). When every op of a
producer group and of the one consumer group of all its results is elementwise, broadcast or
such a reduction over one same row split, the two become one group: its nests share their
outer loops over the rows, so loop-fuse-nests runs every stage on a row in one parallel loop
while the row is in cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.graph.attrs import FusionKind, fusion_kind
from dlc.dialects.graph.ops import ConstantOp, FusedOp, ReduceOp, YieldOp
from dlc.dialects.graph.ops_control import IfOp, LoopOp
from dlc.dialects.graph.utils import num_elements, op_users, shape_of
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

DEFAULT_MAX_DEPTH = 256
"""Most ops in one group (TVM's `relay.FuseOps.max_depth`)."""

DEFAULT_INLINE_CONSTANT_LIMIT = 1 << 24
"""Largest constant (in elements) moved into a group that is its only user."""


@dataclass(eq=False)
class FusedGroup:
    """Ops planned to become one `graph.fused`: `ops[0]` is the group's output op (its sink)."""

    ops: list[Operation] = field(default_factory=list)
    kind: FusionKind = FusionKind.ELEMENTWISE

    def add(self, op: Operation) -> None:
        self.ops.append(op)
        self.kind = max(self.kind, fusion_kind(op))


def is_fusable(op: Operation) -> bool:
    """Whether `op` takes part in fusion: a graph op other than constants and fused groups."""
    return (
        op.dialect_name() == "graph"
        and not isinstance(op, ConstantOp | FusedOp | YieldOp)
        and not op.regions
        and bool(op.results)
    )


def _feeds_only(op: Operation, sink: Operation, known: dict[int, bool]) -> bool:
    """Whether every use of `op`'s results reaches `sink` through elementwise/broadcast ops
    only (`op` is `sink`, or each of its users is such an op feeding only `sink`); `known`
    memoizes the answer per op, so a chain of diamonds is walked once, not once per path."""
    if op is sink:
        return True
    if (answer := known.get(id(op))) is not None:
        return answer
    users = op_users(op)
    answer = bool(users) and all(
        user is sink
        or (fusion_kind(user) <= FusionKind.BROADCAST and _feeds_only(user, sink, known))
        for user in users
    )
    known[id(op)] = answer
    return answer


def ends_an_epilogue(op: Operation) -> bool:
    """Whether elementwise/broadcast `op` ends a chain that an out-fusable producer could take
    as its epilogue: walking back through elementwise/broadcast operands that feed only `op`,
    an out-fusable op all of whose uses reach `op` so (conv2d -> sigmoid -> mul: the SiLU)."""
    stack = [operand.owner for operand in op.operands]
    seen: set[int] = set()
    known: dict[int, bool] = {}
    while stack:
        producer = stack.pop()
        if id(producer) in seen or not isinstance(producer, Operation):
            continue
        seen.add(id(producer))
        if not is_fusable(producer) or not _feeds_only(producer, op, known):
            continue
        kind = fusion_kind(producer)
        if kind == FusionKind.OUT_FUSABLE:
            return True
        if kind <= FusionKind.BROADCAST:
            stack.extend(operand.owner for operand in producer.operands)
    return False


def _may_join(op: Operation, group: FusedGroup, users: list[Operation]) -> bool:
    """Whether producer `op`, all of whose `users` are in `group`, may join it (TVM's rules)."""
    kind = fusion_kind(op)
    user_kinds = [fusion_kind(user) for user in users]
    if kind <= FusionKind.BROADCAST:
        # Into an injective or reduction consumer, or an out-fusable op's epilogue: never as
        # the input of the out-fusable op itself (it reads each input element many times).
        # Not into an injective group when an out-fusable producer could take it as its
        # epilogue instead (TVM's order: conv2d + SiLU, then the transpose alone): in the
        # injective group it turns a data movement the schedules vectorize (a transposed
        # copy) into a nest of scalar loads, and the out-fusable op's output makes the same
        # round trip through memory either way.
        if FusionKind.INJECTIVE in user_kinds and ends_an_epilogue(op):
            return False
        return all(k <= FusionKind.INJECTIVE or k == FusionKind.REDUCTION for k in user_kinds)
    if kind == FusionKind.INJECTIVE:
        return group.kind <= FusionKind.INJECTIVE
    if kind == FusionKind.OUT_FUSABLE:
        # Takes an elementwise/broadcast epilogue, and only one out-fusable op per group.
        return group.kind <= FusionKind.BROADCAST
    return False


def plan_groups(block: Block, max_depth: int = DEFAULT_MAX_DEPTH) -> list[FusedGroup]:
    """Partition the fusable ops of `block` into groups, visiting consumers before producers.

    Each group lists its output op first; every fusable op is in exactly one group.
    """
    group_of: dict[int, FusedGroup] = {}
    groups: list[FusedGroup] = []
    for op in reversed(list(block.ops)):
        if not is_fusable(op):
            continue
        users = op_users(op)
        candidates = {id(group_of.get(id(user))): group_of.get(id(user)) for user in users}
        target = None
        if len(candidates) == 1:
            (group,) = candidates.values()
            if group is not None and len(group.ops) < max_depth and _may_join(op, group, users):
                target = group
        if target is None:
            target = FusedGroup()
            groups.append(target)
        target.add(op)
        group_of[id(op)] = target
    return groups


def _row_split(op: Operation) -> tuple[tuple[int, ...], int] | None:
    """(the full shape, the first reduced axis) of a reduction over the trailing axes of its
    input that keeps them as 1s; None for any other op."""
    if not isinstance(op, ReduceOp) or not op.keepdims_value():
        return None
    shape = shape_of(op.x)
    axes = ReduceOp.reduced_axes(len(shape), op.axes_tuple())
    if not axes or list(axes) != list(range(axes[0], len(shape))):
        return None
    return shape, axes[0]


def rows_of(ops: list[Operation]) -> tuple[tuple[int, ...], int] | None:
    """(full shape, first reduced axis) when `ops` work row by row: at least one reduction, all
    over the same trailing axes of the same shape, and every other op elementwise or broadcast
    with a result of that shape or the reduced one (the rows' values); None otherwise."""
    splits = {_row_split(op) for op in ops if isinstance(op, ReduceOp)}
    if len(splits) != 1 or None in splits:
        return None
    split = splits.pop()
    assert split is not None
    full, axis = split
    reduced = (*full[:axis], *[1] * (len(full) - axis))
    for op in ops:
        if isinstance(op, ReduceOp):
            continue
        if fusion_kind(op) > FusionKind.BROADCAST or len(op.results) != 1:
            return None
        result = op.results[0].type
        if not isinstance(result, TensorType) or shape_of(op.results[0]) not in (full, reduced):
            return None
    return split


def merge_row_groups(groups: list[FusedGroup], block: Block, max_depth: int) -> list[FusedGroup]:
    """Merge each group whose results are all used by one other group into that group when both
    work row by row over the same rows (`rows_of`: the module docstring's layer-norm shape),
    until no more merge; returns the groups left, each still listing its output op first and
    its ops in reverse block order."""
    position = {id(op): index for index, op in enumerate(block.ops)}
    group_of = {id(op): group for group in groups for op in group.ops}
    merged = True
    while merged:
        merged = False
        for producer in list(groups):
            members = {id(op) for op in producer.ops}
            consumers = {
                id(group_of.get(id(user))): group_of.get(id(user))
                for op in producer.ops for user in op_users(op) if id(user) not in members
            }
            if len(consumers) != 1 or None in consumers.values():
                continue
            (consumer,) = consumers.values()
            assert consumer is not None
            ops = [*consumer.ops, *producer.ops]
            if len(ops) > max_depth or rows_of(ops) is None:
                continue
            ops.sort(key=lambda op: -position[id(op)])
            consumer.ops = ops
            consumer.kind = max(consumer.kind, producer.kind)
            for op in producer.ops:
                group_of[id(op)] = consumer
            groups.remove(producer)
            merged = True
    return groups


def _group_name(group: FusedGroup, taken: set[str]) -> str:
    names: list[str] = []
    for op in reversed(group.ops):
        mnemonic = op.name.split(".", 1)[-1]
        if mnemonic not in names:
            names.append(mnemonic)
    base = "fused_" + "_".join(names[:4])
    name, index = base, 0
    while name in taken:
        index += 1
        name = f"{base}_{index}"
    taken.add(name)
    return name


def build_fused_op(
    group: FusedGroup, constants: list[ConstantOp], name: str
) -> FusedOp:
    """Replace the ops of `group` (and `constants`, used only by it) with one `graph.fused`.

    The fused op takes the place of the group's output op; its block arguments are the values
    the group uses from outside, in order of first use; it yields the results used outside.
    """
    sink = group.ops[0]
    block = sink.parent
    assert block is not None, "a planned op is in a block"
    members = list(reversed(group.ops))  # block order: producers first
    member_ids = {id(op) for op in members} | {id(c) for c in constants}
    inputs: list[SSAValue] = []
    for op in members:
        for operand in op.operands:
            if id(operand.owner) not in member_ids and operand not in inputs:
                inputs.append(operand)
    outputs = [
        result for op in members for result in op.results
        if any(id(use.operation) not in member_ids for use in result.uses)
    ]
    body = Block(arg_types=[value.type for value in inputs])
    for arg, value in zip(body.args, inputs, strict=True):
        arg.name_hint = value.name_hint
    fused = FusedOp(
        inputs, [value.type for value in outputs], Region(body), kind=group.kind, name=name
    )
    block.insert_op_before(fused, sink)
    for index, value in enumerate(outputs):
        fused.results[index].name_hint = value.name_hint
        value.replace_uses_with_if(
            fused.results[index], lambda use: id(use.operation) not in member_ids
        )
    argument_of = {id(value): arg for value, arg in zip(inputs, body.args, strict=True)}
    for op in [*constants, *members]:
        op.detach()
        body.add_op(op)
        for index, operand in enumerate(op.operands):
            if (arg := argument_of.get(id(operand))) is not None:
                op.operands[index] = arg
    body.add_op(YieldOp(*outputs))
    return fused


def _movable_constants(
    block: Block, group_of: dict[int, FusedGroup], limit: int
) -> dict[int, list[ConstantOp]]:
    """For each group (by id), the constants of `block` that only it uses, up to `limit`."""
    moved: dict[int, list[ConstantOp]] = {}
    for op in block.ops:
        if not isinstance(op, ConstantOp) or num_elements(op.result) > limit:
            continue
        owners = {id(group_of.get(id(user))) for user in op_users(op)}
        if len(owners) != 1 or None in {group_of.get(id(user)) for user in op_users(op)}:
            continue
        moved.setdefault(owners.pop(), []).append(op)
    return moved


def fuse_block(
    block: Block,
    max_depth: int = DEFAULT_MAX_DEPTH,
    inline_constant_limit: int = DEFAULT_INLINE_CONSTANT_LIMIT,
    taken_names: set[str] | None = None,
) -> list[FusedOp]:
    """Fuse the graph ops of `block` into `graph.fused` groups; returns the new fused ops."""
    taken = set() if taken_names is None else taken_names
    groups = merge_row_groups(plan_groups(block, max_depth), block, max_depth)
    group_of = {id(op): group for group in groups for op in group.ops}
    constants = _movable_constants(block, group_of, inline_constant_limit)
    fused_ops: list[FusedOp] = []
    for group in reversed(groups):  # producers' groups first: names follow the block order
        fused_ops.append(
            build_fused_op(group, constants.get(id(group), []), _group_name(group, taken))
        )
    return fused_ops


@dataclass(frozen=True)
class GraphFuseOpsPass(ModulePass):
    """Group graph ops into `graph.fused` ops by their fusion kinds (TVM's FuseOps).

    *Input invariant*: functions whose bodies are single blocks of graph ops (other ops are
    left alone and end groups). Existing `graph.fused` ops are kept as they are. The regions
    of `graph.if` and `graph.loop` are fused like function bodies (a value captured from an
    enclosing block becomes an input of the group that uses it); the control-flow ops
    themselves are never part of a group.

    *Output IR*: every graph op of a `func.func` body other than `graph.constant` is inside
    exactly one `graph.fused` (a group may hold a single op). A group is
    - an out-fusable op (conv2d, matmul, pools) with the elementwise/broadcast ops after it
      and elementwise ops feeding those (conv2d + add bias + relu is one group);
    - or a chain of injective ops, with elementwise/broadcast producers, except a chain an
      out-fusable producer takes as its epilogue (`ends_an_epilogue`: conv2d + SiLU, then
      the transpose after it alone);
    - or a reduction with its elementwise/broadcast prologue;
    - or a row group: reductions over the same trailing axes (keepdims) of one shape with the
      elementwise/broadcast ops around them whose results have that shape or the reduced one
      (a layer norm; `merge_row_groups`), formed when all results of one such group go to
      one other;
    - or one opaque op (softmax, unknown ops).
    A value with several users ends its group unless all the users are in the group; a group
    has at most `max-depth` ops and one out-fusable op. Its body's arguments are the values it
    uses from outside (in order of first use), it yields the values used after it, its `kind`
    is its dominant fusion kind and its `name` lists its ops (`fused_conv2d_add_relu`, unique
    in the module). Constants used only by one group are moved into it.

    *Invariants*: no op is duplicated or reordered against its operands; results are
    unchanged bit for bit; running the pass again changes nothing.

    Options:
        max-depth: the most ops in one group (default 256).
        inline-constant-limit: the largest constant, in elements, moved into the group that
            is its only user (default 1 << 24); larger ones stay outside as group inputs.
    """

    name: ClassVar[str] = "graph-fuse-ops"

    max_depth: int = DEFAULT_MAX_DEPTH
    inline_constant_limit: int = DEFAULT_INLINE_CONSTANT_LIMIT

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_depth < 1:
            raise PassFailedException(
                f"graph-fuse-ops: expected a positive max-depth, found {self.max_depth}"
            )
        taken = {
            fused.name_value() or "" for fused in op.walk() if isinstance(fused, FusedOp)
        }
        blocks = [
            function.body.blocks[0] for function in op.walk()
            if isinstance(function, func.FuncOp) and len(function.body.blocks) == 1
        ]
        blocks += [
            region.block for region_op in op.walk() if isinstance(region_op, IfOp | LoopOp)
            for region in region_op.regions
        ]
        for block in blocks:
            fuse_block(block, self.max_depth, self.inline_constant_limit, taken)
