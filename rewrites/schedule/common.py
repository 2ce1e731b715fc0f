"""What dlc's schedule primitives share: their error, nests and bands, index arithmetic, axes.

Counterpart: the helpers of TVM's `tir/schedule/primitive/` (loop sref trees, `CheckPreconditions`)
and MLIR's loop utilities (`getPerfectlyNestedLoops`, `permuteLoops`).

Vocabulary used by every primitive:
- a loop *nest* is a tree of `loop.for`/`loop.block` ops; its *root* is the outermost op whose
  parent is neither (usually a top-level `loop.for` in a `func.func`);
- a *band* is a chain of loops each of whose bodies holds only side-effect-free, region-free ops
  (index arithmetic) and the next loop of the chain; the innermost loop's body is arbitrary;
- an axis name is *spatial* or *reduction* for a block when it is listed in that block's
  `spatial_axes` or `reduction_axes`; primitives that create, rename or remove loops keep those
  lists in step with the loops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dlc.dialects.loop.ops import BlockOp, ForOp, LoadOp, MatrixLoadOp, StoreOp
from xdsl.dialects import memref
from xdsl.dialects.arith import AddiOp, ConstantOp, DivUIOp, MinUIOp, MuliOp, RemUIOp
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i32,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import IsTerminator, is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException


class ScheduleError(DiagnosticException):
    """A schedule primitive's precondition failed; the payload was left untouched.

    `reason` says what was expected and what was found; `payload` is the op the failing check
    was about (the transform interpreter names the handle that holds it).
    """

    def __init__(self, reason: str, payload: Operation | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.payload = payload


def describe(op: Operation) -> str:
    """How messages name a payload op: `loop "k"`, `block "matmul"`, or the op's name."""
    if isinstance(op, ForOp):
        return f'loop "{op.axis.data}"'
    if isinstance(op, BlockOp):
        return f'block "{op.block_name.data}"'
    return f"'{op.name}'"


# ----------------------------------------------------------------------------------------------
# Nests
# ----------------------------------------------------------------------------------------------


def _in_nest(op: Operation | None) -> bool:
    return isinstance(op, ForOp | BlockOp)


