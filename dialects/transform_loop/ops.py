"""The `transform.loop.*` ops: dlc's schedule primitives as transform-dialect ops.

Counterpart: MLIR's transform dialect extensions (`transform.loop.*`, `transform.structured.*`)
and TVM's `tir.Schedule` primitives. A schedule is a `transform.named_sequence` whose ops take
and return handles (`!transform.any_op`) to payload ops (`loop.for`, `loop.block`); integer
parameters may be `!transform.param<i64>` values, which is what the autotuner fills in. The ops
are executed by the `loop-interpret-transforms` pass (rewrites/loop_interpret_transforms.py),
whose functions call the primitives in rewrites/schedule/.

Handles: an op *consumes* a handle when the payload ops it refers to are replaced or erased;
using a consumed handle again is an error. Read-only handles stay valid. A handle given to a
primitive must refer to exactly one payload op (`transform.split_handle` splits a multi-op
handle). Every primitive checks its preconditions before changing anything: a failure is a
diagnostic naming the op, the handle and what was expected, and the payload is untouched.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.transform import ParamType, TransformHandleType
from xdsl.dialects.utils import DynamicIndexList
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

_HANDLE = TransformHandleType


def _check_dynamic(op: IRDLOperation, static: DenseArrayBase, dynamic: tuple[SSAValue, ...],
                   what: str) -> None:
    """The `[8, %p]` lists: one operand per DYNAMIC_INDEX marker, each a param."""
    values = static.get_values()
    markers = sum(1 for value in values if value == DYNAMIC_INDEX)
    if markers != len(dynamic):
        raise VerifyException(
            f"'{op.name}' op expected {markers} parameter operand(s) for the {what}, "
            f"found {len(dynamic)}"
        )
    for value in dynamic:
        if not isinstance(value.type, ParamType):
            raise VerifyException(
                f"'{op.name}' op expected the {what} operands to be !transform.param values, "
                f"found {value.type}"
            )


def _int_list(values: list[int] | tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# ----------------------------------------------------------------------------------------------
# Matching
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class MatchBlockOp(IRDLOperation):
    """Returns a handle to the `loop.block`s with a given name inside the payload of `target`.

    Semantics: `target` (read-only) is usually the root handle of the sequence. The result holds
    every `loop.block` named `block_name` nested in the target's payload ops, in program
    order; it fails if there is none. TVM: `sch.get_block(name)`.

    Example:
        %b = transform.loop.match_block "matmul" in %root
            : (!transform.any_op) -> !transform.any_op

    (tests/filecheck/transform/match_block.mlir: a handle to both "relu" blocks of a function,
    split with `transform.split_handle`, each one's loop then parallelised.)
    """

    name = "transform.loop.match_block"

    target = operand_def(_HANDLE)
    block_name = prop_def(StringAttr)
    result = result_def(_HANDLE)

    assembly_format = "$block_name `in` $target attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class GetLoopsOp(IRDLOperation):
    """Returns one handle per loop around a block, outermost first.

    Semantics: `target` (read-only) holds one `loop.block`; the op has as many results as there
    are `loop.for`s around that block in its nest, and fails if the counts differ. TVM:
    `sch.get_loops(block)`.

    Example:
        %i, %j, %k = transform.loop.get_loops %b
            : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)

    (tests/filecheck/transform/get_loops.mlir: `parallel` on the first handle and `vectorize`
    on the last one mark "i" and "j" of `loop.for %i { loop.for %j { loop.block "add" } }`.)
    """

    name = "transform.loop.get_loops"

    target = operand_def(_HANDLE)
    loops = var_result_def(_HANDLE)

    assembly_format = "$target attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class MatchLoopOp(IRDLOperation):
    """Returns a handle to the loop around a block that has a given axis name.

    Semantics: `target` (read-only) holds one `loop.block`; the result is the `loop.for` around
    it whose `axis` is `axis` (the innermost such loop); fails if there is none.

    Example:
        %k2 = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op

    (tests/filecheck/transform/match_loop.mlir: after a split, `axis "j.0"` finds the outer
    loop.)
    """

    name = "transform.loop.match_loop"

    target = operand_def(_HANDLE)
    axis = prop_def(StringAttr)
    result = result_def(_HANDLE)

    assembly_format = "$target `axis` $axis attr-dict `:` functional-type(operands, results)"


# ----------------------------------------------------------------------------------------------
# Loop structure
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class SplitOp(IRDLOperation):
    """Splits a loop into `n + 1` nested loops by `n` factors (the inner loops' extents).

    Semantics: consumes `target` (one serial `loop.for` with a constant step); returns the new
    loops outermost first. Factors are integers or `!transform.param<i64>` operands, all
    positive. The outer loop keeps the loop's bounds and gets step `step * prod(factors)`; inner
    loop `m` runs over `[0, step * f_m * ... * f_n)` with step `step * f_(m+1) * ... * f_n`, and
    the original induction variable becomes their sum (`arith.addi`). If the trip count is not a
    known multiple of `prod(factors)`, every inner loop's upper bound is guarded with
    `arith.minui(extent, ub - partial sum)`: the last outer iteration runs a partial tile (no
    separate tail loop; the guarded loops have non-constant bounds). The loops' axes are
    "<axis>.0" ... "<axis>.<n>", also in the blocks' axis lists. TVM: `sch.split`.

    Example:
        %k0, %k1 = transform.loop.split %k [8]
            : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

      before:
        loop.for %k = %c0 to %c64 step %c1 axis "k" {
          loop.block "sum" ... reduction ["k"] { ... loop.load %X[%k] ... }
        }
      after:
        loop.for %k.0 = %c0 to %c64 step %c8 axis "k.0" {
          loop.for %k.1 = %c0 to %c8 step %c1 axis "k.1" {
            %k = arith.addi %k.0, %k.1 : index
            loop.block "sum" ... reduction ["k.0", "k.1"] { ... loop.load %X[%k] ... }
          }
        }
      with a trip count of 10 and factor 4, the inner loop is bounded by
        %i.1.rem = arith.subi %c10, %i.0 : index
        %i.1.ub = arith.minui %c4, %i.1.rem : index
        loop.for %i.1 = %c0 to %i.1.ub step %c1 axis "i.1" { ... }
    """

    name = "transform.loop.split"

    target = operand_def(_HANDLE)
    dynamic_factors = var_operand_def(_HANDLE)
    static_factors = prop_def(DenseArrayBase.constr(i64))
    loops = var_result_def(_HANDLE)

    assembly_format = (
        "$target custom<DynamicIndexList>($dynamic_factors, $static_factors) attr-dict `:` "
        "functional-type(operands, results)"
    )
    custom_directives = (DynamicIndexList,)

    def verify_(self) -> None:
        _check_dynamic(self, self.static_factors, tuple(self.dynamic_factors), "factors")
        count = len(self.static_factors.get_values())
        if count == 0 or len(self.loops) != count + 1:
            raise VerifyException(
                f"'{self.name}' op expected {count + 1} results for {count} factor(s), "
                f"found {len(self.loops)}"
            )


@irdl_op_definition
class SplitPeeledOp(IRDLOperation):
    """Splits a loop of runtime extent into whole tiles of a constant size and a loop over the
    iterations left.

    Semantics: consumes `target` (one serial `loop.for` with step 1, its bounds any values);
    returns (outer, inner, rest). `outer` runs from the loop's lower bound to `ub - (ub - lb) %
    factor` with step `factor`, `inner` over `[0, factor)` (constant bounds, for `vectorize` or
    `unroll`), the original induction variable their sum; `rest`, a copy of the body, runs the
    fewer than `factor` iterations left after them (and can be split again). The iterations
    keep their order. The loops' axes are "<axis>.0", "<axis>.1" and "<axis>". Counterpart:
    TVM's loop partitioning of a split's tail, MLIR's `peelForLoop`; unlike `split`, no inner
    bound is guarded.

    Example:
        %tiles, %tile, %left = transform.loop.split_peeled %j [16]
            : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)

      before:
        loop.for %j = %c0 to %w step %c1 axis "j" { ... loop.load %X[%i, %j] ... }
      after:
        %j.rest = arith.remui %w, %c16 : index
        %j.whole = arith.subi %w, %j.rest : index
        loop.for %j.0 = %c0 to %j.whole step %c16 axis "j.0" {
          loop.for %j.1 = %c0 to %c16 step %c1 axis "j.1" {
            %j = arith.addi %j.0, %j.1 : index
            ... loop.load %X[%i, %j] ...
          }
        }
        loop.for %j = %j.whole to %w step %c1 axis "j" { ... loop.load %X[%i, %j] ... }
    """

    name = "transform.loop.split_peeled"

    target = operand_def(_HANDLE)
    factor = prop_def(IntegerAttr[I64])
    outer = result_def(_HANDLE)
    inner = result_def(_HANDLE)
    rest = result_def(_HANDLE)

    assembly_format = "$target ` ` `[` $factor `]` attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        if self.factor.value.data <= 0:
            raise VerifyException(
                f"'{self.name}' op expected a positive factor, found {self.factor.value.data}")


@irdl_op_definition
class BlockRowsOp(IRDLOperation):
    """Cuts a loop over a runtime number of rows into loops over blocks of static rows.

    Semantics: consumes `target` (one serial `loop.for` from 0 with step 1, usually bounded by
    a size argument, whose induction variable is only the leading index of the loads and stores
    in it, of buffers defined outside); returns one loop per size, in order. The first runs over
    whole blocks of `sizes[0]` rows; then, by default (each size a multiple of the next, the
    last 1), each next one over the rows its predecessor left, in blocks of its size; with
    `exact` (every size below the first, descending), the one whose size is the number of rows
    left runs once on all of them. Each loop's body takes views of its rows of those buffers
    (`loop.rows`) and holds a copy of the nest over `[0, size)` on them: a nest of static
    extent, for the other primitives to schedule. The loops' axes are "<axis>.rows" and
    "<axis>.rest<size>". Counterpart: TVM's split of a symbolic extent by a constant factor,
    IREE's peeling of a dynamic dim into full tiles and a remainder.

    Example:
        %blocks, %rest = transform.loop.block_rows %i [8, 1]
            : (!transform.any_op) -> (!transform.any_op, !transform.any_op)

      before:
        loop.for %i = %c0 to %n step %c1 axis "i" { ... loop.load %X[%i, %j] ... }
      after:
        loop.for %i_rows = %c0 to %whole step %c8 axis "i.rows" {
          %X_rows = loop.rows %X[%i_rows] : memref<?x16xf32> -> memref<8x16xf32>
          loop.for %i = %c0 to %c8 step %c1 axis "i" { ... loop.load %X_rows[%i, %j] ... }
        }
        loop.for %i_rest1 = %whole to %n step %c1 axis "i.rest1" { ... 1-row views ... }
    """

    name = "transform.loop.block_rows"

    target = operand_def(_HANDLE)
    sizes = prop_def(DenseArrayBase.constr(i64))
    exact = opt_prop_def(UnitAttr)
    loops = var_result_def(_HANDLE)

    assembly_format = (
        "$target $sizes (`exact` $exact^)? attr-dict `:` functional-type(operands, results)"
    )

    def verify_(self) -> None:
        count = len(self.sizes.get_values())
        if count == 0 or len(self.loops) != count:
            raise VerifyException(
                f"'{self.name}' op expected one result per block size ({count}), found "
                f"{len(self.loops)}"
            )


@irdl_op_definition
class ReorderOp(IRDLOperation):
    """Re-nests loops of a perfectly nested band in the given order (outermost first).

    Semantics: the handles (read-only: the loops are moved, not replaced) each hold one
    `loop.for`; the loops lie on one band whose bodies hold only index arithmetic and the next
    loop. The named loops take the positions the named loops occupied, in the given order;
    other loops of the band stay. Index arithmetic moves to the outermost body where its
    operands are defined. Fails, untouched, if the loops are not one band or if a loop's bounds
    would depend on a loop no longer around it. TVM: `sch.reorder`.

    Example:
        transform.loop.reorder %k, %j : !transform.any_op, !transform.any_op

      before (tests/filecheck/transform/reorder.mlir, `reorder %k, %i`):
        loop.for %i ... axis "i" { loop.for %j ... axis "j" { loop.for %k ... axis "k" {
          loop.block "transpose" { %v = loop.load %A[%i, %j, %k] ... } } } }
      after:
        loop.for %k ... axis "k" { loop.for %j ... axis "j" { loop.for %i ... axis "i" {
          loop.block "transpose" { %v = loop.load %A[%i, %j, %k] ... } } } }
    """

    name = "transform.loop.reorder"

    loops = var_operand_def(_HANDLE)

    assembly_format = "$loops attr-dict `:` type($loops)"

    def verify_(self) -> None:
        if len(self.loops) < 2:
            raise VerifyException(
                f"'{self.name}' op expected at least 2 loops, found {len(self.loops)}"
            )


@irdl_op_definition
class TileOp(IRDLOperation):
    """Tiles two nested loops: `split` each by its tile size, then interleave the pieces.

    Semantics: consumes `outer` and `inner` (`inner` perfectly nested in `outer`, possibly with
    loops between); tile sizes are integers or params. Equivalent to splitting both and
    reordering to `outer.0, inner.0, <loops between>, outer.1, inner.1`, which are the four
    results. All preconditions (of both splits and of the reorder) are checked first.

    Example:
        %i0, %j0, %i1, %j1 = transform.loop.tile %i, %j [4, 8]
            : (!transform.any_op, !transform.any_op)
            -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)

      before:
        loop.for %i = %c0 to %c16 ... axis "i" { loop.for %j = %c0 to %c32 ... axis "j" {
          loop.block "add" ... { ... %A[%i, %j] ... } } }
      after:
        loop.for %i.0 = %c0 to %c16 step %c4 axis "i.0" {
          loop.for %j.0 = %c0 to %c32 step %c8 axis "j.0" {
            loop.for %i.1 = %c0 to %c4 step %c1 axis "i.1" {
              %i = arith.addi %i.0, %i.1 : index
              loop.for %j.1 = %c0 to %c8 step %c1 axis "j.1" {
                %j = arith.addi %j.0, %j.1 : index
                loop.block "add" ... { ... %A[%i, %j] ... } } } } }
    """

    name = "transform.loop.tile"

    outer = operand_def(_HANDLE)
    inner = operand_def(_HANDLE)
    dynamic_sizes = var_operand_def(_HANDLE)
    static_sizes = prop_def(DenseArrayBase.constr(i64))
    loops = var_result_def(_HANDLE)

    assembly_format = (
        "$outer `,` $inner custom<DynamicIndexList>($dynamic_sizes, $static_sizes) attr-dict "
        "`:` functional-type(operands, results)"
    )
    custom_directives = (DynamicIndexList,)

    def verify_(self) -> None:
        _check_dynamic(self, self.static_sizes, tuple(self.dynamic_sizes), "tile sizes")
        if len(self.static_sizes.get_values()) != 2 or len(self.loops) != 4:
            raise VerifyException(
                f"'{self.name}' op expected 2 tile sizes and 4 results, found "
                f"{len(self.static_sizes.get_values())} and {len(self.loops)}"
            )


@irdl_op_definition
class FuseOp(IRDLOperation):
    """Fuses a loop and the loop directly and perfectly nested in it into one loop.

    Semantics: consumes `outer` and `inner` (constant bounds, serial, `inner` the only loop in
    `outer`'s body besides index arithmetic); returns the fused loop, over
    `[0, n_outer * n_inner)`, named "<outer>.<inner>.fused", whose body recovers both induction
    variables with `arith.divui`/`arith.remui`. Both axes must have the same iteration kind
    (spatial or reduction) in every block inside. TVM: `sch.fuse`.

    Example:
        %ij = transform.loop.fuse %i, %j
            : (!transform.any_op, !transform.any_op) -> !transform.any_op

      before:
        loop.for %i = %c0 to %c3 step %c1 axis "i" { loop.for %j = %c0 to %c4 step %c1 axis "j" {
          loop.block "add" ... spatial ["i", "j"] { ... %A[%i, %j] ... } } }
      after:
        loop.for %i.j.fused = %c0 to %c12 step %c1 axis "i.j.fused" {
          %i = arith.divui %i.j.fused, %c4 : index
          %j = arith.remui %i.j.fused, %c4 : index
          loop.block "add" ... spatial ["i.j.fused"] { ... %A[%i, %j] ... } }
    """

    name = "transform.loop.fuse"

    outer = operand_def(_HANDLE)
    inner = operand_def(_HANDLE)
    result = result_def(_HANDLE)

    assembly_format = "$outer `,` $inner attr-dict `:` functional-type(operands, results)"


# ----------------------------------------------------------------------------------------------
# How a loop runs
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class VectorizeOp(IRDLOperation):
    """Marks a loop `vectorized`: its iterations become vector lanes.

    Semantics: `target` (read-only) holds one serial, innermost `loop.for` with constant bounds
    and step 1, whose body holds only blocks, scalar loads and stores, and side-effect-free ops;
    the induction variable may be used only through `arith.addi` with loop-invariant values and
    as the last index of loads and stores (contiguous accesses; fully invariant loads are
    broadcasts), and every store into an outside buffer must be indexed by it last (no
    reduction across lanes). Code generation turns the loop into vector loads, stores and
    arithmetic. TVM: `sch.vectorize`.

    Example:
        transform.loop.vectorize %j : !transform.any_op

      after `split %j [16]` (tests/filecheck/transform/vectorize.mlir):
        loop.for %j.0 = %c0 to %c64 step %c16 axis "j.0" {
          loop.for %j.1 = %c0 to %c16 step %c1 axis "j.1" kind vectorized {
            %j = arith.addi %j.0, %j.1 : index
            loop.block "bias" ... { %a = loop.load %A[%i, %j] ...  %b = loop.load %B[%i] ...
                                    loop.store %s, %C[%i, %j] ... } } }
    """

    name = "transform.loop.vectorize"

    target = operand_def(_HANDLE)

    assembly_format = "$target attr-dict `:` type($target)"


@irdl_op_definition
class UnrollOp(IRDLOperation):
    """Unrolls a loop in the IR: fully, or by a factor.

    Semantics: consumes `target` (one serial or `unrolled` loop with constant bounds). Without a
    factor, the loop is replaced by one copy of its body per iteration, the induction variable
    replaced by an `arith.constant`. With `factor` (an integer or a param, dividing the trip
    count) the loop's step is multiplied by it and its body followed by `factor - 1` copies
    using `iv + k * step`. TVM: `sch.unroll` (there an annotation), MLIR: `loopUnrollByFactor`.

    Example:
        transform.loop.unroll %k : !transform.any_op
        transform.loop.unroll %k factor 2 : !transform.any_op
        transform.loop.unroll %k factor %p : !transform.any_op, !transform.param<i64>

      before:
        loop.for %k = %c0 to %c3 step %c1 axis "k" {
          loop.block "dot" ... reduction ["k"] { ... %A[%i, %k] ... } }
      after (full):
        loop.block "dot" ... { ... %A[%i, %c0] ... }
        loop.block "dot" ... { ... %A[%i, %c1] ... }
        loop.block "dot" ... { ... %A[%i, %c2] ... }
      after (factor 2 of a loop over [0, 8)):
        loop.for %k = %c0 to %c8 step %c2 axis "k" {
          loop.block "copy" ... { ... %X[%k] ... }
          %0 = arith.addi %k, %c1 : index
          loop.block "copy" ... { ... %X[%0] ... } }
    """

    name = "transform.loop.unroll"

    target = operand_def(_HANDLE)
    factor_param = opt_operand_def(_HANDLE)
    factor = opt_prop_def(IntegerAttr[I64])

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self, target: SSAValue, factor: int | SSAValue | None = None
    ) -> None:
        properties: dict[str, Attribute] = {}
        params: list[SSAValue] = []
        if isinstance(factor, int):
            properties["factor"] = IntegerAttr(factor, IntegerType(64))
        elif factor is not None:
            params.append(factor)
        super().__init__(operands=[target, params], properties=properties)

    def verify_(self) -> None:
        if self.factor is not None and self.factor_param is not None:
            raise VerifyException(
                f"'{self.name}' op expected a constant factor or a parameter, found both"
            )
        if self.factor_param is not None and not isinstance(self.factor_param.type, ParamType):
            raise VerifyException(
                f"'{self.name}' op expected the factor operand to be a !transform.param, "
                f"found {self.factor_param.type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.target)
        if self.factor is not None:
            printer.print_string(f" factor {self.factor.value.data}")
        if self.factor_param is not None:
            printer.print_string(" factor ")
            printer.print_operand(self.factor_param)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((operand.type for operand in self.operands), printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> UnrollOp:
        target = parser.parse_unresolved_operand()
        factor: int | None = None
        param = None
        if parser.parse_optional_keyword("factor") is not None:
            factor = parser.parse_optional_integer()
            if factor is None:
                param = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
        operands = [target] if param is None else [target, param]
        resolved = parser.resolve_operands(operands, types, pos)
        op = cls(resolved[0], resolved[1] if param is not None else factor)
        op.attributes |= attributes
        return op


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """Marks a loop `parallel`: its iterations run concurrently on CPU threads.

    Semantics: `target` (read-only) holds one serial `loop.for` whose axis is spatial: no block
    inside lists it as a reduction axis, and every store inside into a buffer from outside the
    loop depends on its induction variable. No loop around it or inside it may already be
    parallel. TVM: `sch.parallel`.

    Example:
        transform.loop.parallel %i : !transform.any_op

      before: loop.for %i = %c0 to %c4 step %c1 axis "i" { loop.for %k ... axis "k" { ... } }
      after:  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel { ... }
    """

    name = "transform.loop.parallel"

    target = operand_def(_HANDLE)

    assembly_format = "$target attr-dict `:` type($target)"


@irdl_op_definition
class BindOp(IRDLOperation):
    """Binds a loop to a GPU axis (kind `bound`): each iteration is one GPU block or thread.

    Semantics: `target` (read-only) holds one serial, spatial `loop.for` (as for `parallel`);
    `thread` is one of blockIdx.{x,y,z}, threadIdx.{x,y,z}, and no loop around or inside it may
    be bound to the same axis. TVM: `sch.bind`.

    Example:
        transform.loop.bind %i "blockIdx.x" : !transform.any_op

      after `split %i [256]` and binding both loops (tests/filecheck/transform/bind.mlir):
        loop.for %i.0 ... axis "i.0" kind bound thread "blockIdx.x" {
          loop.for %i.1 ... axis "i.1" kind bound thread "threadIdx.x" { ... } }
    """

    name = "transform.loop.bind"

    target = operand_def(_HANDLE)
    thread = prop_def(StringAttr)

    assembly_format = "$target $thread attr-dict `:` type($target)"


# ----------------------------------------------------------------------------------------------
# Blocks and buffers
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class DecomposeReductionOp(IRDLOperation):
    """Hoists a reduction's init statement out of the loops, in its own nest before `loop`.

    Semantics: `block` (read-only) holds a reduction `loop.block`; its init is the `loop.block`
    that writes the same buffer just before the reduction's outermost reduction loop (the form
    convert-tensor-expr-to-loop produces: spatial loops, init, reduction loops, accumulate).
    `loop` (read-only) is a spatial loop around both. The init moves into a copy of the loops
    from `loop` down to the init (same axes, kinds and bounds), placed just before `loop`; the
    reduction keeps the original loops, which then form a perfect band (so `reorder` can move a
    reduction loop outward). Returns a handle to the init block. Legal when the init and the
    reduction write the buffer at the same indices and every copied loop's induction variable
    appears in them. TVM: `sch.decompose_reduction`.

    Example:
        %init = transform.loop.decompose_reduction %b, %i
            : (!transform.any_op, !transform.any_op) -> !transform.any_op

      before:
        loop.for %i ... axis "i" { loop.for %j ... axis "j" {
          loop.block "matmul.init" ... { loop.store %zero, %C[%i, %j] ... }
          loop.for %k ... axis "k" { loop.block "matmul" ... reduction ["k"] { ... } } } }
      after:
        loop.for %i ... axis "i" { loop.for %j ... axis "j" {
          loop.block "matmul.init" ... { loop.store %zero, %C[%i, %j] ... } } }
        loop.for %i_1 ... axis "i" { loop.for %j_1 ... axis "j" {
          loop.for %k ... axis "k" { loop.block "matmul" ... reduction ["k"] { ... } } } }
    """

    name = "transform.loop.decompose_reduction"

    block = operand_def(_HANDLE)
    loop = operand_def(_HANDLE)
    result = result_def(_HANDLE)

    assembly_format = "$block `,` $loop attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class ComputeInlineOp(IRDLOperation):
    """Inlines an injective producer block into its consumers and removes it.

    Semantics: consumes `target`, one `loop.block` that stores one value into one intermediate
    buffer (a `loop.alloc`) at the induction variables of the loops around it (a permutation of
    them: every element written once), loops that hold nothing else. Each scalar load of that
    buffer is replaced by a copy of the producer's computation at the load's indices; consumers'
    `reads` gain the producer's inputs; the producer's nest and the buffer (when unused) are
    erased. TVM: `sch.compute_inline`. The copies read the producer's inputs where the
    consumers run, so none of them may be written after the producer or deallocated before its
    last consumer (Winograd's input transform, whose padded input is freed right after it, is
    refused). Every precondition is checked before anything changes; a failure leaves the
    payload untouched (`compute_inline_refusal` gives search spaces the same answer).

    Example:
        transform.loop.compute_inline %b : !transform.any_op

      before:
        %T = loop.alloc global : memref<4x8xf32>
        loop.for %i ... { loop.for %j ... { loop.block "square" reads(%X ...) writes(%T ...) {
          %x = loop.load %X[%i, %j] ...  %sq = arith.mulf %x, %x ...
          loop.store %sq, %T[%i, %j] ... } } }
        loop.for %i2 ... { loop.for %j2 ... { loop.block "add" reads(%T, %Z ...) ... {
          %t = loop.load %T[%i2, %j2] ...  %s = arith.addf %t, %z ... } } }
      after:
        loop.for %i2 ... { loop.for %j2 ... { loop.block "add" reads(%Z, %X ...) ... {
          %x = loop.load %X[%i2, %j2] ...  %sq = arith.mulf %x, %x ...
          %s = arith.addf %sq, %z ... } } }
    """

    name = "transform.loop.compute_inline"

    target = operand_def(_HANDLE)

    assembly_format = "$target attr-dict `:` type($target)"


@irdl_op_definition
class CacheReadOp(IRDLOperation):
    """Reads a block's input through a copy in a given storage scope.

    Semantics: `target` (read-only) holds one `loop.block`; `operand_index` picks one of its
    `reads`; `scope` is global, local or shared. A `loop.alloc <scope>` of the same shape and a
    copy nest (`loop.for` per dimension, axes "ax0", "ax1", ..., around a block named
    "<block>.<scope>_read") are inserted before the block's nest; the block then loads from the
    copy. Returns a handle to the copy block (move it with `compute_at`). Fails if the buffer is
    written inside the block's nest. TVM: `sch.cache_read`.

    Example:
        %copy = transform.loop.cache_read %b, 0, "local" : (!transform.any_op) -> !transform.any_op

      before:
        loop.for %i ... { loop.for %k ... { loop.block "rowsum" reads(%X ...) ... {
          %x = loop.load %X[%i, %k] ... } } }
      after (scope "shared"):
        %X_shared = loop.alloc shared : memref<8x4xf32>
        loop.for %ax0 ... axis "ax0" { loop.for %ax1 ... axis "ax1" {
          loop.block "rowsum.shared_read0" reads(%X ...) writes(%X_shared ...) {
            %0 = loop.load %X[%ax0, %ax1] ...  loop.store %0, %X_shared[%ax0, %ax1] ... } } }
        loop.for %i ... { loop.for %k ... { loop.block "rowsum" reads(%X_shared ...) ... {
          %x = loop.load %X_shared[%i, %k] ... } } }
    """

    name = "transform.loop.cache_read"

    target = operand_def(_HANDLE)
    operand_index = prop_def(IntegerAttr[I64])
    scope = prop_def(StringAttr)
    result = result_def(_HANDLE)

    assembly_format = (
        "$target `,` $operand_index `,` $scope attr-dict `:` functional-type(operands, results)"
    )


@irdl_op_definition
class CacheWriteOp(IRDLOperation):
    """Writes a block's output through a copy in a given storage scope.

    Semantics: `target` (read-only) holds one `loop.block` writing one buffer; `scope` is
    global, local or shared. A `loop.alloc <scope>` of the same shape is inserted before the
    block's nest, every access to the buffer inside that nest (the init and the update of a
    reduction alike) goes to the copy, and a write-back nest (axes "ax0", ..., block
    "<block>.<scope>_write") after the nest copies it to the buffer. A copy-in nest
    ("<block>.<scope>_fill") comes first, so that the write-back never overwrites elements the
    nest did not write, unless the nest's first access to the buffer is a store that provably
    writes every element (at the variables of loops over `[0, dim)` step 1) or the buffer is a
    `loop.alloc` nothing accessed before. Returns a handle to the write-back block (move it
    with `reverse_compute_at`). TVM: `sch.cache_write`.

    Example:
        %wb = transform.loop.cache_write %b, "local" : (!transform.any_op) -> !transform.any_op

      after (tests/filecheck/transform/cache_write.mlir):
        %S_local = loop.alloc local : memref<4xf32>
        loop.for %i ... {
          loop.block "rowsum.init" reads() writes(%S_local ...) { ... }
          loop.for %k ... { loop.block "rowsum" ... writes(%S_local ...) { ... } } }
        loop.for %ax0 ... axis "ax0" {
          loop.block "rowsum.local_write" reads(%S_local ...) writes(%S ...) {
            %0 = loop.load %S_local[%ax0] ...  loop.store %0, %S[%ax0] ... } }
    """

    name = "transform.loop.cache_write"

    target = operand_def(_HANDLE)
    scope = prop_def(StringAttr)
    result = result_def(_HANDLE)

    assembly_format = "$target `,` $scope attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class PackOp(IRDLOperation):
    """Re-lays out a block's input into a packed (blocked) buffer.

    Semantics: `target` (read-only) holds one `loop.block`; `operand_index` picks one of its
    `reads`, a buffer of shape `[D0, ..., Dr-1]`; `tiles` has one entry per dimension (0: not
    tiled; otherwise it must divide the dimension). The packed buffer has the outer dimensions
    `D_d / t_d` (or `D_d`), permuted by `outer_perm` (default: identity), followed by the tile
    sizes of the tiled dimensions: GEMM's B `[K][N]` with tiles `[0, 16]` and `outer_perm
    [1, 0]` becomes `[N/16][K][16]`. A `loop.alloc` and a copy nest (block
    "<block>.pack") go before the block's nest; the block's loads are rewritten to the packed
    indices (`arith.divui`/`arith.remui`). Returns a handle to the packing block. MLIR:
    `tensor.pack`; TVM: `sch.transform_layout`.

    Example:
        %pk = transform.loop.pack %b, 1, [0, 16] outer_perm [1, 0]
            : (!transform.any_op) -> !transform.any_op

      after `split %j [16]` (tests/filecheck/transform/pack.mlir):
        %B_packed = loop.alloc global : memref<2x8x16xf32>
        loop.for %ax0 ... { loop.for %ax1 ... {
          loop.block "matmul.pack1" reads(%B ...) writes(%B_packed ...) {
            %0 = loop.load %B[%ax0, %ax1] ...
            %1 = arith.divui %ax1, %c16 ...  %2 = arith.remui %ax1, %c16 ...
            loop.store %0, %B_packed[%1, %ax0, %2] ... } } }
        ... loop.block "matmul" reads(%A, %B_packed ...) ... {
              %3 = arith.divui %j.0, %c16 : index
              %b = loop.load %B_packed[%3, %k, %j.1] ... }
    """

    name = "transform.loop.pack"

    target = operand_def(_HANDLE)
    operand_index = prop_def(IntegerAttr[I64])
    tiles = prop_def(DenseArrayBase.constr(i64))
    outer_perm = opt_prop_def(DenseArrayBase.constr(i64))
    result = result_def(_HANDLE)

    def __init__(
        self,
        target: SSAValue,
        operand_index: int,
        tiles: list[int],
        outer_perm: list[int] | None = None,
        result_type: Attribute | None = None,
    ) -> None:
        properties: dict[str, Attribute] = {
            "operand_index": IntegerAttr(operand_index, IntegerType(64)),
            "tiles": _int_list(tiles),
        }
        if outer_perm is not None:
            properties["outer_perm"] = _int_list(outer_perm)
        super().__init__(
            operands=[target],
            properties=properties,
            result_types=[target.type if result_type is None else result_type],
        )

    def verify_(self) -> None:
        if self.outer_perm is None:
            return
        perm = list(self.outer_perm.get_values())
        if sorted(perm) != list(range(len(self.tiles.get_values()))):
            raise VerifyException(
                f"'{self.name}' op expected outer_perm to be a permutation of "
                f"0..{len(self.tiles.get_values()) - 1}, found {perm}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.target)
        printer.print_string(f", {self.operand_index.value.data}, [")
        printer.print_list(self.tiles.get_values(), lambda v: printer.print_string(str(v)))
        printer.print_string("]")
        if self.outer_perm is not None:
            printer.print_string(" outer_perm [")
            printer.print_list(
                self.outer_perm.get_values(), lambda v: printer.print_string(str(v))
            )
            printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type([self.target.type], [self.result.type])

    @classmethod
    def parse(cls, parser: Parser) -> PackOp:
        pos = parser.pos
        target = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        operand_index = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(",")
        tiles = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parser.parse_integer)
        outer_perm = None
        if parser.parse_optional_keyword("outer_perm") is not None:
            outer_perm = parser.parse_comma_separated_list(
                Parser.Delimiter.SQUARE, parser.parse_integer
            )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        function_type = parser.parse_function_type()
        (resolved,) = parser.resolve_operands([target], function_type.inputs.data, pos)
        outputs = function_type.outputs.data
        if len(outputs) != 1:
            parser.raise_error(f"expected one result type, found {len(outputs)}")
        op = cls(resolved, operand_index, tiles, outer_perm, outputs[0])
        op.attributes |= attributes
        return op


APPLY_RULES_KNOBS = ("threads", "rows", "accumulators", "pack_rows", "l2_kib")
"""The knobs of `transform.loop.apply_rules`, in the order they are listed."""


@irdl_op_definition
class ApplyRulesOp(IRDLOperation):
    """Schedules a loop nest with `loop-default-schedule`'s rules under the given knobs.

    Semantics: consumes `target` (the outermost loop of one nest, as `convert-tensor-expr-to-loop`
    makes it) and replaces the nest by what the first applicable default rule makes of it
    (rewrites/schedule_rules: the register-blocked micro-kernel over packed panels for a
    reduction, vectorized + parallel loops for an elementwise nest). The knobs, integers or
    `!transform.param<i64>` operands, in this order: `threads` (0: the target's), `rows` (the
    most rows of a micro-kernel tile; 0: the target's), `accumulators` (vector registers the
    tile may use; 0: three quarters of the target's), `pack_rows` (1: also pack GEMM's A into
    row panels), `l2_kib` (the L2 size the panel grouping assumes; 0: the target's). The target is
    `loop-interpret-transforms`'s (its option, else the module's `dlc.target`). The rules are a
    template whose parameters the autotuner
    searches, like TVM's x86 `dense_pack` / `conv2d_NCHWc` templates. Fails, changing nothing,
    when no rule applies.

    Example:
        transform.loop.apply_rules %i [2, 8, 24, 0, 0] : !transform.any_op
        transform.loop.apply_rules %i [0, %rows, %acc, 0, 512]
            : !transform.any_op, !transform.param<i64>, !transform.param<i64>

      before:
        loop.for %i ... axis "i0" { loop.for %j ... axis "i1" {
          loop.block "matmul_init" ...
          loop.for %k ... axis "r0" { loop.block "matmul" ... } } }
      after:
        %b_packed = loop.alloc global : memref<...>    // B in [N/32][K][32] panels
        loop.for %p ... axis "p" kind parallel { ... loop.block "matmul.pack" ... }
        loop.for %i.o ... axis "i0.o" kind parallel {
          loop.for %j.o ... axis "i1.o" {
            %tile = loop.alloc local : memref<8x32xf32>   // the register tile
            ... loop.for %k ... axis "r0" { ... "i0.i" kind unrolled ... "i1.l" kind vectorized
    """

    name = "transform.loop.apply_rules"

    target = operand_def(_HANDLE)
    dynamic_knobs = var_operand_def(_HANDLE)
    static_knobs = prop_def(DenseArrayBase.constr(i64))

    assembly_format = (
        "$target custom<DynamicIndexList>($dynamic_knobs, $static_knobs) attr-dict `:` "
        "type($target) (`,` type($dynamic_knobs)^)?"
    )
    custom_directives = (DynamicIndexList,)

    def verify_(self) -> None:
        _check_dynamic(self, self.static_knobs, tuple(self.dynamic_knobs), "knobs")
        count = len(self.static_knobs.get_values())
        if count != len(APPLY_RULES_KNOBS):
            raise VerifyException(
                f"'{self.name}' op expected {len(APPLY_RULES_KNOBS)} knobs "
                f"({', '.join(APPLY_RULES_KNOBS)}), found {count}"
            )


@irdl_op_definition
class ComputeAtOp(IRDLOperation):
    """Moves a producer block's nest under a loop of its consumer, computing only what is read.

    Semantics: `block` (read-only) holds a producer `loop.block` that stores into one
    intermediate buffer (a `loop.alloc`) at the induction variables of the loops around it,
    which hold nothing else; `loop` (read-only) is a loop of a later nest whose blocks are the
    only readers of that buffer, all at the same indices. The producer's nest is replaced by a
    nest at the top of `loop`'s body that iterates over the loops inside `loop` on which the
    consumer's indices depend (same bounds and axes) and computes exactly the elements read in
    one iteration of `loop` (the buffer keeps its size). TVM: `sch.compute_at`.

    Example:
        transform.loop.compute_at %b, %j : !transform.any_op, !transform.any_op

      before:
        loop.for %a ... { loop.for %b ... { loop.block "square" ... writes(%T ...) {
          ... loop.store %sq, %T[%a, %b] ... } } }
        loop.for %i ... axis "i" { loop.for %j ... axis "j" { loop.block "add" ... {
          %t = loop.load %T[%i, %j] ... } } }
      after `compute_at %p, %i`:
        loop.for %i ... axis "i" {
          loop.for %j ... axis "j" { loop.block "square" ... {
            ... loop.store %sq, %T[%i, %j] ... } }
          loop.for %j_1 ... axis "j" { loop.block "add" ... {
            %t = loop.load %T[%i, %j_1] ... } } }
    """

    name = "transform.loop.compute_at"

    block = operand_def(_HANDLE)
    loop = operand_def(_HANDLE)

    assembly_format = "$block `,` $loop attr-dict `:` type($block) `,` type($loop)"


@irdl_op_definition
class ReverseComputeAtOp(IRDLOperation):
    """Moves a consumer block's nest under a loop of its producer, consuming what was produced.

    Semantics: `block` (read-only) holds a consumer `loop.block` in a later nest that loads
    one buffer at the induction variables of the loops around it (other loops of its nest are
    kept), loops that hold nothing else; `loop` (read-only) is a loop whose blocks write that
    buffer, all at the same indices, with any reduction over it finished inside `loop`. The
    consumer's nest is replaced by a nest at the end of `loop`'s body that iterates over the
    loops inside `loop` on which the producer's indices depend, and consumes exactly the
    elements produced in one iteration of `loop`. TVM: `sch.reverse_compute_at`.

    Example:
        transform.loop.reverse_compute_at %b, %j : !transform.any_op, !transform.any_op

      after `reverse_compute_at %relu, %j` of a matmul's nest (reverse_compute_at.mlir):
        loop.for %i ... axis "i" { loop.for %j ... axis "j" {
          loop.block "matmul.init" ... { ... }
          loop.for %k ... axis "k" { loop.block "matmul" ... { ... } }
          loop.block "relu" reads(%C ...) writes(%D ...) spatial ["i", "j"] {
            %v = loop.load %C[%i, %j] ...  loop.store %r, %D[%i, %j] ... } } }
    """

    name = "transform.loop.reverse_compute_at"

    block = operand_def(_HANDLE)
    loop = operand_def(_HANDLE)

    assembly_format = "$block `,` $loop attr-dict `:` type($block) `,` type($loop)"


@irdl_op_definition
class TensorizeOp(IRDLOperation):
    """Replaces the loop nest under a loop by a tensor intrinsic of dlc's intrinsic library.

    Semantics: consumes `target` (one `loop.for`), the outermost of as many perfectly nested
    serial loops as the intrinsic `intrinsic` (target/intrinsics.py) has axes, each from 0 with
    step 1 and the extent of one axis, around one `loop.block` computing
    `acc = acc + ext(a) * ext(b)`, whose loads move as the entry's operands do (element types
    and strides). The loops are removed; the block keeps the loads, now vector loads at the
    loops' first iteration, and a `loop.intrinsic` call. A warp-level GPU intrinsic
    (`ptx.mma.*`: PTX `mma.sync`) instead becomes a loop over the warp's 32 lanes bound to
    `threadIdx.x` around the block, which loads each lane's fragments (the PTX ISA layout),
    calls the intrinsic and stores the result's fragment (rewrites/schedule/tensorize.py);
    with `matrix_loads`, a 16-bit factor in shared memory whose fragment a PTX `ldmatrix`
    gives is loaded by one `loop.matrix_load` per lane instead.
    Fails, naming the block or loop, when the nest does not fit, when the target lacks the
    intrinsic's features (the pass's `target`, and `gpu_target` for `sm_80`...), or when a
    loop around a warp-level nest is already bound to `threadIdx.x`. Returns a handle to the
    block. TVM: `sch.tensorize`.

    Example:
        %blk = transform.loop.tensorize %j1, "x86.avx512.vpdpbusd"
            : (!transform.any_op) -> !transform.any_op

      before (C: memref<Mx16xi32>, A: memref<Mx4xi8> u8, B: memref<64xi8> s8; j = j1, k = k1):
        loop.for %j1 = %c0 to %c16 ... axis "j1" { loop.for %k1 = %c0 to %c4 ... axis "k1" {
          loop.block "dot" ... { %a = loop.load %A[%i, %k1]  %ae = arith.extui %a
            %l = (%j1 * 4 + %k1)  %b = loop.load %B[%l]  %be = arith.extsi %b
            %c = loop.load %C[%i, %j1]  %s = arith.addi %c, (arith.muli %ae, %be)
            loop.store %s, %C[%i, %j1] } } }
      after (tests/filecheck/transform/tensorize.mlir):
        loop.block "dot" ... {
          %a = loop.load %A[%i, %c0] : memref<Mx4xi8> -> vector<4xi8>
          %b = loop.load %B[%l0] : memref<64xi8> -> vector<64xi8>
          %c = loop.load %C[%i, %c0] : memref<Mx16xi32> -> vector<16xi32>
          %s = loop.intrinsic "x86.avx512.vpdpbusd" %c, %a, %b
              : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
          loop.store %s, %C[%i, %c0] : vector<16xi32> -> memref<Mx16xi32> }
    """

    name = "transform.loop.tensorize"

    target = operand_def(_HANDLE)
    intrinsic = prop_def(StringAttr)
    matrix_loads = opt_prop_def(UnitAttr)
    result = result_def(_HANDLE)

    assembly_format = (
        "$target `,` $intrinsic (`matrix_loads` $matrix_loads^)? attr-dict `:` "
        "functional-type(operands, results)")


# ----------------------------------------------------------------------------------------------
# Parameters
# ----------------------------------------------------------------------------------------------


@irdl_op_definition
class ParamConstantOp(IRDLOperation):
    """A constant transform parameter (MLIR's `transform.param.constant`, with its syntax).

    Semantics: the result is a `!transform.param<T>` holding `value`. xDSL's op of the same name
    has only the generic form; dlc's `transform` dialect uses this one instead, so that
    schedules read like MLIR's. Pure.

    Example:
        %p = transform.param.constant 8 : i64 -> !transform.param<i64>
    """

    name = "transform.param.constant"

    value = prop_def()
    param = result_def(ParamType)

    traits = traits_def(Pure())

    assembly_format = "$value attr-dict `->` type($param)"

    def __init__(self, value: Attribute, param_type: Attribute) -> None:
        super().__init__(properties={"value": value}, result_types=[ParamType(param_type)])
