"""`tensor_expr.scan`: a sequential loop over time whose step is a group of computes (te.scan).

Counterpart: TVM's `te.scan(init, update, state_placeholder)`, the construct TVM writes RNNs and
LSTMs with; also ONNX's Scan with its state and scan inputs. Recurrent ops lower to one scan per
direction: the input projection of every step is one big GEMM outside the scan (it has no
recurrence), and the scan's body holds the per-step recurrence GEMM and the fused gate math.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dlc.dialects.tensor_expr.ops import ComputeOp
from xdsl.builder import Builder
from xdsl.dialects.builtin import StringAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

ScanBody = Callable[[Builder, list[SSAValue], list[SSAValue]], Sequence[SSAValue]]
"""`body(builder, states, slices) -> next states + step outputs`, the callback of `ScanOp.build`."""


@irdl_op_definition
class ScanOp(IRDLOperation):
    """A sequential loop over the leading axis of its sequences, carrying states (TVM's te.scan).

    Semantics: `inits` (S tensors) are the states before the first step; `sequences` (at least
    one, all with the same leading extent T) are read one slice per step. The body is a single
    block whose arguments are the S current states, then one slice per sequence (the sequence's
    type without its leading axis); it holds `tensor_expr.compute`s (and scalar `arith`
    constants) and ends with `tensor_expr.scan_yield` of S next states (the states' types) and
    O step outputs. Step t (t = 0..T-1, or T-1..0 with `reverse`) runs the body on the states
    and the slices `sequence[t]`; its next states become the states, and output k is stored at
    `result[S + k][t]`. Results: the S final states, then the O stacked outputs (T × the
    yielded type). Property `name`: the loop's axis name prefix for schedules.

    Example:
        %h, %ys = tensor_expr.scan "rnn" reverse inits(%h0 : tensor<2x3xf32>)
            sequences(%xs : tensor<5x2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) {
        ^bb0(%state: tensor<2x3xf32>, %x: tensor<2x3xf32>):
          %next = tensor_expr.compute "step" -> tensor<2x3xf32> {
          ^bb1(%i: index, %j: index):
            %a = tensor_expr.read %state[%i, %j] : tensor<2x3xf32>
            %b = tensor_expr.read %x[%i, %j] : tensor<2x3xf32>
            %s = arith.addf %a, %b : f32
            tensor_expr.yield %s : f32
          }
          tensor_expr.scan_yield %next, %next : tensor<2x3xf32>, tensor<2x3xf32>
        }
    """

    name = "tensor_expr.scan"

    block_name = prop_def(StringAttr, prop_name="name")
    reverse = opt_prop_def(UnitAttr)
    inits = var_operand_def(TensorType)
    sequences = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    def __init__(self, name: str, inits: Sequence[SSAValue], sequences: Sequence[SSAValue],
                 result_types: Sequence[Attribute], body: Region | Block,
                 reverse: bool = False) -> None:
        properties: dict[str, Attribute] = {"name": StringAttr(name)}
        if reverse:
            properties["reverse"] = UnitAttr()
        super().__init__(operands=[inits, sequences], result_types=[result_types],
                         properties=properties,
                         regions=[body if isinstance(body, Region) else Region(body)])

    @classmethod
    def build(cls, name: str, inits: Sequence[SSAValue], sequences: Sequence[SSAValue],
              body: ScanBody, reverse: bool = False) -> ScanOp:
        """A scan whose body comes from `body(builder, states, slices)`."""
        slice_types = [_slice_type(s.type) for s in sequences]
        block = Block(arg_types=[*(s.type for s in inits), *slice_types])
        builder = Builder(InsertPoint.at_end(block))
        num = len(inits)
        values = list(body(builder, list(block.args[:num]), list(block.args[num:])))
        builder.insert(ScanYieldOp(values))
        steps = _tensor(sequences[0].type).get_shape()[0]
        result_types: list[Attribute] = [s.type for s in inits]
        for value in values[num:]:
            out = _tensor(value.type)
            result_types.append(TensorType(out.get_element_type(), [steps, *out.get_shape()]))
        return cls(name, inits, sequences, result_types, block, reverse)

    @property
    def is_reverse(self) -> bool:
        """Whether steps run from the last to the first."""
        return self.reverse is not None

    @property
    def steps(self) -> int:
        """T, the leading extent of the sequences."""
        return _tensor(self.sequences[0].type).get_shape()[0]

    @property
    def state_args(self) -> tuple[SSAValue, ...]:
        """The block arguments holding the current states."""
        return tuple(self.body.block.args[: len(self.inits)])

    @property
    def slice_args(self) -> tuple[SSAValue, ...]:
        """The block arguments holding the current slices of the sequences."""
        return tuple(self.body.block.args[len(self.inits):])

    @property
    def yielded(self) -> tuple[SSAValue, ...]:
        """The values the body's `tensor_expr.scan_yield` yields."""
        terminator = self.body.block.last_op
        assert isinstance(terminator, ScanYieldOp)
        return tuple(terminator.values)

    def verify_(self) -> None:
        if not self.sequences:
            raise VerifyException(f"'{self.name}' op expected at least one sequence")
        steps = self.steps
        for sequence in self.sequences:
            shape = _tensor(sequence.type).get_shape()
            if not shape or shape[0] != steps:
                raise VerifyException(f"'{self.name}' op expected every sequence to have the "
                                      f"leading extent {steps}, found {sequence.type}")
        expected_args = [*(s.type for s in self.inits),
                         *(_slice_type(s.type) for s in self.sequences)]
        found_args = [a.type for a in self.body.block.args]
        if expected_args != found_args:
            raise VerifyException(f"'{self.name}' op expected block arguments of types "
                                  f"{', '.join(map(str, expected_args))}, found "
                                  f"{', '.join(map(str, found_args))}")
        terminator = self.body.block.last_op
        if not isinstance(terminator, ScanYieldOp):
            raise VerifyException(f"'{self.name}' op expected the body to end with "
                                  f"'{ScanYieldOp.name}'")
        yielded = [v.type for v in terminator.values]
        num = len(self.inits)
        if yielded[:num] != [s.type for s in self.inits]:
            raise VerifyException(f"'{self.name}' op expected the next states to have the "
                                  f"states' types, found {', '.join(map(str, yielded[:num]))}")
        expected = [s.type for s in self.inits] + [
            TensorType(_tensor(t).get_element_type(), [steps, *_tensor(t).get_shape()])
            for t in yielded[num:]]
        found = [r.type for r in self.outs]
        if expected != found:
            raise VerifyException(f"'{self.name}' op expected result types "
                                  f"{', '.join(map(str, expected))}, found "
                                  f"{', '.join(map(str, found))}")
        for op in self.body.block.ops:
            if not isinstance(op, ComputeOp | ScanYieldOp) and not (
                    op.name == "arith.constant" and not op.regions):
                raise VerifyException(f"'{self.name}' op expected tensor_expr.compute, "
                                      f"arith.constant and tensor_expr.scan_yield in its body, "
                                      f"found '{op.name}'")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.block_name.data)
        if self.is_reverse:
            printer.print_string(" reverse")
        for keyword, values in (("inits", self.inits), ("sequences", self.sequences)):
            printer.print_string(f" {keyword}(")
            printer.print_list(values, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in values], printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" -> (")
        printer.print_list([r.type for r in self.outs], printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> ScanOp:
        name = parser.parse_str_literal("scan name")
        reverse = parser.parse_optional_keyword("reverse") is not None
        groups: list[list[SSAValue]] = []
        for keyword in ("inits", "sequences"):
            parser.parse_keyword(keyword)
            parser.parse_punctuation("(")
            operands = parser.parse_comma_separated_list(
                Parser.Delimiter.NONE, parser.parse_unresolved_operand)
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
            groups.append(parser.resolve_operands(operands, types, parser.pos))
        parser.parse_punctuation("->")
        result_types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_type)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(name, groups[0], groups[1], result_types, body, reverse)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class ScanYieldOp(IRDLOperation):
    """Ends a `tensor_expr.scan` body: the next states, then the step's outputs.

    Semantics: terminates the scan's body; its operands are the S next states (of the states'
    types), then the step's outputs, which the scan stacks along a new leading axis.

    Example:
        tensor_expr.scan_yield %next, %next : tensor<2x3xf32>, tensor<2x3xf32>
    """

    name = "tensor_expr.scan_yield"

    values = var_operand_def(TensorType)

    traits = traits_def(IsTerminator(), HasParent(ScanOp), Pure())

    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: Sequence[SSAValue | Operation]) -> None:
        super().__init__(operands=[values])


def _tensor(type_: Attribute) -> TensorType:
    if not isinstance(type_, TensorType):
        raise VerifyException(f"'{ScanOp.name}' op expected ranked tensors, found {type_}")
    return type_


def _slice_type(type_: Attribute) -> TensorType:
    """A sequence's type without its leading axis."""
    sequence = _tensor(type_)
    return TensorType(sequence.get_element_type(), sequence.get_shape()[1:])
