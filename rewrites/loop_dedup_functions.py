"""The pass `loop-dedup-functions`: kernels that differ only in their constants compile once.

Counterpart: TVM's compile engine cache (`CCacheKey`: a primitive function's structural hash and
target), with the constants of fused functions lifted to parameters as TVM's `te_compiler` does
(`ExtractConstants`), so that e.g. the repeated 3x3 convolutions of a ResNet stage share one
kernel; in MLIR, what `-mlir-merge-functions`-style passes do on `func.func`s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.contracts import DIM_ARGS_ATTR, NUM_OUTPUTS_ATTR, ONNX_NODES_ATTR
from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

_FUNCTION_IDENTITY = ("sym_name", "sym_visibility")


# ---------------------------------------------------------------------------------------------
# Structural hash
# ---------------------------------------------------------------------------------------------


class _Hasher:
    """Serialises ops with values and blocks numbered by first definition, never by name."""

    def __init__(self) -> None:
        self.values: dict[SSAValue, int] = {}
        self.blocks: dict[Block, int] = {}
        self.digest = hashlib.sha256()

    def token(self, *parts: object) -> None:
        for part in parts:
            self.digest.update(str(part).encode())
            self.digest.update(b"\x1f")
        self.digest.update(b"\x1e")

    def define(self, value: SSAValue) -> None:
        self.values[value] = len(self.values)

    def use(self, value: SSAValue) -> int | str:
        number = self.values.get(value)
        return f"outside:{value.type}" if number is None else number

    def attributes(self, op: Operation, skip: tuple[str, ...]) -> list[tuple[str, Attribute]]:
        items = [*op.properties.items(), *op.attributes.items()]
        return sorted((k, v) for k, v in items if k not in skip)

    def region(self, region: Region) -> None:
        for block in region.blocks:
            self.blocks[block] = len(self.blocks)
        self.token("region", len(region.blocks))
        for block in region.blocks:
            self.token("block", *(arg.type for arg in block.args))
            for arg in block.args:
                self.define(arg)
            for op in block.ops:
                self.operation(op, ())

    def operation(self, op: Operation, skip: tuple[str, ...]) -> None:
        self.token(
            op.name,
            [self.use(operand) for operand in op.operands],
            [result.type for result in op.results],
            self.attributes(op, skip),
            [self.blocks.get(successor, -1) for successor in op.successors],
        )
        for result in op.results:
            self.define(result)
        for region in op.regions:
            self.region(region)


def structural_hash(function: func.FuncOp) -> str:
    """A hex digest of `function`'s structure: its signature, attributes and body, with values
    and blocks numbered in order of definition. The function's name and visibility, SSA names,
    locations and `dlc.onnx_nodes` do not count; everything that changes what it computes
    (types, shapes, constants, op attributes, block and axis names) does."""
    hasher = _Hasher()
    hasher.operation(function, (*_FUNCTION_IDENTITY, ONNX_NODES_ATTR))
    return hasher.digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# Lifting constants into arguments
# ---------------------------------------------------------------------------------------------


def call_sites(module: ModuleOp) -> dict[str, list[func.CallOp]]:
    """The `func.call`s of `module`, by callee name."""
    sites: dict[str, list[func.CallOp]] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            sites.setdefault(op.callee.string_value(), []).append(op)
    return sites


def num_inputs(function: func.FuncOp) -> int:
    """How many arguments come before the outputs (the sizes of dynamic dims come after them:
    `dlc.dim_args`)."""
    arguments = len(function.function_type.inputs.data)
    attr = function.attributes.get(NUM_OUTPUTS_ATTR)
    outputs = attr.value.data if isinstance(attr, IntegerAttr) else 0
    sizes = function.attributes.get(DIM_ARGS_ATTR)
    return arguments - outputs - (sizes.value.data if isinstance(sizes, IntegerAttr) else 0)


def replace_call(call: func.CallOp, arguments: list[SSAValue], callee: str) -> func.CallOp:
    new = func.CallOp(callee, arguments, [r.type for r in call.results])
    new.attributes.update(call.attributes)
    new.location = call.location
    Rewriter.replace_op(call, new)
    return new


def lift_constants(function: func.FuncOp, calls: list[func.CallOp]) -> list[func.CallOp]:
    """Turns every `memref.get_global` in `function` into a new input argument (after the
    existing inputs, before the outputs, one per global in order of first use) and makes each
    call pass `memref.get_global` of it; returns the new calls."""
    reads: dict[str, list[memref.GetGlobalOp]] = {}
    for op in function.walk():
        if isinstance(op, memref.GetGlobalOp):
            reads.setdefault(op.name_.string_value(), []).append(op)
    if not reads:
        return calls
    block = function.body.block
    position = num_inputs(function)
    types: list[MemRefType] = []
    for offset, ops in enumerate(reads.values()):
        memref_type = ops[0].memref.type
        assert isinstance(memref_type, MemRefType)
        types.append(memref_type)
        argument = block.insert_arg(memref_type, position + offset)
        argument.name_hint = ops[0].memref.name_hint
        for op in ops:
            op.memref.replace_all_uses_with(argument)
            Rewriter.erase_op(op)
    inputs = list(function.function_type.inputs.data)
    inputs[position:position] = types
    function.function_type = FunctionType.from_lists(inputs, function.function_type.outputs.data)
    if function.arg_attrs is not None:
        attrs = list(function.arg_attrs.data)
        attrs[position:position] = [DictionaryAttr({})] * len(types)
        function.arg_attrs = ArrayAttr(attrs)
    new_calls: list[func.CallOp] = []
    for call in calls:
        loads = [memref.GetGlobalOp(name, t) for name, t in zip(reads, types, strict=True)]
        for load, ops in zip(loads, reads.values(), strict=True):
            load.memref.name_hint = ops[0].memref.name_hint
        Rewriter.insert_op(loads, InsertPoint.before(call))
        arguments = list(call.arguments)
        arguments[position:position] = [load.memref for load in loads]
        new_calls.append(replace_call(call, arguments, call.callee.string_value()))
    return new_calls


# ---------------------------------------------------------------------------------------------
# Merging
# ---------------------------------------------------------------------------------------------


def kernels(module: ModuleOp) -> Iterator[func.FuncOp]:
    """The private functions with a body, in module order."""
    for op in list(module.ops):
        if (
            isinstance(op, func.FuncOp)
            and op.body.blocks
            and op.sym_visibility == StringAttr("private")
        ):
            yield op


def _move_onnx_nodes_to_calls(function: func.FuncOp, calls: list[func.CallOp]) -> None:
    nodes = function.attributes.pop(ONNX_NODES_ATTR, None)
    if nodes is None:
        return
    for call in calls:
        call.attributes.setdefault(ONNX_NODES_ATTR, nodes)


def merge_identical(module: ModuleOp) -> int:
    """Replaces every kernel structurally identical to an earlier one by that one (calls
    retargeted, the copy erased), until none is left; returns how many were erased."""
    erased = 0
    while True:
        sites = call_sites(module)
        first: dict[str, func.FuncOp] = {}
        duplicates: list[tuple[func.FuncOp, func.FuncOp]] = []
        for function in kernels(module):
            key = structural_hash(function)
            if key in first:
                duplicates.append((function, first[key]))
            else:
                first[key] = function
        if not duplicates:
            return erased
        for duplicate, canonical in duplicates:
            for call in sites.get(duplicate.sym_name.data, []):
                call.properties["callee"] = SymbolRefAttr(canonical.sym_name)
            Rewriter.erase_op(duplicate)
            erased += 1


@dataclass(frozen=True)
class LoopDedupFunctionsPass(ModulePass):
    """Lift the constants of kernels into arguments, then keep one copy of identical kernels.

    *Input invariant*: a module of `func.func`s (loop level: after
    `convert-tensor-expr-to-loop`); the kernels are the private functions with a body, and they
    are referenced only by `func.call`s.

    *Output IR*: with `lift-constants`, every `memref.get_global @g` in a kernel becomes an
    input argument of the kernel (inserted after its inputs and before its outputs, one per
    global, in order of first use, named like the value it replaces), and each call passes a
    `memref.get_global @g` made just before it. Then kernels with the same `structural_hash`
    (same signature, attributes and body up to SSA names; the name does not count) are merged:
    calls of a copy call the first kernel of its kind in module order, and the copies are
    erased. A kernel's `dlc.onnx_nodes` attribute (the ONNX nodes it computes) moves to its
    calls first, so that each call still names its own nodes.

    *Invariants*: every call computes what it did; entry (public) functions and their
    signatures are untouched; no two remaining kernels have the same structural hash.

    Options:
        lift_constants (`lift-constants`, default true): lift constants into arguments before
            comparing (without it, kernels reading different weights stay distinct).
    """

    name: ClassVar[str] = "loop-dedup-functions"

    lift_constants: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sites = call_sites(op)
        for function in kernels(op):
            calls = sites.get(function.sym_name.data, [])
            _move_onnx_nodes_to_calls(function, calls)
            if self.lift_constants:
                sites[function.sym_name.data] = lift_constants(function, calls)
        merge_identical(op)
