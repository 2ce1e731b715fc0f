"""Graphviz DOT for graph-level IR (`dlc-opt --dump-graph=FILE`), fused groups as clusters.

Each function is a cluster of its arguments, ops and return; each `graph.fused` is a nested
cluster of its ops, labelled with its name and kind. Edges follow the data: a group's block
arguments and `graph.yield` are looked through, so an edge goes from the op that computes a value
to the op that reads it, labelled with the value's type.
"""

from __future__ import annotations

from dlc.dialects.graph.ops import ConstantOp, FusedOp, YieldOp
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue


def _quote(text: str) -> str:
    """`text` as a DOT string: quotes and backslashes escaped, newlines as DOT's \\n."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'


def _short_type(type: Attribute) -> str:
    if isinstance(type, TensorType):
        dims = "x".join(str(d) for d in type.get_shape())
        return f"{dims}x{type.get_element_type()}" if dims else str(type.get_element_type())
    return str(type)


class _DotWriter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.node_ids: dict[int, str] = {}
        self.clusters = 0

    def node_id(self, key: object) -> str:
        return self.node_ids.setdefault(id(key), f"n{len(self.node_ids)}")

    def source_node(self, value: SSAValue) -> str | None:
        """The node that computes `value`, looking through fused groups' arguments and yields."""
        if isinstance(value, OpResult):
            owner = value.op
            if isinstance(owner, FusedOp):
                return self.source_node(owner.yield_op.values[value.index])
            return self.node_id(owner)
        if isinstance(value, BlockArgument):
            parent = value.block.parent_op()
            if isinstance(parent, FusedOp):
                return self.source_node(parent.inputs[value.index])
            return self.node_id(value)
        return None

    def emit_block(self, block: Block, indent: str) -> None:
        for op in block.ops:
            if isinstance(op, FusedOp):
                self.emit_fused(op, indent)
            elif not isinstance(op, YieldOp):
                self.emit_op(op, indent)

    def emit_op(self, op: Operation, indent: str) -> None:
        name = op.name
        if isinstance(op, func.ReturnOp):
            shape, label = "doubleoctagon", "return"
        elif isinstance(op, ConstantOp):
            shape, label = "note", f"constant\n{_short_type(op.result.type)}"
        else:
            shape = "box"
            label = name.split(".", 1)[1] if name.startswith("graph.") else name
            if op.results:
                label += "\n" + ", ".join(_short_type(r.type) for r in op.results)
        style = ', style=filled, fillcolor="#eeeeee"' if isinstance(op, ConstantOp) else ""
        self.lines.append(
            f"{indent}{self.node_id(op)} [shape={shape}, label={_quote(label)}{style}];"
        )
        for operand in op.operands:
            source = self.source_node(operand)
            if source is not None:
                self.lines.append(
                    f"{indent}{source} -> {self.node_id(op)} "
                    f"[label={_quote(_short_type(operand.type))}];"
                )

    def emit_fused(self, op: FusedOp, indent: str) -> None:
        self.clusters += 1
        name = op.name_value() or "fused"
        kind = op.kind.data if op.kind is not None else "?"
        self.lines.append(f"{indent}subgraph cluster_{self.clusters} {{")
        inner = indent + "  "
        self.lines.append(f"{inner}label={_quote(f'{name} ({kind})')};")
        self.lines.append(f'{inner}style=filled; fillcolor="#dde8f7"; color="#4a72b0";')
        self.emit_block(op.body.block, inner)
        self.lines.append(f"{indent}}}")

    def emit_function(self, function: func.FuncOp) -> None:
        self.clusters += 1
        self.lines.append(f"  subgraph cluster_{self.clusters} {{")
        self.lines.append(f"    label={_quote('@' + function.sym_name.data)};")
        if function.body.blocks:
            block = function.body.blocks[0]
            for arg in block.args:
                label = f"%{arg.name_hint or arg.index}\n{_short_type(arg.type)}"
                self.lines.append(
                    f"    {self.node_id(arg)} [shape=ellipse, label={_quote(label)}];"
                )
            self.emit_block(block, "    ")
        self.lines.append("  }")


def module_to_dot(module: ModuleOp, graph_name: str = "dlc") -> str:
    """The functions of `module` as one DOT digraph; `graph.fused` groups become clusters."""
    writer = _DotWriter()
    writer.lines.append(f"digraph {_quote(graph_name)} {{")
    writer.lines.append('  node [fontname="Helvetica"]; edge [fontname="Helvetica", fontsize=9];')
    writer.lines.append("  compound=true; rankdir=TB;")
    for op in module.body.block.ops:
        if isinstance(op, func.FuncOp):
            writer.emit_function(op)
    writer.lines.append("}")
    return "\n".join(writer.lines) + "\n"
