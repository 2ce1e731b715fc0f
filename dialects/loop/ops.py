"""The `loop` dialect's operations: buffers, named loop nests and blocks (TVM's TensorIR level).

Counterpart: TVM's TensorIR (`T.grid`/`T.serial` loops with `for_kind` and `thread_binding`,
`T.block` with `T.reads`/`T.writes` and spatial/reduction iteration kinds, `T.alloc_buffer` with a
storage scope). Buffers are builtin `memref` values with static shapes, indexed row-major.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence, Set

from dlc.dialects.contracts import DIM_ARGS_ATTR
from xdsl.builder import Builder
from xdsl.dialects.arith import ConstantOp, MinSIOp, MinUIOp
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
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
from xdsl.traits import (
    EffectInstance,
    HasParent,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
    ensure_terminator,
)
from xdsl.utils.exceptions import VerifyException

LOOP_KINDS: tuple[str, ...] = ("serial", "parallel", "vectorized", "unrolled", "bound")
"""The values of `loop.for`'s `kind`: how the loop's iterations are executed."""

THREAD_AXES: tuple[str, ...] = (
    "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
)
"""The GPU axes a `loop.for` of kind `bound` can be bound to (its `thread`)."""

ALLOC_SCOPES: tuple[str, ...] = ("global", "local", "shared")
"""The storage scopes of `loop.alloc`: device/heap memory, per-thread registers, GPU shared."""


class AllocatesResult(MemoryEffect):
    """The memory effect of an op that allocates the buffer it returns, and nothing else.

    Unlike xDSL's `MemoryAllocEffect`, the effect names the result, so that dead-code elimination
    may remove an allocation nobody uses (as MLIR does).
    """

    @classmethod
    def get_effects(cls, op: Operation) -> Set[EffectInstance]:
        return frozenset(EffectInstance(MemoryEffectKind.ALLOC, result) for result in op.results)


def _str_attr(value: str | StringAttr) -> StringAttr:
    return value if isinstance(value, StringAttr) else StringAttr(value)


def _names_attr(names: Sequence[str] | ArrayAttr[StringAttr]) -> ArrayAttr[StringAttr]:
    if isinstance(names, ArrayAttr):
        return names
    return ArrayAttr(StringAttr(name) for name in names)


def _constant_index(value: SSAValue) -> int | None:
    """The integer an `arith.constant` of index type defines, or None."""
    if not isinstance(value.owner, ConstantOp):
        return None
    constant = value.owner.value
    return constant.value.data if isinstance(constant, IntegerAttr) else None


def _print_string_list(printer: Printer, names: ArrayAttr[StringAttr]) -> None:
    printer.print_string("[")
    printer.print_list(names.data, lambda name: printer.print_string_literal(name.data))
    printer.print_string("]")


def _parse_string_list(parser: Parser) -> ArrayAttr[StringAttr]:
    names = parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE, lambda: StringAttr(parser.parse_str_literal())
    )
    return ArrayAttr(names)


# ----------------------------------------------------------------------------------------------
# Terminator
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates the body of a `loop.for` or a `loop.block`.

    Semantics: ends one iteration of the enclosing loop (or the block's statement); it has no
    operands. The custom forms of `loop.for` and `loop.block` leave it implicit: the parser adds
    it and the printer omits it, so it only appears in the generic form.

    Example:
        "loop.yield"() : () -> ()
    """

    name = "loop.yield"

    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForOp, BlockOp), Pure()))

    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


def _body_region(
    body: Region | Block | Sequence[Operation], arg_types: Sequence[Attribute]
) -> Region:
    """A single-block region from what a constructor was given."""
    if isinstance(body, Region):
        return body
    if isinstance(body, Block):
        return Region(body)
    return Region(Block(body, arg_types=arg_types))


