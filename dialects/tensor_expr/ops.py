"""The `tensor_expr` dialect's operations: tensors defined by index expressions (TVM's te.compute).

Counterpart: TVM's Tensor Expression language (`te.compute`, `te.reduce_axis`, `te.sum`/`te.max`/
`te.min` with an identity element). Operands are ranked tensors; a dim may be dynamic (`?`),
its size an `index` value (`tensor.dim` of an argument, or a compute's `sizes` operand), as
TVM's symbolic `te.var` extents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.traits import HasAncestor, HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

COMBINERS: tuple[str, ...] = ("sum", "max", "min", "prod", "maxui", "minui")
"""The values of `tensor_expr.compute`'s `combiner`: how reduction iterations are combined.
Integer `max`/`min` compare as signed (arith.maxsi/minsi); `maxui`/`minui` (integers only)
compare as unsigned, for tensors that were unsigned in the graph."""

UNSIGNED_COMBINERS: tuple[str, ...] = ("maxui", "minui")
"""The combiners defined on integer element types only."""


ComputeBody = Callable[[Builder, list[SSAValue], list[SSAValue]], SSAValue]
"""`body(builder, spatial_indices, reduction_indices) -> value`, the callback of
`ComputeOp.build`: it inserts the body's ops with `builder` and returns the value to yield."""


def _init_attr(init: float | int | Attribute, element_type: Attribute) -> Attribute:
    """The init attribute for `init`, typed with the compute's element type."""
    if isinstance(init, Attribute):
        return init
    if isinstance(element_type, IntegerType | IndexType):
        return IntegerAttr(int(init), element_type)
    return FloatAttr(float(init), element_type)  # pyright: ignore[reportArgumentType]


