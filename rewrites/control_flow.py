"""Graph control flow -> `scf` on tensors: the first step of `convert-graph-to-tensor-expr`.

Counterpart: MLIR's `scf.if` / `scf.while` on tensors before bufferization (IREE's flow level),
TVM Relax's `If` whose branches are functions of the same module.

Design. A region of `graph.if` or `graph.loop` is *outlined* into a private function of the
module (`@<fn>_then_<n>`, `@<fn>_else_<n>`, `@<fn>_body_<n>`) whose arguments are the region's
captures (values of the enclosing blocks it uses, in order of first use) followed by the block's
own arguments, and whose results are what its `graph.yield` gave. That function is then an
ordinary function of graph ops: the rest of the pipeline (fused groups outlined into kernels,
computes, loops, schedules, memory planning, LLVM) treats it like any other, so region bodies
go through the same pipeline as function bodies. What stays in the enclosing function is the
control flow around calls of those functions, as upstream `scf` and `tensor` ops:

    graph.if %c  ->  %b = tensor.extract %c[..] : tensor<i1>
                     %r = scf.if %b -> (tensor<..>) {
                       %t = func.call @f_then_0(captures) ; scf.yield %t
                     } else { ... }

    graph.loop (%m, %c, %v...)  ->
        %trip = tensor.extract %m[..] (min'ed with the scan length D when there are scan outputs)
        %go0 = tensor.extract %c[..]
        %r:.. = scf.while (%i = 0 : i64, %go = %go0, %v.. = inits, %acc.. = zeros : tensor<Dx..>) {
          %more = arith.cmpi slt, %i, %trip ; %ok = arith.andi %more, %go
          scf.condition(%ok) %i, %go, %v.., %acc..
        } do {
          %it = tensor.from_elements %i ; %ct = tensor.from_elements %go
          %o:.. = func.call @f_body_0(captures, %it, %ct, %v..)
          %next = tensor.extract %o#0[..] ; %i1 = arith.addi %i, 1
          %acc' = tensor.insert_slice %o#k into %acc[%i, 0, ..]   (one per scan output)
          scf.yield %i1, %next, %o#1.., %acc'..
        }

`convert-tensor-expr-to-loop` bufferizes these (one buffer per carried value, updated in place;
see its docstring) and the LLVM lowering turns `scf` into branches, so the control flow runs
in the compiled entry function, between kernel calls. Nested control flow ends up in the
outlined functions, which are converted in turn.
"""

from __future__ import annotations

import numpy as np
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.ops import YieldOp as GraphYieldOp
from dlc.dialects.graph.ops_control import IfOp, LoopOp
from dlc.dialects.graph.utils import splat_constant
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

_I1 = IntegerType(1)
DYNAMIC_OFFSET = -(2**63)
"""The `static_offsets` entry that stands for a dynamic offset (MLIR's ShapedType::kDynamic)."""


def _defined_in(value: SSAValue, region: Region) -> bool:
    """Whether `value` is defined inside `region` (at any depth)."""
    if isinstance(value, BlockArgument):
        block: Block | None = value.block
    else:
        assert isinstance(value.owner, Operation)
        block = value.owner.parent_block()
    while block is not None:
        if block.parent is region:
            return True
        owner = block.parent_op()
        block = owner.parent_block() if owner is not None else None
    return False


def captures(region: Region) -> list[SSAValue]:
    """The values defined outside `region` that its ops use, in order of first use."""
    found: list[SSAValue] = []
    for op in region.walk():
        for operand in op.operands:
            if not _defined_in(operand, region) and operand not in found:
                found.append(operand)
    return found


def outline_region(region: Region, name: str, module: ModuleOp, anchor: Operation
                   ) -> tuple[func.FuncOp, list[SSAValue]]:
    """Moves the single block of `region` (ending with `graph.yield`) into a new private
    function `name`, inserted after `anchor`; returns it and the captures to pass first."""
    old = region.block
    outer = captures(region)
    block = Block(arg_types=[*(v.type for v in outer), *(a.type for a in old.args)])
    for value, arg in zip(outer, block.args, strict=False):
        arg.name_hint = value.name_hint
        value.replace_uses_with_if(arg, lambda use: _inside(use.operation, region))
    for old_arg, arg in zip(old.args, block.args[len(outer):], strict=True):
        arg.name_hint = old_arg.name_hint
        old_arg.replace_all_uses_with(arg)
    for op in list(old.ops):
        op.detach()
        block.add_op(op)
    terminator = block.last_op
    assert isinstance(terminator, GraphYieldOp), "verified: the region ends with graph.yield"
    Rewriter.replace_op(terminator, func.ReturnOp(*terminator.values))
    function = func.FuncOp(name, ([a.type for a in block.args],
                                  [v.type for v in terminator.values]), Region(block), "private")
    Rewriter.insert_op(function, InsertPoint.after(anchor))
    return function, outer


def _inside(op: Operation, region: Region) -> bool:
    parent = op.parent_region()
    while parent is not None:
        if parent is region:
            return True
        owner = parent.parent_op()
        parent = owner.parent_region() if owner is not None else None
    return False


