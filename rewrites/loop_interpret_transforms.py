"""The `loop-interpret-transforms` pass: runs a transform script (a schedule) on loop-level IR.

Counterpart: MLIR's `transform-interpreter` pass with the transform dialect's loop extensions, and
TVM's `tir.Schedule` replay. xDSL's `Interpreter` walks the script; `TransformFunctions` runs the
upstream ops (named_sequence, yield, structured.match, apply_registered_pass), and
`LoopTransformFunctions` below runs `transform.loop.*`, `transform.param.constant`,
`transform.split_handle` and `transform.merge_handles` by calling the primitives of
rewrites/schedule/.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from dlc.dialects.dominance import verify_dominance
from dlc.dialects.loop.ops import BlockOp, ForOp
from dlc.dialects.transform_loop import ops as tl
from dlc.rewrites.pass_target import cpu_target_for, gpu_target_for
from dlc.rewrites.schedule import (
    bind,
    block_rows,
    cache_read,
    cache_write,
    compute_at,
    compute_inline,
    decompose_reduction,
    fuse,
    get_loops,
    match_blocks,
    match_loop,
    pack,
    parallel,
    reorder,
    reverse_compute_at,
    split,
    split_peeled,
    tensorize,
    tile,
    unroll,
    vectorize,
)
from dlc.rewrites.schedule.common import ScheduleError, describe, is_live
from dlc.target import CpuTarget
from xdsl.context import Context
from xdsl.dialects import builtin, transform
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.transform import OperationHandle, TransformFunctions
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ParseError, PassFailedException, VerifyException

_PayloadT = TypeVar("_PayloadT", bound=Operation)


def _handle_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a handle"


@register_impls
class LoopTransformFunctions(InterpreterFunctions):
    """Interpreter functions of dlc's transform ops over `OperationHandle`s.

    Params (`!transform.param<i64>`) are tuples of ints. Tracks consumed handles: using one again
    fails, as does using a handle whose payload op was erased by an earlier transform.
    """

    def __init__(self, root: Operation, target: CpuTarget, vector_bits: int = 0,
                 gpu_features: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.target = target
        self.gpu_features = gpu_features
        self.vector_bits = vector_bits
        self.consumed: dict[SSAValue, str] = {}

    # -- helpers ---------------------------------------------------------------------------------

    def _fail(self, op: Operation, message: str) -> PassFailedException:
        return PassFailedException(f"'{op.name}' op {message}")

    def _payload(
        self, op: Operation, value: SSAValue, handle: Any, kind: type[_PayloadT]
    ) -> _PayloadT:
        """The one payload op of a handle operand, of the expected kind."""
        if value in self.consumed:
            raise self._fail(
                op, f"expected a valid handle, found {_handle_name(value)} already consumed by "
                f"'{self.consumed[value]}'"
            )
        assert isinstance(handle, OperationHandle)
        payload: tuple[Operation, ...] = handle.ops
        if len(payload) != 1:
            raise self._fail(
                op, f"expected {_handle_name(value)} to hold one payload op, found "
                f"{len(payload)} (use transform.split_handle)"
            )
        target = payload[0]
        if not is_live(target, self.root):
            raise self._fail(
                op, f"expected {_handle_name(value)} to refer to a live payload op, found "
                f"{describe(target)} erased by an earlier transform"
            )
        if not isinstance(target, kind):
            raise self._fail(
                op, f"expected {_handle_name(value)} to hold a '{kind.name}', found "
                f"'{target.name}'"  # type: ignore[attr-defined]
            )
        return target

    def _int(self, op: Operation, value: SSAValue, param: Any) -> int:
        if not isinstance(param, tuple) or len(param) != 1 or not isinstance(param[0], int):
            raise self._fail(
                op, f"expected {_handle_name(value)} to hold one integer parameter, "
                f"found {param!r}"
            )
        return param[0]

    def _ints(
        self, op: Operation, static: Sequence[int], operands: Sequence[SSAValue],
        params: Sequence[Any],
    ) -> list[int]:
        """A mixed static/dynamic list (`[8, %p]`) with its params filled in."""
        dynamic = iter(zip(operands, params, strict=True))
        values: list[int] = []
        for value in static:
            if value == DYNAMIC_INDEX:
                operand, param = next(dynamic)
                values.append(self._int(op, operand, param))
            else:
                values.append(value)
        return values

    def _run(self, op: Operation, handles: dict[Operation, SSAValue], body: Callable[[], Any]
             ) -> Any:
        """Runs a primitive, turning its ScheduleError into a diagnostic naming the handle."""
        try:
            return body()
        except ScheduleError as error:
            payload = error.payload
            where = ""
            if payload is not None:
                value = handles.get(payload)
                handle = f" ({_handle_name(value)})" if value is not None else ""
                where = f" on {describe(payload)}{handle}"
            raise self._fail(op, f"failed{where}: {error.reason}") from None

    def _consume(self, op: Operation, *values: SSAValue) -> None:
        for value in values:
            self.consumed[value] = op.name

    # -- matching --------------------------------------------------------------------------------

    @impl(tl.MatchBlockOp)
    def run_match_block(
        self, interpreter: Interpreter, op: tl.MatchBlockOp, args: PythonValues
    ) -> PythonValues:
        target = self._payload(op, op.target, args[0], Operation)
        name = op.block_name.data
        blocks = self._run(op, {target: op.target}, lambda: match_blocks(target, name))
        return (OperationHandle(*blocks),)

    @impl(tl.GetLoopsOp)
    def run_get_loops(
        self, interpreter: Interpreter, op: tl.GetLoopsOp, args: PythonValues
    ) -> PythonValues:
        block = self._payload(op, op.target, args[0], BlockOp)
        loops = get_loops(block)
        if len(loops) != len(op.loops):
            raise self._fail(
                op, f"expected {len(op.loops)} loops around {describe(block)}, found "
                f"{len(loops)}"
            )
        return tuple(OperationHandle(loop) for loop in loops)

    @impl(tl.MatchLoopOp)
    def run_match_loop(
        self, interpreter: Interpreter, op: tl.MatchLoopOp, args: PythonValues
    ) -> PythonValues:
        block = self._payload(op, op.target, args[0], BlockOp)
        axis = op.axis.data
        loop = self._run(op, {block: op.target}, lambda: match_loop(block, axis))
        return (OperationHandle(loop),)

    # -- loop structure --------------------------------------------------------------------------

    @impl(tl.SplitOp)
    def run_split(self, interpreter: Interpreter, op: tl.SplitOp, args: PythonValues
                  ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        factors = self._ints(op, op.static_factors.get_values(), op.dynamic_factors, args[1:])
        loops = self._run(op, {loop: op.target}, lambda: split(loop, factors))
        self._consume(op, op.target)
        return tuple(OperationHandle(new) for new in loops)

    @impl(tl.SplitPeeledOp)
    def run_split_peeled(self, interpreter: Interpreter, op: tl.SplitPeeledOp,
                         args: PythonValues) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        factor = op.factor.value.data
        loops = self._run(op, {loop: op.target}, lambda: split_peeled(loop, factor))
        self._consume(op, op.target)
        return tuple(OperationHandle(new) for new in loops)

    @impl(tl.BlockRowsOp)
    def run_block_rows(self, interpreter: Interpreter, op: tl.BlockRowsOp, args: PythonValues
                       ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        sizes, exact = op.sizes.get_values(), op.exact is not None
        loops = self._run(op, {loop: op.target}, lambda: block_rows(loop, sizes, exact))
        self._consume(op, op.target)
        return tuple(OperationHandle(new) for new in loops)

    @impl(tl.ReorderOp)
    def run_reorder(self, interpreter: Interpreter, op: tl.ReorderOp, args: PythonValues
                    ) -> PythonValues:
        loops = [
            self._payload(op, value, handle, ForOp)
            for value, handle in zip(op.loops, args, strict=True)
        ]
        handles = dict(zip(loops, op.loops, strict=True))
        self._run(op, handles, lambda: reorder(loops))
        return ()

    @impl(tl.TileOp)
    def run_tile(self, interpreter: Interpreter, op: tl.TileOp, args: PythonValues
                 ) -> PythonValues:
        outer = self._payload(op, op.outer, args[0], ForOp)
        inner = self._payload(op, op.inner, args[1], ForOp)
        sizes = self._ints(op, op.static_sizes.get_values(), op.dynamic_sizes, args[2:])
        handles = {outer: op.outer, inner: op.inner}
        loops = self._run(op, handles, lambda: tile(outer, inner, sizes))
        self._consume(op, op.outer, op.inner)
        return tuple(OperationHandle(loop) for loop in loops)

    @impl(tl.FuseOp)
    def run_fuse(self, interpreter: Interpreter, op: tl.FuseOp, args: PythonValues
                 ) -> PythonValues:
        outer = self._payload(op, op.outer, args[0], ForOp)
        inner = self._payload(op, op.inner, args[1], ForOp)
        handles = {outer: op.outer, inner: op.inner}
        fused = self._run(op, handles, lambda: fuse(outer, inner))
        self._consume(op, op.outer, op.inner)
        return (OperationHandle(fused),)

    @impl(tl.UnrollOp)
    def run_unroll(self, interpreter: Interpreter, op: tl.UnrollOp, args: PythonValues
                   ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        factor: int | None = None
        if op.factor is not None:
            factor = op.factor.value.data
        elif op.factor_param is not None:
            factor = self._int(op, op.factor_param, args[1])
        self._run(op, {loop: op.target}, lambda: unroll(loop, factor))
        self._consume(op, op.target)
        return ()

    # -- how a loop runs -------------------------------------------------------------------------

    @impl(tl.VectorizeOp)
    def run_vectorize(self, interpreter: Interpreter, op: tl.VectorizeOp, args: PythonValues
                      ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        self._run(op, {loop: op.target}, lambda: vectorize(loop))
        return ()

    @impl(tl.ParallelOp)
    def run_parallel(self, interpreter: Interpreter, op: tl.ParallelOp, args: PythonValues
                     ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        self._run(op, {loop: op.target}, lambda: parallel(loop))
        return ()

    @impl(tl.BindOp)
    def run_bind(self, interpreter: Interpreter, op: tl.BindOp, args: PythonValues
                 ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        thread = op.thread.data
        self._run(op, {loop: op.target}, lambda: bind(loop, thread))
        return ()

    # -- blocks and buffers ----------------------------------------------------------------------

    @impl(tl.DecomposeReductionOp)
    def run_decompose_reduction(
        self, interpreter: Interpreter, op: tl.DecomposeReductionOp, args: PythonValues
    ) -> PythonValues:
        block = self._payload(op, op.block, args[0], BlockOp)
        loop = self._payload(op, op.loop, args[1], ForOp)
        handles = {block: op.block, loop: op.loop}
        init = self._run(op, handles, lambda: decompose_reduction(block, loop))
        return (OperationHandle(init),)

    @impl(tl.ComputeInlineOp)
    def run_compute_inline(
        self, interpreter: Interpreter, op: tl.ComputeInlineOp, args: PythonValues
    ) -> PythonValues:
        block = self._payload(op, op.target, args[0], BlockOp)
        self._run(op, {block: op.target}, lambda: compute_inline(block))
        self._consume(op, op.target)
        return ()

    @impl(tl.CacheReadOp)
    def run_cache_read(self, interpreter: Interpreter, op: tl.CacheReadOp, args: PythonValues
                       ) -> PythonValues:
        block = self._payload(op, op.target, args[0], BlockOp)
        index, scope = op.operand_index.value.data, op.scope.data
        copy = self._run(op, {block: op.target}, lambda: cache_read(block, index, scope))
        return (OperationHandle(copy),)

    @impl(tl.CacheWriteOp)
    def run_cache_write(self, interpreter: Interpreter, op: tl.CacheWriteOp, args: PythonValues
                        ) -> PythonValues:
        block = self._payload(op, op.target, args[0], BlockOp)
        scope = op.scope.data
        copy = self._run(op, {block: op.target}, lambda: cache_write(block, scope))
        return (OperationHandle(copy),)

    @impl(tl.PackOp)
    def run_pack(self, interpreter: Interpreter, op: tl.PackOp, args: PythonValues
                 ) -> PythonValues:
        block = self._payload(op, op.target, args[0], BlockOp)
        index = op.operand_index.value.data
        tiles = list(op.tiles.get_values())
        perm = None if op.outer_perm is None else list(op.outer_perm.get_values())
        copy = self._run(op, {block: op.target}, lambda: pack(block, index, tiles, perm))
        return (OperationHandle(copy),)

    @impl(tl.ApplyRulesOp)
    def run_apply_rules(self, interpreter: Interpreter, op: tl.ApplyRulesOp, args: PythonValues
                        ) -> PythonValues:
        from dlc.rewrites.schedule_rules import CpuConfig, schedule_nest

        loop = self._payload(op, op.target, args[0], ForOp)
        threads, rows, accumulators, pack_rows, l2_kib = self._ints(
            op, op.static_knobs.get_values(), op.dynamic_knobs, args[1:])
        if rows < 0 or accumulators < 0 or threads < 0 or l2_kib < 0:
            raise self._fail(op, f"expected non-negative rows, accumulators, threads and "
                             f"l2_kib (0: the target's), found rows {rows}, "
                             f"accumulators {accumulators}, threads {threads}, l2_kib {l2_kib}")
        config = CpuConfig.for_target(
            self.target, threads=threads, vector_bits=self.vector_bits, max_rows=rows,
            max_accumulators=accumulators, pack_rows=bool(pack_rows), l2_bytes=l2_kib * 1024)
        if self._run(op, {loop: op.target}, lambda: schedule_nest(loop, config)) is None:
            raise self._fail(op, f"no default rule applies to the nest of {describe(loop)} "
                             f"({_handle_name(op.target)})")
        self._consume(op, op.target)
        return ()

    @impl(tl.ComputeAtOp)
    def run_compute_at(self, interpreter: Interpreter, op: tl.ComputeAtOp, args: PythonValues
                       ) -> PythonValues:
        block = self._payload(op, op.block, args[0], BlockOp)
        loop = self._payload(op, op.loop, args[1], ForOp)
        self._run(op, {block: op.block, loop: op.loop}, lambda: compute_at(block, loop))
        return ()

    @impl(tl.ReverseComputeAtOp)
    def run_reverse_compute_at(
        self, interpreter: Interpreter, op: tl.ReverseComputeAtOp, args: PythonValues
    ) -> PythonValues:
        block = self._payload(op, op.block, args[0], BlockOp)
        loop = self._payload(op, op.loop, args[1], ForOp)
        handles = {block: op.block, loop: op.loop}
        self._run(op, handles, lambda: reverse_compute_at(block, loop))
        return ()

    @impl(tl.TensorizeOp)
    def run_tensorize(self, interpreter: Interpreter, op: tl.TensorizeOp, args: PythonValues
                      ) -> PythonValues:
        loop = self._payload(op, op.target, args[0], ForOp)
        name, features = op.intrinsic.data, self.target.features | self.gpu_features
        matrix_loads = op.matrix_loads is not None
        block = self._run(op, {loop: op.target},
                          lambda: tensorize(loop, name, features, matrix_loads))
        self._consume(op, op.target)
        return (OperationHandle(block),)

    # -- upstream ops xDSL does not interpret ----------------------------------------------------

    @impl(tl.ParamConstantOp)
    def run_param_constant(
        self, interpreter: Interpreter, op: tl.ParamConstantOp, args: PythonValues
    ) -> PythonValues:
        if not isinstance(op.value, IntegerAttr):
            raise self._fail(op, f"expected an integer value, found {op.value}")
        return ((op.value.value.data,),)

    @impl(transform.SplitHandleOp)
    def run_split_handle(
        self, interpreter: Interpreter, op: transform.SplitHandleOp, args: PythonValues
    ) -> PythonValues:
        (handle,) = args
        assert isinstance(handle, OperationHandle)
        payload: tuple[Operation, ...] = handle.ops
        if len(payload) != len(op.results):
            raise self._fail(
                op, f"expected {_handle_name(op.handle)} to hold {len(op.results)} payload ops, "
                f"found {len(payload)}"
            )
        return tuple(OperationHandle(target) for target in payload)

    @impl(transform.MergeHandlesOp)
    def run_merge_handles(
        self, interpreter: Interpreter, op: transform.MergeHandlesOp, args: PythonValues
    ) -> PythonValues:
        merged: list[Operation] = []
        for handle in args:
            assert isinstance(handle, OperationHandle)
            for target in handle.ops:
                if op.deduplicate is None or target not in merged:
                    merged.append(target)
        return (OperationHandle(*merged),)


@dataclass(frozen=True)
class LoopInterpretTransformsPass(ModulePass):
    """Runs a schedule (a transform script) on the loop-level IR, then removes the script.

    *Input invariant*: the module holds loop-level payload (`func.func`s with `loop.for`,
    `loop.block`, ...) and, unless `library` is given, a
    `transform.named_sequence @<entry-point>(%root: !transform.any_op)` (anywhere in it, e.g. in
    a nested `module attributes {transform.with_named_sequence}`).

    *Output IR*: the payload transformed by the sequence, which runs with `%root` bound to the
    module; every `transform.*` op is erased, and a nested module left empty by that too.

    *Invariants*: transforms are applied in order; a failing transform raises a diagnostic that
    names the op, the handle and the reason, after which the payload is as the transforms before
    it left it (each primitive checks its preconditions before changing anything).

    Options:
        entry-point: the name of the sequence to run (default `__transform_main`).
        library: a file holding the sequence (and any others), parsed with the same dialects;
            without it the sequence is looked up in the module.
        target: the CPU `transform.loop.apply_rules` schedules for, a target string; empty:
            the module's `dlc.target`, else `dlc.target.DEFAULT_CPU_TARGET` (as
            `loop-default-schedule`'s option of the same name).
        vector_bits: the vector register width `transform.loop.apply_rules` schedules for; 0:
            the target's.
        gpu_target: the GPU whose warp-level intrinsics `transform.loop.tensorize` may use
            (`cuda -arch=sm_80`: PTX `mma.sync`); empty: none (they are refused).
    """

    name: ClassVar[str] = "loop-interpret-transforms"

    entry_point: str = "__transform_main"
    library: str | None = None
    target: str = ""
    vector_bits: int = 0
    gpu_target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        script_root: Operation = op
        if self.library is not None:
            script_root = self._parse_library(ctx, self.library)
        sequence = self._find_entry_point(script_root)
        try:
            verify_dominance(sequence)  # the interpreter would look up a handle never set
        except VerifyException as error:
            raise PassFailedException(f"loop-interpret-transforms: {error}") from None
        interpreter = Interpreter(script_root)
        from dlc.rewrites import get_all_passes

        interpreter.register_implementations(TransformFunctions(ctx, get_all_passes()))
        target = cpu_target_for(self.name, self.target, op)
        gpu_features: frozenset[str] = frozenset()
        if self.gpu_target:
            gpu_features = gpu_target_for(self.name, self.gpu_target, op).features
        interpreter.register_implementations(
            LoopTransformFunctions(op, target, self.vector_bits, gpu_features))
        interpreter.call_op(sequence, (OperationHandle(op),))
        _erase_transform_ops(op)

    def _parse_library(self, ctx: Context, path: str) -> ModuleOp:
        try:
            text = Path(path).read_text()
        except OSError as error:
            raise PassFailedException(
                f"loop-interpret-transforms: cannot read library '{path}': {error.strerror}"
            ) from None
        except UnicodeDecodeError as error:
            raise PassFailedException(
                f"loop-interpret-transforms: cannot read library '{path}': expected UTF-8 "
                f"text, found byte 0x{error.object[error.start]:02x} at offset {error.start}"
            ) from None
        try:
            return Parser(ctx, text, path).parse_module()
        except ParseError as error:
            raise PassFailedException(
                f"loop-interpret-transforms: cannot parse library '{path}': {error}"
            ) from None

    def _find_entry_point(self, root: Operation) -> transform.NamedSequenceOp:
        for candidate in root.walk():
            if (
                isinstance(candidate, transform.NamedSequenceOp)
                and candidate.sym_name.data == self.entry_point
            ):
                return candidate
        where = f"library '{self.library}'" if self.library is not None else "the module"
        raise PassFailedException(
            f"loop-interpret-transforms: expected a transform.named_sequence "
            f"@{self.entry_point} in {where}, found none"
        )


def _erase_transform_ops(module: ModuleOp) -> None:
    """Erases the transform script: outermost `transform.*` ops, and modules left empty."""
    scripts = [
        nested for nested in module.walk()
        if nested.name.startswith("transform.")
        and not (nested.parent_op() or module).name.startswith("transform.")
    ]
    for script in scripts:
        script.detach()
        script.erase(safe_erase=False)
    for nested in list(module.walk(reverse=True)):
        if isinstance(nested, builtin.ModuleOp) and nested is not module and not nested.ops:
            nested.detach()
            nested.erase()
    module.attributes.pop("transform.with_named_sequence", None)