# ----------------------------------------------------------------------------------------------
# Compute
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """Defines a tensor elementwise by an expression of its indices, with optional reductions.

    Semantics: for every index `(i...)` of the result,
    `out[i...] = combine over (r...) in [0, reduce_extents) of body(i..., r...)`, starting from
    `init`; without reductions, `out[i...] = body(i...)`. The body is a single block whose
    arguments are `index` values: one per result dimension (the spatial axes), then one per
    reduction extent. It reads tensors defined outside with `tensor_expr.read` (the region is not
    isolated), computes with `arith`/`math`, and yields one scalar of the result's element type
    with `tensor_expr.yield`. Properties:
    - `name` (string; `block_name` in Python): the name of the block schedules will match;
    - `reduce_extents` (array<i64>, possibly empty): the sizes of the reduction axes, -1
      (printed `?`) for one of runtime size;
    - `combiner` (sum | max | min | prod | maxui | minui): present iff there are reductions;
      integer max and min are signed, maxui and minui (integers only) unsigned;
    - `init` (a scalar attribute of the element type): present iff there are reductions;
    - `tag` (string, optional): the operator's kind for schedule rules ("injective", "matmul",
      "conv2d_nchw", ...).
    The result is a ranked tensor; each dynamic dim (`?`) has its size among the `sizes`
    operands (`index` values, one per `?`, in order: MLIR's `tensor.empty` convention), so
    that a compute over a runtime batch is `sizes(%n) -> tensor<?x8xf32>` with
    `%n = tensor.dim %x, %c0`; after them, one per reduction extent of runtime size (a global
    pool over a runtime height and width: `sizes(%n, %h, %w) reduce [?, ?]`). Reading out of
    bounds is undefined: padding is written with clamped indices and `arith.select`.

    Example:
        %c = tensor_expr.compute "matmul" reduce [64] sum init 0.0 : f32 -> tensor<16x32xf32> {
        ^bb0(%i: index, %j: index, %k: index):
          %a = tensor_expr.read %A[%i, %k] : tensor<16x64xf32>
          %b = tensor_expr.read %B[%k, %j] : tensor<64x32xf32>
          %p = arith.mulf %a, %b : f32
          tensor_expr.yield %p : f32
        }
        %r = tensor_expr.compute "relu" tag "injective" -> tensor<16x32xf32> {
        ^bb0(%i: index, %j: index):
          %x = tensor_expr.read %c[%i, %j] : tensor<16x32xf32>
          %zero = arith.constant 0.0 : f32
          %y = arith.maximumf %x, %zero : f32
          tensor_expr.yield %y : f32
        }
    """

    name = "tensor_expr.compute"

    block_name = prop_def(StringAttr, prop_name="name")
    reduce_extents = prop_def(
        DenseArrayBase.constr(i64), default_value=DenseArrayBase.from_list(i64, ())
    )
    combiner = opt_prop_def(StringAttr)
    init = opt_prop_def()
    tag = opt_prop_def(StringAttr)

    sizes = var_operand_def(IndexType)
    result = result_def(TensorType)

    body = region_def("single_block")

    traits = traits_def(Pure())

    def __init__(
        self,
        name: str | StringAttr,
        result_type: TensorType,
        body: Region | Block,
        reduce_extents: Sequence[int] = (),
        combiner: str | None = None,
        init: float | int | Attribute | None = None,
        tag: str | None = None,
        sizes: Sequence[SSAValue | Operation] = (),
    ) -> None:
        properties: dict[str, Attribute] = {
            "name": name if isinstance(name, StringAttr) else StringAttr(name),
            "reduce_extents": DenseArrayBase.from_list(i64, tuple(reduce_extents)),
        }
        if combiner is not None:
            properties["combiner"] = StringAttr(combiner)
        if init is not None:
            properties["init"] = _init_attr(init, result_type.get_element_type())
        if tag is not None:
            properties["tag"] = StringAttr(tag)
        super().__init__(
            operands=[sizes],
            properties=properties,
            result_types=[result_type],
            regions=[body if isinstance(body, Region) else Region(body)],
        )

    @classmethod
    def build(
        cls,
        name: str,
        result_type: TensorType,
        body: ComputeBody,
        reduce_extents: Sequence[int] = (),
        combiner: str | None = None,
        init: float | int | Attribute | None = None,
        tag: str | None = None,
        sizes: Sequence[SSAValue | Operation] = (),
    ) -> ComputeOp:
        """Builds a compute whose body comes from `body(builder, spatial, reduction)`.

        The block gets one `index` argument per result dimension and per reduction extent; the
        callback inserts the body's ops with `builder` (at the end of the block) and returns the
        value to yield, for which `build` adds the `tensor_expr.yield`. `sizes`: the sizes of
        the result's dynamic dims, in order.
        """
        rank = result_type.get_num_dims()
        block = Block(arg_types=[IndexType()] * (rank + len(reduce_extents)))
        builder = Builder(InsertPoint.at_end(block))
        value = body(builder, list(block.args[:rank]), list(block.args[rank:]))
        builder.insert(YieldOp(value))
        return cls(name, result_type, block, reduce_extents, combiner, init, tag, sizes)

    @property
    def result_type(self) -> TensorType:
        """The type of the tensor the compute defines."""
        result_type = self.result.type
        assert isinstance(result_type, TensorType)
        return result_type

    def extents(self) -> list[int | SSAValue]:
        """The size of each result dim: an int where static, else its `sizes` operand."""
        dynamic = iter(self.sizes)
        return [size if size >= 0 else next(dynamic) for size in self.result_type.get_shape()]

    def get_reduce_extents(self) -> tuple[int, ...]:
        """The sizes of the reduction axes (-1 for a runtime one), empty without reductions."""
        return self.reduce_extents.get_values()

    def reduction_sizes(self) -> list[int | SSAValue]:
        """The size of each reduction axis: an int where static, else its `sizes` operand
        (those after the result's)."""
        first = sum(1 for size in self.result_type.get_shape() if size < 0)
        dynamic = iter(self.sizes[first:])
        return [size if size >= 0 else next(dynamic) for size in self.get_reduce_extents()]

    @property
    def spatial_indices(self) -> tuple[BlockArgument, ...]:
        """The block arguments that index the result, one per dimension."""
        return tuple(self.body.block.args[: self.result_type.get_num_dims()])

    @property
    def reduction_indices(self) -> tuple[BlockArgument, ...]:
        """The block arguments that range over the reduction extents."""
        return tuple(self.body.block.args[self.result_type.get_num_dims() :])

    @property
    def yielded(self) -> SSAValue:
        """The scalar the body yields (the operand of its `tensor_expr.yield`)."""
        terminator = self.body.block.last_op
        assert isinstance(terminator, YieldOp)
        return terminator.value

    def read_tensors(self) -> list[SSAValue]:
        """The tensors defined outside the compute that its body reads, in order of first read."""
        tensors: list[SSAValue] = []
        for op in self.body.walk():
            if isinstance(op, ReadOp) and op.tensor not in tensors:
                if not self.is_ancestor(op.tensor.owner):
                    tensors.append(op.tensor)
        return tensors

    def verify_(self) -> None:
        result_type = self.result_type
        extents = self.get_reduce_extents()
        dynamic = sum(1 for dim in result_type.get_shape() if dim < 0)
        runtime = sum(1 for extent in extents if extent == -1)
        if dynamic + runtime != len(self.sizes):
            raise VerifyException(
                f"'{self.name}' op expected one size operand per dynamic dim of {result_type} "
                f"({dynamic})" + (f" and per runtime reduction extent ({runtime})"
                                  if runtime else "") + f", found {len(self.sizes)}"
            )
        if any(extent <= 0 and extent != -1 for extent in extents):
            raise VerifyException(
                f"'{self.name}' op expected positive reduction extents (or ? for a runtime "
                f"one), found {list(extents)}"
            )
        self._verify_block_args(result_type.get_num_dims(), len(extents))
        self._verify_yield(result_type.get_element_type())
        self._verify_reduction(len(extents), result_type.get_element_type())

    def _verify_block_args(self, rank: int, num_reductions: int) -> None:
        args = self.body.block.args
        if len(args) != rank + num_reductions:
            raise VerifyException(
                f"'{self.name}' op expected {rank + num_reductions} block arguments ({rank} "
                f"spatial, {num_reductions} reduction), found {len(args)}"
            )
        for arg in args:
            if not isinstance(arg.type, IndexType):
                raise VerifyException(
                    f"'{self.name}' op expected index block arguments, found {arg.type}"
                )

    def _verify_yield(self, element_type: Attribute) -> None:
        terminator = self.body.block.last_op
        if not isinstance(terminator, YieldOp):
            found = "nothing" if terminator is None else f"'{terminator.name}'"
            raise VerifyException(
                f"'{self.name}' op expected the body to end with '{YieldOp.name}', found {found}"
            )
        if terminator.value.type != element_type:
            raise VerifyException(
                f"'{self.name}' op expected the yielded type to be the element type "
                f"{element_type}, found {terminator.value.type}"
            )

    def _verify_reduction(self, num_reductions: int, element_type: Attribute) -> None:
        combiner, init = self.combiner, self.init
        if num_reductions == 0:
            if combiner is not None or init is not None:
                found = "a combiner" if combiner is not None else "an init"
                raise VerifyException(
                    f"'{self.name}' op expected no combiner and no init without reduction "
                    f"extents, found {found}"
                )
            return
        if combiner is None or init is None:
            missing = "combiner" if combiner is None else "init"
            raise VerifyException(
                f"'{self.name}' op expected a combiner and an init with {num_reductions} "
                f"reduction extents, found no {missing}"
            )
        if combiner.data not in COMBINERS:
            raise VerifyException(
                f"'{self.name}' op expected combiner to be one of {', '.join(COMBINERS)}, "
                f"found '{combiner.data}'"
            )
        if combiner.data in UNSIGNED_COMBINERS and not isinstance(element_type, IntegerType):
            raise VerifyException(
                f"'{self.name}' op expected an integer element type with combiner "
                f"'{combiner.data}', found {element_type}"
            )
        init_type = getattr(init, "type", None)
        if not isinstance(init, IntegerAttr | FloatAttr) or init_type != element_type:
            raise VerifyException(
                f"'{self.name}' op expected init to be a scalar of the element type "
                f"{element_type}, found {init}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.block_name.data)
        if self.tag is not None:
            printer.print_string(" tag ")
            printer.print_string_literal(self.tag.data)
        if self.sizes:
            printer.print_string(" sizes(")
            printer.print_list(self.sizes, printer.print_operand)
            printer.print_string(")")
        extents = self.get_reduce_extents()
        if extents or self.combiner is not None or self.init is not None:
            printer.print_string(" reduce [")
            printer.print_list(
                extents, lambda extent: printer.print_string(str(extent) if extent >= 0 else "?"))
            printer.print_string("]")
        if self.combiner is not None:
            printer.print_string(f" {self.combiner.data}")
        if self.init is not None:
            printer.print_string(" init ")
            printer.print_attribute(self.init)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> ComputeOp:
        name = parser.parse_str_literal("compute name")
        tag = None
        if parser.parse_optional_keyword("tag") is not None:
            tag = parser.parse_str_literal("compute tag")
        sizes: list[SSAValue] = []
        if parser.parse_optional_keyword("sizes") is not None:
            sizes = parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, lambda: parser.parse_operand(IndexType())
            )
        extents: list[int] = []
        combiner = None
        init = None
        if parser.parse_optional_keyword("reduce") is not None:
            extents = parser.parse_comma_separated_list(
                Parser.Delimiter.SQUARE,
                lambda: -1 if parser.parse_optional_punctuation("?") is not None
                else parser.parse_integer(allow_boolean=False),
            )
            combiner = parser.parse_optional_identifier()
            if combiner == "init":  # an init without a combiner: let the verifier report it
                combiner = None
                init = parser.parse_attribute()
            elif parser.parse_optional_keyword("init") is not None:
                init = parser.parse_attribute()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"expected a ranked tensor type, found {result_type}")
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(name, result_type, body, extents, combiner, init, tag, sizes)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


