"""graph-batch-rows: a function over a dynamic batch (`?` leading dims) as its per-row function.

The batch-polymorphic graph ops (`GraphOp.LEADING_DYNAMIC`: elementwise, casts, compares and
wheres, conv and transposed conv, pools, matmul with the batch in M, reshapes and flattens that
keep axis 0, softmax and concat over other axes, reductions, argmaxes, gathers and pads over
other axes, a gather of batched indices from a static table, a broadcast to the batch) compute
each row of their result from the same row of their batched operands, so a
function whose only dynamic dims are the leading `?` of one symbol computes row `i` of every
batched result from row `i` of every batched argument. Its kernels can then be compiled for one
row, with static shapes: every default schedule (tiling, vectorizing, parallelizing the inner
axes) and the memory plan stay as they are, and the runtime runs the row function once per row
(TVM's and XLA's static kernels; the batch loop is the outermost loop of the whole model).

A function over runtime shapes (dynamic dims after the leading one) keeps its types: its
kernels run over the whole batch, each batch loop fused with the parallel loop inside it
(`schedule_rules.runtime_extents`), one team per kernel for all the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dlc.dialects.contracts import BATCH_ROWS_ATTR, DIM_SYMBOLS_ATTR
from dlc.dialects.dim_symbols import dim_symbols, has_dynamic_leading_dim, has_runtime_extent
from dlc.dialects.graph.ops import ConstantOp, Conv2DOp, MatmulOp, i64_array
from dlc.dialects.graph.ops_quant import Conv2DIntegerOp, MatmulIntegerOp
from dlc.dialects.graph.ops_tensor import BroadcastToOp, ConvTranspose2DOp, ResizeOp, SliceOp
from dlc.rewrites.batch_cost import (
    PARALLEL_REGION_COST,
    TAIL_TOLERANCE,
    tail_cost,
    weight_cost,
)
from dlc.rewrites.graph_fuse_ops import plan_groups
from dlc.rewrites.llvm_lowering.batch import tail_plans
from dlc.rewrites.loop_plan_memory import element_bytes
from dlc.rewrites.pass_target import cpu_target_for
from dlc.runtime.metadata import BATCH_BLOCK_SUFFIX
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException, VerifyException


def _row_type(type: Attribute, rows: int = 1) -> Attribute:
    """`tensor<?x...>` as `rows` rows, `tensor<rowsx...>`; any other type unchanged."""
    if not isinstance(type, TensorType) or not has_dynamic_leading_dim(type):
        return type
    return TensorType(type.get_element_type(), [rows, *type.get_shape()[1:]])


@dataclass(frozen=True)
class GraphBatchRowsPass(ModulePass):
    """Turn each function with a dynamic batch into the function of one batch row.

    Input invariant: graph-level functions. A function is rewritten when a type in it has a
    dynamic dim; all of them must then be leading dims, its arguments' named by one symbol
    (`dlc.dim_symbols`, the ONNX importer's `dynamic_batch`), and every op with a dynamic type
    batch-polymorphic (the graph verifiers admit `?` in no other op).

    Output IR: the same function with every leading `?` set to 1 (one row); each argument and result
    that had one carries `dlc.batch_rows = "<symbol>"` instead of `dlc.dim_symbols`. The other
    types, ops and attributes are unchanged (`graph.reshape`'s leading -1 now infers 1).

    With `block` > 1, a copy of the function compiled for `block` rows at once is added after
    it as `<name>__rows<block>` (`dlc.batch_rows` marks the same arguments): the runtime runs it
    for each whole block of rows and the row function for the rest, so that a batch of `block`
    or more rows runs the kernels of a static batch (a matmul's rows share its weight loads).
    With `tails`, copies for the sizes up to twice `block` whose rows still cost less
    arithmetic than reading the function's weights (`tail_blocks`) are added too, largest
    first: the largest runs the whole blocks, and the runtime may run the rows left through
    the others (an MLP's 3 rows as a block of 3, not 3 calls that each read every weight).

    Invariants: a function without dynamic dims is left alone, and so is a function with a
    dynamic dim after the leading one in its signature (a shape-polymorphic function, the ONNX
    importer's `dynamic_shapes`: its kernels run over runtime extents, the batch's included);
    the rewritten function verifies.

    Options:
        block: the rows of the block entry (0 or 1: none).
        tails: add the weight-bound blocks up to twice `block` (`tail_blocks`).
        target: the CPU target whose vector width and L2 `tails` weighs (default: the
            module's `dlc.target`, else the default CPU).
    """

    name = "graph-batch-rows"

    block: int = 0
    tails: bool = False
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.ops):
            if not isinstance(function, func.FuncOp) or not function.body.blocks or \
                    _is_shape_polymorphic(function):
                continue
            if self.block > 1 and _is_dynamic(function):
                _batch_symbol(function)  # the function's errors name it, not its copy
                blocks = [self.block]
                if self.tails:
                    target = cpu_target_for(self.name, self.target, op)
                    blocks = sorted(blocks + tail_blocks(
                        function, self.block, target.lanes(4), target.l2_bytes or 0,
                        parallel=target.threads != 1), reverse=True)
                for rows in reversed(blocks):
                    blocked = function.clone()
                    blocked.sym_name = StringAttr(
                        f"{function.sym_name.data}{BATCH_BLOCK_SUFFIX}{rows}")
                    _batch_rows(blocked, rows)
                    op.body.block.insert_op_after(blocked, function)
            _batch_rows(function)


def _reduced(op: Operation) -> int:
    """The multiply-adds `op` makes for each element of its result (1 for an op that reduces
    nothing): a matmul's K, a conv's weight elements per output channel."""
    if isinstance(op, MatmulOp | MatmulIntegerOp):
        return op.lhs.type.get_shape()[-1]
    if isinstance(op, Conv2DOp | Conv2DIntegerOp):
        shape = op.weight.type.get_shape()
        return math.prod(shape) // shape[op.kernel_layout_value().index("O")]
    if isinstance(op, ConvTranspose2DOp):  # each input element meets a whole weight slice
        weight, result = op.weight.type.get_shape(), op.result.type.get_shape()
        inputs = math.prod(op.input.type.get_shape()[1:])
        return max(1, inputs * math.prod(weight) // weight[0] // math.prod(result[1:]))
    return 1


def row_work(function: func.FuncOp, lanes: int) -> float:
    """The vector instructions of `lanes` lanes one batch row of `function` (a graph-level
    function over a dynamic batch) takes: each batched result's elements of one row times the
    multiply-adds each makes (`_reduced`). Values without the batch (constants, what is
    computed from them alone) are not counted: they fold, or are computed once."""
    work = 0.0
    for op in function.walk():
        for result in op.results:
            if has_dynamic_leading_dim(result.type):
                work += math.prod(result.type.get_shape()[1:]) * _reduced(op) / lanes
    return work


def constant_bytes(function: func.FuncOp) -> int:
    """The bytes of `function`'s constants (its weights)."""
    total = 0
    for op in function.walk():
        if isinstance(op, ConstantOp):
            element = element_bytes(op.result.type.get_element_type()) or 0
            total += math.prod(op.result.type.get_shape()) * element
    return total


def block_sizes(block: int) -> list[int]:
    """The sizes of tail blocks up to twice `block`, but `block`: 2, 3, 4, 6, 8, 10, 12, 14,
    16... (below 8 the powers of two and the halfway sizes between them, from 8 quarter steps),
    so that a tail padded to the next size computes at most a fifth more rows than it has (5
    rows as 6; 9 as 10, where the halfway sizes made it 12: a third more)."""
    sizes, power = [], 2
    while power <= 2 * block:
        steps = (4, 5, 6, 7) if power >= 8 else (4, 6)
        sizes += [rows for rows in (power * step // 4 for step in steps)
                  if rows <= 2 * block and rows != block]
        power *= 2
    return sizes


def kernel_calls(function: func.FuncOp) -> int:
    """The kernels one call of `function` runs, by a graph-level estimate: the groups
    `graph-fuse-ops` would make of its ops with batched results."""
    return sum(
        1 for group in plan_groups(function.body.block)
        if any(has_dynamic_leading_dim(r.type) for op in group.ops for r in op.results))


def tail_blocks(function: func.FuncOp, block: int, lanes: int, cache_bytes: int,
                parallel: bool = False) -> list[int]:
    """The rows of the blocks, other than `block`, that `function` gets with `tails`, largest
    first, from `block_sizes`:
    - those whose rows cost less arithmetic (`row_work`) than one reading of the weights
      (`batch_cost.weight_cost`): blocks that run in about the time of one row, so that any
      batch up to them runs in one call that reads the weights once, on at most a fifth more
      rows than it has. An MLP 784-512-512-10 (2.7 MB of weights for 42K vector
      instructions a row at 16 lanes): 16, 14, 12, 10, 6, 4, 3, 2; ResNet-18 on 64x64 images
      (45 MB for 9M): 2; a small transformer, whose weights fit the L2: none;
    - with `parallel` (kernels whose loops run on several threads), those below `block` that
      keep every tail of fewer rows than `block` within `TAIL_TOLERANCE` of a block of its
      own, where a call's parallel loops (`kernel_calls`, `PARALLEL_REGION_COST` each) cost
      about as much as a row's arithmetic (`batch_cost.tail_cost`; the cheapest plan through
      the blocks chosen, `llvm_lowering.batch.tail_plans`): a small transformer (by this
      estimate 21 kernels, 1.2M, for 423K a row) gets 2, 3, 4 and 6, ResNet-18 (9M a row)
      none."""
    weights = weight_cost(constant_bytes(function), cache_bytes)
    work = row_work(function, lanes)
    sizes = [rows for rows in block_sizes(block) if rows * work < weights]
    if parallel:
        fixed = kernel_calls(function) * PARALLEL_REGION_COST
        sizes += [rows for rows in _fixed_cost_blocks(block, work, fixed, sizes)
                  if rows not in sizes]
    return sorted(sizes, reverse=True)


def _fixed_cost_blocks(block: int, work: float, fixed: float, chosen: list[int]) -> list[int]:
    """The sizes below `block` to add to `chosen` so that each tail of 2 to `block` - 1 rows
    costs at most `TAIL_TOLERANCE` times a block of its own (`tail_cost`), going up from the
    smallest: where one does not, the smallest size that holds it is added."""
    sizes = {1, block, *chosen}
    added: list[int] = []
    for left in range(2, block):
        costs = {rows: tail_cost(rows, work, fixed) for rows in sizes}
        plan = tail_plans(costs, block)[left]
        if sum(costs[call.rows] for call in plan) <= TAIL_TOLERANCE * tail_cost(left, work, fixed):
            continue
        size = min(rows for rows in block_sizes(block) if rows >= left)
        if size < block and size not in sizes:
            sizes.add(size)
            added.append(size)
    return added


def _batch_symbol(function: func.FuncOp) -> str:
    name = f"'func.func' op @{function.sym_name.data}"
    symbols: set[str] = set()
    attrs = function.arg_attrs.data if function.arg_attrs is not None else ()
    for index, type in enumerate(function.function_type.inputs.data):
        if not isinstance(type, TensorType) or not any(d < 0 for d in type.get_shape()):
            continue
        if any(d < 0 for d in type.get_shape()[1:]):
            raise PassFailedException(
                f"{name} expected dynamic dims only in the leading dim (the batch), found "
                f"{type} (argument #{index})")
        symbol = dim_symbols(attrs[index] if index < len(attrs) else None,
                             type.get_num_dims())[0]
        if not symbol:
            raise PassFailedException(
                f"{name} expected the dynamic leading dim of argument #{index} ({type}) to be "
                f"named by {DIM_SYMBOLS_ATTR}")
        symbols.add(symbol)
    if len(symbols) != 1:
        found = ", ".join(f"'{s}'" for s in sorted(symbols)) or "none"
        raise PassFailedException(
            f"{name} expected one batch symbol for its dynamic leading dims, found {found}")
    return symbols.pop()


def _row_attrs(attrs: ArrayAttr[DictionaryAttr] | None, types: tuple[Attribute, ...],
               symbol: str) -> ArrayAttr[DictionaryAttr] | None:
    """`dlc.batch_rows` on each argument or result of `types` with a dynamic leading dim, its
    `dlc.dim_symbols` dropped."""
    if not any(has_dynamic_leading_dim(t) for t in types):
        return attrs
    old = list(attrs.data) if attrs is not None else [DictionaryAttr({})] * len(types)
    new = []
    for attr, type in zip(old, types, strict=True):
        entries = {k: v for k, v in attr.data.items() if k != DIM_SYMBOLS_ATTR}
        if has_dynamic_leading_dim(type):
            entries[BATCH_ROWS_ATTR] = StringAttr(symbol)
        new.append(DictionaryAttr(entries))
    return ArrayAttr(new)


def _is_shape_polymorphic(function: func.FuncOp) -> bool:
    """Whether an argument or result of `function` has a dynamic dim after its leading one."""
    types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
    return any(isinstance(t, TensorType) and any(d < 0 for d in t.get_shape()[1:])
               for t in types)


def _is_dynamic(function: func.FuncOp) -> bool:
    types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
    return any(has_dynamic_leading_dim(t) for t in types) or any(
        has_dynamic_leading_dim(r.type) for op in function.walk() for r in op.results)


def _batch_rows(function: func.FuncOp, rows: int = 1) -> None:
    """Sets `function`'s batch to `rows` (see `GraphBatchRowsPass`), that of its one batch
    symbol (`_batch_symbol`, every other dim static)."""
    if not _is_dynamic(function):
        return
    symbol = _batch_symbol(function)
    inputs, outputs = function.function_type.inputs.data, function.function_type.outputs.data
    for op in list(function.walk()):
        if isinstance(op, SliceOp) and op.sizes_tuple() and op.sizes_tuple()[0] < 0:
            op.sizes = i64_array([rows, *op.sizes_tuple()[1:]])  # the batch, taken whole
        if isinstance(op, ResizeOp) and op.sizes_tuple() and op.sizes_tuple()[0] < 0:
            op.sizes = i64_array([rows, *op.sizes_tuple()[1:]])  # each row resized
        if isinstance(op, BroadcastToOp) and op.shape_tuple() and op.shape_tuple()[0] < 0:
            op.shape = i64_array([rows, *op.shape_tuple()[1:]])  # a broadcast to the batch
            op.operands = [op.x]  # the batch operand only sized it
        for result in list(op.results):
            if has_runtime_extent(result.type):
                raise PassFailedException(
                    f"'{op.name}' op expected dynamic dims only in the leading dim (the batch), "
                    f"found {result.type}")
            if has_dynamic_leading_dim(result.type):
                Rewriter.replace_value_with_new_type(result, _row_type(result.type, rows))
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    if has_dynamic_leading_dim(arg.type):
                        Rewriter.replace_value_with_new_type(arg, _row_type(arg.type, rows))
    function.arg_attrs = _row_attrs(function.arg_attrs, inputs, symbol)
    function.res_attrs = _row_attrs(function.res_attrs, outputs, symbol)
    function.function_type = func.FunctionType.from_lists(
        [_row_type(t, rows) for t in inputs], [_row_type(t, rows) for t in outputs])
    try:
        function.verify()
    except VerifyException as e:
        raise PassFailedException(
            f"'func.func' op @{function.sym_name.data} does not verify as one batch row: {e}"
        ) from None