def nest_root(op: Operation) -> Operation:
    """The outermost `loop.for`/`loop.block` around `op` (or `op` itself) in its nest."""
    while _in_nest(op.parent_op()):
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def enclosing_loops(op: Operation) -> list[ForOp]:
    """The loops of `op`'s nest that enclose it, outermost first."""
    loops: list[ForOp] = []
    parent = op.parent_op()
    while _in_nest(parent):
        assert parent is not None
        if isinstance(parent, ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def nested_blocks(op: Operation) -> list[BlockOp]:
    """The `loop.block`s inside `op` (and `op` itself if it is one), in program order."""
    return [nested for nested in op.walk() if isinstance(nested, BlockOp)]


def body_ops(loop: ForOp) -> list[Operation]:
    """The ops of a loop's body, without its terminator."""
    return [op for op in loop.body.block.ops if not op.has_trait(IsTerminator)]


_EFFECT_FREE_WITHOUT_TRAIT: tuple[type[Operation], ...] = (RemUIOp,)
"""Ops without memory effects that xDSL 0.75 declares no effect trait for (`arith.remui`)."""


def is_pure(op: Operation) -> bool:
    """Whether `op` is side-effect free and has no regions (index arithmetic, constants)."""
    if op.regions:
        return False
    return is_side_effect_free(op) or isinstance(op, _EFFECT_FREE_WITHOUT_TRAIT)


def is_live(op: Operation, root: Operation) -> bool:
    """Whether `op` is still (transitively) inside `root`: not erased nor detached."""
    current: Operation | None = op
    while current is not None:
        if current is root:
            return True
        current = current.parent_op()
    return False


def is_defined_outside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is available above `op` (not defined by `op` or inside it)."""
    owner = value.owner
    if isinstance(owner, Block):
        holder = owner.parent_op()
        return holder is None or not op.is_ancestor(holder)
    return not op.is_ancestor(owner)


def depends_on(value: SSAValue, sources: set[SSAValue],
               through: frozenset[SSAValue] | set[SSAValue] = frozenset()) -> bool:
    """Whether `value` is one of `sources` or computed from them by pure ops (not counting
    what it computes from them only through values of `through`)."""
    seen: set[SSAValue] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if current in sources:
            return True
        if current in seen or current in through:
            continue
        seen.add(current)
        owner = current.owner
        if isinstance(owner, Operation) and is_pure(owner):
            pending.extend(owner.operands)
    return False


def same_value(a: SSAValue, b: SSAValue) -> bool:
    """Whether `a` and `b` are the same value, or computed by identical pure op trees."""
    if a is b:
        return True
    x, y = a.owner, b.owner
    if not (isinstance(x, Operation) and isinstance(y, Operation)):
        return False
    if not (is_pure(x) and is_pure(y)) or x.name != y.name:
        return False
    if x.properties != y.properties or x.attributes != y.attributes:
        return False
    if len(x.operands) != len(y.operands) or len(x.results) != len(y.results):
        return False
    index = x.results.index(a) if a in x.results else -1
    if index < 0 or y.results[index] is not b:
        return False
    return all(same_value(p, q) for p, q in zip(x.operands, y.operands, strict=True))


_RESHAPES = (memref.CollapseShapeOp, memref.ExpandShapeOp)


def base_buffer(value: SSAValue) -> SSAValue:
    """The buffer `value` is a view of (through `memref.collapse_shape` / `expand_shape`, which
    the schedule rules make to walk whole rows as one run), or `value` itself: what a
    dependence between two accesses must compare, as a view and its source are one memory."""
    while isinstance(owner := value.owner, _RESHAPES):
        value = owner.operands[0]
    return value


def kept_axes(value: SSAValue) -> int:
    """How many leading axes `value` shares with `base_buffer(value)`, index for index: its
    whole rank for the buffer itself, the axes before the first merged group for a view."""
    memref_type = value.type
    rank = len(memref_type.get_shape()) if isinstance(memref_type, MemRefType) else 0
    owner = value.owner
    if not isinstance(owner, _RESHAPES):
        return rank
    kept = 0
    for group in owner.reassociation:
        if len(group.data) != 1 or group.data[0].value.data != kept:
            break
        kept += 1
    return min(kept, kept_axes(owner.operands[0]))


def accesses(op: Operation, buffer: SSAValue) -> list[LoadOp | StoreOp]:
    """The loads and stores of `buffer` inside `op`, in program order."""
    return [
        nested for nested in op.walk()
        if isinstance(nested, LoadOp | StoreOp) and nested.memref is buffer
    ]


def blocks_writing(op: Operation, buffer: SSAValue) -> list[BlockOp]:
    """The blocks inside `op` that list `buffer` among their writes."""
    return [block for block in nested_blocks(op) if buffer in block.writes]


# ----------------------------------------------------------------------------------------------
# Index arithmetic
# ----------------------------------------------------------------------------------------------


def constant_value(value: SSAValue) -> int | None:
    """The integer an `arith.constant` defines, or None."""
    owner = value.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def index_constant(value: int, anchor: Operation) -> SSAValue:
    """An `index` constant usable at `anchor`: reused from, or inserted before, its nest root."""
    root = nest_root(anchor)
    block = root.parent_block()
    assert block is not None, "a payload op is always inside a block"
    for op in block.ops:
        if op is root:
            break
        if (
            isinstance(op, ConstantOp)
            and isinstance(op.result.type, IndexType)
            and constant_value(op.result) == value
        ):
            return op.result
    constant = ConstantOp(IntegerAttr(value, IndexType()))
    constant.result.name_hint = f"c{value}" if value >= 0 else f"cm{-value}"
    block.insert_op_before(constant, root)
    return constant.result


class IndexBuilder:
    """Builds index arithmetic before an insertion point, folding the trivial cases.

    Constants go before the nest root of `anchor` (see `index_constant`), other ops into `block`
    before `before` (at its end, before the terminator, when `before` is None).
    """

    def __init__(self, anchor: Operation, block: Block, before: Operation | None = None) -> None:
        self.anchor = anchor
        self.block = block
        self.before = before

    def insert(self, op: Operation, name: str | None = None) -> SSAValue:
        """Inserts `op` and returns its (single) result, named `name` if given."""
        self.insert_op(op)
        if name is not None:
            op.results[0].name_hint = name
        return op.results[0]

    def insert_op(self, op: Operation) -> None:
        """Inserts `op` at the insertion point."""
        if self.before is not None:
            self.block.insert_op_before(op, self.before)
        else:
            terminator = self.block.last_op
            if terminator is not None and terminator.has_trait(IsTerminator):
                self.block.insert_op_before(op, terminator)
            else:
                self.block.add_op(op)

    def constant(self, value: int) -> SSAValue:
        return index_constant(value, self.anchor)

    def add(self, lhs: SSAValue, rhs: SSAValue | int, name: str | None = None) -> SSAValue:
        if isinstance(rhs, int):
            if rhs == 0:
                return lhs
            rhs = self.constant(rhs)
        return self.insert(AddiOp(lhs, rhs), name)

    def mul(self, lhs: SSAValue, rhs: int, name: str | None = None) -> SSAValue:
        if rhs == 1:
            return lhs
        return self.insert(MuliOp(lhs, self.constant(rhs)), name)

    def div(self, lhs: SSAValue, rhs: int, name: str | None = None) -> SSAValue:
        if rhs == 1:
            return lhs
        return self.insert(DivUIOp(lhs, self.constant(rhs)), name)

    def rem(self, lhs: SSAValue, rhs: int, name: str | None = None) -> SSAValue:
        if rhs == 1:
            return self.constant(0)
        return self.insert(RemUIOp(lhs, self.constant(rhs)), name)


def value_name(axis: str) -> str | None:
    """A value name hint made from an axis name ("k.0" -> "k.0"), or None if not valid."""
    return axis if SSAValue.is_valid_name(axis) and not axis[:1].isdigit() else None


def new_loop(
    lb: SSAValue,
    ub: SSAValue,
    step: SSAValue,
    axis: str,
    like: ForOp | None = None,
    name: str | None = None,
) -> ForOp:
    """An empty loop; `like` gives it the kind, thread and annotations of an existing loop.

    Its induction variable is named `name`, or after the axis.
    """
    loop = ForOp(lb, ub, step, Block(arg_types=[IndexType()]), axis)
    if like is not None:
        for prop in ("kind", "thread", "annotations"):
            if prop in like.properties:
                loop.properties[prop] = like.properties[prop]
    loop.induction_var.name_hint = value_name(name if name is not None else axis)
    return loop


def move_ops_into(ops: Iterable[Operation], loop: ForOp) -> None:
    """Detach `ops` and append them to `loop`'s body, before its terminator."""
    block = loop.body.block
    terminator = block.last_op
    assert terminator is not None
    for op in ops:
        if op.parent is not None:
            op.detach()
        block.insert_op_before(op, terminator)


def replace_uses(value: SSAValue, new: SSAValue, keep: Callable[[Operation], bool]) -> None:
    """Replace the uses of `value` by `new` except in ops for which `keep` holds."""
    for use in list(value.uses):
        if not keep(use.operation):
            use.operation.operands[use.index] = new


# ----------------------------------------------------------------------------------------------
# Axes of blocks
# ----------------------------------------------------------------------------------------------


def rename_axis(scope: Operation, axis: str, new_axes: Sequence[str]) -> None:
    """In every block inside `scope`, replace `axis` by `new_axes` (none: remove it)."""
    for block in nested_blocks(scope):
        for prop in ("spatial_axes", "reduction_axes"):
            names = [name.data for name in block.properties[prop].data]  # type: ignore[union-attr]
            if axis not in names:
                continue
            position = names.index(axis)
            names[position: position + 1] = list(new_axes)
            block.properties[prop] = ArrayAttr(StringAttr(name) for name in names)


def axis_iteration_kinds(loop: ForOp) -> set[str]:
    """How the blocks inside `loop` use its axis: a subset of {"spatial", "reduction"}."""
    axis = loop.axis.data
    kinds: set[str] = set()
    for block in nested_blocks(loop):
        if axis in (name.data for name in block.spatial_axes):
            kinds.add("spatial")
        if axis in (name.data for name in block.reduction_axes):
            kinds.add("reduction")
    return kinds


def check_spatial(loop: ForOp, what: str) -> None:
    """Fails unless no block uses `loop` as a reduction axis and its iterations are independent.

    Independent: for every buffer from outside the loop that is stored to inside it, the
    iterations access disjoint elements (see `disjoint_iterations`). A store whose indices do not
    depend on the loop writes the same element in every iteration; one at `i + p` overlaps the
    next iterations.
    """
    if "reduction" in axis_iteration_kinds(loop):
        blocks = [
            f'"{block.block_name.data}"' for block in nested_blocks(loop)
            if loop.axis.data in (name.data for name in block.reduction_axes)
        ]
        raise ScheduleError(
            f"cannot {what}: expected a spatial axis, found a reduction axis of block "
            f"{', '.join(blocks)}",
            loop,
        )
    written = {
        op.memref for op in loop.walk()
        if isinstance(op, StoreOp) and is_defined_outside(op.memref, loop)
    }
    for buffer in written:
        indices = [list(access.indices) for access in accesses(loop, buffer)]
        if disjoint_iterations(loop, indices) is None:
            raise ScheduleError(
                f"cannot {what}: expected the iterations to access disjoint elements of every "
                f"buffer stored to inside, found accesses to {buffer.type} that may overlap",
                loop,
            )


@dataclass(frozen=True)
class _IndexForm:
    """An index as `scale * g(iv) + invariants + offset`, `offset` in `[lo, hi]`, with `g` the
    identity (`kind` "id"), `iv / divisor` ("div") or `iv % divisor` ("rem")."""

    kind: str
    divisor: int
    scale: int
    invariants: tuple[tuple[int, int], ...]
    lo: int
    hi: int

    def shape(self) -> tuple[str, int, int, tuple[tuple[int, int], ...]]:
        return self.kind, self.divisor, self.scale, self.invariants


def _index_form(value: SSAValue, loop: ForOp) -> _IndexForm | None:
    """The form of an index in terms of `loop`'s induction variable, or None if it has none.

    `value` must be a sum (`arith.addi`, and constant multiples of sums, which distribute) of
    one term computed from the induction variable (the variable itself, or its
    `arith.divui`/`arith.remui` by a constant, times constants), of constants, of values
    defined outside the loop, and of induction variables of loops inside it with a constant
    start and step and a constant (or `arith.minui`-bounded) upper bound.
    """
    terms = _sum_terms(value)
    iv = loop.induction_var
    keys = [(term, factor) for term, factor in terms if depends_on(term, {iv})]
    if len(keys) != 1:
        return None
    invariants: list[tuple[int, int]] = []
    lo = hi = 0
    for term, factor in terms:
        if term is keys[0][0]:
            continue
        constant = constant_value(term)
        inner = term.owner.parent_op() if isinstance(term, BlockArgument) else None
        span = _value_span(inner) if isinstance(inner, ForOp) and loop.is_ancestor(inner) else None
        if constant is not None:
            lo, hi = lo + constant * factor, hi + constant * factor
        elif span is not None:
            lo, hi = lo + span[0] * factor, hi + span[1] * factor
        elif is_defined_outside(term, loop):
            invariants.append((id(term), factor))
        else:
            return None
    scale, core = keys[0][1], keys[0][0]
    while isinstance(core.owner, MuliOp):
        factor, other = _constant_factor(core.owner)
        if not factor or factor < 0:
            return None
        scale, core = scale * factor, other
    if core is iv:
        return _IndexForm("id", 0, scale, tuple(sorted(invariants)), lo, hi)
    owner = core.owner
    if isinstance(owner, DivUIOp | RemUIOp) and owner.operands[0] is iv:
        divisor = constant_value(owner.operands[1])
        if divisor is not None and divisor > 0:
            kind = "div" if isinstance(owner, DivUIOp) else "rem"
            return _IndexForm(kind, divisor, scale, tuple(sorted(invariants)), lo, hi)
    return None


def _constant_factor(product: MuliOp) -> tuple[int | None, SSAValue]:
    """A product's constant operand (None if neither is one) and its other operand."""
    lhs, rhs = product.operands
    constant = constant_value(rhs)
    if constant is not None:
        return constant, lhs
    return constant_value(lhs), rhs


def _sum_terms(value: SSAValue) -> list[tuple[SSAValue, int]]:
    """`value` as a sum of (term, factor) pairs: `arith.addi` split into its operands, and a
    positive constant multiple of a sum distributed over it (`64 * (4 t + g)` is
    `256 t + 64 g`)."""
    terms: list[tuple[SSAValue, int]] = []
    pending = [(value, 1)]
    while pending:
        current, factor = pending.pop()
        owner = current.owner
        if isinstance(owner, AddiOp):
            pending.extend((operand, factor) for operand in owner.operands)
            continue
        if isinstance(owner, MuliOp):
            constant, other = _constant_factor(owner)
            if constant is not None and constant > 0 and isinstance(other.owner, AddiOp):
                pending.append((other, factor * constant))
                continue
        terms.append((current, factor))
    return terms


def _value_span(loop: ForOp) -> tuple[int, int] | None:
    """The least and greatest values a loop's induction variable may take, if known.

    The greatest is the last multiple of the step from `lb` below `ub` (an inner loop of a
    multi-level split, `0 to 8 step 2`, reaches 6, not 7)."""
    lb, step = constant_value(loop.lb), constant_value(loop.step)
    ub = constant_value(loop.ub)
    if ub is None and isinstance(loop.ub.owner, MinUIOp):
        bounds = [constant_value(operand) for operand in loop.ub.owner.operands]
        ub = min((bound for bound in bounds if bound is not None), default=None)
    if lb is None or step is None or ub is None or lb < 0 or step <= 0:
        return None
    if ub <= lb:
        return lb, lb
    return lb, lb + (ub - 1 - lb) // step * step


def disjoint_iterations(
    loop: ForOp, accesses_indices: Sequence[Sequence[SSAValue]]
) -> list[int] | None:
    """Dimensions whose indices tell the iterations of `loop` apart, or None if none do.

    Each access is a list of indices (one per dimension). Along a dimension where every access
    has the same form `scale * g(iv) + invariants + offset` (see `_index_form`) and the offsets
    span less than `scale` (times the step, for `g` the identity), the index determines `g(iv)`:
    one dimension with `g` the identity, or two with `iv / n` and `iv % n` (what `fuse` makes),
    determine the iteration, so different iterations access different elements.
    """
    step = constant_value(loop.step)
    if step is None or step <= 0 or not accesses_indices:
        return None
    rank = len(accesses_indices[0])
    exact: dict[int, _IndexForm] = {}
    for dim in range(rank):
        forms = [_index_form(indices[dim], loop) for indices in accesses_indices]
        if any(form is None for form in forms):
            continue
        known = [form for form in forms if form is not None]
        if len({form.shape() for form in known}) != 1:
            continue
        form = known[0]
        width = max(f.hi for f in known) - min(f.lo for f in known)
        if width < form.scale * (step if form.kind == "id" else 1):
            exact[dim] = form
    for dim, form in exact.items():
        if form.kind == "id":
            return [dim]
    for dim, form in exact.items():
        for other, partner in exact.items():
            if form.kind == "div" and partner.kind == "rem" and partner.divisor == form.divisor:
                return [dim, other]
    return _delinearized_dims(loop, step, accesses_indices)


def _delinearized_dims(
    loop: ForOp, step: int, accesses_indices: Sequence[Sequence[SSAValue]]
) -> list[int] | None:
    """Dimensions that tell the iterations apart through a delinearized index, or None.

    An access whose indices hold the mixed-radix digits of one value `L` (`L % d0`,
    `(L / d0) % d1`, ..., and the last quotient: how an implicit GEMM's linear row is mapped
    back to a conv's output point) determines `L`; if in every access `L` has the same form
    `scale * iv + invariants + offset` (the digits in the same dimensions with the same
    divisors) and the offsets span less than `scale * step`, different iterations access
    different elements.
    """
    dims: list[tuple[int, int]] | None = None
    forms: list[_IndexForm] = []
    for indices in accesses_indices:
        found = None
        roots = {id(root): root for root in map(_digit_root, indices)}
        for root in roots.values():
            digits = _digits(root, indices)
            form = _index_form(root, loop) if digits is not None else None
            if digits is not None and form is not None and form.kind == "id":
                found = digits, form
                break
        if found is None or (dims is not None and found[0] != dims):
            return None
        dims = found[0]
        forms.append(found[1])
    if dims is None or len({form.shape() for form in forms}) != 1:
        return None
    width = max(form.hi for form in forms) - min(form.lo for form in forms)
    if width >= forms[0].scale * step:
        return None
    return [dim for dim, _ in dims]


def _digit_root(value: SSAValue) -> SSAValue:
    """The value that `value` is a chain of divisions and remainders by constants of."""
    while isinstance(value.owner, DivUIOp | RemUIOp) and constant_value(value.owner.rhs):
        value = value.owner.lhs
    return value


def _digits(value: SSAValue, indices: Sequence[SSAValue]) -> list[tuple[int, int]] | None:
    """(dimension, divisor) of the indices that are the mixed-radix digits of `value`: an
    index that is `value` itself (divisor 0), or one that is `value % d` and the digits of
    `value / d`; None if the indices do not hold all of them."""
    for dim, index in enumerate(indices):
        if index is value:
            return [(dim, 0)]
    for use in value.uses:
        rem = use.operation
        divisor = constant_value(rem.operands[1]) if isinstance(rem, RemUIOp) else None
        if not divisor or rem.operands[0] is not value:
            continue
        dim = next((d for d, index in enumerate(indices) if index is rem.results[0]), None)
        if dim is None:
            continue
        for other in value.uses:
            quotient = other.operation
            if (isinstance(quotient, DivUIOp) and quotient.lhs is value
                    and constant_value(quotient.rhs) == divisor):
                rest = _digits(quotient.result, indices)
                if rest is not None:
                    return [(dim, divisor), *rest]
    return None


# ----------------------------------------------------------------------------------------------
# Bands
# ----------------------------------------------------------------------------------------------


def inner_loop(loop: ForOp) -> ForOp | None:
    """The single loop in `loop`'s body if the rest of the body is pure ops, else None."""
    loops = [op for op in body_ops(loop) if isinstance(op, ForOp)]
    if len(loops) != 1:
        return None
    if any(not is_pure(op) for op in body_ops(loop) if op is not loops[0]):
        return None
    return loops[0]


def band_between(outer: ForOp, inner: ForOp) -> list[ForOp]:
    """The band from `outer` down to `inner` (both included), or a ScheduleError."""
    if outer is not inner and not outer.is_ancestor(inner):
        raise ScheduleError(
            f"expected {describe(inner)} to be nested in {describe(outer)}, found it is not",
            inner,
        )
    band = [outer]
    while band[-1] is not inner:
        current = band[-1]
        nested = inner_loop(current)
        if nested is None:
            others = [op.name for op in body_ops(current) if not is_pure(op)]
            raise ScheduleError(
                f"expected a perfectly nested band from {describe(outer)} to {describe(inner)}, "
                f"found {describe(current)} whose body holds {', '.join(others)}",
                current,
            )
        band.append(nested)
    return band


def chain_band(loops: Sequence[ForOp]) -> list[ForOp]:
    """The band that spans `loops` (given in any order), or a ScheduleError."""
    ordered = sorted(loops, key=lambda loop: len(enclosing_loops(loop)))
    for outer, inner in zip(ordered, ordered[1:], strict=False):
        if outer is inner:
            raise ScheduleError(f"expected distinct loops, found {describe(outer)} twice", outer)
        if not outer.is_ancestor(inner):
            raise ScheduleError(
                f"expected the loops to be nested in one another, found {describe(inner)} "
                f"outside {describe(outer)}",
                inner,
            )
    return band_between(ordered[0], ordered[-1])


class Renest:
    """A checked permutation of a band: `Renest(band, order).apply()` re-nests its loops.

    The loops keep their identity (handles stay valid); the pure ops of the band's bodies move to
    the outermost position where their operands are defined. The constructor fails with a
    ScheduleError, before anything changed, if a loop's bounds would use an induction variable
    of a loop that is no longer outside it.
    """

    def __init__(self, band: Sequence[ForOp], order: Sequence[ForOp]) -> None:
        assert sorted(map(id, band)) == sorted(map(id, order))
        self.band = list(band)
        self.order = list(order)
        position = {loop.induction_var: self.order.index(loop) for loop in self.band}
        self.pure_ops = [op for loop in self.band[:-1] for op in body_ops(loop)
                         if not isinstance(op, ForOp)]
        self.level: dict[Operation, int] = {}

        def level_of(value: SSAValue) -> int:
            if value in position:
                return position[value]
            owner = value.owner
            if isinstance(owner, Operation) and owner in self.level:
                return self.level[owner]
            return -1

        for op in self.pure_ops:
            self.level[op] = max((level_of(v) for v in op.operands), default=-1)
        for depth, loop in enumerate(self.order):
            for bound in loop.operands:
                if level_of(bound) >= depth:
                    user = self.order[level_of(bound)]
                    raise ScheduleError(
                        f"expected the bounds of {describe(loop)} not to depend on "
                        f"{describe(user)}, which would no longer enclose it, found they do",
                        loop,
                    )

    def apply(self) -> None:
        outermost = self.band[0]
        parent = outermost.parent_block()
        assert parent is not None
        anchor = outermost.next_op
        innermost_ops = body_ops(self.band[-1])
        for op in [*self.pure_ops, *innermost_ops, *self.band[1:]]:
            op.detach()
        outermost.detach()
        for op in self.pure_ops:
            if self.level[op] < 0:
                _insert(parent, op, anchor)
        _insert(parent, self.order[0], anchor)
        for depth, loop in enumerate(self.order):
            level_ops = [op for op in self.pure_ops if self.level[op] == depth]
            tail = [self.order[depth + 1]] if depth + 1 < len(self.order) else innermost_ops
            for op in [*level_ops, *tail]:
                _insert(loop.body.block, op, loop.body.block.last_op)


def _insert(block: Block, op: Operation, before: Operation | None) -> None:
    if before is None:
        block.add_op(op)
    else:
        block.insert_op_before(op, before)


def constant_trip(loop: ForOp, what: str) -> tuple[int, int, int, int]:
    """`(lb, ub, step, trip count)` of a loop with constant bounds, or a ScheduleError."""
    bounds = loop.constant_bounds()
    if bounds is None:
        raise ScheduleError(
            f"cannot {what}: expected constant bounds, found bounds that are not "
            f"'arith.constant's",
            loop,
        )
    lb, ub, step = bounds
    if step <= 0:
        raise ScheduleError(f"cannot {what}: expected a positive step, found {step}", loop)
    trip = loop.trip_count()
    assert trip is not None
    return lb, ub, step, trip


def require_kind(loop: ForOp, kinds: Sequence[str], what: str) -> None:
    """Fails unless the loop's kind is one of `kinds`."""
    if loop.kind.data not in kinds:
        raise ScheduleError(
            f"cannot {what}: expected a {' or '.join(kinds)} loop, found kind {loop.kind.data}",
            loop,
        )


def is_induction_var(value: SSAValue) -> bool:
    """Whether `value` is the induction variable of a `loop.for`."""
    return isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), ForOp)


