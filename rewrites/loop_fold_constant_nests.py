"""The pass `loop-fold-constant-nests`: re-layouts of constant weights happen at compile time.

Counterpart: TVM's `FoldConstant` after `AlterOpLayout` (a conv2d's weight transformed to its
packed layout once, when the model is built) and `fold-memref-alias-ops`-style constant folding
in MLIR. A default schedule packs a GEMM's B or a conv2d's weight into panels (`loop-default-
schedule`, `transform.loop.pack`); when the kernel's caller passes a constant global, packing it
on every call re-reads and re-writes the whole weight (ResNet-18: 45 MB per inference). This pass
evaluates such nests with NumPy (`dialects.loop.evaluate`) and passes the packed constant instead.
It also puts into the kernel, as `arith.constant`s, the values of constants that every call
passes with one value in every element (a quantize's scale and zero point, per-channel weight
zero points of 0), so that LLVM folds them: the requantize tail `graph-fold-qdq` writes divides
by a scale of 1, a `vdivps` per output vector (10 cycles each on AVX-512) until LLVM sees the
1, and an int8 product `(ext(x) - zx) * (ext(w) - zw)` becomes a `vpmaddwd` rather than a
`vpmulld` only where LLVM sees that both factors fit in 16 bits.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from dlc.dialects.arith_numpy import numpy_dtype
from dlc.dialects.graph.ops import elements_to_array
from dlc.dialects.graph.utils import is_splat
from dlc.dialects.loop.evaluate import NestEvaluationError, constant_value, evaluate_nest
from dlc.dialects.loop.ops import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp
from dlc.rewrites.loop_dedup_functions import call_sites, kernels, num_inputs, replace_call
from dlc.rewrites.schedule.common import base_buffer
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


@dataclass(frozen=True)
class _ConstantNest:
    """Top-level nests of a kernel (in program order) that fill the buffer `alloc` from
    constant arguments: a pack is often two nests, the whole panels and the partial last one."""

    roots: tuple[ForOp, ...]
    alloc: AllocOp
    arguments: tuple[BlockArgument, ...]
    views: tuple[SSAValue, ...] = ()
    """Reshaped views of `arguments` (top-level `memref.collapse_shape` / `expand_shape`) that
    the nests read instead: a channels-last 1x1 conv's HWIO weight seen as `[IC][OC]`."""


RESHAPES = (memref.CollapseShapeOp, memref.ExpandShapeOp)


def _view_source(value: SSAValue, block: Block) -> BlockArgument | None:
    """The argument of `block` that `value` is a top-level reshape of, if it is one."""
    owner = value.owner
    if not isinstance(owner, RESHAPES) or owner.parent_block() is not block:
        return None
    source = owner.operands[0]
    if isinstance(source, BlockArgument) and source.owner is block:
        return source
    return None


def _blocks(op: Operation) -> list[BlockOp]:
    return [inner for inner in op.walk() if isinstance(inner, BlockOp)]


def _defined_inside(op: Operation) -> set[SSAValue]:
    inside: set[SSAValue] = set()
    for inner in op.walk():
        inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.args)
    return inside


def _fills(
    root: ForOp, blocks: list[BlockOp], block: Block, allowed: set[SSAValue]
) -> tuple[SSAValue, set] | None:
    """The buffer `root` (whose `loop.block`s are `blocks`) writes and the arguments it reads,
    if it writes one buffer of a top-level `loop.alloc`, reads only arguments of `block` and
    uses from outside only those, the buffer and `allowed` values."""
    writes = {value for inner in blocks for value in inner.writes}
    reads = {value for inner in blocks for value in inner.reads}
    if len(writes) != 1:
        return None
    (target,) = writes
    if target in reads:
        if not _accumulates_only(root, target):
            return None
        reads.discard(target)  # an accumulation reads what it writes (a column sum)
    alloc = target.owner
    if not isinstance(alloc, AllocOp) or alloc.parent_block() is not block:
        return None
    if not all(isinstance(r, BlockArgument) and r.owner is block
               or _view_source(r, block) is not None for r in reads):
        return None
    inside = _defined_inside(root)
    outside = {operand for op in root.walk() for operand in op.operands if operand not in inside}
    if not outside <= allowed | reads | {target}:
        return None
    return target, reads


