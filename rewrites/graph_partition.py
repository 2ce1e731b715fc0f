"""The pass `graph-partition`: each region becomes a function marked with its target.

Counterpart: TVM's BYOC `relay.transform.PartitionGraph` (regions outlined into functions with
`Compiler` and `global_symbol` attributes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import ConstantOp
from dlc.rewrites.convert_graph_to_tensor_expr import unique_symbol
from dlc.rewrites.graph_annotate_target import annotated_ops
from dlc.rewrites.partition_targets import REGION_ATTR, TARGET_ATTR, partition_target
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


def _regions(module: ModuleOp) -> dict[int, list[Operation]]:
    regions: dict[int, list[Operation]] = {}
    for op in annotated_ops(module):
        index = op.attributes.get(REGION_ATTR)
        if not isinstance(index, IntegerAttr):
            continue  # not placed: stays where it is
        regions.setdefault(index.value.data, []).append(op)
    return regions


def outline_region(module: ModuleOp, ops: list[Operation], symbol: str, target: str,
                   copy_constants: bool = True) -> None:
    """Moves `ops` (consecutive in their block) into `func.func private @symbol` marked with
    `target` and calls it in their place; constants they read are copied in (or, without
    `copy_constants`, passed as arguments)."""
    members = set(ops)
    inputs: list[SSAValue] = []
    constants: list[Operation] = []
    for op in ops:
        for operand in op.operands:
            owner = operand.owner
            if owner in members or operand in inputs:
                continue
            if isinstance(owner, ConstantOp) and copy_constants:
                if owner not in constants:
                    constants.append(owner)
                continue
            inputs.append(operand)
    outputs = [r for op in ops for r in op.results
               if any(use.operation not in members for use in r.uses)]
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args, strict=True))
    for value, arg in zip(inputs, block.args, strict=True):
        arg.name_hint = value.name_hint
    for constant in constants:
        clone = constant.clone()
        block.add_op(clone)
        mapping.update(zip(constant.results, clone.results, strict=True))
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        del clone.attributes[REGION_ATTR]
        del clone.attributes[TARGET_ATTR]
        block.add_op(clone)
        mapping.update(zip(op.results, clone.results, strict=True))
    block.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    function = func.FuncOp(symbol, ([v.type for v in inputs], [v.type for v in outputs]),
                           Region(block), "private")
    function.attributes[TARGET_ATTR] = StringAttr(target)
    module.body.block.add_op(function)
    call = func.CallOp(symbol, inputs, [v.type for v in outputs])
    call.attributes[TARGET_ATTR] = StringAttr(target)
    call.location = ops[0].location
    Rewriter.insert_op(call, InsertPoint.before(ops[0]))
    for old, new in zip(outputs, call.results, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for op in reversed(ops):
        Rewriter.erase_op(op)
    for constant in constants:
        if not any(r.uses for r in constant.results):
            Rewriter.erase_op(constant)


@dataclass(frozen=True)
class GraphPartitionPass(ModulePass):
    """Outlines each region into a private function marked with its target.

    *Input invariant*: placed graph ops carry `dlc.partition_target` and
    `dlc.partition_region` (graph-annotate-target, graph-merge-regions); ops without a region
    stay where they are.

    *Output IR*: each region `n` of target `t` becomes `func.func private @t_region_<n>`
    (unique) with `dlc.partition_target = "t"`, whose arguments are the values the region reads
    from outside (the region's boundary: where the host copies data to and from the target's
    memory) and whose results are the values used after it; the constants it reads are copied
    into it. In its place, `func.call @t_region_<n>` (also marked with its target). The marks
    on the ops are removed.

    *Invariants*: the module's results (the graph interpreter runs `func.call`); no graph op
    but constants remains in the functions that held regions.

    A region of an external target (BYOC: `cblas`) gets the constants it reads as arguments
    (the library reads them where they are), not copies.

    Options:
        outline: the targets whose regions are outlined, comma-separated (default: all); the
            ops of the other regions stay in place, their marks removed.
    """

    name: ClassVar[str] = "graph-partition"

    outline: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        taken = {f.sym_name.data for f in op.ops if isinstance(f, func.FuncOp)}
        chosen = {t.strip() for t in self.outline.split(",") if t.strip()}
        for name in chosen:
            partition_target(name)
        for index, ops in sorted(_regions(op).items()):
            target = ops[0].attributes[TARGET_ATTR]
            assert isinstance(target, StringAttr)
            if chosen and target.data not in chosen:
                for kept in ops:
                    del kept.attributes[TARGET_ATTR]
                    del kept.attributes[REGION_ATTR]
                continue
            external = partition_target(target.data).external
            symbol = unique_symbol(f"{target.data}_region_{index}", taken)
            taken.add(symbol)
            outline_region(op, ops, symbol, target.data, copy_constants=not external)
