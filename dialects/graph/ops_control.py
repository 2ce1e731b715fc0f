"""Graph ops with regions for ONNX control flow: `graph.if` and `graph.loop` (MLIR's `scf.if` and
`scf.while` on tensors; Relax's `If` and recursion, Relay's `If` and `while_loop`).

Their regions are not isolated from above: a body uses values of the enclosing blocks directly,
which is how an ONNX subgraph refers to an outer value by name (its captures). Each body is one
block ending with `graph.yield`. ONNX `Scan` is imported as a `graph.loop` whose body takes the
iteration's slices of the scanned inputs with `graph.gather` (frontends/onnx/control.py).

Both ops are OPAQUE to fusion: `graph-fuse-ops` fuses the ops inside their bodies, never the op
itself into a group; constant folding leaves them alone (their bodies fold inside). The NumPy
semantics are in `interpreter.py`; the lowering (bodies through the same pipeline as function
bodies, the control flow kept in the entry function around the kernel calls) is described in
`rewrites/convert_graph_to_tensor_expr.py`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dlc.dialects.graph.attrs import FusionKind
from dlc.dialects.graph.ops import (
    GraphCanonicalizationPatterns,
    YieldOp,
    _tensor,
    _types,
    op_error,
    with_fusion_kind,
)
from xdsl.dialects.builtin import IntegerType, TensorType, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure, RecursiveMemoryEffect

_I1 = IntegerType(1)


def _single_element(op_name: str, what: str, type_: Attribute, element: Attribute) -> None:
    """Fails unless `type_` is a one-element tensor of `element` (a scalar as ONNX passes one)."""
    tensor = _tensor(op_name, what, type_)
    if tensor.get_element_type() != element or math.prod(tensor.get_shape()) != 1:
        raise op_error(op_name, f"expected {what} to be a one-element tensor of {element}, "
                                f"found {type_}")


def _yield_of(op_name: str, block: Block, where: str) -> YieldOp:
    terminator = block.last_op
    if not isinstance(terminator, YieldOp):
        found = "nothing" if terminator is None else f"'{terminator.name}'"
        raise op_error(op_name, f"expected {where} to end with graph.yield, found {found}")
    return terminator


def _print_result_types(printer: Printer, types: Sequence[Attribute]) -> None:
    if len(types) == 1:
        printer.print_attribute(types[0])
        return
    printer.print_string("(")
    printer.print_list(types, printer.print_attribute)
    printer.print_string(")")


def _parse_result_types(parser: Parser) -> list[Attribute]:
    if parser.parse_optional_punctuation("(") is None:
        return [parser.parse_type()]
    if parser.parse_optional_punctuation(")") is not None:
        return []
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return types


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class IfOp(IRDLOperation):
    """Runs one of two regions on a runtime boolean (ONNX If, MLIR's `scf.if` on tensors).

    Semantics: `cond` is a one-element `i1` tensor; when it is true the `then` region runs, else
    the `else` region, and the op's results are what that region's `graph.yield` gives. Both
    regions are single blocks without arguments that may use any value defined above the op
    (captures); both yield exactly the result types (static shapes: ONNX lets the branches differ
    in shape, dlc does not).

    Example:
        %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
          %t = graph.relu %x : tensor<2xf32>
          graph.yield %t : tensor<2xf32>
        } else {
          %e = graph.neg %x : tensor<2xf32>
          graph.yield %e : tensor<2xf32>
        }
    """

    name = "graph.if"

    cond = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    traits = traits_def(Pure(), RecursiveMemoryEffect(), GraphCanonicalizationPatterns())

    def __init__(self, cond: SSAValue, result_types: Sequence[Attribute],
                 then_region: Region, else_region: Region) -> None:
        super().__init__(operands=[cond], result_types=[list(result_types)],
                         regions=[then_region, else_region])

    def branch_yields(self) -> tuple[YieldOp, YieldOp]:
        """The terminators of the then and else regions."""
        return (_yield_of(self.name, self.then_region.block, "the then region"),
                _yield_of(self.name, self.else_region.block, "the else region"))

    def verify_(self) -> None:
        _single_element(self.name, "the condition", self.cond.type, _I1)
        result_types = [v.type for v in self.outputs]
        for index, type_ in enumerate(result_types):
            _tensor(self.name, f"result #{index}", type_)
        for where, region in (("then", self.then_region), ("else", self.else_region)):
            if region.block.args:
                raise op_error(self.name, f"expected the {where} region to take no arguments, "
                                          f"found {len(region.block.args)}")
            yielded = [v.type for v in _yield_of(self.name, region.block,
                                                  f"the {where} region").values]
            if yielded != result_types:
                raise op_error(self.name, f"expected the {where} region to yield the result "
                                          f"types ({_types(result_types)}), found "
                                          f"({_types(yielded)})")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.cond.type)
        printer.print_string(" -> ")
        _print_result_types(printer, [v.type for v in self.outputs])
        printer.print_string(" ")
        printer.print_region(self.then_region, print_entry_block_args=False)
        printer.print_string(" else ")
        printer.print_region(self.else_region, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> IfOp:
        cond = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        cond_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_types = _parse_result_types(parser)
        then_region = parser.parse_region()
        parser.parse_keyword("else")
        else_region = parser.parse_region()
        op = cls(parser.resolve_operand(cond, cond_type), result_types, then_region, else_region)
        op.attributes.update(attributes)
        return op


@with_fusion_kind(FusionKind.OPAQUE)
@irdl_op_definition
class LoopOp(IRDLOperation):
    """A loop with a trip bound, a runtime condition, carried values and scan outputs (ONNX Loop).

    Semantics: operands are `max_trip` (a one-element `i64` tensor), `cond` (a one-element `i1`
    tensor) and the initial values of N carried tensors. The body is one block with arguments
    `(iteration, condition, carried...)`: a one-element `i64` tensor, a one-element `i1` tensor
    and the N carried types. It yields `(condition, carried..., scan elements...)`. Iteration
    `i = 0, 1, ...` runs while `i < max_trip` and the condition (first the operand, then the
    one the last iteration yielded) is true. The first N results are the carried values after
    the last iteration (the initial values if none ran); each further result stacks one scan
    element per iteration along a new leading axis of static size D: iteration `i` writes row
    `i`. A loop with scan outputs runs at most D iterations (every scan output has the same D,
    which the importer sets to the static trip count); rows of iterations that did not run are
    zero. The body may use any value defined above the op (captures).

    Example:
        %r:2 = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>)
            -> (tensor<2xf32>, tensor<3x2xf32>) {
        ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
          %n = graph.relu %v : tensor<2xf32>
          graph.yield %ci, %n, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
        }
    """

    name = "graph.loop"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    traits = traits_def(Pure(), RecursiveMemoryEffect())

    def __init__(self, max_trip: SSAValue, cond: SSAValue, inits: Sequence[SSAValue],
                 result_types: Sequence[Attribute], body: Region) -> None:
        super().__init__(operands=[[max_trip, cond, *inits]], result_types=[list(result_types)],
                         regions=[body])

    @property
    def max_trip(self) -> SSAValue:
        """The most iterations the loop runs (a one-element `i64` tensor)."""
        return self.inputs[0]

    @property
    def cond(self) -> SSAValue:
        """The condition checked before the first iteration."""
        return self.inputs[1]

    @property
    def inits(self) -> Sequence[SSAValue]:
        """The initial values of the carried tensors."""
        return self.inputs[2:]

    @property
    def num_carried(self) -> int:
        """N, the number of carried values (the first N results)."""
        return len(self.inputs) - 2

    @property
    def scan_outputs(self) -> Sequence[SSAValue]:
        """The results that stack one element per iteration."""
        return self.outputs[self.num_carried:]

    def scan_length(self) -> int | None:
        """D, the leading size of the scan outputs, or None without scan outputs."""
        scans = self.scan_outputs
        return scans[0].type.get_shape()[0] if scans else None  # type: ignore[attr-defined]

    @property
    def yield_op(self) -> YieldOp:
        """The body's terminator."""
        return _yield_of(self.name, self.body.block, "the body")

    def verify_(self) -> None:
        if len(self.inputs) < 2:
            raise op_error(self.name, f"expected at least 2 operands (max_trip, cond), found "
                                      f"{len(self.inputs)}")
        _single_element(self.name, "max_trip", self.max_trip.type, i64)
        _single_element(self.name, "the condition", self.cond.type, _I1)
        carried = [v.type for v in self.inits]
        results = [v.type for v in self.outputs]
        if results[: len(carried)] != carried:
            raise op_error(self.name, f"expected the first {len(carried)} result types to be "
                                      f"the carried types ({_types(carried)}), found "
                                      f"({_types(results[: len(carried)])})")
        args = [a.type for a in self.body.block.args]
        if len(args) != len(carried) + 2:
            raise op_error(self.name, f"expected the body to take {len(carried) + 2} arguments "
                                      f"(iteration, condition, carried), found {len(args)}")
        _single_element(self.name, "the body's iteration argument", args[0], i64)
        _single_element(self.name, "the body's condition argument", args[1], _I1)
        if args[2:] != carried:
            raise op_error(self.name, f"expected the body's carried arguments to have the "
                                      f"carried types ({_types(carried)}), found "
                                      f"({_types(args[2:])})")
        yielded = [v.type for v in self.yield_op.values]
        if len(yielded) != 1 + len(results):
            raise op_error(self.name, f"expected the body to yield {1 + len(results)} values "
                                      f"(condition, carried, scan elements), found "
                                      f"{len(yielded)}")
        _single_element(self.name, "the body's yielded condition", yielded[0], _I1)
        if yielded[1 : 1 + len(carried)] != carried:
            raise op_error(self.name, f"expected the body to yield the carried types "
                                      f"({_types(carried)}), found "
                                      f"({_types(yielded[1 : 1 + len(carried)])})")
        self._verify_scans(yielded[1 + len(carried):], results[len(carried):])

    def _verify_scans(self, elements: Sequence[Attribute], stacked: Sequence[Attribute]) -> None:
        lengths: set[int] = set()
        for index, (element, result) in enumerate(zip(elements, stacked, strict=True)):
            element_type = _tensor(self.name, f"scan element #{index}", element)
            result_type = _tensor(self.name, f"scan output #{index}", result)
            shape = result_type.get_shape()
            if (result_type.get_element_type() != element_type.get_element_type()
                    or list(shape[1:]) != list(element_type.get_shape())):
                raise op_error(self.name, f"expected scan output #{index} to stack elements of "
                                          f"type {element} along a new leading axis, found "
                                          f"{result}")
            if shape[0] < 0:
                raise op_error(self.name, f"expected scan output #{index} to have a static "
                                          f"leading size, found {result}")
            lengths.add(shape[0])
        if len(lengths) > 1:
            raise op_error(self.name, f"expected every scan output to have the same leading "
                                      f"size, found {sorted(lengths)}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(") -> ")
        _print_result_types(printer, [v.type for v in self.outputs])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True, print_empty_block=True)

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        input_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result_types = _parse_result_types(parser)
        if len(operands) != len(input_types) or len(operands) < 2:
            parser.raise_error(f"'{cls.name}' op expected at least 2 operands and one type per "
                               f"operand, found {len(operands)} operands and {len(input_types)} "
                               "types")
        values = parser.resolve_operands(operands, input_types, parser.pos)
        body = parser.parse_region()
        op = cls(values[0], values[1], values[2:], result_types, body)
        op.attributes.update(attributes)
        return op


CONTROL_FLOW_OPS: tuple[type[IRDLOperation], ...] = (IfOp, LoopOp)
"""The graph ops whose regions hold graph ops of the enclosing function (not isolated)."""
