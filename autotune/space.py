"""Search spaces: knobs whose values make a transform script (a schedule) for one workload.

Counterpart: AutoTVM's templates (`cfg.define_knob`, `cfg.define_split`) and Ansor's /
MetaSchedule's generated sketches (multi-level tiling, inlining, cache write, parallel, vectorize,
unroll), with tinygrad's view of a space as a list of small hashable actions.

A space has knobs, each with a tuple of candidates; a *point* is a tuple of candidate indices,
one per knob. `render(point)` is the schedule as transform-script text (a
`transform.named_sequence @__transform_main` whose knob values are `transform.param.constant`s),
`check(point)` rejects a point cheaply before anything is built (a vector width that does not
divide the loop it vectorizes, a register tile larger than the register file: the numbers come
from the target's description, `dlc.target.CpuTarget`), and `features(point)` describes the loop
nest the point makes, for the cost model.

Two kinds of space:
- `TemplateSpace`: a hand-written script whose knob parameters are annotated
  `transform.param.constant`s (see `TemplateSpace.from_script`); `matmul_template` is the
  built-in one for GEMM-like blocks.
- `SketchSpace`: generated from a workload's block structure by rules; its candidates are
  `Action`s.
"""

from __future__ import annotations

import itertools
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from dlc.dialects.contracts import CANDIDATES_ATTR, KNOB_ATTR, PART_ATTR, SPLIT_ATTR
from dlc.dialects.loop.ops import BlockOp
from dlc.rewrites.schedule import compute_inline_refusal
from dlc.rewrites.tuning.apply import run_script
from dlc.rewrites.tuning.workload import (
    BlockInfo,
    Workload,
    kernel_function_of,
    make_context,
    parse_module,
)
from dlc.target import CpuTarget
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.utils.exceptions import DiagnosticException

Value = int | bool | str | tuple[int, ...]
"""A knob's candidate value (JSON-representable; tuples are written as lists)."""

Point = tuple[int, ...]
"""One candidate index per knob."""






class SpaceError(DiagnosticException):
    """A space cannot be built for a workload (no block to schedule, a bad template)."""


@dataclass(frozen=True)
class Knob:
    """One tunable decision and its candidates (AutoTVM's `define_knob` / `define_split`)."""

    name: str
    candidates: tuple[Any, ...]

    def __post_init__(self) -> None:
        if not self.candidates:
            raise SpaceError(f"knob '{self.name}': expected at least one candidate, found none")


@dataclass(frozen=True, order=True)
class Action:
    """A small hashable schedule decision (tinygrad's `Opt`): `op` on `target` with `arg`.

    ops: `tile` (axis, factors outermost first), `parallel` (block, how many outer tile loops
    to fuse and parallelize; 0: none), `vectorize` (block, on/off), `unroll` (block, on/off:
    fully unroll the register tile), `inline` (block, on/off), `epilogue` (block, on/off:
    `reverse_compute_at` into the anchor's tile), `cache_write` (block, on/off), `pack`
    (operand index, on/off: panels as wide as the vector tile).
    """

    op: str
    target: str
    arg: Value