def _accumulates_only(root: ForOp, target: SSAValue) -> bool:
    """Whether every load of `target` in `root` feeds only an `arith.addi` stored back into
    `target` at the load's own indices (`buf[i] = buf[i] + x`, which whole-nest evaluation adds
    up in serial order); a nest that reads its buffer otherwise (a recurrence `S[i - 1]`) is not
    evaluated."""
    for op in root.walk():
        if not isinstance(op, LoadOp) or op.memref is not target:
            continue
        for use in op.result.uses:
            add = use.operation
            if not isinstance(add, arith.AddiOp) or not all(
                    isinstance(store.operation, StoreOp) and store.operation.memref is target
                    and store.index == 0
                    and list(store.operation.indices) == list(op.indices)
                    for store in add.result.uses):
                return False
    return True


def _constant_nests(function: func.FuncOp) -> list[_ConstantNest]:
    """The groups of top-level nests of `function` that hold every store into a buffer of a
    top-level `loop.alloc` and read only arguments that no op of the function writes; the values
    they use from outside are those arguments, the buffer and top-level `arith.constant`s."""
    block = function.body.block
    constants = {op.result for op in block.ops if isinstance(op, arith.ConstantOp)}
    stores: dict[SSAValue, int] = {}
    for store in function.walk():
        if isinstance(store, StoreOp):
            buffer = base_buffer(store.memref)  # a store through a view writes its buffer
            stores[buffer] = stores.get(buffer, 0) + 1
    groups: dict[SSAValue, tuple[list[ForOp], set[SSAValue]]] = {}
    rejected: set[SSAValue] = set()
    for root in block.ops:
        if not isinstance(root, ForOp):
            continue
        blocks = _blocks(root)
        fills = _fills(root, blocks, block, constants)
        if fills is None:
            rejected.update(base_buffer(value) for inner in blocks for value in inner.writes)
            continue
        target, reads = fills
        roots, arguments = groups.setdefault(target, ([], set()))
        roots.append(root)
        arguments.update(reads)
    nests = []
    for target, (roots, arguments) in groups.items():
        count = sum(1 for root in roots for op in root.walk()
                    if isinstance(op, StoreOp) and op.memref is target)
        if target in rejected or count != stores.get(target, 0):
            continue
        views = tuple(value for value in arguments if not isinstance(value, BlockArgument))
        bases = {_view_source(view, block) for view in views} | (set(arguments) - set(views))
        if not bases or any(argument in stores for argument in bases):
            continue
        alloc = target.owner
        assert isinstance(alloc, AllocOp)
        ordered = tuple(sorted(bases, key=lambda a: a.index))  # type: ignore[union-attr]
        nests.append(_ConstantNest(tuple(roots), alloc, ordered, views))  # type: ignore[arg-type]
    return nests


def _constant_globals(module: ModuleOp) -> dict[str, memref.GlobalOp]:
    """The constant `memref.global`s with dense data, by name."""
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, memref.GlobalOp)
        and op.constant is not None
        and isinstance(op.initial_value, DenseIntOrFPElementsAttr)
    }


def _passed_global(
    call: func.CallOp, index: int, globals_: dict[str, memref.GlobalOp]
) -> str | None:
    """The constant global that `call` passes as argument `index`, if it passes one."""
    owner = call.arguments[index].owner
    if isinstance(owner, memref.GetGlobalOp) and owner.name_.string_value() in globals_:
        return owner.name_.string_value()
    return None


