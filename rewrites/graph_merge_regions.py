"""The pass `graph-merge-regions`: consecutive ops of one target form one region.

Counterpart: TVM's BYOC `relay.transform.MergeCompilerRegions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import ConstantOp
from dlc.rewrites.graph_annotate_target import annotated_ops
from dlc.rewrites.partition_targets import REGION_ATTR, TARGET_ATTR
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class GraphMergeRegionsPass(ModulePass):
    """Numbers the regions: maximal runs of annotated ops, in program order, of one target.

    *Input invariant*: every placed graph op carries `dlc.partition_target`
    (graph-annotate-target).

    *Output IR*: each such op also carries `dlc.partition_region = <n> : i64`; the ops of a
    region are consecutive in their block (constants between them do not split a region) and
    share a target; regions are numbered from 0 across the module in program order.

    *Invariants*: the module's semantics (attributes only). A region is convex: its ops are
    consecutive, so no path leaves it and comes back.

    Fails, naming the op, on a placed op without a target.

    No options.
    """

    name: ClassVar[str] = "graph-merge-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        region = -1
        placed = set(annotated_ops(op))
        for function in op.ops:
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            previous: str | None = None
            for graph_op in function.body.block.ops:
                if isinstance(graph_op, ConstantOp):
                    continue
                if graph_op not in placed:
                    previous = None
                    continue
                target = graph_op.attributes.get(TARGET_ATTR)
                if not isinstance(target, StringAttr):
                    raise PassFailedException(
                        f"'{graph_op.name}' op expected a {TARGET_ATTR} attribute "
                        f"(run graph-annotate-target first)"
                    )
                if target.data != previous:
                    region += 1
                    previous = target.data
                graph_op.attributes[REGION_ATTR] = IntegerAttr(region, i64)