def divisor_splits(
    extent: int, parts: int, max_inner: int | None = None
) -> tuple[tuple[int, ...], ...]:
    """Every way to write `extent` as an ordered product of `parts` factors, outermost first
    (`define_split` with exact factors); inner factors are capped at `max_inner` if given."""
    if parts == 1:
        return ((extent,),)
    found: list[tuple[int, ...]] = []
    for inner in divisor_splits_inner(extent, parts - 1, max_inner):
        found.append((extent // math.prod(inner), *inner))
    return tuple(found)


def divisor_splits_inner(extent: int, parts: int, max_inner: int | None) -> list[tuple[int, ...]]:
    """The `parts` inner factors (outermost first) whose product divides `extent`."""
    if parts == 0:
        return [()]
    found: list[tuple[int, ...]] = []
    for factor in _divisors(extent):
        if max_inner is not None and factor > max_inner:
            continue
        for rest in divisor_splits_inner(extent // factor, parts - 1, max_inner):
            found.append((*rest, factor))
    return sorted(found)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _json_value(value: Any) -> Any:
    if isinstance(value, Action):
        return _json_value(value.arg)
    if isinstance(value, tuple):
        return [_json_value(v) for v in value]
    return value


# ----------------------------------------------------------------------------------------------
# Writing transform scripts
# ----------------------------------------------------------------------------------------------

MAX_UNROLL = 256
"""The largest body replication a schedule may ask for (a bound on the IR's size, not the
hardware's)."""

_ANY = "!transform.any_op"
_PARAM = "!transform.param<i64>"


class ScriptWriter:
    """Builds a transform script: one method per `transform.loop.*` op, returning handle names.

    Integer arguments go through `transform.param.constant`s (named after `hint`), so that a
    record's script shows every knob value as a parameter.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names: dict[str, int] = {}

    def fresh(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "h"
        name, count = base, 0
        while name in self._names:
            count += 1
            name = f"{base}_v{count}"
        self._names[name] = 1
        return f"%{name}"

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def param(self, value: int, hint: str) -> str:
        name = self.fresh(hint)
        self.emit(f"{name} = transform.param.constant {value} : i64 -> {_PARAM}")
        return name

    def match_block(self, block: str) -> str:
        name = self.fresh(block)
        self.emit(f'{name} = transform.loop.match_block "{block}" in %root : ({_ANY}) -> {_ANY}')
        return name

    def get_loops(self, block: str, axes: Sequence[str]) -> list[str]:
        names = [self.fresh(axis) for axis in axes]
        results = ", ".join([_ANY] * len(names))
        self.emit(
            f"{', '.join(names)} = transform.loop.get_loops {block} : ({_ANY}) -> ({results})"
        )
        return names

    def split(self, loop: str, factors: Sequence[int], axis: str) -> list[str]:
        params = [self.param(f, f"{axis}_f{i + 1}") for i, f in enumerate(factors)]
        names = [self.fresh(f"{axis}_{i}") for i in range(len(factors) + 1)]
        args = ", ".join(params)
        operand_types = ", ".join([_ANY] + [_PARAM] * len(params))
        results = ", ".join([_ANY] * len(names))
        self.emit(
            f"{', '.join(names)} = transform.loop.split {loop} [{args}] : ({operand_types}) -> "
            f"({results})"
        )
        return names

    def reorder(self, loops: Sequence[str]) -> None:
        types = ", ".join([_ANY] * len(loops))
        self.emit(f"transform.loop.reorder {', '.join(loops)} : {types}")

    def fuse(self, outer: str, inner: str) -> str:
        name = self.fresh("fused")
        self.emit(f"{name} = transform.loop.fuse {outer}, {inner} : ({_ANY}, {_ANY}) -> {_ANY}")
        return name

    def mark(self, primitive: str, loop: str) -> None:
        """`parallel`, `vectorize`: mark a loop (the handle stays valid)."""
        self.emit(f"transform.loop.{primitive} {loop} : {_ANY}")

    def unroll(self, loop: str) -> None:
        self.emit(f"transform.loop.unroll {loop} : {_ANY}")

    def decompose_reduction(self, block: str, loop: str) -> str:
        name = self.fresh("init")
        self.emit(
            f"{name} = transform.loop.decompose_reduction {block}, {loop} : ({_ANY}, {_ANY}) -> "
            f"{_ANY}"
        )
        return name

    def compute_inline(self, block: str) -> None:
        self.emit(f"transform.loop.compute_inline {block} : {_ANY}")

    def reverse_compute_at(self, block: str, loop: str) -> None:
        self.emit(f"transform.loop.reverse_compute_at {block}, {loop} : {_ANY}, {_ANY}")

    def cache_write(self, block: str, scope: str) -> str:
        name = self.fresh("write_back")
        self.emit(
            f'{name} = transform.loop.cache_write {block}, "{scope}" : ({_ANY}) -> {_ANY}'
        )
        return name

    def text(self) -> str:
        body = "\n".join(self.lines)
        return (
            "module attributes {transform.with_named_sequence} {\n"
            f"  transform.named_sequence @__transform_main(%root: {_ANY}) {{\n"
            f"{body}\n"
            "    transform.yield\n"
            "  }\n"
            "}\n"
        )


# ----------------------------------------------------------------------------------------------
# The space interface
# ----------------------------------------------------------------------------------------------


class Space(ABC):
    """Knobs, and what a point of them means (subclasses define `render` and `features`)."""

    name: str = "space"
    knobs: tuple[Knob, ...] = ()

    @property
    def size(self) -> int:
        """How many points (valid or not) the space has."""
        return math.prod(len(knob.candidates) for knob in self.knobs)

    def choices(self, point: Point) -> dict[str, Any]:
        """The candidate each knob takes at `point`."""
        return {knob.name: knob.candidates[i] for knob, i in zip(self.knobs, point, strict=True)}

    def values(self, point: Point) -> dict[str, Any]:
        """The knob values at `point`, as JSON-able values (what the tuning log records)."""
        return {name: _json_value(value) for name, value in self.choices(point).items()}

    def point_of(self, values: Mapping[str, Any]) -> Point:
        """The point whose `values` are `values` (the inverse of `values`)."""
        point: list[int] = []
        for knob in self.knobs:
            wanted = values.get(knob.name)
            index = next(
                (i for i, c in enumerate(knob.candidates) if _json_value(c) == wanted), None
            )
            if index is None:
                raise SpaceError(
                    f"knob '{knob.name}': expected one of its candidates, found {wanted!r}"
                )
            point.append(index)
        return tuple(point)

    def check(self, point: Point) -> str | None:
        """Why `point` is invalid (checked before building), or None if it may be built."""
        if len(point) != len(self.knobs) or any(
            not 0 <= i < len(knob.candidates) for knob, i in zip(self.knobs, point, strict=False)
        ):
            return f"expected one candidate index per knob ({len(self.knobs)}), found {point}"
        return None

    @abstractmethod
    def render(self, point: Point) -> str:
        """The schedule at `point` as transform-script text."""
        raise NotImplementedError

    def features(self, point: Point) -> list[float]:
        """Numbers describing the loop nest `point` makes (fixed length for a space)."""
        return [math.log2(1 + float(i)) for i in point]

    def default_point(self) -> Point | None:
        """The point that is `loop-default-schedule`'s own schedule (the `rules` space's
        default knobs), which the search measures first; None where the default schedule is no
        point of the space (it is then measured as the tuner's 'default' baseline)."""
        return None

    # -- sampling ----------------------------------------------------------------------------

    def random_point(self, rng: random.Random) -> Point:
        return tuple(rng.randrange(len(knob.candidates)) for knob in self.knobs)

    def random_valid_point(self, rng: random.Random, tries: int = 1000) -> Point | None:
        """A uniformly drawn valid point, or None after `tries` invalid draws."""
        for _ in range(tries):
            point = self.random_point(rng)
            if self.check(point) is None:
                return point
        return None

    def grid(self) -> Iterator[Point]:
        """Every point, in lexicographic order of candidate indices (grid search)."""
        return itertools.product(*(range(len(knob.candidates)) for knob in self.knobs))

    def mutate(self, point: Point, rng: random.Random) -> Point:
        """`point` with one knob (of more than one candidate) changed to another candidate."""
        choices = [i for i, knob in enumerate(self.knobs) if len(knob.candidates) > 1]
        if not choices:
            return point
        index = rng.choice(choices)
        size = len(self.knobs[index].candidates)
        new = list(point)
        new[index] = (point[index] + rng.randrange(1, size)) % size
        return tuple(new)

    def crossover(self, a: Point, b: Point, rng: random.Random) -> Point:
        """Each knob from `a` or `b` at random."""
        return tuple(x if rng.random() < 0.5 else y for x, y in zip(a, b, strict=True))


# ----------------------------------------------------------------------------------------------
# (a) Templates: scripts with annotated parameters
# ----------------------------------------------------------------------------------------------

Check = Callable[[Mapping[str, Any]], str | None]


class TemplateSpace(Space):
    """A transform script whose annotated `transform.param.constant`s are the knobs.

    A choice knob (AutoTVM's `define_knob`):
        %u = transform.param.constant 1 : i64 {dlc.knob = "unroll",
               dlc.candidates = array<i64: 1, 2, 4>} -> !transform.param<i64>
    A split knob (`define_split`): several parameters with the same `dlc.knob`, each with
    `dlc.split = <extent>` and `dlc.part = k` (k = 1 for the outermost inner factor); the knob's
    candidates are the exact factorizations of the extent into `max(k) + 1` factors, outermost
    first, the outermost (the outer loop's trip count) being implied; `dlc.part = array<i64: 1,
    2>` makes a parameter the product of those factors (to split in two steps):
        %t1 = transform.param.constant 1 : i64 {dlc.knob = "tile_i", dlc.split = 1024 : i64,
               dlc.part = 1 : i64} -> !transform.param<i64>
    Rendering sets each annotated parameter to the point's value and drops the annotations.
    `checks` are extra validity rules over the knob values (by name).
    """

    def __init__(
        self,
        name: str,
        script: str,
        checks: Sequence[Check] = (),
        max_inner: int | None = None,
    ) -> None:
        self.name = name
        self.script = script
        self.checks = tuple(checks)
        self._module = parse_module(script, make_context())
        self.knobs = tuple(self._collect_knobs(max_inner))

    @classmethod
    def from_script(cls, script: str, name: str = "template", checks: Sequence[Check] = ()
                    ) -> TemplateSpace:
        """A template space from annotated script text."""
        return cls(name, script, checks)

    def _params(self) -> list[Any]:
        from dlc.dialects.transform_loop.ops import ParamConstantOp

        return [
            op for op in self._module.walk()
            if isinstance(op, ParamConstantOp) and KNOB_ATTR in op.attributes
        ]

    def _collect_knobs(self, max_inner: int | None) -> Iterator[Knob]:
        splits: dict[str, tuple[int, int]] = {}
        order: list[str] = []
        choices: dict[str, tuple[int, ...]] = {}
        for op in self._params():
            knob = _str(op.attributes[KNOB_ATTR], KNOB_ATTR)
            if knob not in order:
                order.append(knob)
            if SPLIT_ATTR in op.attributes:
                extent = _int(op.attributes[SPLIT_ATTR], SPLIT_ATTR)
                part = max(_parts(op.attributes.get(PART_ATTR, IntegerAttr(1, i64))))
                _, parts = splits.get(knob, (extent, 1))
                splits[knob] = (extent, max(parts, part + 1))
            elif CANDIDATES_ATTR in op.attributes:
                candidates = op.attributes[CANDIDATES_ATTR]
                if isinstance(candidates, DenseArrayBase):
                    choices[knob] = tuple(int(v) for v in candidates.get_values())
                elif isinstance(candidates, ArrayAttr):
                    choices[knob] = tuple(_int(v, CANDIDATES_ATTR) for v in candidates.data)
            else:
                raise SpaceError(
                    f"'transform.param.constant' op with {KNOB_ATTR} = \"{knob}\": expected "
                    f"'{CANDIDATES_ATTR}' or '{SPLIT_ATTR}', found neither"
                )
        for knob in order:
            if knob in splits:
                extent, parts = splits[knob]
                yield Knob(knob, divisor_splits(extent, parts, max_inner))
            else:
                yield Knob(knob, choices[knob])

    def check(self, point: Point) -> str | None:
        reason = super().check(point)
        if reason is not None:
            return reason
        values = self.choices(point)
        for rule in self.checks:
            reason = rule(values)
            if reason is not None:
                return reason
        return None

    def source(self, values: Mapping[str, Any]) -> str:
        """The annotated script text a point is rendered from (the template itself; a subclass
        may add ops that depend on the knob values)."""
        _ = values
        return self.script

    def render(self, point: Point) -> str:
        values = self.choices(point)
        text = self.source(values)
        module = self._module.clone() if text is self.script else parse_module(text)
        from dlc.dialects.transform_loop.ops import ParamConstantOp

        for op in module.walk():
            if not isinstance(op, ParamConstantOp) or KNOB_ATTR not in op.attributes:
                continue
            knob = _str(op.attributes.pop(KNOB_ATTR), KNOB_ATTR)
            value = values[knob]
            if isinstance(value, tuple):
                parts = _parts(op.attributes.pop(PART_ATTR, IntegerAttr(1, i64)))
                value = math.prod(value[part] for part in parts)
            for attr in (SPLIT_ATTR, CANDIDATES_ATTR, PART_ATTR):
                op.attributes.pop(attr, None)
            op.properties["value"] = IntegerAttr(int(value), i64)
        return str(module) + "\n"

    def features(self, point: Point) -> list[float]:
        found: list[float] = []
        for value in self.choices(point).values():
            parts = value if isinstance(value, tuple) else (value,)
            found.extend(math.log2(1 + float(v)) for v in parts)
        return found


def _str(attr: Any, what: str) -> str:
    if not isinstance(attr, StringAttr):
        raise SpaceError(f"expected a string for '{what}', found {attr}")
    return attr.data


def _parts(attr: Any) -> list[int]:
    """`dlc.part`: one factor (`2 : i64`) or the product of several (`array<i64: 1, 2>`)."""
    if isinstance(attr, DenseArrayBase):
        parts = [int(v) for v in attr.get_values()]
        if parts:
            return parts
    return [_int(attr, PART_ATTR)]


def _int(attr: Any, what: str) -> int:
    if not isinstance(attr, IntegerAttr):
        raise SpaceError(f"expected an integer for '{what}', found {attr}")
    return int(attr.value.data)


def _knob_param(hint: str, knob: str, value: int, extra: str) -> str:
    return (
        f"%{hint} = transform.param.constant {value} : i64 {{{KNOB_ATTR} = \"{knob}\", {extra}}}"
        f" -> {_PARAM}"
    )


def matmul_template(workload: Workload, target: CpuTarget) -> TemplateSpace:
    """The built-in GEMM template (TVM's x86 dense schedule, as knobs).

    The anchor block must have two spatial axes (i, j) and one reduction axis (k), its output
    indexed `[i, j]`. Knobs: `tile_i` and `tile_j` (3-level splits), `tile_k` (2-level split),
    `parallel` (0: none, 1: the outer i loop; the renderer also knows 2: outer i and j fused,
    left out of the candidates while `transform.loop.parallel` cannot prove a fused loop's
    iterations disjoint). The register tile (`tile_i[2] x tile_j[2]`) is the innermost band,
    `tile_j[2]` vectorized.
    """
    block = workload.info.anchor()
    if len(block.spatial) != 2 or len(block.reduction) != 1:
        raise SpaceError(
            f"matmul template: expected a block with 2 spatial and 1 reduction axes, found "
            f"'{block.name}' with {len(block.spatial)} and {len(block.reduction)}"
        )
    (i, j), (k,) = block.spatial, block.reduction
    extent_i, extent_j, extent_k = block.extent(i), block.extent(j), block.extent(k)
    axes = [axis for axis, _ in block.loops]
    lanes = target.lanes(4)
    w = ScriptWriter()
    split = f"{SPLIT_ATTR} = {{}} : i64, {PART_ATTR} = {{}}"
    for hint, knob, extent, part in (
        ("ti_rest", "tile_i", extent_i, "array<i64: 1, 2>"), ("ti2", "tile_i", extent_i, "2 : i64"),
        ("tj_rest", "tile_j", extent_j, "array<i64: 1, 2>"), ("tj2", "tile_j", extent_j, "2 : i64"),
        ("tk1", "tile_k", extent_k, "1 : i64"),
    ):
        w.lines.append("    " + _knob_param(hint, knob, 1, split.format(extent, part)))
    w.lines.append(
        "    " + _knob_param("par", "parallel", 0, f"{CANDIDATES_ATTR} = array<i64: 0, 1>")
    )
    b = w.match_block(block.name)
    loops = dict(zip(axes, w.get_loops(b, axes), strict=True))
    if workload.info.init_of(block) is not None:
        w.decompose_reduction(b, loops[axes[0]])

    def split_by(loop: str, params: list[str], names: list[str]) -> list[str]:
        types = ", ".join([_ANY] + [_PARAM] * len(params))
        w.emit(f"{', '.join(names)} = transform.loop.split {loop} [{', '.join(params)}] "
               f": ({types}) -> ({', '.join([_ANY] * len(names))})")
        return names

    i0, i_rest = split_by(loops[i], ["%ti_rest"], ["%ti_0", "%ti_rest_loop"])
    j0, j_rest = split_by(loops[j], ["%tj_rest"], ["%tj_0", "%tj_rest_loop"])
    w.reorder([i0, j0, i_rest, j_rest, loops[k]])
    w.lines.append(PARALLEL_MARKER)
    i1, i2 = split_by(i_rest, ["%ti2"], ["%ti_1", "%ti_2"])
    j1, j2 = split_by(j_rest, ["%tj2"], ["%tj_1", "%tj_2"])
    k0, k1 = split_by(loops[k], ["%tk1"], ["%tk_0", "%tk_1"])
    w.reorder([i1, j1, k0, k1, i2, j2])
    w.mark("vectorize", j2)
    script = w.text()
    # `parallel` is rendered at PARALLEL_MARKER by `_MatmulTemplate.source`: it changes the
    # script's ops, not only a parameter.

    def register_tile(values: Mapping[str, Any]) -> str | None:
        rows, width = values["tile_i"][2], values["tile_j"][2]
        if width % min(lanes, 4) or width > 4 * lanes:
            return f"vector width {width} is not a multiple of 4 lanes up to {4 * lanes}"
        vectors = rows * math.ceil(width / lanes)
        if vectors + 2 > target.vector_registers:
            return (
                f"register tile {rows}x{width} needs {vectors} + 2 vector registers, the "
                f"target has {target.vector_registers}"
            )
        return None

    def parallel_extent(values: Mapping[str, Any]) -> str | None:
        outer = values["tile_i"][0] * (values["tile_j"][0] if values["parallel"] == 2 else 1)
        if values["parallel"] and outer < target.threads:
            return f"parallel extent {outer} is below the {target.threads} threads"
        return None

    space = _MatmulTemplate("matmul-template", script, (register_tile, parallel_extent))
    space.outer_loops = (i0, j0)
    return space


RULE_KNOBS: dict[str, tuple[int, ...]] = {
    "rows": (2, 4, 6, 8, 12),
    "accumulators": (8, 12, 16, 20, 24, 28),
    "pack_rows": (0, 1),
    "l2_kib": (256, 512, 1024, 2048),
}
"""The candidates of the rules template's knobs (see `transform.loop.apply_rules`)."""


def default_rule_knobs() -> tuple[int, int, int, int]:
    """`loop-default-schedule`'s own rows, accumulators, A packing and L2 KiB (0: the target's),
    read from the pass's defaults."""
    from dlc.rewrites.loop_default_schedule import LoopDefaultSchedulePass

    default = LoopDefaultSchedulePass()
    return (default.max_rows, default.max_accumulators, int(default.pack_rows),
            default.l2_bytes // 1024)


def default_scheduled_nests(workload: Workload, target: CpuTarget) -> list[BlockInfo]:
    """The first block of each nest of `workload` other than the anchor's that a default rule
    schedules (tried on a copy): the rules template schedules those nests as
    `loop-default-schedule` does (a conv2d's padding, a softmax's other passes)."""
    from dlc.dialects.loop.ops import ForOp
    from dlc.rewrites.schedule_rules import CpuConfig, schedule_nest

    anchor = workload.info.anchor()
    firsts: dict[int, BlockInfo] = {}
    for block in workload.info.blocks:
        firsts.setdefault(block.nest, block)
    function = kernel_function_of(workload.module())
    tops = [op for op in function.body.block.ops if isinstance(op, ForOp | BlockOp)]
    config = CpuConfig.for_target(target)
    found: list[BlockInfo] = []
    for nest, top in enumerate(tops):
        block = firsts.get(nest)
        if nest == anchor.nest or block is None or not block.loops:
            continue
        if isinstance(top, ForOp) and schedule_nest(top, config) is not None:
            found.append(block)
    return found


def rules_template(workload: Workload, target: CpuTarget) -> TemplateSpace:
    """The default schedule's rules as a template (TVM's x86 `dense_pack`/`conv2d_NCHWc`
    templates): `transform.loop.apply_rules` on the anchor block's nest, its knobs the
    micro-kernel's most rows, its vector accumulators, whether GEMM's A is packed too and the L2
    size its B panels are grouped for; threads are the target's. `loop-default-schedule`'s own
    choice (8 rows, three quarters of the vector registers as accumulators, no A packing, the
    target's L2) is one of its points; more accumulators than the registers hold are not. The
    function's other nests get the default rules with the default knobs, as the compile would
    schedule them, so that every point is a whole kernel as fast as the default or faster."""
    block = workload.info.anchor()
    axes = [axis for axis, _ in block.loops]
    w = ScriptWriter()
    default = default_rule_values(target)
    for knob, candidates in RULE_KNOBS.items():
        if knob == "accumulators":  # the tile, the reused vectors and a broadcast in registers
            candidates = tuple(c for c in candidates if c + 2 <= target.vector_registers)
        # the default is a point; 0 ("the target's") last, after the numbers
        candidates = tuple(sorted({*candidates, default[knob]}, key=lambda c: (c == 0, c)))
        listed = ", ".join(str(c) for c in candidates)
        w.lines.append("    " + _knob_param(knob, knob, candidates[-1],
                                            f"{CANDIDATES_ATTR} = array<i64: {listed}>"))
    defaults = ", ".join(str(k) for k in default_rule_knobs())
    for other in default_scheduled_nests(workload, target):
        outer = w.get_loops(w.match_block(other.name), [axis for axis, _ in other.loops])[0]
        w.emit(f"transform.loop.apply_rules {outer} [{target.threads}, {defaults}] : {_ANY}")
    b = w.match_block(block.name)
    loops = w.get_loops(b, axes)
    params = ", ".join(f"%{knob}" for knob in RULE_KNOBS)
    types = ", ".join([_ANY] + [_PARAM] * len(RULE_KNOBS))
    w.emit(f"transform.loop.apply_rules {loops[0]} [{target.threads}, {params}] : {types}")
    return _RulesTemplate("rules-template", w.text(), default_values=default)


def default_rule_values(target: CpuTarget) -> dict[str, int]:
    """`default_rule_knobs` as the rules template's knob values on `target` (its zeros, "the
    target's", resolved), so that the default schedule is one of the template's points."""
    rows, accumulators, pack_rows, l2_kib = default_rule_knobs()
    return {
        "rows": rows,  # 0: the target's (`CpuConfig.max_rows` or `max_gemm_rows` by nest)
        "accumulators": accumulators or target.vector_registers * 3 // 4,
        "pack_rows": pack_rows,
        "l2_kib": l2_kib or target.l2_bytes // 1024,
    }


class _RulesTemplate(TemplateSpace):
    """The rules template, whose default knobs are the default schedule."""

    def __init__(self, name: str, script: str, *, default_values: Mapping[str, int]) -> None:
        super().__init__(name, script)
        self.default_values = dict(default_values)

    def default_point(self) -> Point | None:
        return self.point_of(self.default_values)


PARALLEL_MARKER = "    // dlc: parallel"
"""Where the matmul template's `parallel` knob puts its ops (after the first tiling step, so
that `parallel` sees each outer loop's body index with one inner term)."""


class _MatmulTemplate(TemplateSpace):
    """The matmul template: `parallel` fuses and marks the outer loops at its marker."""

    outer_loops: tuple[str, str] = ("", "")

    def source(self, values: Mapping[str, Any]) -> str:
        mode = values["parallel"]
        if mode == 0:
            return self.script
        any_op = _ANY
        outer_i, outer_j = self.outer_loops
        if mode == 1:
            extra = f"    transform.loop.parallel {outer_i} : {any_op}\n"
        else:
            extra = (
                f"    %ij = transform.loop.fuse {outer_i}, {outer_j} : ({any_op}, {any_op}) -> "
                f"{any_op}\n"
                f"    transform.loop.parallel %ij : {any_op}\n"
            )
        return self.script.replace(PARALLEL_MARKER + "\n", extra, 1)


# ----------------------------------------------------------------------------------------------
# (b) Generated sketches
# ----------------------------------------------------------------------------------------------

SPATIAL_LEVELS = 4
"""Spatial axes are tiled into S0 S1 S2 S3 (SSRSRS: S0 S1 R0 S2 R1 S3)."""

REDUCTION_LEVELS = 2
"""Reduction axes are tiled into R0 R1."""


@dataclass(frozen=True)
class _Layout:
    """Where each tiled loop of the anchor ends up: (axis, level) in nest order."""

    order: tuple[tuple[str, int], ...]
    untiled: tuple[str, ...]


class SketchSpace(Space):
    """A space generated from a workload's structure (Ansor's sketch rules, MetaSchedule's
    `ScheduleRule`s), whose candidates are `Action`s.

    Rules, for the anchor block (the heaviest reduction) and the blocks around it:
    - inline: an injective producer of an intermediate buffer the anchor reads (a pad) may be
      `compute_inline`d (`inline` knob), else it is parallelized and vectorized as a nest;
    - multi-level tiling: `decompose_reduction` hoists the init, then every spatial axis of
      extent > 1 is split into 4 levels and every reduction axis into 2 (`tile` knobs), reordered
      S0 S1 R0 S2 R1 S3 (axes in their original order within a level);
    - parallel: the first 1..n S0 loops fused and parallelized (`parallel` knob, 0: none);
    - vectorize: the S3 loop of the axis the output is contiguous in (`vectorize` knob);
    - unroll: the other S3 loops fully unrolled in the IR (`unroll` knob);
    - epilogue: an elementwise consumer of the anchor's result `reverse_compute_at` the last S1
      loop (`epilogue` knob), else scheduled as its own nest;
    - cache write: the anchor writes a local copy written back after the nest (`cache_write`
      knob), offered only when the output fits in L1 (the copy is the whole buffer);
    - pack: an operand read along the vector axis and reduction axes only (GEMM's B) may be
      packed into panels as wide as the vector tile (`pack` knob; TVM's x86 dense layout).
    Other nests (the init, producers, consumers) get: the outermost spatial loop of extent > 1
    parallel, and the innermost loop vectorized when its extent divides into vector lanes.
    Rules are kept only if they apply to the workload (checked once by applying them): each
    nest rule, each on/off knob, each `parallel` candidate; a pair of knobs that fails together
    becomes a conflict that `check` rejects.
    """

    def __init__(self, workload: Workload, target: CpuTarget, *, verify_rules: bool = True
                 ) -> None:
        self.workload = workload
        self.target = target
        self.name = "sketch"
        info = workload.info
        self.anchor = info.anchor()
        self.init = info.init_of(self.anchor)
        anchor_axes = dict(self.anchor.loops)
        self.tiled_spatial = tuple(a for a in self.anchor.spatial if anchor_axes.get(a, 1) > 1)
        self.tiled_reduction = tuple(
            a for a in self.anchor.reduction if anchor_axes.get(a, 1) > 1
        )
        self.vector_axis = self._contiguous_axis()
        knobs: list[Knob] = []
        for axis in self.tiled_spatial:
            knobs.append(Knob(f"tile.{axis}", tuple(
                Action("tile", axis, split)
                for split in divisor_splits(anchor_axes[axis], SPATIAL_LEVELS, 64)
            )))
        for axis in self.tiled_reduction:
            knobs.append(Knob(f"tile.{axis}", tuple(
                Action("tile", axis, split)
                for split in divisor_splits(anchor_axes[axis], REDUCTION_LEVELS, 64)
            )))
        knobs.append(Knob("parallel", tuple(
            Action("parallel", self.anchor.name, n) for n in range(len(self.tiled_spatial) + 1)
        )))
        if self.vector_axis is not None:
            knobs.append(Knob("vectorize", (
                Action("vectorize", self.anchor.name, False),
                Action("vectorize", self.anchor.name, True),
            )))
        if len(self.tiled_spatial) > 1:
            knobs.append(Knob("unroll", (
                Action("unroll", self.anchor.name, False),
                Action("unroll", self.anchor.name, True),
            )))
        self.producers = [p for p in info.producers_of(self.anchor) if not p.reduction]
        for producer in self._inlinable(self.producers):
            knobs.append(Knob(f"inline.{producer.name}", (
                Action("inline", producer.name, False), Action("inline", producer.name, True),
            )))
        self.consumers = [
            c for c in info.consumers_of(self.anchor) if not c.reduction and c is not self.init
        ]
        for consumer in self.consumers:
            knobs.append(Knob(f"epilogue.{consumer.name}", (
                Action("epilogue", consumer.name, False), Action("epilogue", consumer.name, True),
            )))
        self.packable = self._packable_operands()
        for operand in self.packable:
            knobs.append(Knob(f"pack.{operand}", (
                Action("pack", str(operand), False), Action("pack", str(operand), True),
            )))
        output = next(iter(self.anchor.writes_buffers))
        output_bytes = math.prod(info.buffer_shapes[output]) * 4
        if output_bytes <= target.l1d_bytes and output not in info.allocs:
            knobs.append(Knob("cache_write", (
                Action("cache_write", self.anchor.name, False),
                Action("cache_write", self.anchor.name, True),
            )))
        self.knobs = tuple(knobs)
        self._nest_rules: dict[str, tuple[bool, bool]] = {}
        self.conflicts: set[tuple[str, str]] = set()
        if verify_rules:
            self._verify_rules()

    # -- structure -------------------------------------------------------------------------

    def _inlinable(self, producers: Sequence[BlockInfo]) -> list[BlockInfo]:
        """The producers `compute_inline` accepts (asked of the primitive's own legality rule,
        `compute_inline_refusal`): an inline that would be refused, or that would read a buffer
        already freed (Winograd's input transform), is never proposed."""
        if not producers:
            return []
        blocks = [op for op in self.workload.module().walk() if isinstance(op, BlockOp)]
        found = [(p, blocks[self.workload.info.blocks.index(p)]) for p in producers]
        assert all(block.block_name.data == p.name for p, block in found)
        return [p for p, block in found if compute_inline_refusal(block) is None]

    def _contiguous_axis(self) -> str | None:
        """The tiled spatial axis the anchor's output store is indexed by last, alone."""
        for access in self.anchor.accesses:
            if access.is_write and access.axes and len(access.axes[-1]) == 1:
                (axis,) = access.axes[-1]
                if axis in self.tiled_spatial:
                    return axis
        return None

    def _packable_operands(self) -> list[int]:
        """The anchor's `reads` operands indexed last by the vector axis alone and by reduction
        axes only otherwise (GEMM's B): `pack` can lay them out in vector-wide panels."""
        if self.vector_axis is None:
            return []
        found: list[int] = []
        for operand, buffer in enumerate(self.anchor.reads_order):
            accesses = [a for a in self.anchor.accesses if a.buffer == buffer and not a.is_write]
            if len(accesses) != 1 or len(accesses[0].axes) < 2:
                continue
            *outer, last = accesses[0].axes
            if last != frozenset({self.vector_axis}):
                continue
            if all(axes <= set(self.anchor.reduction) for axes in outer):
                found.append(operand)
        return found

    def _layout(self) -> _Layout:
        spatial, reduction = self.tiled_spatial, self.tiled_reduction
        levels = [
            [(a, 0) for a in spatial], [(a, 1) for a in spatial], [(a, 0) for a in reduction],
            [(a, 2) for a in spatial], [(a, 1) for a in reduction], [(a, 3) for a in spatial],
        ]
        untiled = tuple(a for a, _ in self.anchor.loops if a not in spatial + reduction)
        return _Layout(tuple(x for level in levels for x in level), untiled)

    def tiles(self, point: Point) -> dict[str, tuple[int, ...]]:
        """Each tiled axis's factors at `point`, outermost first."""
        return {
            action.target: action.arg  # type: ignore[misc]
            for action in self.choices(point).values()
            if isinstance(action, Action) and action.op == "tile"
        }

    def flag(self, point: Point, knob: str) -> Any:
        action = self.choices(point).get(knob)
        return None if action is None else action.arg

    # -- validity ----------------------------------------------------------------------------

    def check(self, point: Point) -> str | None:
        reason = super().check(point)
        if reason is not None:
            return reason
        for a, b in self.conflicts:
            if self.flag(point, a) and self.flag(point, b):
                return f"'{a}' and '{b}' do not apply together to this workload"
        return self._check_point(point)

    def _check_point(self, point: Point) -> str | None:
        tiles = self.tiles(point)
        lanes = self.target.lanes(4)
        parallel = self.flag(point, "parallel") or 0
        if parallel:
            extent = math.prod(tiles[a][0] for a in self.tiled_spatial[:parallel])
            if extent < self.target.threads:
                return f"parallel extent {extent} is below the {self.target.threads} threads"
        register_rows = math.prod(
            tiles[a][3] for a in self.tiled_spatial if a != self.vector_axis
        )
        if self.flag(point, "vectorize"):
            assert self.vector_axis is not None
            width = tiles[self.vector_axis][3]
            if width % min(4, lanes) or width > 4 * lanes:
                return (
                    f"vector width {width} of axis '{self.vector_axis}' is not a multiple of 4 "
                    f"lanes up to {4 * lanes}"
                )
            vectors = register_rows * math.ceil(width / lanes)
            if vectors + 2 > self.target.vector_registers:
                return (
                    f"register tile of {vectors} vectors + 2 exceeds the target's "
                    f"{self.target.vector_registers} vector registers"
                )
        if self.flag(point, "unroll"):
            if register_rows > MAX_UNROLL // 4 or register_rows == 1:
                return f"unrolling {register_rows} copies of the register tile"
        for operand in self.packable:
            if self.flag(point, f"pack.{operand}") and not self.flag(point, "vectorize"):
                return f"packing operand {operand} in panels needs the vectorized tile"
        return None

    # -- rendering ---------------------------------------------------------------------------

    def render(self, point: Point) -> str:
        return self._render(point, nest_rules=self._nest_rules)

    def _render(self, point: Point, nest_rules: Mapping[str, tuple[bool, bool]]) -> str:
        w = ScriptWriter()
        for producer in self.producers:
            handle = w.match_block(producer.name)
            if self.flag(point, f"inline.{producer.name}"):
                w.compute_inline(handle)
            else:
                self._schedule_nest(w, handle, producer, nest_rules)
        anchor = self.anchor
        b = w.match_block(anchor.name)
        if self.flag(point, "cache_write"):
            write_back = w.cache_write(b, "local")
            self._schedule_nest(w, write_back, None, nest_rules, "write_back")
        axes = [axis for axis, _ in anchor.loops]
        loops = dict(zip(axes, w.get_loops(b, axes), strict=True))
        if self.init is not None:
            init = w.decompose_reduction(b, loops[axes[0]])
            self._schedule_nest(w, init, self.init, nest_rules)
        pieces = self._render_tiling(w, point, loops)
        self._render_loop_kinds(w, point, pieces, nest_rules)
        return w.text()

    def _render_tiling(self, w: ScriptWriter, point: Point, loops: Mapping[str, str]
                       ) -> dict[tuple[str, int], str]:
        """Multi-level tiling, in two steps: each spatial axis is first split into its S0 loop
        and the rest, the S0 loops go outermost and the first `parallel` of them are fused and
        parallelized; then the rests are split into S1 S2 S3, the reduction axes into R0 R1,
        and the band under the S0 loops is reordered S1 R0 S2 R1 S3. (Marking the S0 loop
        parallel while its body indexes with one inner term keeps `parallel`'s disjointness
        proof simple.) Returns the loop handle of each (axis, level)."""
        tiles = self.tiles(point)
        pieces: dict[tuple[str, int], str] = {}
        rests: dict[str, str] = {}
        for axis in self.tiled_spatial:
            outer, rest = w.split(loops[axis], [math.prod(tiles[axis][1:])], axis)
            pieces[(axis, 0)], rests[axis] = outer, rest
        layout = self._layout()
        untiled = [loops[a] for a in layout.untiled]
        first = untiled + [pieces[(a, 0)] for a in self.tiled_spatial]
        first += [rests[a] for a in self.tiled_spatial]
        first += [loops[a] for a in self.tiled_reduction]
        if len(first) > 1:
            w.reorder(first)
        parallel = self.flag(point, "parallel") or 0
        if parallel:
            outer_loops = [pieces[(axis, 0)] for axis in self.tiled_spatial[:parallel]]
            fused = outer_loops[-1]
            for loop in reversed(outer_loops[:-1]):
                fused = w.fuse(loop, fused)
            w.mark("parallel", fused)
        for axis in self.tiled_spatial:
            inner = w.split(rests[axis], tiles[axis][2:], f"{axis}_in")
            for level, handle in enumerate(inner, start=1):
                pieces[(axis, level)] = handle
        for axis in self.tiled_reduction:
            for level, handle in enumerate(w.split(loops[axis], tiles[axis][1:], axis)):
                pieces[(axis, level)] = handle
        band = [pieces[x] for x in layout.order if x[1] > 0 or x[0] in self.tiled_reduction]
        if len(band) > 1:
            w.reorder(band)
        return pieces

    def _render_loop_kinds(
        self,
        w: ScriptWriter,
        point: Point,
        pieces: Mapping[tuple[str, int], str],
        nest_rules: Mapping[str, tuple[bool, bool]],
    ) -> None:
        """Vectorize, epilogues, unrolling and packing, after the anchor's tiling."""
        if self.flag(point, "vectorize"):
            assert self.vector_axis is not None
            w.mark("vectorize", pieces[(self.vector_axis, 3)])
        last_s1 = pieces[(self.tiled_spatial[-1], 1)] if self.tiled_spatial else None
        for consumer in self.consumers:
            handle = w.match_block(consumer.name)
            if self.flag(point, f"epilogue.{consumer.name}") and last_s1 is not None:
                w.reverse_compute_at(handle, last_s1)
            else:
                self._schedule_nest(w, handle, consumer, nest_rules)
        if self.flag(point, "unroll"):
            for axis in self.tiled_spatial:
                if axis != self.vector_axis:
                    w.unroll(pieces[(axis, 3)])
        for operand in self.packable:
            if self.flag(point, f"pack.{operand}"):
                self._render_pack(w, point, operand)

    def _render_pack(self, w: ScriptWriter, point: Point, operand: int) -> None:
        """`pack` an operand into panels as wide as the vector tile, panel index outermost."""
        assert self.vector_axis is not None
        width = self.tiles(point)[self.vector_axis][3]
        buffer = self.anchor.reads_order[operand]
        rank = len(self.workload.info.buffer_shapes[buffer])
        tiles = ", ".join(["0"] * (rank - 1) + [str(width)])
        perm = ", ".join(str(d) for d in [rank - 1, *range(rank - 1)])
        block = w.match_block(self.anchor.name)
        name = w.fresh("packed")
        w.emit(f"{name} = transform.loop.pack {block}, {operand}, [{tiles}] outer_perm [{perm}] "
               f": ({_ANY}) -> {_ANY}")

    def _schedule_nest(
        self,
        w: ScriptWriter,
        handle: str,
        block: BlockInfo | None,
        nest_rules: Mapping[str, tuple[bool, bool]],
        name: str | None = None,
    ) -> None:
        """The rule for nests other than the anchor's: parallel outer, vectorized inner."""
        if block is None:
            return
        key = name or block.name
        parallel, vectorize = nest_rules.get(key, (False, False))
        if not (parallel or vectorize):
            return
        axes = [axis for axis, _ in block.loops]
        loops = w.get_loops(handle, axes)
        extents = dict(block.loops)
        if parallel:
            outer = next(
                (i for i, a in enumerate(axes) if extents[a] > 1 and a in block.spatial), None
            )
            if outer is not None:
                w.mark("parallel", loops[outer])
        if vectorize:
            inner = axes[-1]
            lanes = self.target.lanes(4)
            if extents[inner] % lanes == 0 and extents[inner] > lanes:
                _, vector = w.split(loops[-1], [lanes], inner)
                w.mark("vectorize", vector)
            else:
                w.mark("vectorize", loops[-1])

    def _nest_candidates(self) -> list[tuple[str, BlockInfo]]:
        found = [(p.name, p) for p in self.producers]
        if self.init is not None:
            found.append((self.init.name, self.init))
        found += [(c.name, c) for c in self.consumers]
        return found

    def _flags(self) -> list[str]:
        """The on/off knobs."""
        return [
            knob.name for knob in self.knobs
            if all(isinstance(c, Action) and isinstance(c.arg, bool) for c in knob.candidates)
        ]

    def _point_with(self, on: set[str], rng: random.Random) -> Point | None:
        """A valid point with the flags in `on` set (and those they need) and the others off."""
        flags = set(self._flags())
        if any(flag.startswith("pack.") for flag in on):
            on = on | {"vectorize"}
        for _ in range(200):
            point = self.random_valid_point(rng)
            if point is None:
                return None
            point = tuple(
                (1 if knob.name in on else 0) if knob.name in flags else i
                for knob, i in zip(self.knobs, point, strict=True)
            )
            if Space.check(self, point) is None and self._check_point(point) is None:
                return point
        return None

    def _verify_rules(self) -> None:
        """Decides once, by applying scripts to the workload, which rules apply to it: each nest
        rule (parallel, vectorize) alone; each flag alone (a flag that never applies is
        dropped); and each pair of flags (a failing pair becomes a conflict that `check`
        rejects)."""
        rng = random.Random(0)
        base = self._point_with(set(), rng)
        if base is None:
            return
        rules: dict[str, tuple[bool, bool]] = {}
        for name, block in self._nest_candidates():
            lanes = self.target.lanes(4)
            inner = block.loops[-1][1] if block.loops else 1
            can_vector = bool(block.loops) and not block.reduction and (
                inner % lanes == 0 or (inner % 4 == 0 and inner <= 4 * lanes)
            )
            parallel = self._applies(base, {name: (True, False)})
            vectorize = can_vector and self._applies(base, {name: (False, True)})
            rules[name] = (parallel, vectorize)
        self._nest_rules = rules
        working: list[str] = []
        for flag in self._flags():
            point = self._point_with({flag}, rng)
            if point is not None and self._applies(point, rules):
                working.append(flag)
        dropped = set(self._flags()) - set(working)
        self.knobs = tuple(knob for knob in self.knobs if knob.name not in dropped)
        self._verify_parallel(rng, rules)
        for a, b in itertools.combinations(working, 2):
            point = self._point_with({a, b}, rng)
            if point is not None and not self._applies(point, rules):
                self.conflicts.add((a, b))

    def _verify_parallel(self, rng: random.Random, rules: Mapping[str, tuple[bool, bool]]
                         ) -> None:
        """Keeps the `parallel` candidates (how many S0 loops to fuse) that apply to this
        workload, tried once each on a random point whose fused loops all have 2 or more
        iterations."""
        index = next((i for i, k in enumerate(self.knobs) if k.name == "parallel"), None)
        if index is None:
            return
        knob = self.knobs[index]
        kept = [knob.candidates[0]]
        for position, candidate in enumerate(knob.candidates[1:], start=1):
            for _ in range(50):
                point = self._point_with(set(), rng)
                if point is None:
                    break
                point = (*point[:index], position, *point[index + 1:])
                tiles = self.tiles(point)
                fused = self.tiled_spatial[:position]
                if self._check_point(point) is None and all(tiles[a][0] > 1 for a in fused):
                    if self._applies(point, rules):
                        kept.append(candidate)
                    break
        self.knobs = (*self.knobs[:index], Knob(knob.name, tuple(kept)), *self.knobs[index + 1:])

    def _applies(self, point: Point, rules: Mapping[str, tuple[bool, bool]]) -> bool:
        """Whether the script for `point` with these nest rules applies to the workload."""
        return apply_script(self.workload, self._render(point, rules)) is None

    # -- features ------------------------------------------------------------------------------

    @cached_property
    def feature_names(self) -> list[str]:
        return [name for name, _ in self._feature_pairs(next(iter(self.grid())))]

    def features(self, point: Point) -> list[float]:
        return [value for _, value in self._feature_pairs(point)]

    def _feature_pairs(self, point: Point) -> list[tuple[str, float]]:
        """Loop-nest features: tile factors, trip counts, parallel extent, vector width, unroll,
        register tile, per-level buffer footprints and arithmetic intensity."""
        tiles = self.tiles(point)
        log = math.log2
        pairs: list[tuple[str, float]] = []
        for axis, factors in tiles.items():
            pairs += [(f"tile.{axis}.{i}", log(f)) for i, f in enumerate(factors)]
        parallel = self.flag(point, "parallel") or 0
        par_extent = math.prod(tiles[a][0] for a in self.tiled_spatial[:parallel])
        pairs.append(("parallel_extent", log(par_extent)))
        pairs.append(("parallel_balance", (par_extent % max(1, self.target.threads) == 0) * 1.0))
        vector = tiles[self.vector_axis][3] if self.flag(point, "vectorize") else 1
        pairs.append(("vector_width", log(vector)))
        inner_contig = tiles[self.vector_axis][3] if self.vector_axis in tiles else 1
        pairs.append(("inner_contiguous", log(inner_contig)))
        rows = math.prod(tiles[a][3] for a in self.tiled_spatial if a != self.vector_axis)
        pairs.append(("register_rows", log(rows)))
        pairs.append(("unroll", log(rows) if self.flag(point, "unroll") else 0.0))
        for knob in self.knobs:
            if knob.name.startswith(("inline.", "epilogue.", "cache_write", "pack.")):
                pairs.append((knob.name, float(bool(self.flag(point, knob.name)))))
        flops = self.anchor.flops
        for level_name in _LEVEL_BODIES:
            extents = self._level_extents(tiles, level_name)
            footprint = 0.0
            for access in self.anchor.accesses:
                footprint += _footprint(access.axes, extents) * access.element_bytes
            work = flops * math.prod(extents.values())
            pairs.append((f"footprint.{level_name}", log(1 + footprint)))
            pairs.append((f"intensity.{level_name}", log(1 + work / max(1.0, footprint))))
            pairs.append((f"fits_l1.{level_name}", float(footprint <= self.target.l1d_bytes)))
            pairs.append((f"fits_l2.{level_name}", float(footprint <= self.target.l2_bytes)))
        outer = math.prod(tiles[a][0] * tiles[a][1] for a in self.tiled_spatial)
        pairs.append(("outer_iterations", log(outer)))
        return pairs

    def _level_extents(self, tiles: Mapping[str, tuple[int, ...]], level: str
                       ) -> dict[str, int]:
        """The extent of each axis in the body of the loops at `level` (see `_LEVEL_BODIES`)."""
        spatial_from, reduction_from = _LEVEL_BODIES[level]
        extents = {axis: math.prod(tiles[axis][spatial_from:]) for axis in self.tiled_spatial}
        for axis in self.tiled_reduction:
            extents[axis] = math.prod(tiles[axis][reduction_from:])
        return extents


_LEVEL_BODIES: dict[str, tuple[int, int]] = {
    "R1": (3, 2), "S2": (3, 1), "R0": (2, 1), "S1": (2, 0), "S0": (1, 0),
}
"""For the body of the loops at each level of S0 S1 R0 S2 R1 S3: the first spatial and the first
reduction tile level inside it (a reduction axis has levels 0 and 1; 2 means none)."""


def _footprint(axes: Sequence[frozenset[str]], extents: Mapping[str, int]) -> float:
    """Elements touched by an access over a tile: per dimension, the span of its index."""
    total = 1.0
    for dim_axes in axes:
        span = 1 + sum(extents.get(a, 1) - 1 for a in dim_axes)
        total *= span
    return total


# ----------------------------------------------------------------------------------------------
# Applying a script (in process)
# ----------------------------------------------------------------------------------------------


def apply_script(workload: Workload, script: str, module: ModuleOp | None = None) -> str | None:
    """Applies `script` to (a fresh parse of) the workload in process with the
    `loop-interpret-transforms` pass; returns the failure message, or None if every transform
    applied and the result verifies. `module`, if given, is transformed instead (in place)."""
    ctx = make_context()
    try:
        payload = module if module is not None else workload.module(ctx)
        run_script(payload, script, ctx)
        payload.verify()
    except Exception as error:  # noqa: BLE001 - any failure is the point's reason
        return f"{type(error).__name__}: {error}"
    return None


def make_space(workload: Workload, target: CpuTarget, kind: str | Path = "sketch") -> Space:
    """The space of `kind` for `workload`: "sketch" (generated), "template" (the built-in GEMM
    template), "rules" (the default schedule's rules with their knobs) or the path of an
    annotated template script (see `TemplateSpace`)."""
    if isinstance(kind, Path):
        return TemplateSpace.from_script(kind.read_text(), kind.stem)
    if kind == "sketch":
        return SketchSpace(workload, target)
    if kind == "template":
        return matmul_template(workload, target)
    if kind == "rules":
        return rules_template(workload, target)
    raise SpaceError(
        f"expected a space 'sketch', 'template', 'rules' or a template file, found '{kind}'"
    )