_FIXED_CALL_SITES: dict[int, dict[str, list[func.CallOp]]] = {}
"""The call sites of the modules inside a `fixed_call_sites` scope, by `id` of the module."""


@contextmanager
def fixed_call_sites(module: ModuleOp) -> Iterator[None]:
    """Within the scope, `is_constant_argument` and `is_runtime_argument` read `module`'s call
    sites from one walk instead of walking the module at each question (a schedule asks for
    each nest it plans: DenseNet-121's default schedule spent 66 of 91 s in those walks). The
    caller must add or remove no call in the scope."""
    _FIXED_CALL_SITES[id(module)] = call_sites(module)
    try:
        yield
    finally:
        del _FIXED_CALL_SITES[id(module)]


def _argument_calls(value: SSAValue) -> tuple[ModuleOp, list[func.CallOp]] | None:
    """The module and the calls of the function whose argument `value` is, or None if `value`
    is not an argument of a function in a module."""
    if not isinstance(value, BlockArgument):
        return None
    function = value.owner.parent_op()
    if not isinstance(function, func.FuncOp) or value.owner is not function.body.block:
        return None
    module = function.parent_op()
    if not isinstance(module, ModuleOp):
        return None
    sites = _FIXED_CALL_SITES.get(id(module))
    if sites is None:
        sites = call_sites(module)
    return module, sites.get(function.sym_name.data, [])


def is_constant_argument(value: SSAValue) -> bool:
    """Whether `value` is an argument of a function that every call in its module passes a
    constant global: a nest reading only such arguments is evaluated at compile time by this
    pass (what a schedule may count on when it chooses which operand to repack)."""
    found = _argument_calls(value)
    if found is None:
        return False
    module, calls = found
    globals_ = _constant_globals(module)
    return bool(calls) and all(
        _passed_global(call, value.index, globals_) is not None  # type: ignore[attr-defined]
        for call in calls)


def is_runtime_argument(value: SSAValue) -> bool:
    """Whether `value` is an argument of a function that its module calls with something
    other than a constant global at some call (an activation): a nest reading it runs on every
    call. False for a function nothing calls (a kernel given alone, as in a FileCheck test: its
    arguments are taken as the constants a model passes)."""
    found = _argument_calls(value)
    return found is not None and bool(found[1]) and not is_constant_argument(value)


def constant_argument_values(value: SSAValue) -> np.ndarray | None:
    """The elements of a constant argument (`is_constant_argument`) when every call passes the
    same values, else None (what a schedule may specialize on, as a zero point of 0)."""
    if not is_constant_argument(value):
        return None
    assert isinstance(value, BlockArgument)
    function = value.owner.parent_op()
    assert isinstance(function, func.FuncOp)
    module = function.parent_op()
    assert isinstance(module, ModuleOp)
    globals_ = _constant_globals(module)
    arrays = []
    for call in call_sites(module)[function.sym_name.data]:
        name = _passed_global(call, value.index, globals_)
        assert name is not None
        initial = globals_[name].initial_value
        assert isinstance(initial, DenseIntOrFPElementsAttr)
        arrays.append(elements_to_array(initial, "memref.global"))
    if any(not np.array_equal(array, arrays[0]) for array in arrays[1:]):
        return None
    return arrays[0]


def constant_global(name: str, memref_type: MemRefType, array: np.ndarray) -> memref.GlobalOp:
    """`memref.global "private" constant @name : memref_type = dense<array>` (raw bytes)."""
    little_endian = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    data = DenseIntOrFPElementsAttr(
        TensorType(memref_type.get_element_type(), array.shape),
        BytesAttr(little_endian.tobytes()),
    )
    return memref.GlobalOp.get(StringAttr(name), memref_type, data, StringAttr("private"),
                               UnitAttr())