def _extract(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """A `tensor.extract` of the only element of `value`, appended to `ops`."""
    assert isinstance(value.type, TensorType)
    indices: list[SSAValue] = []
    if value.type.get_shape():
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        zero.result.name_hint = "c0"
        ops.append(zero)
        indices = [zero.result] * len(value.type.get_shape())
    extract = tensor.ExtractOp(value, indices, value.type.get_element_type())
    ops.append(extract)
    return extract.result


def _i64(value: int, ops: list[Operation], name: str) -> SSAValue:
    constant = arith.ConstantOp(IntegerAttr(value, i64))
    constant.result.name_hint = name
    ops.append(constant)
    return constant.result


class _Outliner:
    """Names and places the functions made from the regions of one top-level function."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}

    def function_of(self, op: Operation) -> func.FuncOp:
        top = op
        while (parent := top.parent_op()) is not self.module:
            assert parent is not None
            top = parent
        assert isinstance(top, func.FuncOp)
        return top

    def outline(self, op: Operation, region: Region, role: str
                ) -> tuple[func.FuncOp, list[SSAValue]]:
        function = self.function_of(op)
        base = f"{function.sym_name.data}_{role}"
        count = 0
        while f"{base}_{count}" in self.taken:
            count += 1
        name = f"{base}_{count}"
        self.taken.add(name)
        new, outer = outline_region(region, name, self.module, function)
        new.location = op.location
        return new, outer


def _convert_if(op: IfOp, outliner: _Outliner) -> None:
    types = [v.type for v in op.outputs]
    ops: list[Operation] = []
    cond = _extract(op.cond, ops)
    branches: list[list[Operation]] = []
    for region, role in ((op.then_region, "then"), (op.else_region, "else")):
        function, outer = outliner.outline(op, region, role)
        call = func.CallOp(function.sym_name.data, outer, types)
        call.location = op.location
        branches.append([call, scf.YieldOp(*call.results)])
    if_op = scf.IfOp(cond, types, branches[0], branches[1])
    if_op.location = op.location
    cond.name_hint = "cond"
    Rewriter.insert_op(ops, InsertPoint.before(op))
    Rewriter.replace_op(op, if_op, list(if_op.results))


def _convert_loop(op: LoopOp, outliner: _Outliner) -> None:
    body_args = [a.type for a in op.body.block.args]
    function, outer = outliner.outline(op, op.body, "body")
    ops: list[Operation] = []
    trip = _extract(op.max_trip, ops)
    trip.name_hint = "max_trip"
    if (length := op.scan_length()) is not None:
        bound = arith.MinSIOp(trip, _i64(length, ops, "scan_length"))
        ops.append(bound)
        trip = bound.result
    go = _extract(op.cond, ops)
    zeros: list[SSAValue] = []
    for value in op.scan_outputs:
        assert isinstance(value.type, TensorType)
        dtype = to_numpy_dtype(value.type.get_element_type())
        constant = splat_constant(np.zeros((), dtype), value.type.get_shape())
        constant.result.name_hint = "scan_init"
        ops.append(constant)
        zeros.append(constant.result)
    state_types: list[Attribute] = [i64, _I1, *(v.type for v in op.outputs)]
    initial = [_i64(0, ops, "first"), go, *op.inits, *zeros]

    before = Block(arg_types=state_types)
    before.args[0].name_hint, before.args[1].name_hint = "i", "go"
    more = arith.CmpiOp(before.args[0], trip, "slt")
    ok = arith.AndIOp(more, before.args[1])
    before.add_ops([more, ok, scf.ConditionOp(ok, *before.args)])

    after = Block(arg_types=state_types)
    iteration, cond = after.args[0], after.args[1]
    iteration.name_hint, cond.name_hint = "iteration", "cond"
    body_ops: list[Operation] = []
    as_tensors: list[SSAValue] = []
    for scalar, type_ in zip((iteration, cond), body_args[:2], strict=True):
        made = tensor.FromElementsOp(scalar, result_type=type_)
        body_ops.append(made)
        as_tensors.append(made.result)
    num_carried = op.num_carried
    carried = list(after.args[2 : 2 + num_carried])
    call = func.CallOp(function.sym_name.data, [*outer, *as_tensors, *carried],
                       function.function_type.outputs.data)
    call.location = op.location
    body_ops.append(call)
    next_cond = _extract(call.results[0], body_ops)
    next_iteration = arith.AddiOp(iteration, _i64(1, body_ops, "one"))
    body_ops.append(next_iteration)
    stacked: list[SSAValue] = []
    if op.scan_outputs:
        offset = arith.IndexCastOp(iteration, IndexType())
        body_ops.append(offset)
        for element, acc in zip(call.results[1 + num_carried:], after.args[2 + num_carried:],
                                strict=True):
            assert isinstance(element.type, TensorType)
            rank = len(element.type.get_shape())
            insert = tensor.InsertSliceOp.get(
                element, acc, static_sizes=[1, *element.type.get_shape()],
                static_offsets=[DYNAMIC_OFFSET, *([0] * rank)], static_strides=[1] * (rank + 1),
                offsets=[offset.result])
            body_ops.append(insert)
            stacked.append(insert.result)
    body_ops.append(scf.YieldOp(next_iteration, next_cond,
                                *call.results[1 : 1 + num_carried], *stacked))
    after.add_ops(body_ops)
    while_op = scf.WhileOp(initial, state_types, Region(before), Region(after))
    while_op.location = op.location
    trip.name_hint, go.name_hint = "trip", "go"
    for index, carried_arg in enumerate([*before.args[2:], *after.args[2:]]):
        carried_arg.name_hint = f"state{index % (len(state_types) - 2)}"
    while_op.results[0].name_hint, while_op.results[1].name_hint = "iterations", "done"
    Rewriter.insert_op(ops, InsertPoint.before(op))
    Rewriter.replace_op(op, while_op, list(while_op.results[2:]))


def convert_control_flow(module: ModuleOp) -> None:
    """Rewrites every `graph.if` and `graph.loop` of `module` as described in the module
    docstring (outer ops first; nested ones are found again in the outlined functions)."""
    outliner = _Outliner(module)
    while (op := next((o for o in module.walk() if isinstance(o, IfOp | LoopOp)), None)):
        if isinstance(op, IfOp):
            _convert_if(op, outliner)
        else:
            _convert_loop(op, outliner)