# ----------------------------------------------------------------------------------------------
# Loops and blocks
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class ForOp(IRDLOperation):
    """A named loop over `[lb, ub)` with a step: one level of a loop nest that schedules act on.

    Semantics: runs the body for `iv = lb, lb + step, ...` while `iv < ub` (`step > 0`, else
    undefined). Operands `lb`, `ub`, `step` are `index` values; the body is a single block whose
    only argument is the induction variable (`index`), terminated by `loop.yield` (implicit in the
    custom form). Properties:
    - `axis` (string): the loop's name, which schedule primitives match (e.g. "i", "i.outer");
    - `kind` (string, default "serial"): serial | parallel (iterations run concurrently on CPU
      threads) | vectorized (iterations are vector lanes) | unrolled | bound (each iteration is one
      GPU block or thread);
    - `thread` (string): present iff `kind` is `bound`; one of blockIdx.{x,y,z}, threadIdx.{x,y,z};
    - `annotations` (dictionary, optional): free-form hints for later passes (pragmas).
    Loops carry no values: results are stored into buffers. The op has the memory effects of its
    body.

    Example:
        loop.for %i = %c0 to %c64 step %c1 axis "i" {
          loop.for %j = %c0 to %c64 step %c8 axis "j" kind parallel {
          }
        }
        loop.for %bx = %c0 to %c64 step %c1 axis "i.outer" kind bound thread "blockIdx.x" {
        }
        loop.for %u = %c0 to %c4 step %c1 axis "k.in" kind unrolled annotations {f = 4 : i64} {
        }
    """

    name = "loop.for"

    lb = operand_def(IndexType)
    ub = operand_def(IndexType)
    step = operand_def(IndexType)

    axis = prop_def(StringAttr)
    kind = prop_def(StringAttr, default_value=StringAttr("serial"))
    thread = opt_prop_def(StringAttr)
    annotations = opt_prop_def(DictionaryAttr)

    body = region_def("single_block")

    traits = lazy_traits_def(
        lambda: (SingleBlockImplicitTerminator(YieldOp), RecursiveMemoryEffect())
    )

    def __init__(
        self,
        lb: SSAValue | Operation,
        ub: SSAValue | Operation,
        step: SSAValue | Operation,
        body: Region | Block | Sequence[Operation],
        axis: str | StringAttr,
        kind: str | StringAttr = "serial",
        thread: str | StringAttr | None = None,
        annotations: Mapping[str, Attribute] | DictionaryAttr | None = None,
    ) -> None:
        properties: dict[str, Attribute] = {"axis": _str_attr(axis), "kind": _str_attr(kind)}
        if thread is not None:
            properties["thread"] = _str_attr(thread)
        if annotations is not None:
            properties["annotations"] = (
                annotations if isinstance(annotations, DictionaryAttr)
                else DictionaryAttr(dict(annotations))
            )
        super().__init__(
            operands=[lb, ub, step],
            properties=properties,
            regions=[_body_region(body, [IndexType()])],
        )
        ensure_terminator(self, SingleBlockImplicitTerminator(YieldOp))

    @classmethod
    def build(
        cls,
        lb: SSAValue | Operation,
        ub: SSAValue | Operation,
        step: SSAValue | Operation,
        axis: str,
        body: Callable[[Builder, SSAValue], None],
        kind: str = "serial",
        thread: str | None = None,
    ) -> ForOp:
        """Builds a loop whose body `body(builder, iv)` inserts at the end of the loop's block."""
        block = Block(arg_types=[IndexType()])
        body(Builder(InsertPoint.at_end(block)), block.args[0])
        return cls(lb, ub, step, block, axis, kind, thread)

    @property
    def induction_var(self) -> BlockArgument:
        """The loop's induction variable (the argument of the body's first block; the body has
        more blocks while a lowering turns nested loops into branches)."""
        return self.body.blocks[0].args[0]

    def constant_bounds(self) -> tuple[int, int, int] | None:
        """`(lb, ub, step)` when all three are `arith.constant`s, else None."""
        lb, ub, step = (_constant_index(value) for value in (self.lb, self.ub, self.step))
        if lb is None or ub is None or step is None:
            return None
        return lb, ub, step

    def trip_count(self) -> int | None:
        """The number of iterations when the bounds are constants (and the step positive)."""
        bounds = self.constant_bounds()
        if bounds is None or bounds[2] <= 0:
            return None
        lb, ub, step = bounds
        return max(0, (ub - lb + step - 1) // step)

    def trip_bound(self) -> int | None:
        """The most iterations the loop runs: its trip count when its bounds are constants;
        else, with a constant `lb` and a positive constant step, an upper bound that is the
        `arith.minui` or `arith.minsi` of a constant and a runtime value (a split's partial
        tile, `minui(16, ub - i)`) bounds it by the constant's; else None."""
        trip = self.trip_count()
        if trip is not None:
            return trip
        lb, step = _constant_index(self.lb), _constant_index(self.step)
        owner = self.ub.owner
        if lb is None or step is None or step <= 0 or not isinstance(owner, MinUIOp | MinSIOp):
            return None
        limits = [c for c in map(_constant_index, owner.operands) if c is not None]
        if not limits:
            return None
        return max(0, (min(limits) - lb + step - 1) // step)

    def verify_(self) -> None:
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            found = ", ".join(str(arg.type) for arg in args) or "none"
            raise VerifyException(
                f"'{self.name}' op expected the body to have one index argument (the induction "
                f"variable), found ({found})"
            )
        kind = self.kind.data
        if kind not in LOOP_KINDS:
            raise VerifyException(
                f"'{self.name}' op expected kind to be one of {', '.join(LOOP_KINDS)}, "
                f"found '{kind}'"
            )
        if kind == "bound" and self.thread is None:
            raise VerifyException(
                f"'{self.name}' op expected a thread for kind bound, found none"
            )
        if kind != "bound" and self.thread is not None:
            raise VerifyException(
                f"'{self.name}' op expected no thread for kind {kind}, "
                f"found '{self.thread.data}'"
            )
        if self.thread is not None and self.thread.data not in THREAD_AXES:
            raise VerifyException(
                f"'{self.name}' op expected thread to be one of {', '.join(THREAD_AXES)}, "
                f"found '{self.thread.data}'"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(" = ")
        printer.print_operand(self.lb)
        printer.print_string(" to ")
        printer.print_operand(self.ub)
        printer.print_string(" step ")
        printer.print_operand(self.step)
        printer.print_string(" axis ")
        printer.print_string_literal(self.axis.data)
        if self.kind.data != "serial" or self.thread is not None:
            printer.print_string(f" kind {self.kind.data}")
        if self.thread is not None:
            printer.print_string(" thread ")
            printer.print_string_literal(self.thread.data)
        if self.annotations is not None:
            printer.print_string(" annotations ")
            printer.print_attribute(self.annotations)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body, print_entry_block_args=False, print_block_terminators=False
        )

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        iv = parser.parse_argument(expect_type=False).resolve(IndexType())
        parser.parse_punctuation("=")
        lb = parser.parse_operand(IndexType())
        parser.parse_keyword("to")
        ub = parser.parse_operand(IndexType())
        parser.parse_keyword("step")
        step = parser.parse_operand(IndexType())
        parser.parse_keyword("axis")
        axis = parser.parse_str_literal("loop axis name")
        kind = "serial"
        if parser.parse_optional_keyword("kind") is not None:
            kind = parser.parse_identifier(context_msg="loop kind")
        thread = None
        if parser.parse_optional_keyword("thread") is not None:
            thread = parser.parse_str_literal("thread axis")
        annotations = None
        if parser.parse_optional_keyword("annotations") is not None:
            annotations = parser.expect(
                parser.parse_optional_attr_dict_with_reserved_attr_names,
                "expected an annotation dictionary",
            )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([iv])
        op = cls(lb, ub, step, body, axis, kind, thread, annotations)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


def _defined_inside(value: SSAValue, op: Operation) -> bool:
    return op.is_ancestor(value.owner) and value.owner is not op


def _accessed_buffers(op: Operation) -> Iterator[tuple[Operation, SSAValue, bool]]:
    """(access op, buffer, is_write) for every load (matrix loads among them), store and async
    copy (a read and a write) nested in `op`."""
    for nested in op.walk():
        if isinstance(nested, LoadOp | MatrixLoadOp):
            yield nested, nested.memref, False
        elif isinstance(nested, StoreOp):
            yield nested, nested.memref, True
        elif isinstance(nested, AsyncCopyOp):
            yield nested, nested.source, False
            yield nested, nested.dest, True


@irdl_op_definition
class BlockOp(IRDLOperation):
    """Names one compute statement and declares the buffers it reads and writes.

    Semantics: runs its body once (the loops around it give the iteration). The block is the unit
    that schedules act on: its `name` (property, e.g. "matmul") is what they match; `reads` and
    `writes` are the buffers (memrefs) it accesses; `spatial_axes` and `reduction_axes` name the
    surrounding `loop.for` axes by their iteration kind (a reduction axis may not be
    parallelised or bound without care). Every `loop.load` in the body from a buffer defined
    outside the block must load from `reads` or `writes` (a reduction reads what it accumulates),
    and every such `loop.store` must store into `writes`. The body is a single block without
    arguments, terminated by `loop.yield` (implicit in the custom form). The block has read and
    write memory effects, so it is never removed as dead code. It writes at least one buffer,
    unless it only prefetches (`loop.prefetch`: `writes()` empty, its buffers in `reads`).

    Example:
        loop.block "scale" reads(%X : memref<64xf32>) writes(%Y : memref<64xf32>) spatial ["i"] {
          %x = loop.load %X[%i] : memref<64xf32> -> f32
          %y = arith.mulf %x, %x : f32
          loop.store %y, %Y[%i] : f32 -> memref<64xf32>
        }
    """

    name = "loop.block"

    reads = var_operand_def(MemRefType)
    writes = var_operand_def(MemRefType)

    block_name = prop_def(StringAttr, prop_name="name")
    spatial_axes = prop_def(ArrayAttr[StringAttr], default_value=ArrayAttr(()))
    reduction_axes = prop_def(ArrayAttr[StringAttr], default_value=ArrayAttr(()))

    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    traits = lazy_traits_def(
        lambda: (SingleBlockImplicitTerminator(YieldOp), MemoryReadEffect(), MemoryWriteEffect())
    )

    def __init__(
        self,
        name: str | StringAttr,
        reads: Sequence[SSAValue | Operation],
        writes: Sequence[SSAValue | Operation],
        body: Region | Block | Sequence[Operation],
        spatial_axes: Sequence[str] | ArrayAttr[StringAttr] = (),
        reduction_axes: Sequence[str] | ArrayAttr[StringAttr] = (),
    ) -> None:
        super().__init__(
            operands=[reads, writes],
            properties={
                "name": _str_attr(name),
                "spatial_axes": _names_attr(spatial_axes),
                "reduction_axes": _names_attr(reduction_axes),
            },
            regions=[_body_region(body, [])],
        )
        ensure_terminator(self, SingleBlockImplicitTerminator(YieldOp))

    @classmethod
    def build(
        cls,
        name: str,
        reads: Sequence[SSAValue | Operation],
        writes: Sequence[SSAValue | Operation],
        body: Callable[[Builder], None],
        spatial_axes: Sequence[str] = (),
        reduction_axes: Sequence[str] = (),
    ) -> BlockOp:
        """Builds a block whose body `body(builder)` inserts at the end of the block's body."""
        block = Block()
        body(Builder(InsertPoint.at_end(block)))
        return cls(name, reads, writes, block, spatial_axes, reduction_axes)

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException(
                f"'{self.name}' op expected a body without arguments, "
                f"found {len(self.body.block.args)}"
            )
        if not self.writes and not any(
                isinstance(op, PrefetchOp) for op in self.body.block.ops):
            raise VerifyException(
                f"'{self.name}' op expected at least one written buffer in "
                f"'{self.block_name.data}', found none"
            )
        spatial = [axis.data for axis in self.spatial_axes]
        reduction = [axis.data for axis in self.reduction_axes]
        axes = spatial + reduction
        for axis in axes:
            if axes.count(axis) > 1:
                raise VerifyException(
                    f"'{self.name}' op expected distinct axis names, found '{axis}' twice"
                )
        self._verify_accesses()

    def _verify_accesses(self) -> None:
        readable = set(self.reads) | set(self.writes)
        writable = set(self.writes)
        for access, buffer, is_write in _accessed_buffers(self):
            if _defined_inside(buffer, self):
                continue
            if is_write and buffer not in writable:
                raise VerifyException(
                    f"'{self.name}' op expected every buffer stored to in "
                    f"'{self.block_name.data}' to be in its writes, found a '{access.name}' "
                    f"into {buffer.type} that is not"
                )
            if not is_write and buffer not in readable:
                raise VerifyException(
                    f"'{self.name}' op expected every buffer loaded from in "
                    f"'{self.block_name.data}' to be in its reads or writes, found a "
                    f"'{access.name}' from {buffer.type} that is not"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.block_name.data)
        for keyword, values in (("reads", self.reads), ("writes", self.writes)):
            printer.print_string(f" {keyword}(")
            printer.print_list(values, printer.print_operand)
            if values:
                printer.print_string(" : ")
                printer.print_list((value.type for value in values), printer.print_attribute)
            printer.print_string(")")
        if self.spatial_axes.data:
            printer.print_string(" spatial ")
            _print_string_list(printer, self.spatial_axes)
        if self.reduction_axes.data:
            printer.print_string(" reduction ")
            _print_string_list(printer, self.reduction_axes)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_block_terminators=False)

    @classmethod
    def _parse_buffers(cls, parser: Parser, keyword: str) -> list[SSAValue]:
        parser.parse_keyword(keyword)
        parser.parse_punctuation("(")
        if parser.parse_optional_punctuation(")") is not None:
            return []
        pos = parser.pos
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
        return parser.resolve_operands(operands, types, pos)

    @classmethod
    def parse(cls, parser: Parser) -> BlockOp:
        name = parser.parse_str_literal("block name")
        reads = cls._parse_buffers(parser, "reads")
        writes = cls._parse_buffers(parser, "writes")
        spatial: ArrayAttr[StringAttr] = ArrayAttr(())
        if parser.parse_optional_keyword("spatial") is not None:
            spatial = _parse_string_list(parser)
        reduction: ArrayAttr[StringAttr] = ArrayAttr(())
        if parser.parse_optional_keyword("reduction") is not None:
            reduction = _parse_string_list(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        op = cls(name, reads, writes, body, spatial, reduction)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


# ----------------------------------------------------------------------------------------------
# Memory access
# ----------------------------------------------------------------------------------------------


def _verify_access(
    op: Operation, memref: SSAValue, indices: Sequence[SSAValue], value_type: Attribute
) -> None:
    """The checks `loop.load` and `loop.store` share: index count, element type, vector width."""
    memref_type = memref.type
    assert isinstance(memref_type, MemRefType)
    rank = memref_type.get_num_dims()
    if len(indices) != rank:
        raise VerifyException(
            f"'{op.name}' op expected {rank} indices for {memref_type}, found {len(indices)}"
        )
    element_type = memref_type.get_element_type()
    if isinstance(value_type, VectorType):
        if value_type.get_num_dims() != 1 or value_type.get_num_scalable_dims():
            raise VerifyException(
                f"'{op.name}' op expected a one-dimensional fixed-width vector, found {value_type}"
            )
        if rank == 0:
            raise VerifyException(
                f"'{op.name}' op expected a memref of rank at least 1 for a vector access, "
                f"found {memref_type}"
            )
        width, last = value_type.get_shape()[0], memref_type.get_shape()[-1]
        if last >= 0 and width > last:
            raise VerifyException(
                f"'{op.name}' op expected a vector width at most the last dimension {last} of "
                f"{memref_type}, found {width}"
            )
        value_element = value_type.get_element_type()
    else:
        value_element = value_type
    if value_element != element_type:
        raise VerifyException(
            f"'{op.name}' op expected element type {element_type} of {memref_type}, "
            f"found {value_type}"
        )


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Loads one element, or a vector of contiguous elements, from a buffer.

    Semantics: `%v = loop.load %A[%i, %j]` reads `A[i, j]`. With a result of type `vector<N x e>`
    it reads the N elements `A[i, j], A[i, j + 1], ..., A[i, j + N - 1]` along the last dimension
    (N must not exceed that dimension). One `index` per dimension; the result's (or vector's)
    element type is the memref's. Reading out of bounds is undefined.

    Example:
        %a = loop.load %A[%i, %k] : memref<16x64xf32> -> f32
        %v = loop.load %A[%i, %k] : memref<16x64xf32> -> vector<8xf32>
    """

    name = "loop.load"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref) `->` type($result)"

    def __init__(
        self,
        memref: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        result_type: Attribute | None = None,
    ) -> None:
        if result_type is None:
            memref_type = SSAValue.get(memref).type
            if not isinstance(memref_type, MemRefType):
                raise ValueError(f"loop.load needs a memref, got {memref_type}")
            result_type = memref_type.get_element_type()
        super().__init__(operands=[memref, indices], result_types=[result_type])

    def verify_(self) -> None:
        _verify_access(self, self.memref, self.indices, self.result.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Stores one element, or a vector of contiguous elements, into a buffer.

    Semantics: `loop.store %v, %C[%i, %j]` writes `C[i, j] = v`; a `vector<N x e>` value writes
    the N elements `C[i, j], ..., C[i, j + N - 1]` along the last dimension. One `index` per
    dimension; the value's (or vector's) element type is the memref's. Writing out of bounds is
    undefined.

    Example:
        loop.store %s, %C[%i, %j] : f32 -> memref<16x32xf32>
        loop.store %w, %C[%i, %j] : vector<8xf32> -> memref<16x32xf32>
    """

    name = "loop.store"

    value = operand_def()
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    traits = traits_def(MemoryWriteEffect())

    assembly_format = (
        "$value `,` $memref `[` $indices `]` attr-dict `:` type($value) `->` type($memref)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        memref: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ) -> None:
        super().__init__(operands=[value, memref, indices])

    def verify_(self) -> None:
        _verify_access(self, self.memref, self.indices, self.value.type)


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint that an element of a buffer will be read soon: the cache line holding it is
    fetched into the cache (x86 `prefetcht0`, LLVM's `llvm.prefetch`).

    Semantics: none; a program means the same without it. The indices may point past the
    buffer's end (a prefetch never faults), one `index` per dimension. Schedules put one a few
    reduction steps ahead of the loads of a micro-kernel whose operands stream from L2 or
    memory (see `schedule_rules/reduction.py`). It has unknown memory effects, so that no pass
    deletes or moves it as dead code.

    Example:
        loop.prefetch %A[%i, %k] : memref<16x64xf32>
    """

    name = "loop.prefetch"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref)"

    def __init__(self, memref: SSAValue | Operation,
                 indices: Sequence[SSAValue | Operation]) -> None:
        super().__init__(operands=[memref, indices])

    def verify_(self) -> None:
        memref_type = self.memref.type
        assert isinstance(memref_type, MemRefType)
        if len(self.indices) != memref_type.get_num_dims():
            raise VerifyException(
                f"'{self.name}' op expected {memref_type.get_num_dims()} indices for "
                f"{memref_type}, found {len(self.indices)}")


def dim_args(function: Operation) -> list[tuple[int, int]]:
    """The (argument, dim) pairs whose sizes a destination-passing function's trailing `index`
    arguments pass, in order (`dlc.dim_args`: their count; each dynamic dim of its memref
    arguments, argument by argument); empty for a function of static shapes."""
    count = function.attributes.get(DIM_ARGS_ATTR)
    if not isinstance(count, IntegerAttr) or not count.value.data:
        return []
    types = function.function_type.inputs.data  # type: ignore[attr-defined]
    buffers = types[: len(types) - count.value.data]
    pairs = [(position, dim) for position, type_ in enumerate(buffers)
             if isinstance(type_, MemRefType)
             for dim, size in enumerate(type_.get_shape()) if size < 0]
    if len(pairs) != count.value.data:
        raise VerifyException(
            f"'{function.name}' op expected {count.value.data} dynamic dims in its memref "
            f"arguments ({DIM_ARGS_ATTR}), found {len(pairs)}")
    return pairs


# ----------------------------------------------------------------------------------------------
# Buffers
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """Allocates a buffer with a storage scope.

    Semantics: returns a new, uninitialised buffer of the result's shape, whose dynamic dims
    (`?`, global scope only) take their sizes from the `sizes` operands, one per `?` in order
    (MLIR's `memref.alloc(%n)`). `scope`
    (property, default "global"): global (ordinary memory: heap on the CPU, device memory on a
    GPU), local (private to one thread: stack or registers), shared (GPU shared memory, one copy
    per thread block). The buffer lives until a matching `loop.dealloc` or the end of the
    function.

    Example:
        %acc = loop.alloc local : memref<4x8xf32>
        %tile = loop.alloc shared : memref<32x32xf32>
        %rows = loop.alloc global sizes(%n) : memref<?x8xf32>
    """

    name = "loop.alloc"

    scope = prop_def(StringAttr, default_value=StringAttr("global"))
    sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)

    traits = traits_def(AllocatesResult())

    def __init__(
        self, memref_type: MemRefType, scope: str | StringAttr = "global",
        sizes: Sequence[SSAValue | Operation] = (),
    ) -> None:
        super().__init__(
            operands=[sizes], properties={"scope": _str_attr(scope)}, result_types=[memref_type]
        )

    def verify_(self) -> None:
        if self.scope.data not in ALLOC_SCOPES:
            raise VerifyException(
                f"'{self.name}' op expected scope to be one of {', '.join(ALLOC_SCOPES)}, "
                f"found '{self.scope.data}'"
            )
        memref_type = self.result.type
        assert isinstance(memref_type, MemRefType)
        dynamic = sum(1 for dim in memref_type.get_shape() if dim < 0)
        if dynamic and self.scope.data != "global":
            raise VerifyException(
                f"'{self.name}' op expected a static shape in scope '{self.scope.data}', "
                f"found {memref_type}"
            )
        if dynamic != len(self.sizes):
            raise VerifyException(
                f"'{self.name}' op expected one size operand per dynamic dim of {memref_type} "
                f"({dynamic}), found {len(self.sizes)}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.scope.data}")
        if self.sizes:
            printer.print_string(" sizes(")
            printer.print_list(self.sizes, printer.print_operand)
            printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        scope = parser.parse_identifier(context_msg="allocation scope")
        sizes: list[SSAValue] = []
        if parser.parse_optional_keyword("sizes") is not None:
            sizes = parser.parse_comma_separated_list(
                Parser.Delimiter.PAREN, lambda: parser.parse_operand(IndexType())
            )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        memref_type = parser.parse_type()
        if not isinstance(memref_type, MemRefType):
            parser.raise_error(f"expected a memref type, found {memref_type}")
        op = cls(memref_type, scope, sizes)
        op.attributes |= attributes
        return op


@irdl_op_definition
class RowsOp(IRDLOperation):
    """A view of consecutive rows of a buffer, as a buffer of its own.

    Semantics: `%v = loop.rows %x[%first] : memref<?x8xf32> -> memref<8x8xf32>` aliases the
    rows `[first, first + R)` of `%x` along its leading dim (R: the result's static leading
    dim): element `[i, j...]` of `%v` is element `[first + i, j...]` of `%x`. Source and
    result have identity layouts, one element type and the same trailing dims, so the view is
    the source's base advanced by `first` rows (MLIR's `memref.subview` of whole rows at a
    dynamic offset, the offset folded into the bare pointer). Rows past the source's end are
    undefined. The default schedules cut a nest over a runtime number of rows into nests over
    blocks of rows this way, so that each is scheduled like a nest of static shape.

    Example:
        %block = loop.rows %x[%first] : memref<?x8xf32> -> memref<8x8xf32>
    """

    name = "loop.rows"

    source = operand_def(MemRefType)
    first = operand_def(IndexType)
    result = result_def(MemRefType)

    traits = traits_def(Pure())

    assembly_format = "$source `[` $first `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, first: SSAValue | Operation,
                 rows: int) -> None:
        source_type = SSAValue.get(source).type
        assert isinstance(source_type, MemRefType)
        result_type = MemRefType(source_type.get_element_type(),
                                 [rows, *source_type.get_shape()[1:]])
        super().__init__(operands=[source, first], result_types=[result_type])

    @property
    def rows(self) -> int:
        """How many rows the view holds."""
        result_type = self.result.type
        assert isinstance(result_type, MemRefType)
        return result_type.get_shape()[0]

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        assert isinstance(source, MemRefType) and isinstance(result, MemRefType)
        for what, type_ in (("source", source), ("result", result)):
            if not isinstance(type_.layout, NoneAttr) or not type_.get_shape():
                raise VerifyException(
                    f"'{self.name}' op expected a ranked {what} with an identity layout, "
                    f"found {type_}")
        same = (source.get_element_type() == result.get_element_type()
                and source.get_shape()[1:] == result.get_shape()[1:])
        if not same or result.get_shape()[0] < 0:
            raise VerifyException(
                f"'{self.name}' op expected a result of static rows with the source's element "
                f"type and trailing dims, found {source} -> {result}")


@irdl_op_definition
class DeallocOp(IRDLOperation):
    """Frees a buffer made by `loop.alloc`.

    Semantics: the buffer must not be accessed afterwards. Optional: buffers without one live
    until the end of the function.

    Example:
        loop.dealloc %acc : memref<4x8xf32>
    """

    name = "loop.dealloc"

    memref = operand_def(MemRefType)

    traits = traits_def(MemoryFreeEffect())

    assembly_format = "$memref attr-dict `:` type($memref)"

    def __init__(self, memref: SSAValue | Operation) -> None:
        super().__init__(operands=[memref])


# ----------------------------------------------------------------------------------------------
# Tensor intrinsics
# ----------------------------------------------------------------------------------------------


def intrinsic_element_type(name: str) -> Attribute:
    """The builtin type of an element type name of the intrinsic library (`i8`, `bf16`, ...)."""
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType

    return {
        "i8": IntegerType(8), "i16": IntegerType(16), "i32": IntegerType(32), "f16": Float16Type(),
        "bf16": BFloat16Type(), "f32": Float32Type(),
    }[name]


@irdl_op_definition
class IntrinsicOp(IRDLOperation):
    """Calls a tensor intrinsic of the library (target/intrinsics.py) on vector operands.

    Semantics: `%r = loop.intrinsic "NAME" %acc, %a, %b` computes what the library's entry NAME
    describes over the flat vectors: the accumulator `acc` (whose type is the result's) plus
    the dot products of `a` and `b` (vpdpbusd: `r[j] = acc[j] + sum_k u8(a[k]) * s8(b[4j + k])`).
    Each operand is a 1-D vector of the entry's element type (bytes are `i8`) and length (the
    contiguous elements its access pattern covers). Made by `transform.loop.tensorize`; lowered
    to the entry's LLVM intrinsic by convert-loop-to-llvm. Pure.

    A warp-level entry (`ptx.mma.m16n8k16.f16`: PTX `mma.sync`) is called by the 32 lanes of a
    warp together: each operand is the calling lane's fragment (its elements of the tile, in
    the order of the entry's fragment layout), and the call must sit in a `loop.for` of 32
    iterations bound to `threadIdx.x` (the lanes; the loop interpreter runs its iterations in
    lock step around the call). Lowered to the PTX instruction by target-gpu-lower-to-nvvm.

    Example:
        %r = loop.intrinsic "x86.avx512.vpdpbusd" %acc, %a, %b
            : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
    """

    name = "loop.intrinsic"

    intrinsic = prop_def(StringAttr)
    acc = operand_def(VectorType)
    lhs = operand_def(VectorType)
    rhs = operand_def(VectorType)
    result = result_def(VectorType)

    traits = traits_def(Pure())

    assembly_format = (
        "$intrinsic $acc `,` $lhs `,` $rhs attr-dict `:` `(` type($acc) `,` type($lhs) `,` "
        "type($rhs) `)` `->` type($result)"
    )

    def __init__(
        self, intrinsic: str, acc: SSAValue | Operation, lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
    ) -> None:
        super().__init__(
            operands=[acc, lhs, rhs], properties={"intrinsic": StringAttr(intrinsic)},
            result_types=[SSAValue.get(acc).type],
        )

    def verify_(self) -> None:
        from dlc.target.intrinsics import ELEMENT_TYPES, IntrinsicError, get_intrinsic

        try:
            entry = get_intrinsic(self.intrinsic.data)
        except IntrinsicError as error:
            raise VerifyException(f"'{self.name}' op {error}") from None
        if self.result.type != self.acc.type:
            raise VerifyException(
                f"'{self.name}' op expected the result type {self.result.type} to be the "
                f"accumulator's, found {self.acc.type}"
            )
        for operand, value in zip(entry.operands, (self.acc, self.lhs, self.rhs), strict=True):
            expected = VectorType(
                intrinsic_element_type(ELEMENT_TYPES[operand.element]),
                [entry.vector_lanes(operand)])
            if value.type != expected:
                raise VerifyException(
                    f"'{self.name}' op expected operand '{operand.role}' of "
                    f"\"{entry.name}\" to be {expected}, found {value.type}"
                )


ASYNC_COPY_BYTES = 16
"""The bytes one `loop.async_copy` moves (PTX `cp.async.cg`: 16)."""


@irdl_op_definition
class AsyncCopyOp(IRDLOperation):
    """Starts a copy of 16 contiguous bytes from a global buffer into a shared one, completed
    by a later `loop.async_wait` (PTX `cp.async.cg.shared.global` 16 bytes).

    Semantics: `loop.async_copy %G[%i, %k], %S[%r, %c], %n` reads the first `n` of the
    16 / element-size elements `G[i, k..]` along the last dimension (`n` is that count or 0:
    then nothing is read, and `G[i, k]` need not be in bounds) and writes them, zero-filled to
    16 bytes, at `S[r, c..]`, both 16-byte aligned. The copy belongs to the calling thread's
    group that the next `loop.async_commit` closes; it has happened once a `loop.async_wait`
    leaves fewer groups pending than that group's age, and not before: reading `S` in between
    is undefined (the loop interpreter performs the copy at that wait).

    Example:
        loop.async_copy %G[%i, %k], %S[%r, %c], %n : memref<64x64xf16>, memref<32x40xf16>
    """

    name = "loop.async_copy"

    source = operand_def(MemRefType)
    source_indices = var_operand_def(IndexType)
    dest = operand_def(MemRefType)
    dest_indices = var_operand_def(IndexType)
    valid = operand_def(IndexType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = (
        "$source `[` $source_indices `]` `,` $dest `[` $dest_indices `]` `,` $valid attr-dict "
        "`:` type($source) `,` type($dest)"
    )

    def __init__(self, source: SSAValue | Operation, source_indices: Sequence[SSAValue],
                 dest: SSAValue | Operation, dest_indices: Sequence[SSAValue],
                 valid: SSAValue | Operation) -> None:
        super().__init__(operands=[source, source_indices, dest, dest_indices, valid])

    @property
    def width(self) -> int:
        """The elements one copy moves."""
        element = self.dest.type.get_element_type()  # type: ignore[attr-defined]
        return ASYNC_COPY_BYTES * 8 // element.bitwidth

    def verify_(self) -> None:
        for buffer in (self.source, self.dest):
            element = buffer.type.get_element_type()  # type: ignore[attr-defined]
            bits = getattr(element, "bitwidth", 0)
            if not bits or (ASYNC_COPY_BYTES * 8) % bits:
                raise VerifyException(
                    f"'{self.name}' op expected elements that divide 16 bytes, found {buffer.type}")
        if self.source.type.get_element_type() != self.dest.type.get_element_type():  # type: ignore
            raise VerifyException(
                f"'{self.name}' op expected the same element type in {self.source.type} and "
                f"{self.dest.type}")
        width = VectorType(self.dest.type.get_element_type(), [self.width])  # type: ignore
        _verify_access(self, self.source, self.source_indices, width)
        _verify_access(self, self.dest, self.dest_indices, width)


@irdl_op_definition
class AsyncCommitOp(IRDLOperation):
    """Closes the calling thread's group of `loop.async_copy`s started since the last commit
    (PTX `cp.async.commit_group`); a commit without copies makes an empty group.

    Semantics: no operands; its effect is on the pending copies. Placed outside `threadIdx`
    loops it is every thread's (the loop interpreter keeps one queue of groups for the block).

    Example:
        loop.async_commit
    """

    name = "loop.async_commit"

    assembly_format = "attr-dict"


@irdl_op_definition
class AsyncWaitOp(IRDLOperation):
    """Waits until at most `pending` of the calling thread's committed groups of copies are
    unfinished (PTX `cp.async.wait_group`): the older ones have written their data.

    Semantics: the property `pending` (>= 0); copies then visible to the thread itself (other
    threads need a barrier after their waits, as for stores).

    Example:
        loop.async_wait 1
    """

    name = "loop.async_wait"

    pending = prop_def(IntegerAttr[I64])

    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int) -> None:
        super().__init__(properties={"pending": IntegerAttr(pending, 64)})

    def verify_(self) -> None:
        if self.pending.value.data < 0:
            raise VerifyException(
                f"'{self.name}' op expected a pending count >= 0, found {self.pending.value.data}")


@irdl_op_definition
class MatrixLoadOp(IRDLOperation):
    """Loads the calling lane's part of 8x8 matrices of 16-bit elements, a warp at a time
    (PTX `ldmatrix`: an entry of the library's `MATRIX_LOADS`, target/intrinsics.py).

    Semantics: `%f = loop.matrix_load "NAME" %S[%r, %c]` is made by the 32 lanes of a warp
    together: each lane gives the address of one row of 8 contiguous elements, `S[r, c]` to
    `S[r, c + 7]` (16-byte aligned; lanes `8q` to `8q + 7` give rows 0..7 of matrix q), and
    receives its elements of the matrices in the order of the entry's layout (two per matrix:
    a vector of `2 * matrices` elements of the buffer's 16-bit type). The buffer must be in
    shared memory on a GPU; the call must sit in a `loop.for` of 32 iterations bound to
    `threadIdx.x` (the loop interpreter runs the lanes in lock step around it, as for a
    warp-level `loop.intrinsic`). Made by `tensorize` (warp-level entries, `matrix_loads`);
    lowered to the PTX instruction by target-gpu-lower-to-nvvm. Reading out of bounds or at
    an unaligned row is undefined (the interpreter reports it).

    Example:
        %f = loop.matrix_load "ptx.ldmatrix.x4" %S[%r, %c] : memref<64x32xf16> -> vector<8xf16>
    """

    name = "loop.matrix_load"

    intrinsic = prop_def(StringAttr)
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def(VectorType)

    traits = traits_def(MemoryReadEffect())

    assembly_format = (
        "$intrinsic $memref `[` $indices `]` attr-dict `:` type($memref) `->` type($result)"
    )

    def __init__(self, intrinsic: str, memref: SSAValue | Operation,
                 indices: Sequence[SSAValue | Operation]) -> None:
        from dlc.target.intrinsics import get_matrix_load

        memref_type = SSAValue.get(memref).type
        assert isinstance(memref_type, MemRefType)
        lanes = get_matrix_load(intrinsic).elements
        super().__init__(
            operands=[memref, indices], properties={"intrinsic": StringAttr(intrinsic)},
            result_types=[VectorType(memref_type.get_element_type(), [lanes])])

    def verify_(self) -> None:
        from dlc.target.intrinsics import IntrinsicError, get_matrix_load

        try:
            entry = get_matrix_load(self.intrinsic.data)
        except IntrinsicError as error:
            raise VerifyException(f"'{self.name}' op {error}") from None
        memref_type = self.memref.type
        assert isinstance(memref_type, MemRefType)
        element = memref_type.get_element_type()
        if getattr(element, "bitwidth", 0) != 16:
            raise VerifyException(
                f"'{self.name}' op expected a buffer of 16-bit elements, found {memref_type}")
        expected = VectorType(element, [entry.elements])
        if self.result.type != expected:
            raise VerifyException(
                f"'{self.name}' op expected the result of \"{entry.name}\" to be {expected}, "
                f"found {self.result.type}")
        _verify_access(self, self.memref, self.indices, element)