def _scalar_attr(value: np.ndarray, element: object) -> IntegerAttr | FloatAttr | None:
    """`value` (one element) as an attribute of `element` (an integer or float type), or None
    for another element type."""
    scalar = value.reshape(-1)[0]
    if isinstance(element, IntegerType):
        width = element.width.data
        signed = int(np.asarray(scalar).astype(np.int64))
        # A signless constant: the element's bits, as a signed number.
        signed = (signed + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
        return IntegerAttr(signed, element)
    if isinstance(element, AnyFloat):
        return FloatAttr(float(scalar), element)
    return None


def inline_splat_constants(function: func.FuncOp, calls: list[func.CallOp],
                           globals_: dict[str, memref.GlobalOp]) -> int:
    """Replaces each scalar `loop.load` of an input argument that every call in `calls` passes
    as a constant global of one value in every element (a scalar, or a splat: ORT's per-channel
    weight zero points, all 0) by an `arith.constant` of that value; returns how many loads it
    replaced. The argument stays (blocks still list it in `reads`)."""
    if not calls:
        return 0
    replaced = 0
    block = function.body.block
    for argument in block.args[: num_inputs(function)]:
        memref_type = argument.type
        if not isinstance(memref_type, MemRefType) or not memref_type.has_static_shape():
            continue
        element = memref_type.get_element_type()
        loads = [use.operation for use in argument.uses
                 if isinstance(use.operation, LoadOp) and use.operation.memref is argument
                 and use.operation.result.type == element]
        if not loads:
            continue
        names = [_passed_global(call, argument.index, globals_) for call in calls]
        if None in names:
            continue
        values = [elements_to_array(globals_[name].initial_value, "memref.global")  # type: ignore[arg-type, index]
                  for name in names]
        if not all(v.size and is_splat(v) for v in values) or any(
                not np.array_equal(v.reshape(-1)[:1], values[0].reshape(-1)[:1]) for v in values):
            continue
        attr = _scalar_attr(np.asarray(values[0]), element)
        if attr is None:
            continue
        for load in loads:
            constant = arith.ConstantOp(attr)
            constant.result.name_hint = load.result.name_hint
            Rewriter.replace_op(load, constant)
            replaced += 1
    return replaced


def _content_key(memref_type: MemRefType, array: np.ndarray) -> tuple[str, bytes]:
    return str(memref_type), hashlib.sha256(array.tobytes()).digest()


class _Folder:
    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.globals = _constant_globals(module)
        self.symbols = {
            op.sym_name.data for op in module.ops if isinstance(op, memref.GlobalOp | func.FuncOp)
        }
        self.made: dict[tuple[str, tuple[int, int], tuple[str, ...]], str] = {}
        self.new_globals: list[memref.GlobalOp] = []
        self.contents: dict[tuple[str, bytes], list[tuple[str, np.ndarray]]] = {}

    def array(self, name: str) -> np.ndarray:
        value = self.globals[name].initial_value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        return elements_to_array(value, "memref.global")

    def fold(self, function: func.FuncOp, calls: list[func.CallOp]) -> list[func.CallOp]:
        """Folds the constant nests of `function` for every call, until none is left (a folded
        buffer may feed another re-layout, as a transposed weight feeds its pack); returns the
        new calls."""
        failed: set[ForOp] = set()
        for round_ in itertools.count():
            for ordinal, nest in enumerate(_constant_nests(function)):
                if failed.intersection(nest.roots):
                    continue
                names = []
                for call in calls:
                    passed = [_passed_global(call, a.index, self.globals)
                              for a in nest.arguments]
                    if None in passed:
                        break
                    names.append(tuple(passed))
                else:
                    try:
                        key = (round_, ordinal)
                        packed = [self.packed(function, key, nest, n)  # type: ignore[arg-type]
                                  for n in names]
                    except NestEvaluationError:
                        failed.update(nest.roots)
                        continue
                    calls = self.rewrite(function, nest, calls, packed)
                    break
                failed.update(nest.roots)
            else:
                return calls
        raise AssertionError("unreachable")

    def packed(self, function: func.FuncOp, ordinal: tuple[int, int], nest: _ConstantNest,
               names: tuple[str, ...]) -> str:
        """The name of the global holding the result of `function`'s nest number `ordinal`
        (folding round, position in `_constant_nests` order) for the constants `names`."""
        key = (function.sym_name.data, ordinal, names)
        made = self.made.get(key)
        if made is not None:
            return made
        memref_type = nest.alloc.result.type
        assert isinstance(memref_type, MemRefType)
        element = memref_type.get_element_type()
        result = np.zeros(tuple(memref_type.get_shape()), numpy_dtype(element))
        env: dict[SSAValue, object] = {nest.alloc.result: result}
        for argument, name in zip(nest.arguments, names, strict=True):
            env[argument] = self.array(name)
        for view in nest.views:
            view_type = view.type
            assert isinstance(view_type, MemRefType)
            source = env[view.owner.operands[0]]  # type: ignore[union-attr]
            env[view] = np.reshape(source, tuple(view_type.get_shape()))
        for op in function.body.block.ops:
            if isinstance(op, arith.ConstantOp):
                env[op.result] = constant_value(op)
        for root in nest.roots:
            evaluate_nest(root, env)
        same = self.same_contents(memref_type, result)
        if same is not None:
            self.made[key] = same
            return same
        # a symbol an assembler takes (ONNX names hold '.', '-', '/', ':')
        base = re.sub(r"\W", "_", f"{names[0]}_{nest.alloc.result.name_hint or 'folded'}")
        name, index = base, 0
        while name in self.symbols:
            index += 1
            name = f"{base}{index}"
        self.symbols.add(name)
        made_global = constant_global(name, memref_type, result)
        self.contents.setdefault(_content_key(memref_type, result), []).append((name, result))
        self.new_globals.append(made_global)
        self.globals[name] = made_global
        self.made[key] = name
        return name

    def same_contents(self, memref_type: MemRefType, array: np.ndarray) -> str | None:
        """The global made before with `array`'s type and elements (two kernels that pack one
        weight alike: a dynamic batch's block entries of 4 and 8 rows), else None."""
        for name, other in self.contents.get(_content_key(memref_type, array), []):
            if np.array_equal(other, array):
                return name
        return None

    def rewrite(
        self, function: func.FuncOp, nest: _ConstantNest, calls: list[func.CallOp],
        packed: list[str],
    ) -> list[func.CallOp]:
        """Makes the nest's buffer a new input argument of `function`, passed by each call as
        its packed global, and drops the nest, the buffer and the arguments only it read."""
        block = function.body.block
        position = num_inputs(function)
        memref_type = nest.alloc.result.type
        assert isinstance(memref_type, MemRefType)
        argument = block.insert_arg(memref_type, position)
        argument.name_hint = nest.alloc.result.name_hint
        for use in list(nest.alloc.result.uses):
            if isinstance(use.operation, DeallocOp):
                Rewriter.erase_op(use.operation)
        for root in nest.roots:
            Rewriter.erase_op(root)
        for view in nest.views:
            if not view.uses:
                Rewriter.erase_op(view.owner)  # type: ignore[arg-type]
        nest.alloc.result.replace_all_uses_with(argument)
        Rewriter.erase_op(nest.alloc)
        inputs = list(function.function_type.inputs.data)
        inputs.insert(position, memref_type)
        attrs = list(function.arg_attrs.data) if function.arg_attrs is not None else None
        if attrs is not None:
            attrs.insert(position, DictionaryAttr({}))
        new_calls = []
        for call, name in zip(calls, packed, strict=True):
            load = memref.GetGlobalOp(name, memref_type)
            load.memref.name_hint = argument.name_hint
            Rewriter.insert_op(load, InsertPoint.before(call))
            arguments = list(call.arguments)
            arguments.insert(position, load.memref)
            new_calls.append(replace_call(call, arguments, call.callee.string_value()))
        calls = new_calls
        for old in sorted(nest.arguments, key=lambda a: -a.index):  # type: ignore[union-attr]
            if old.uses:
                continue
            index = old.index
            del inputs[index]
            if attrs is not None:
                del attrs[index]
            block.erase_arg(old)
            new_calls = []
            for call in calls:
                arguments = list(call.arguments)
                del arguments[index]
                new_calls.append(replace_call(call, arguments, call.callee.string_value()))
            calls = new_calls
        outputs = function.function_type.outputs.data
        function.function_type = FunctionType.from_lists(inputs, outputs)
        if attrs is not None:
            function.arg_attrs = ArrayAttr(attrs)
        return calls

    def finish(self) -> None:
        """Adds the new globals after the last global; erases `get_global`s and constant
        globals nothing uses any more."""
        for op in list(self.module.walk()):
            if isinstance(op, memref.GetGlobalOp) and not op.memref.uses:
                Rewriter.erase_op(op)
        used = {
            op.name_.string_value()
            for op in self.module.walk()
            if isinstance(op, memref.GetGlobalOp)
        }
        last = None
        for op in list(self.module.ops):
            if isinstance(op, memref.GlobalOp):
                if op.sym_name.data in self.globals and op.sym_name.data not in used:
                    Rewriter.erase_op(op)
                else:
                    last = op
        block = self.module.body.block
        point = InsertPoint.after(last) if last is not None else InsertPoint.at_start(block)
        # A made global that a later fold consumed entirely (a transposed weight, once packed)
        # is dropped.
        Rewriter.insert_op([g for g in self.new_globals if g.sym_name.data in used], point)


@dataclass(frozen=True)
class LoopFoldConstantNestsPass(ModulePass):
    """Evaluate at compile time the nests that re-lay out constant arguments of kernels.

    *Input invariant*: a loop-level module (after `convert-tensor-expr-to-loop`, typically after
    `loop-default-schedule`); kernels are private functions referenced only by `func.call`s.

    *Output IR*: for the kernel's top-level `loop.for` nests that write only a buffer of a
    top-level `loop.alloc` (and hold every store into it) and read only input arguments that
    every call passes as a constant `memref.get_global` (a pack: `Bp[p, k, l] = B[k, p*NR + l]`,
    often two nests, the whole panels and the partial last one), besides the buffer itself
    where they only accumulate into it (`buf[i] = buf[i] + x`: a packed int8 weight's column
    sums), the buffer becomes a new input argument (after the inputs, before the outputs) and
    each call passes a new constant global holding the nest's result for that call's constants
    (computed once per distinct kernel and constants; elements the nest does not write are
    zero; one global for equal results of the same type, whichever kernels made them). The
    nests, the `loop.alloc` and its `loop.dealloc` go, and so do the arguments only the nest
    read, the `get_global`s that fed them and constant globals nothing reads any more. Folding
    repeats until no nest qualifies, so a chain of re-layouts (a transpose, then its pack) folds
    into one constant. A nest the evaluator cannot run (vector accesses, bounds varying inside
    it) is left as it is. Then each scalar `loop.load` of an input argument that every call passes
    as a constant global with one value in all its elements (a requantize tail's scale of 1, a
    zero point, per-channel weight zero points of 0) becomes an `arith.constant` of that value
    (the argument stays, listed by the blocks' `reads`), so that LLVM folds it (`x / 1.0`,
    `x - 0`).

    *Invariants*: every call computes what it did; entry functions and their signatures are
    untouched.
    """

    name: ClassVar[str] = "loop-fold-constant-nests"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        folder = _Folder(op)
        if not folder.globals:
            return
        sites = call_sites(op)
        for function in kernels(op):
            calls = sites.get(function.sym_name.data, [])
            if calls:
                sites[function.sym_name.data] = folder.fold(function, calls)
                inline_splat_constants(function, sites[function.sym_name.data], folder.globals)
        folder.finish()
