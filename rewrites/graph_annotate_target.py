"""The pass `graph-annotate-target`: each graph op gets the first target that supports it.

Counterpart: TVM's BYOC `relay.transform.AnnotateTarget` (op support predicates registered per
external target); MLIR has no upstream equivalent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.ops import ConstantOp, FusedOp, YieldOp
from dlc.rewrites.convert_graph_to_tensor_expr import is_graph_op, op_name
from dlc.rewrites.partition_targets import TARGET_ATTR, partition_target
from dlc.rewrites.topi.common import node_name
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


def annotated_ops(module: ModuleOp) -> list[Operation]:
    """The graph ops a partition places: those directly in function bodies, but constants
    (which are copied into every region that reads them) and `graph.fused` groups."""
    found: list[Operation] = []
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        for op in function.body.block.ops:
            if is_graph_op(op) and not isinstance(op, ConstantOp | FusedOp | YieldOp):
                found.append(op)
    return found


def parse_overrides(text: str) -> dict[str, str]:
    """`"conv_1=llvm,graph.relu=opencl"` -> {"conv_1": "llvm", "graph.relu": "opencl"}."""
    overrides: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise PassFailedException(
                f"graph-annotate-target: expected overrides as NAME=TARGET, found '{item}'"
            )
        overrides[key.strip()] = value.strip()
    return overrides


@dataclass(frozen=True)
class GraphAnnotateTargetPass(ModulePass):
    """Marks every graph op with the first of `targets` whose registry supports it.

    *Input invariant*: `func.func`s over graph ops, not yet fused (`graph.fused` groups are
    left alone, unannotated).

    *Output IR*: every graph op but `graph.constant` directly in a function body carries
    `dlc.partition_target = "<name>"`; nothing else changes.

    *Invariants*: the module's semantics (attributes only).

    Fails on an unknown target (the message lists the known ones), and naming the op, on an op
    that no listed target supports.

    Options:
        targets: the targets in order of preference, comma-separated (`opencl,llvm`).
        overrides: `NAME=TARGET` pairs, comma-separated, that place ops regardless of the
            predicates: NAME is an ONNX node name or a graph op name (`graph.relu`); a node
            name wins over an op name.
    """

    name: ClassVar[str] = "graph-annotate-target"

    targets: str = "llvm"
    overrides: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = [partition_target(t.strip()) for t in self.targets.split(",") if t.strip()]
        if not targets:
            raise PassFailedException("graph-annotate-target: expected at least one target")
        overrides = parse_overrides(self.overrides)
        for name in overrides.values():
            partition_target(name)
        for graph_op in annotated_ops(op):
            node = node_name(graph_op)
            chosen = overrides.get(node) if node is not None else None
            chosen = chosen or overrides.get(op_name(graph_op))
            if chosen is None:
                chosen = next((t.name for t in targets if t.supports(graph_op)), None)
            if chosen is None:
                where = f" (node '{node}')" if node else ""
                raise PassFailedException(
                    f"'{op_name(graph_op)}' op{where}: no target among "
                    f"{', '.join(t.name for t in targets)} supports it"
                )
            graph_op.attributes[TARGET_ATTR] = StringAttr(chosen)