# ----------------------------------------------------------------------------------------------
# Buffers of blocks
# ----------------------------------------------------------------------------------------------


def set_block_buffers(
    block: BlockOp, reads: Sequence[SSAValue], writes: Sequence[SSAValue]
) -> None:
    """Replace a block's `reads` and `writes` lists (keeping the op, so handles stay valid)."""
    block.operands = (*reads, *writes)
    block.properties["operandSegmentSizes"] = DenseArrayBase.from_list(
        i32, [len(reads), len(writes)]
    )


def replace_buffer(block: BlockOp, old: SSAValue, new: SSAValue) -> None:
    """Make `block` and the accesses inside it use buffer `new` instead of `old`."""
    for access in accesses(block, old):
        access.operands[list(access.operands).index(old)] = new
    set_block_buffers(
        block,
        [new if buffer is old else buffer for buffer in block.reads],
        [new if buffer is old else buffer for buffer in block.writes],
    )


def refresh_reads(block: BlockOp, extra: Iterable[SSAValue] = ()) -> None:
    """Drop reads the block no longer loads from; add the `extra` buffers it now loads from."""
    loaded = {
        op.memref for op in block.walk()
        if isinstance(op, LoadOp | MatrixLoadOp) and is_defined_outside(op.memref, block)
    }
    reads = [buffer for buffer in block.reads if buffer in loaded]
    for buffer in extra:
        if buffer in loaded and buffer not in reads and buffer not in block.writes:
            reads.append(buffer)
    set_block_buffers(block, reads, list(block.writes))


def program_order_index(op: Operation) -> int:
    """The position of `op` among the ops of its block."""
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)
