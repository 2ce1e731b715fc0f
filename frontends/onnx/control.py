"""Converters for ONNX control flow: If, Loop and Scan (TVM's `_impl` of `If`, `Loop`, `Scan`).

A subgraph becomes the region of a graph op, converted by the importer in a scope that falls
back on the enclosing one: a node of the subgraph that names an outer value uses that SSA value
directly (a capture). If becomes `graph.if`; Loop and Scan become `graph.loop`. A Scan is a loop
of as many iterations as its scanned axis is long, whose body first takes the iteration's slice
of each scanned input (`graph.gather` at the iteration number, or at `length - 1 - i` for a
reverse scan), runs the Scan body, and stacks the scan outputs; an output axis other than 0 or a
reverse output direction becomes a `graph.transpose` or a reversing `graph.gather` after the
loop. Shapes are static: both If branches must yield the same types, carried values keep their
types, and Loop's scan outputs need a trip count known at import time: one computed from graph
inputs is a `NotConstantError` naming it, on which `dlc.compile` specializes (a compile per
trip count).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from dlc.dialects.graph import (
    ConcatOp,
    GatherOp,
    IfOp,
    LoopOp,
    ReshapeOp,
    SubOp,
    TransposeOp,
    YieldOp,
)
from dlc.frontends.onnx.context import NodeContext
from dlc.frontends.onnx.registry import ConvertedValue, OnnxOpConverter, register
from onnx import GraphProto, ValueInfoProto
from xdsl.dialects.builtin import IntegerType, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

_I1 = IntegerType(1)


def _types(values: Sequence[SSAValue]) -> str:
    return ", ".join(str(v.type) for v in values)


def _scalar_type(declared: ValueInfoProto | None, element: Attribute) -> TensorType:
    """The type of a loop body's iteration or condition input: its declared one-element shape
    (`[]` or `[1]`), else rank 0."""
    if declared is not None and declared.type.tensor_type.HasField("shape"):
        dims = declared.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") and d.dim_value == 1 for d in dims):
            return TensorType(element, [1] * len(dims))
    return TensorType(element, [])


def _body_input(graph: GraphProto, index: int) -> ValueInfoProto | None:
    return graph.input[index] if index < len(graph.input) else None


def _emit_in(block: Block, node: NodeContext, op: Operation) -> SSAValue:
    """Appends `op`, located at `node`, to a body `block` and returns its result."""
    op.location = node.location
    block.add_op(op)
    op.verify()
    return op.results[0]


@register("If")
class If(OnnxOpConverter):
    """If(cond) with `then_branch` and `else_branch` -> `graph.if`."""

    fold_constant_inputs = False

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        cond = node.input(0)
        then_block, then_values = node.subgraph("then_branch", [])
        else_block, else_values = node.subgraph("else_branch", [])
        then_types = [v.type for v in then_values]
        if then_types != [v.type for v in else_values]:
            raise node.error(f"expected the then and else branches to produce the same types, "
                             f"found ({_types(then_values)}) and ({_types(else_values)})")
        then_block.add_op(YieldOp(*then_values))
        else_block.add_op(YieldOp(*else_values))
        op = IfOp(cond, then_types, Region(then_block), Region(else_block))
        node.emit_op(op)
        return list(op.results)


def _carried_check(node: NodeContext, inits: Sequence[SSAValue], outs: Sequence[SSAValue]
                   ) -> None:
    for index, (init, out) in enumerate(zip(inits, outs, strict=True)):
        if init.type != out.type:
            raise node.error(f"expected loop-carried value {index} to keep its type "
                             f"{init.type}, found {out.type} from the body (dlc needs static "
                             "shapes)")


@register("Loop")
class Loop(OnnxOpConverter):
    """Loop(M, cond, v_initial...) with `body` -> `graph.loop` (M absent: no bound; cond
    absent: true)."""

    fold_constant_inputs = False

    @classmethod
    def _impl_v1(cls, node: NodeContext) -> list[ConvertedValue]:
        trip = node.const(0) if node.has_input(0) else None
        max_trip = (node.input(0) if node.has_input(0)
                    else node.constant(np.array(np.iinfo(np.int64).max, np.int64)))
        cond = node.input(1) if node.has_input(1) else node.constant(np.array(True))
        inits = [node.input(i) for i in range(2, node.num_inputs)]
        graph = node.attr_graph("body")
        arg_types = [_scalar_type(_body_input(graph, 0), i64),
                     _scalar_type(_body_input(graph, 1), _I1),
                     *(v.type for v in inits)]
        block, outs = node.subgraph("body", arg_types)  # type: ignore[arg-type]
        if len(outs) < 1 + len(inits):
            raise node.error(f"expected the body to give at least {1 + len(inits)} outputs "
                             f"(condition, carried values), found {len(outs)}")
        _carried_check(node, inits, outs[1 : 1 + len(inits)])
        scans = outs[1 + len(inits):]
        scan_types: list[Attribute] = []
        if scans:
            if not node.has_input(0):
                raise node.error("expected a trip count M: the loop has scan outputs, whose "
                                 "length dlc needs statically")
            # A trip count computed at run time is a NotConstantError naming it: a caller
            # that knows the graph inputs it comes from binds them (`driver.specialize`
            # compiles one specialization per trip count).
            trip = node.require_const(0, "the trip count M, which decides the length of the "
                                         "scan outputs")
            length = int(trip.reshape(-1)[0])
            for value in scans:
                assert isinstance(value.type, TensorType)
                scan_types.append(TensorType(value.type.get_element_type(),
                                             [length, *value.type.get_shape()]))
        block.add_op(YieldOp(*outs))
        op = LoopOp(max_trip, cond, inits, [*(v.type for v in inits), *scan_types],
                    Region(block))
        node.emit_op(op)
        return list(op.results)


def _normalize(node: NodeContext, axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise node.error(f"expected {what} {axis} in [{-rank}, {rank})")
    return axis % rank


@register("Scan")
class Scan(OnnxOpConverter):
    """Scan(initial states..., scan inputs...) with `body` -> `graph.loop` over the scanned
    axis (see the module docstring). Opset 8 (batched, with `sequence_lens`) becomes one
    opset-9 scan per batch element, unrolled over the static batch, stacked back."""

    fold_constant_inputs = False

    @classmethod
    def _impl_v8(cls, node: NodeContext) -> list[ConvertedValue]:
        """Inputs (sequence_lens, states [B, ...]..., scan inputs [B, T, ...]...), outputs
        (final states [B, ...]..., scan outputs [B, T, ...]...), the scan along axis 1 and
        `directions` per scan input. `sequence_lens`, if given, must be T for every batch
        element (known at import time: a runtime one specializes on it)."""
        num_scan = node.attr_int("num_scan_inputs")
        count = node.num_inputs - 1 - num_scan
        if count < 0 or num_scan < 1:
            raise node.error(f"expected sequence_lens, the states and {num_scan} scan inputs "
                             f"(at least one), found {node.num_inputs} inputs")
        states = [node.input(1 + i) for i in range(count)]
        scanned = [node.input(1 + count + i) for i in range(num_scan)]
        ranks = [v.type.get_num_dims() for v in [*states, *scanned]]  # type: ignore
        batches = {v.type.get_shape()[0]  # type: ignore[attr-defined]
                   for v, rank in zip([*states, *scanned], ranks, strict=True) if rank}
        if len(batches) != 1 or min(ranks[:count], default=1) < 1 or min(ranks[count:]) < 2:
            raise node.error("expected states [batch, ...] and scan inputs [batch, length, "
                             "...] of one batch size, found "
                             f"({_types([*states, *scanned])})")
        (batch,) = batches
        lengths = {v.type.get_shape()[1] for v in scanned}  # type: ignore[attr-defined]
        if node.has_input(0):
            given = node.require_const(0, "the sequence lengths").reshape(-1)
            if given.shape != (batch,) or np.any(given != max(lengths)):
                raise node.error(f"expected sequence_lens to be the scan length "
                                 f"{max(lengths)} for each of the {batch} batch elements "
                                 f"(dlc scans whole sequences), found {given.tolist()}")
        directions = node.attr_ints("directions", [0] * num_scan) or []
        results: list[list[SSAValue]] = []
        for b in range(batch):
            index = node.constant(np.array(b, np.int64))
            results.append(cls._scan(
                node, [node.emit(GatherOp(v, index, 0)) for v in states],
                [node.emit(GatherOp(v, index, 0)) for v in scanned], [0] * num_scan,
                list(directions), None, None))
        stacked: list[ConvertedValue] = []
        for parts in zip(*results, strict=True):
            rows = [node.emit(ReshapeOp(v, [1, *v.type.get_shape()]))  # type: ignore
                    for v in parts]
            stacked.append(rows[0] if len(rows) == 1 else node.emit(ConcatOp(rows, 0)))
        return stacked

    @classmethod
    def _impl_v9(cls, node: NodeContext) -> list[ConvertedValue]:
        num_scan = node.attr_int("num_scan_inputs")
        states = [node.input(i) for i in range(node.num_inputs - num_scan)]
        scanned = [node.input(i) for i in range(node.num_inputs - num_scan, node.num_inputs)]
        return list(cls._scan(
            node, states, scanned, node.attr_ints("scan_input_axes", [0] * num_scan) or [],
            node.attr_ints("scan_input_directions", [0] * num_scan) or [],
            node.attr_ints("scan_output_axes", None),
            node.attr_ints("scan_output_directions", None)))

    @classmethod
    def _scan(cls, node: NodeContext, states: list[SSAValue], scanned: list[SSAValue],
              in_axes: list[int], in_dirs: list[int], out_axes: list[int] | None,
              out_dirs: list[int] | None) -> list[SSAValue]:
        """The opset-9 scan of `scanned` along `in_axes` (reversed where `in_dirs`), the
        scan outputs stacked along `out_axes` (default 0, reversed where `out_dirs`)."""
        if not scanned:
            raise node.error("expected at least one scan input")
        lengths: set[int] = set()
        elements: list[TensorType] = []
        for index, value in enumerate(scanned):
            assert isinstance(value.type, TensorType)
            shape = value.type.get_shape()
            axis = _normalize(node, in_axes[index], len(shape), "scan input axis")
            in_axes[index] = axis
            lengths.add(shape[axis])
            elements.append(TensorType(value.type.get_element_type(),
                                       [*shape[:axis], *shape[axis + 1:]]))
        if len(lengths) != 1:
            raise node.error(f"expected the scan inputs to have one length along their scan "
                             f"axes, found {sorted(lengths)}")
        (length,) = lengths
        body_block, outs = node.subgraph("body", [*(v.type for v in states), *elements])
        _carried_check(node, states, outs[: len(states)])

        loop_block = Block(arg_types=[TensorType(i64, []), TensorType(_I1, []),
                                      *(v.type for v in states)])
        iteration, cond = loop_block.args[0], loop_block.args[1]
        iteration.name_hint, cond.name_hint = "iteration", "cond"
        last = node.constant(np.array(length - 1, np.int64))
        reverse_index: SSAValue | None = None
        slices: list[SSAValue] = []
        for value, axis, direction in zip(scanned, in_axes, in_dirs, strict=True):
            index = iteration
            if direction:
                if reverse_index is None:
                    reverse_index = _emit_in(loop_block, node, SubOp(last, iteration))
                index = reverse_index
            slices.append(_emit_in(loop_block, node, GatherOp(value, index, axis)))
        replacements = [*loop_block.args[2:], *slices]
        for arg, new in zip(body_block.args, replacements, strict=True):
            arg.replace_all_uses_with(new)
        for op in list(body_block.ops):
            op.detach()
            loop_block.add_op(op)
        loop_block.add_op(YieldOp(cond, *outs))
        scans = outs[len(states):]
        scan_types = [TensorType(v.type.get_element_type(),  # type: ignore[attr-defined]
                                 [length, *v.type.get_shape()]) for v in scans]  # type: ignore
        op = LoopOp(node.constant(np.array(length, np.int64)), node.constant(np.array(True)),
                    states, [*(v.type for v in states), *scan_types], Region(loop_block))
        node.emit_op(op)
        return [*op.results[: len(states)],
                *cls._arrange(node, list(op.results[len(states):]), length, out_axes,
                              out_dirs)]

    @classmethod
    def _arrange(cls, node: NodeContext, stacked: list[SSAValue], length: int,
                 out_axes: list[int] | None, out_dirs: list[int] | None) -> list[SSAValue]:
        """Each stacked scan output reversed and moved to its `scan_output_axes` axis."""
        count = len(stacked)
        out_axes = out_axes or [0] * count
        out_dirs = out_dirs or [0] * count
        results: list[SSAValue] = []
        for value, axis, direction in zip(stacked, out_axes, out_dirs, strict=True):
            rank = value.type.get_num_dims()  # type: ignore[attr-defined]
            if direction:
                backwards = node.constant(np.arange(length - 1, -1, -1, dtype=np.int64))
                value = node.emit(GatherOp(value, backwards, 0))
            axis = _normalize(node, axis, rank, "scan output axis")
            if axis:
                perm = [*range(1, axis + 1), 0, *range(axis + 1, rank)]
                value = node.emit(TransposeOp(value, perm))
            results.append(value)
        return results