# ----------------------------------------------------------------------------------------------
# Body
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class ReadOp(IRDLOperation):
    """Reads one element of a tensor inside a `tensor_expr.compute` body.

    Semantics: `%v = tensor_expr.read %t[%i, %j]` is `t[i, j]`; one `index` per dimension; the
    result has the tensor's element type. Reading out of bounds is undefined.

    Example:
        %a = tensor_expr.read %A[%i, %k] : tensor<16x64xf32>
    """

    name = "tensor_expr.read"

    T: ClassVar = VarConstraint("T", AnyAttr())

    tensor = operand_def(TensorType.constr(T))
    indices = var_operand_def(IndexType)
    result = result_def(T)

    traits = lazy_traits_def(lambda: (HasAncestor(ComputeOp), Pure()))

    assembly_format = "$tensor `[` $indices `]` attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue | Operation, indices: Sequence[SSAValue | Operation]):
        tensor_type = SSAValue.get(tensor).type
        if not isinstance(tensor_type, TensorType):
            raise ValueError(f"tensor_expr.read needs a ranked tensor, got {tensor_type}")
        super().__init__(operands=[tensor, indices], result_types=[tensor_type.get_element_type()])

    def verify_(self) -> None:
        tensor_type = self.tensor.type
        assert isinstance(tensor_type, TensorType)
        if len(self.indices) != tensor_type.get_num_dims():
            raise VerifyException(
                f"'{self.name}' op expected {tensor_type.get_num_dims()} indices for "
                f"{tensor_type}, found {len(self.indices)}"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Yields the value of a `tensor_expr.compute` body at one index.

    Semantics: terminates the compute's body; its one operand, of the result's element type, is
    the element (or, with reductions, the term that the combiner folds in).

    Example:
        tensor_expr.yield %p : f32
    """

    name = "tensor_expr.yield"

    value = operand_def()

    traits = traits_def(IsTerminator(), HasParent(ComputeOp), Pure())

    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue | Operation) -> None:
        super().__init__(operands=[value])
