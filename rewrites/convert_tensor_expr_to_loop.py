"""convert-tensor-expr-to-loop: bufferizes tensor_expr functions into named loop nests over memrefs.

Counterpart: TVM's `te.create_prim_func` (a TE graph becomes a TensorIR PrimFunc, one block per
compute) together with MLIR's one-shot bufferization in destination-passing style
(`bufferization.bufferize{function-boundary-type-conversion=identity-layout-map}` followed by
`buffer-results-to-out-params`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, NoReturn

from dlc.dialects.contracts import (
    DIM_ARGS_ATTR,
    DIM_SIZES_ATTR,
    NUM_OUTPUTS_ATTR,
    SCAN_ANNOTATION,
    SIZE_CHECKS_ATTR,
)
from dlc.dialects.loop import AllocOp, BlockOp, DeallocOp, ForOp, LoadOp, StoreOp
from dlc.dialects.tensor_expr import ComputeOp, ReadOp, ScanOp, ScanYieldOp, YieldOp
from dlc.rewrites.output_sizes import (
    call_size_expr,
    materialize,
    output_size_maps,
    same_size,
    size_checks,
)
from xdsl.context import Context
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.dialects.memref import GetGlobalOp, GlobalOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import PassFailedException

PASS_NAME = "convert-tensor-expr-to-loop"

_AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALAR_DIALECTS = ("arith.", "math.")


# ----------------------------------------------------------------------------------------------
# Naming: what schedules match
# ----------------------------------------------------------------------------------------------


def axis_names(compute: ComputeOp) -> tuple[list[str], list[str]]:
    """The loop axis names of `compute`'s nest: (spatial, reduction).

    When every index argument of the compute's body has a name (its SSA name hint, as in
    `^bb0(%n: index, %c: index, %rh: index)`) that is a plain identifier and all are distinct,
    those names are used (TVM names loops after the lambda's parameters). Otherwise every axis
    gets a generic name: `i0`, `i1`, ... for the spatial axes (one per result dimension, outermost
    first) and `r0`, `r1`, ... for the reduction axes.
    """
    rank = compute.result_type.get_num_dims()
    hints = [arg.name_hint for arg in compute.body.block.args]
    names = [hint for hint in hints if hint is not None and _AXIS_NAME.fullmatch(hint)]
    if len(names) == len(hints) and len(set(names)) == len(names):
        return names[:rank], names[rank:]
    num_reductions = len(compute.get_reduce_extents())
    return [f"i{d}" for d in range(rank)], [f"r{d}" for d in range(num_reductions)]


def init_block_name(compute: ComputeOp) -> str:
    """The name of the block that stores a reduction's init value: `<compute name>_init`."""
    return f"{compute.block_name.data}_init"


def copy_block_name(result_index: int) -> str:
    """The name of the block that copies a value into output `result_index`: `copy_out<k>`."""
    return f"copy_out{result_index}"


# ----------------------------------------------------------------------------------------------
# Checking the input
# ----------------------------------------------------------------------------------------------


def _fail(op: Operation, message: str) -> NoReturn:
    """Raises a PassFailedException whose notes show the module with `op` marked."""
    diagnostic = Diagnostic()
    diagnostic.add_message(op, message)
    diagnostic.raise_exception(op, PassFailedException(message))


def _is_scalar_type(type_: Attribute) -> bool:
    return isinstance(type_, IntegerType | IndexType | AnyFloat)


def _is_static_tensor(type_: Attribute) -> bool:
    return isinstance(type_, TensorType) and all(dim >= 0 for dim in type_.get_shape())


def _is_ranked_tensor(type_: Attribute) -> bool:
    """A ranked tensor, its dims static or of runtime size (`?`: a buffer whose size the
    function takes as an `index` argument, or allocates from its `sizes`)."""
    return isinstance(type_, TensorType)


def _check_signature(func: FuncOp) -> None:
    inputs, outputs = func.function_type.inputs.data, func.function_type.outputs.data
    for type_ in inputs:
        if not (_is_ranked_tensor(type_) or _is_scalar_type(type_)):
            _fail(func, f"'{func.name}' op expected ranked tensors or scalars as the "
                        f"arguments of @{func.sym_name.data}, found {type_}")
    for type_ in outputs:
        if not _is_ranked_tensor(type_):
            _fail(func, f"'{func.name}' op expected ranked tensors as the results of "
                        f"@{func.sym_name.data}, found {type_}")


def _check_scalar_op(op: Operation, where: str) -> None:
    for value in (*op.operands, *op.results):
        if not _is_scalar_type(value.type):
            _fail(op, f"'{op.name}' op expected scalar operands and results {where}, "
                      f"found {value.type}")


def _check_compute_body(compute: ComputeOp, fn: str) -> None:
    where = f"in the body of '{compute.name}' \"{compute.block_name.data}\""
    for op in compute.body.block.ops:
        if isinstance(op, ReadOp | YieldOp):
            continue
        if not op.name.startswith(_SCALAR_DIALECTS) or op.regions:
            _fail(op, f"'{op.name}' op expected one of tensor_expr.read, tensor_expr.yield, "
                      f"arith.*, math.* {where} in @{fn} ({PASS_NAME}), found '{op.name}'")
        _check_scalar_op(op, where)


_REGION_OPS = (CallOp, tensor.ExtractOp, tensor.FromElementsOp, tensor.InsertSliceOp,
               scf.YieldOp, scf.ConditionOp)
"""What the regions of `scf.if` and `scf.while` may hold, besides scalar arith ops."""


def _check_control_flow(op: scf.IfOp | scf.WhileOp, fn: str) -> None:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if isinstance(inner, _REGION_OPS):
                    continue
                if inner.name.startswith(_SCALAR_DIALECTS) and not inner.regions:
                    _check_scalar_op(inner, f"in the regions of '{op.name}' in @{fn}")
                    continue
                _fail(inner, f"'{inner.name}' op expected one of func.call, tensor.extract, "
                             f"tensor.from_elements, tensor.insert_slice, scalar arith ops in "
                             f"the regions of '{op.name}' in @{fn} ({PASS_NAME}), found "
                             f"'{inner.name}'")
    for value in op.results:
        if not (_is_static_tensor(value.type) or _is_scalar_type(value.type)):
            _fail(op, f"'{op.name}' op expected results of static tensor or scalar types, "
                      f"found {value.type}")


def _check_top_level_op(op: Operation, fn: str) -> None:
    if isinstance(op, ComputeOp):
        _check_compute_body(op, fn)
        return
    if isinstance(op, tensor.DimOp):
        if not isinstance(op.source.owner, Block) or _dim_index(op) is None:
            _fail(op, f"'{op.name}' op expected the size of a dim of a function argument at a "
                      f"constant index in @{fn}")
        return
    if isinstance(op, ReturnOp | tensor.ExtractOp):
        return
    if isinstance(op, scf.IfOp | scf.WhileOp):
        _check_control_flow(op, fn)
        return
    if isinstance(op, ScanOp):
        _check_scan(op, fn)
        return
    if isinstance(op, CallOp):
        _check_call(op)
        return
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        if not _is_static_tensor(op.result.type):
            _fail(op, f"'{op.name}' op expected a tensor constant with a static shape, "
                      f"found {op.result.type}")
        return
    if op.name.startswith(_SCALAR_DIALECTS) and not op.regions:
        _check_scalar_op(op, f"in the body of @{fn}")
        return
    _fail(op, f"'{op.name}' op expected one of tensor_expr.compute, arith.*, math.*, func.call, "
              f"func.return in the body of @{fn} ({PASS_NAME}), found '{op.name}'")


def _check_call(op: CallOp) -> None:
    for value in (*op.arguments, *op.results):
        if not (_is_ranked_tensor(value.type) or _is_scalar_type(value.type)):
            _fail(op, f"'{op.name}' op expected ranked tensors or scalars as operands and "
                      f"results, found {value.type}")
    for value in op.results:
        if _is_static_tensor(value.type) or _is_returned(value):
            continue
        dims = [dim for dim, size in enumerate(value.type.get_shape()) if size < 0]
        if any(call_size_expr(op, op.results.index(value), dim) is None for dim in dims):
            _fail(op, f"'{op.name}' op expected an operand dynamic in each dynamic dim of its "
                      f"result {value.type} (whose rows it has), a callee whose body sizes "
                      f"it, or the result to be returned")


def _check_scan(scan: ScanOp, fn: str) -> None:
    for value in (*scan.operands, *scan.results):
        if isinstance(value.type, TensorType) and not _is_static_tensor(value.type):
            _fail(scan, f"'{scan.name}' op expected tensors of static shapes, found {value.type}")
    states = scan.state_args
    for position, value in enumerate(scan.yielded[: len(states)]):
        if value in states and value is not states[position]:
            _fail(scan, f"'{scan.name}' op expected next state #{position} to be computed in the "
                        f"body or to be state #{position} itself, found another state")
    for op in scan.body.block.ops:
        if isinstance(op, ComputeOp):
            _check_compute_body(op, fn)
        elif isinstance(op, arith.ConstantOp) and _is_scalar_type(op.result.type):
            continue
        elif not isinstance(op, ScanYieldOp):
            _fail(op, f"'{op.name}' op expected one of tensor_expr.compute, scalar "
                      f"arith.constant, tensor_expr.scan_yield in the body of '{scan.name}' in "
                      f"@{fn} ({PASS_NAME}), found '{op.name}'")


def _is_returned(value: SSAValue) -> bool:
    return any(isinstance(use.operation, ReturnOp) for use in value.uses)


def _dim_index(op: tensor.DimOp) -> int | None:
    """The constant dim index of a `tensor.dim`, or None."""
    owner = op.index.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def check_input(module: ModuleOp) -> None:
    """Raises PassFailedException at the first op `convert-tensor-expr-to-loop` cannot lower."""
    for op in module.body.block.ops:
        if not isinstance(op, FuncOp):
            _fail(op, f"'{op.name}' op expected only func.func at the top level of the module "
                      f"({PASS_NAME}), found '{op.name}'")
        _check_signature(op)
        if len(op.body.blocks) > 1:
            _fail(op, f"'{op.name}' op expected a body of one block in @{op.sym_name.data}, "
                      f"found {len(op.body.blocks)}")
        if op.body.blocks:
            for inner in op.body.block.ops:
                _check_top_level_op(inner, op.sym_name.data)


# ----------------------------------------------------------------------------------------------
# Planning: which computes share a loop nest
# ----------------------------------------------------------------------------------------------


def _memref_type(type_: Attribute) -> MemRefType:
    assert isinstance(type_, TensorType)
    return MemRefType(type_.get_element_type(), type_.get_shape())


Extent = int | SSAValue
"""The size of one dim of a buffer: static, or an `index` value of the loop-level function."""


def _static_shape(type_: Attribute) -> tuple[int, ...]:
    assert isinstance(type_, TensorType)
    return tuple(type_.get_shape())


def _top_level_user(op: Operation, func_block: Block) -> Operation:
    """The op of the function's body that contains `op` (itself if it is one)."""
    while op.parent_block() is not func_block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _reads_only_at_own_index(epilogue: ComputeOp, tensors: set[SSAValue]) -> bool:
    """Whether every read of `tensors` in `epilogue` is at the epilogue's own spatial index."""
    spatial = list(epilogue.spatial_indices)
    return all(
        list(op.indices) == spatial
        for op in epilogue.body.block.ops
        if isinstance(op, ReadOp) and op.tensor in tensors
    )


@dataclass
class _Group:
    """Computes emitted as one loop nest: a root, then epilogues fused into its spatial loops."""

    members: list[ComputeOp]

    @property
    def root(self) -> ComputeOp:
        return self.members[0]

    def values(self) -> set[SSAValue]:
        return {member.result for member in self.members}


@dataclass
class _FunctionPlan:
    """The order in which a function's body is emitted, and who consumes what."""

    func_block: Block
    fuse_epilogue: bool
    position: dict[Operation, int] = field(default_factory=dict[Operation, int])
    consumers: dict[SSAValue, list[Operation]] = field(
        default_factory=dict[SSAValue, list[Operation]]
    )
    group_of: dict[ComputeOp, _Group] = field(default_factory=dict[ComputeOp, _Group])

    def build(self) -> None:
        for index, op in enumerate(self.func_block.ops):
            self.position[op] = index
        for op in self.func_block.ops:
            for value in op.results:
                users = {_top_level_user(use.operation, self.func_block) for use in value.uses}
                self.consumers[value] = sorted(users, key=self.position.__getitem__)
        for op in self.func_block.ops:
            if isinstance(op, ComputeOp) and op not in self.group_of:
                group = _Group([op])
                if self.fuse_epilogue and op.get_reduce_extents():
                    self._grow(group)
                for member in group.members:
                    self.group_of[member] = group

    def _grow(self, group: _Group) -> None:
        """Adds epilogues to `group` while one qualifies (see the pass's docstring)."""
        while True:
            candidates = sorted(
                {user for member in group.members for user in self.consumers[member.result]},
                key=self.position.__getitem__,
            )
            chosen = next((c for c in candidates if self._fusable(group, c)), None)
            if chosen is None:
                return
            assert isinstance(chosen, ComputeOp)
            group.members.append(chosen)

    def _fusable(self, group: _Group, candidate: Operation) -> bool:
        if not isinstance(candidate, ComputeOp) or candidate in self.group_of:
            return False
        if candidate in group.members or candidate.get_reduce_extents():
            return False
        if not self._same_extents(candidate, group.root):
            return False
        if not _reads_only_at_own_index(candidate, group.values()):
            return False
        # The nest is emitted where its last member was: nobody outside may need a member sooner.
        inside = {*group.members, candidate}
        here = self.position[candidate]
        return all(
            self.position[user] > here
            for member in inside
            for user in self.consumers[member.result]
            if user not in inside
        )

    def _same_extents(self, candidate: ComputeOp, root: ComputeOp) -> bool:
        """Whether the two computes have the same extents at run time: equal constants, the
        same values, or runtime sizes the function's `eq` size checks make equal (a residual
        add's operand sized from another input than the conv it adds to)."""
        ours, theirs = candidate.extents(), root.extents()
        function = self.func_block.parent_op()
        return len(ours) == len(theirs) and all(
            a is b or a == b or (isinstance(function, FuncOp) and not isinstance(a, int)
                                 and not isinstance(b, int) and same_size(function, a, b))
            for a, b in zip(ours, theirs, strict=True))

    def emitted_at(self, op: Operation) -> bool:
        """Whether the unit that `op` belongs to is emitted at `op`'s position."""
        if isinstance(op, ComputeOp):
            return self.group_of[op].members[-1] is op
        return not (isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType))

    def unit_of(self, op: Operation) -> Operation:
        """The op at whose position the unit containing `op` is emitted."""
        if isinstance(op, ComputeOp):
            return self.group_of[op].members[-1]
        return op


# ----------------------------------------------------------------------------------------------
# Lowering
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Home:
    """Where one compute's value at the current spatial point lives: a buffer and its indices."""

    buffer: SSAValue
    indices: tuple[SSAValue, ...]


def _combine(combiner: str, acc: SSAValue, term: SSAValue) -> Operation:
    """The op that folds `term` into `acc` with the compute's combiner."""
    is_integer = isinstance(acc.type, IntegerType | IndexType)
    ops: dict[str, Callable[[SSAValue, SSAValue], Operation]] = (
        {"sum": arith.AddiOp, "prod": arith.MuliOp, "max": arith.MaxSIOp, "min": arith.MinSIOp,
         "maxui": arith.MaxUIOp, "minui": arith.MinUIOp}
        if is_integer
        else {"sum": arith.AddfOp, "prod": arith.MulfOp, "max": arith.MaximumfOp,
              "min": arith.MinimumfOp}
    )
    return ops[combiner](acc, term)


@dataclass
class _ModuleLowering:
    """State shared by the functions of one module: the globals made from tensor constants."""

    module: ModuleOp
    fuse_epilogue: bool
    globals: list[GlobalOp] = field(default_factory=list[GlobalOp])
    global_names: dict[DenseIntOrFPElementsAttr, str] = field(
        default_factory=dict[DenseIntOrFPElementsAttr, str]
    )
    symbols: set[str] = field(default_factory=set[str])

    def global_for(self, constant: DenseIntOrFPElementsAttr, fn: str) -> str:
        """The name of the `memref.global` holding `constant`, made on first request."""
        name = self.global_names.get(constant)
        if name is not None:
            return name
        index = 0
        while f"{fn}_cst{index}" in self.symbols:
            index += 1
        name = f"{fn}_cst{index}"
        self.symbols.add(name)
        self.global_names[constant] = name
        self.globals.append(
            GlobalOp.get(StringAttr(name), _memref_type(constant.type), constant,
                         StringAttr("private"), UnitAttr())
        )
        return name

    def run(self) -> None:
        functions = [op for op in self.module.body.block.ops if isinstance(op, FuncOp)]
        self.symbols = {func.sym_name.data for func in functions}
        for func in functions:
            lowered = _FunctionLowering(self, func).lower()
            self.module.body.block.insert_op_before(lowered, func)
            func.detach()
            func.erase()
        first = self.module.body.block.first_op
        for global_op in self.globals:
            if first is None:
                self.module.body.block.add_op(global_op)
            else:
                self.module.body.block.insert_op_before(global_op, first)


def state_is_scalar(value: SSAValue) -> bool:
    """Whether a value carried by a `scf.while` is a scalar (else a tensor with a buffer)."""
    return not isinstance(value.type, TensorType)


class _FunctionLowering:
    """Builds the destination-passing `func.func` of one tensor_expr function."""

    def __init__(self, module: _ModuleLowering, func: FuncOp) -> None:
        self.module = module
        self.func = func
        self.fn = func.sym_name.data
        self.prologue: list[Operation] = []
        self.body: list[Operation] = []
        self.index_constants: dict[int, SSAValue] = {}
        self.scalars: dict[SSAValue, SSAValue] = {}
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.destinations: dict[SSAValue, SSAValue] = {}
        self.slices: dict[SSAValue, SSAValue] = {}
        self.sizes: dict[SSAValue, list[Extent]] = {}

    # -- the function ---------------------------------------------------------------------------

    def lower(self) -> FuncOp:
        func = self.func
        inputs = func.function_type.inputs.data
        outputs = func.function_type.outputs.data
        arg_types = [_memref_type(t) if isinstance(t, TensorType) else t for t in inputs]
        arg_types += [_memref_type(t) for t in outputs]
        dims = [(position, dim) for position, type_ in enumerate(arg_types)
                if isinstance(type_, MemRefType)
                for dim, size in enumerate(type_.get_shape()) if size < 0]
        arg_types += [IndexType()] * len(dims)
        arg_attrs = self._arg_attrs(len(inputs), len(outputs), len(dims))
        if not func.body.blocks:
            return self._signature(arg_types, Region(), arg_attrs, len(outputs), dims)
        block = Block(arg_types=arg_types)
        old_args = func.body.block.args
        for old, new in zip(old_args, block.args, strict=False):
            new.name_hint = old.name_hint
            (self.buffers if isinstance(old.type, TensorType) else self.scalars)[old] = new
        outs = block.args[len(inputs):len(inputs) + len(outputs)]
        for out in outs:
            out.name_hint = "out"
        size_args = block.args[len(inputs) + len(outputs):]
        for buffer in block.args[:len(inputs) + len(outputs)]:
            if isinstance(buffer.type, MemRefType):
                self.sizes[buffer] = list(buffer.type.get_shape())
        for (position, dim), size in zip(dims, size_args, strict=True):
            buffer = block.args[position]
            size.name_hint = f"{buffer.name_hint or 'arg'}_d{dim}"
            self.sizes[buffer][dim] = size
        self._emit_body(list(outs))
        block.add_ops([*self.prologue, *self.body])
        return self._signature(arg_types, Region(block), arg_attrs, len(outputs), dims)

    def _arg_attrs(
        self, num_inputs: int, num_outputs: int, num_sizes: int
    ) -> ArrayAttr[DictionaryAttr] | None:
        func = self.func
        sizes = output_size_maps(func) if num_sizes and func.body.blocks else []
        if func.arg_attrs is None and func.res_attrs is None and not any(sizes):
            return None
        empty = DictionaryAttr({})
        inputs = list(func.arg_attrs.data) if func.arg_attrs else [empty] * num_inputs
        outputs = list(func.res_attrs.data) if func.res_attrs else [empty] * num_outputs
        for position, size_map in enumerate(sizes):
            if size_map is not None:  # the shape function of its dynamic dims
                outputs[position] = DictionaryAttr(
                    {**outputs[position].data, DIM_SIZES_ATTR: size_map})
        return ArrayAttr([*inputs, *outputs, *[empty] * num_sizes])

    def _signature(
        self, arg_types: Sequence[Attribute], region: Region,
        arg_attrs: ArrayAttr[DictionaryAttr] | None, num_outputs: int,
        dims: Sequence[tuple[int, int]] = (),
    ) -> FuncOp:
        func = self.func
        lowered = FuncOp(
            self.fn, (arg_types, ()), region, func.sym_visibility, arg_attrs=arg_attrs
        )
        lowered.attributes.update(func.attributes)
        lowered.attributes.pop(SIZE_CHECKS_ATTR, None)
        if dims and func.body.blocks and (checks := size_checks(func)):
            lowered.attributes[SIZE_CHECKS_ATTR] = ArrayAttr(checks)  # its calls' too
        lowered.attributes[NUM_OUTPUTS_ATTR] = IntegerAttr(num_outputs, i64)
        if dims:
            lowered.attributes[DIM_ARGS_ATTR] = IntegerAttr(len(dims), i64)
        return lowered

    def _emit_body(self, outs: list[SSAValue]) -> None:
        func_block = self.func.body.block
        plan = _FunctionPlan(func_block, self.module.fuse_epilogue)
        plan.build()
        self._assign_destinations(func_block, outs)
        units = [op for op in func_block.ops if plan.emitted_at(op)]
        last_use = self._last_uses(plan, units)
        for op in func_block.ops:
            if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
                name = self.module.global_for(op.value, self.fn)
                get_global = GetGlobalOp(name, _memref_type(op.result.type))
                get_global.memref.name_hint = op.result.name_hint
                self.prologue.append(get_global)
                self.buffers[op.result] = get_global.memref
                self.sizes[get_global.memref] = list(_static_shape(op.result.type))
        for unit in units:
            self._emit_unit(unit, plan, outs)
            for value in last_use.get(unit, ()):
                self.body.append(DeallocOp(self.buffers[value]))

    def _assign_destinations(self, func_block: Block, outs: list[SSAValue]) -> None:
        """Values returned and made in this function are written straight into the outputs."""
        terminator = func_block.last_op
        if not isinstance(terminator, ReturnOp):
            return
        for value, out in zip(terminator.arguments, outs, strict=True):
            made_here = isinstance(value.owner,
                                   ComputeOp | CallOp | ScanOp | scf.IfOp | scf.WhileOp)
            if made_here and value not in self.destinations:
                self.destinations[value] = out
        self.buffers.update(self.destinations)

    def _allocated(self, plan: _FunctionPlan, unit: Operation) -> list[SSAValue]:
        """The values of `unit` that get a `loop.alloc`ed buffer (not outputs, not local)."""
        if isinstance(unit, CallOp | ScanOp | scf.IfOp | scf.WhileOp):
            values = [v for v in unit.results if isinstance(v.type, TensorType)]
        elif isinstance(unit, ComputeOp):
            group = plan.group_of[unit]
            values = [m.result for m in group.members if self._needs_buffer(plan, group, m)]
        else:
            return []
        return [value for value in values if value not in self.destinations]

    def _needs_buffer(self, plan: _FunctionPlan, group: _Group, member: ComputeOp) -> bool:
        if len(group.members) == 1 or member.result in self.destinations:
            return True
        inside = set(group.members)
        return any(user not in inside for user in plan.consumers[member.result])

    def _last_uses(
        self, plan: _FunctionPlan, units: list[Operation]
    ) -> dict[Operation, list[SSAValue]]:
        """For each unit, the allocated buffers to free right after it."""
        order = {unit: index for index, unit in enumerate(units)}
        frees: dict[Operation, list[SSAValue]] = {}
        for unit in units:
            for value in self._allocated(plan, unit):
                consumers = [plan.unit_of(user) for user in plan.consumers[value]]
                last = max((*consumers, unit), key=order.__getitem__)
                frees.setdefault(last, []).append(value)
        return frees

    def _emit_unit(self, op: Operation, plan: _FunctionPlan, outs: list[SSAValue]) -> None:
        for value in self._allocated(plan, op):
            extents = self._extents_of(value)
            alloc = AllocOp(_memref_type(value.type), "global",
                            [e for e in extents if isinstance(e, SSAValue)])
            alloc.result.name_hint = value.name_hint
            self.body.append(alloc)
            self.buffers[value] = alloc.result
            self.sizes[alloc.result] = extents
        if isinstance(op, ComputeOp):
            self._emit_group(plan, plan.group_of[op])
        elif isinstance(op, CallOp):
            self._emit_call(op)
        elif isinstance(op, scf.IfOp | scf.WhileOp | tensor.ExtractOp):
            self._emit_control_flow(op)
        elif isinstance(op, ScanOp):
            self._emit_scan(op)
        elif isinstance(op, ReturnOp):
            self._emit_return(op, outs)
        elif isinstance(op, tensor.DimOp):
            dim = _dim_index(op)
            assert dim is not None, "checked"
            size = self.sizes[self.buffers[op.source]][dim]
            self.scalars[op.result] = size if isinstance(size, SSAValue) else self._index(size)
        else:
            clone = op.clone(value_mapper=dict(self.scalars))
            self.scalars.update(zip(op.results, clone.results, strict=True))
            self.body.append(clone)

    # -- constants ------------------------------------------------------------------------------

    def _index(self, value: int) -> SSAValue:
        """An `arith.constant` of index type in the function's prologue."""
        constant = self.index_constants.get(value)
        if constant is None:
            op = arith.ConstantOp(IntegerAttr(value, IndexType()))
            op.result.name_hint = f"c{value}"
            self.prologue.append(op)
            constant = self.index_constants[value] = op.result
        return constant

    def _extent(self, extent: Extent) -> SSAValue:
        """The loop-level `index` value of a dim's size."""
        if isinstance(extent, SSAValue):
            return self.scalars.get(extent, extent)
        return self._index(extent)

    def _extents_of(self, value: SSAValue) -> list[Extent]:
        """The sizes of a tensor made in the function (dynamic ones as loop-level values): a
        call's result has, in each dynamic dim, the size of its first operand dynamic in that
        dim (the shape rule of the functions `convert-graph-to-tensor-expr` outlines from
        batch-polymorphic ops: their results have their operands' rows)."""
        owner = value.owner
        if isinstance(owner, ComputeOp):
            return [e if isinstance(e, int) else self._extent(e) for e in owner.extents()]
        shape: list[Extent] = list(value.type.get_shape())  # type: ignore[attr-defined]
        if isinstance(owner, CallOp):
            for dim, size in enumerate(shape):
                if isinstance(size, int) and size < 0:
                    traced = call_size_expr(owner, owner.results.index(value), dim)
                    assert traced is not None, "checked"
                    expr, operand_dims = traced
                    sizes = [self.sizes[self.buffers[owner.arguments[o]]][d]
                             for o, d in operand_dims]
                    shape[dim] = materialize(expr, [self.scalars.get(v, v) if isinstance(
                        v, SSAValue) else v for v in sizes], self._emit_index_op)
        return shape

    def _emit_index_op(self, op: Operation) -> SSAValue:
        """Appends an `index` op computing a size to the body; returns its result."""
        self.body.append(op)
        return op.results[0]

    # -- loop nests -----------------------------------------------------------------------------

    def _nest(
        self, extents: Sequence[Extent], axes: Sequence[str],
        fill: Callable[[list[SSAValue]], list[Operation]],
    ) -> list[Operation]:
        """A perfect nest of serial `loop.for`s, one per extent; `fill(ivs)` makes the body."""
        blocks = [Block(arg_types=[IndexType()]) for _ in extents]
        for block, axis in zip(blocks, axes, strict=True):
            block.args[0].name_hint = axis
        ops = fill([block.args[0] for block in blocks])
        for depth in reversed(range(len(extents))):
            blocks[depth].add_ops(ops)
            ops = [ForOp(self._index(0), self._extent(extents[depth]), self._index(1),
                         blocks[depth], axes[depth])]
        return ops

    def _emit_group(self, plan: _FunctionPlan, group: _Group) -> None:
        root = group.root
        spatial, reduction = axis_names(root)

        def point(ivs: list[SSAValue]) -> list[Operation]:
            ops: list[Operation] = []
            homes: dict[SSAValue, _Home] = {}
            locals_: list[SSAValue] = []
            for member in group.members:
                buffer = self.buffers.get(member.result)
                if buffer is not None:
                    homes[member.result] = _Home(buffer, tuple(ivs))
                    continue
                element = member.result_type.get_element_type()
                alloc = AllocOp(MemRefType(element, [1]), "local")
                alloc.result.name_hint = "acc" if member is root else "tmp"
                ops.append(alloc)
                locals_.append(alloc.result)
                homes[member.result] = _Home(alloc.result, (self._index(0),))
            ops += self._root_statements(root, ivs, homes, spatial, reduction)
            for member in group.members[1:]:
                ops.append(self._statement(member, ivs, [], homes, spatial, []))
            ops += [DeallocOp(buffer) for buffer in locals_]
            return ops

        self.body += self._nest(self._extents_of(root.result), spatial, point)

    def _root_statements(
        self, root: ComputeOp, ivs: list[SSAValue], homes: dict[SSAValue, _Home],
        spatial: list[str], reduction: list[str],
    ) -> list[Operation]:
        extents = root.reduction_sizes()  # a runtime one mapped by `_nest`
        if not extents:
            return [self._statement(root, ivs, [], homes, spatial, [])]
        home = homes[root.result]
        assert root.init is not None
        init = arith.ConstantOp(root.init)  # pyright: ignore[reportArgumentType]
        init.result.name_hint = "init"
        store = StoreOp(init, home.buffer, home.indices)
        init_block = BlockOp(init_block_name(root), [], [home.buffer], [init, store], spatial)

        def accumulate(reduction_ivs: list[SSAValue]) -> list[Operation]:
            return [self._statement(root, ivs, reduction_ivs, homes, spatial, reduction)]

        return [init_block, *self._nest(extents, reduction, accumulate)]

    def _statement(
        self, compute: ComputeOp, ivs: list[SSAValue], reduction_ivs: list[SSAValue],
        homes: dict[SSAValue, _Home], spatial: list[str], reduction: list[str],
    ) -> BlockOp:
        """The `loop.block` computing `compute` at one point (and, if a reduction, one term)."""
        mapping: dict[SSAValue, SSAValue] = dict(self.scalars)
        mapping.update(zip(compute.spatial_indices, ivs, strict=True))
        mapping.update(zip(compute.reduction_indices, reduction_ivs, strict=True))
        home = homes[compute.result]
        reads: list[SSAValue] = []
        ops: list[Operation] = []
        for op in compute.body.block.ops:
            if isinstance(op, YieldOp):
                continue
            if isinstance(op, ReadOp):
                source = homes.get(op.tensor)
                if source is None:
                    indices = tuple(mapping.get(index, index) for index in op.indices)
                    step = self.slices.get(op.tensor)
                    if step is not None:  # the current slice of a scan's sequence
                        indices = (step, *indices)
                    source = _Home(self.buffers[op.tensor], indices)
                if source.buffer not in reads and source.buffer is not home.buffer:
                    reads.append(source.buffer)
                load = LoadOp(source.buffer, source.indices)
                load.result.name_hint = op.result.name_hint
                mapping[op.result] = load.result
                ops.append(load)
                continue
            ops.append(op.clone(value_mapper=mapping))
        value = mapping.get(compute.yielded, compute.yielded)
        if reduction_ivs:
            assert compute.combiner is not None
            acc = LoadOp(home.buffer, home.indices)
            acc.result.name_hint = "acc"
            combined = _combine(compute.combiner.data, acc.result, value)
            ops += [acc, combined]
            value = combined.results[0]
        ops.append(StoreOp(value, home.buffer, home.indices))
        return BlockOp(compute.block_name, reads, [home.buffer], ops, spatial, reduction)

    # -- scans ----------------------------------------------------------------------------------

    def _copy_nest(self, name: str, shape: Sequence[int], source: SSAValue,
                   source_prefix: Sequence[SSAValue], target: SSAValue,
                   target_prefix: Sequence[SSAValue]) -> list[Operation]:
        """A nest copying `source[prefix.., i..]` to `target[prefix.., i..]` over `shape`."""
        axes = [f"i{d}" for d in range(len(shape))]

        def copy(ivs: list[SSAValue]) -> list[Operation]:
            load = LoadOp(source, [*source_prefix, *ivs])
            store = StoreOp(load, target, [*target_prefix, *ivs])
            return [BlockOp(name, [source], [target], [load, store], axes)]

        return self._nest(shape, axes, copy)

    def _emit_scan(self, scan: ScanOp) -> None:
        """The states live in the buffers of the scan's first results: copied from the inits
        first, then read by the step's nests and overwritten with the next states at the end of
        each step. The step's own buffers are allocated once, around the time loop."""
        name = scan.block_name.data
        num = len(scan.inits)
        state_buffers = [self.buffers[result] for result in scan.outs[:num]]
        for k, (init, buffer) in enumerate(zip(scan.inits, state_buffers, strict=True)):
            shape = _static_shape(init.type)
            self.body += self._copy_nest(f"{name}_init{k}", shape, self.buffers[init], [],
                                         buffer, [])
        for arg, buffer in zip(scan.state_args, state_buffers, strict=True):
            self.buffers[arg] = buffer
        block = scan.body.block
        plan = _FunctionPlan(block, self.module.fuse_epilogue)
        plan.build()
        units = [op for op in block.ops if isinstance(op, ComputeOp) and plan.emitted_at(op)]
        step_buffers: list[SSAValue] = []
        for unit in units:
            for value in self._allocated(plan, unit):
                alloc = AllocOp(_memref_type(value.type), "global")
                alloc.result.name_hint = value.name_hint
                self.body.append(alloc)
                self.buffers[value] = alloc.result
                step_buffers.append(alloc.result)
        outer, self.body = self.body, []
        loop_block = Block(arg_types=[IndexType()])
        iv = loop_block.args[0]
        iv.name_hint = "t"
        step: SSAValue = iv
        if scan.is_reverse:
            reverse = arith.SubiOp(self._index(scan.steps - 1), iv)
            reverse.result.name_hint = "t_rev"
            self.body.append(reverse)
            step = reverse.result
        for arg, sequence in zip(scan.slice_args, scan.sequences, strict=True):
            self.buffers[arg] = self.buffers[sequence]
            self.slices[arg] = step
        for op in block.ops:
            if isinstance(op, arith.ConstantOp):
                clone = op.clone()
                self.scalars[op.result] = clone.result
                self.body.append(clone)
        for unit in units:
            self._emit_group(plan, plan.group_of[unit])
        yielded = scan.yielded
        for k, (value, state) in enumerate(zip(yielded[:num], scan.state_args, strict=True)):
            if value is not state:
                self.body += self._copy_nest(f"{name}_state{k}", _static_shape(value.type),
                                             self.buffers[value], [], state_buffers[k], [])
        for k, (value, result) in enumerate(zip(yielded[num:], scan.outs[num:], strict=True)):
            prefix = [step] if value in self.slices else []
            self.body += self._copy_nest(f"{name}_out{k}", _static_shape(value.type),
                                         self.buffers[value], prefix, self.buffers[result],
                                         [step])
        loop_block.add_ops(self.body)
        self.body = outer
        self.body.append(ForOp(self._index(0), self._index(scan.steps), self._index(1),
                               loop_block, f"{name}_t",
                               annotations={SCAN_ANNOTATION: UnitAttr()}))
        self.body += [DeallocOp(buffer) for buffer in step_buffers]

    # -- calls and returns ----------------------------------------------------------------------

    def _operand(self, value: SSAValue) -> SSAValue:
        if isinstance(value.type, TensorType):
            return self.buffers[value]
        return self.scalars.get(value, value)

    def _emit_call(self, call: CallOp) -> None:
        operands = [self._operand(value) for value in call.arguments]
        operands += [self.buffers[value] for value in call.results]
        sizes = [self._extent(size) for buffer in operands if isinstance(buffer.type, MemRefType)
                 for size, static in zip(self.sizes.get(buffer, buffer.type.get_shape()),
                                         buffer.type.get_shape(), strict=True) if static < 0]
        self.body.append(CallOp(call.callee, [*operands, *sizes], []))

    def _emit_return(self, ret: ReturnOp, outs: list[SSAValue]) -> None:
        for index, (value, out) in enumerate(zip(ret.arguments, outs, strict=True)):
            source = self.buffers[value]
            if source is out:
                continue
            self.body += self._copy(source, out, copy_block_name(index))
        self.body.append(ReturnOp())

    def _copy(self, source: SSAValue, dest: SSAValue, name: str,
              prefix: Sequence[SSAValue] = ()) -> list[Operation]:
        """A nest copying all of `source` into `dest` (at `dest[*prefix, ...]`)."""
        type_ = source.type
        assert isinstance(type_, MemRefType)
        shape = self.sizes.get(source, list(type_.get_shape()))
        axes = [f"i{d}" for d in range(len(shape))]

        def copy(ivs: list[SSAValue]) -> list[Operation]:
            load = LoadOp(source, ivs)
            store = StoreOp(load, dest, [*prefix, *ivs])
            return [BlockOp(name, [source], [dest], [load, store], axes)]

        return self._nest(shape, axes, copy)

    # -- control flow (scf on tensors, from graph.if / graph.loop) -------------------------------

    def _emit_control_flow(self, op: scf.IfOp | scf.WhileOp | tensor.ExtractOp) -> None:
        """Bufferizes `op` (see the pass docstring): the buffers of values made inside its
        regions are allocated before it and freed after it."""
        if isinstance(op, tensor.ExtractOp):
            self.body += self._region_ops([op])
            return
        inner: list[SSAValue] = []
        for region_op in op.walk():
            if isinstance(region_op, CallOp | tensor.FromElementsOp):
                for value in region_op.results:
                    alloc = AllocOp(_memref_type(value.type), "global")
                    alloc.result.name_hint = value.name_hint
                    self.body.append(alloc)
                    self.buffers[value] = alloc.result
                    inner.append(alloc.result)
        if isinstance(op, scf.IfOp):
            self._emit_if(op)
        else:
            inner += self._emit_while(op)
        self.body += [DeallocOp(buffer) for buffer in inner]

    def _region_ops(self, ops: Sequence[Operation]) -> list[Operation]:
        """The loop-level ops of the non-terminator ops of a control-flow region."""
        out: list[Operation] = []
        for op in ops:
            if isinstance(op, scf.YieldOp | scf.ConditionOp):
                continue
            if isinstance(op, CallOp):
                operands = [self._operand(value) for value in op.arguments]
                operands += [self.buffers[value] for value in op.results]
                call = CallOp(op.callee, operands, [])
                call.location = op.location
                out.append(call)
            elif isinstance(op, tensor.ExtractOp):
                load = LoadOp(self.buffers[op.tensor], [self._operand(i) for i in op.indices])
                load.result.name_hint = op.result.name_hint
                self.scalars[op.result] = load.result
                out.append(load)
            elif isinstance(op, tensor.FromElementsOp):
                buffer = self.buffers[op.result]
                type_ = op.result.type
                assert isinstance(type_, TensorType)
                zeros = [self._index(0)] * len(type_.get_shape())
                out.append(StoreOp(self._operand(op.elements[0]), buffer, zeros))
            elif isinstance(op, tensor.InsertSliceOp):
                dest = self.buffers[op.dest]
                self.buffers[op.result] = dest
                dynamic = iter(op.offsets)
                prefix = [self._operand(next(dynamic)) if offset < 0 else self._index(offset)
                          for offset in op.static_offsets.get_values()]
                source_rank = len(self.buffers[op.source].type.get_shape())  # type: ignore
                out += self._copy(self.buffers[op.source], dest, "scan_insert",
                                  prefix[: len(prefix) - source_rank])
            else:
                clone = op.clone(value_mapper=dict(self.scalars))
                self.scalars.update(zip(op.results, clone.results, strict=True))
                out.append(clone)
        return out

    def _emit_if(self, op: scf.IfOp) -> None:
        results = [self.buffers.get(v) for v in op.results]
        regions: list[Region] = []
        for region in (op.true_region, op.false_region):
            block = region.block
            ops = self._region_ops(list(block.ops))
            terminator = block.last_op
            assert isinstance(terminator, scf.YieldOp)
            for index, (value, dest) in enumerate(zip(terminator.arguments, results,
                                                      strict=True)):
                assert dest is not None, "tensor results have buffers"
                if self.buffers[value] is not dest:
                    ops += self._copy(self.buffers[value], dest, copy_block_name(index))
            ops.append(scf.YieldOp())
            regions.append(Region(Block(ops)))
        if_op = scf.IfOp(self.scalars[op.cond], [], regions[0], regions[1])
        if_op.location = op.location
        self.body.append(if_op)

    def _emit_while(self, op: scf.WhileOp) -> list[SSAValue]:
        """Tensors carried by the loop live in one buffer each (the result's), updated in
        place; only the scalars are carried by the loop-level `scf.while`. Returns the
        temporaries it allocated (before the loop)."""
        states = [self.buffers.get(v) for v in op.results]
        for value, state in zip(op.arguments, states, strict=True):
            if state is not None and self._operand(value) is not state:
                self.body += self._copy(self._operand(value), state, "loop_init")
        scalar_positions = [i for i, v in enumerate(op.arguments) if state_is_scalar(v)]
        scalar_types = [op.arguments[i].type for i in scalar_positions]

        def enter(block: Block) -> Block:
            new = Block(arg_types=scalar_types)
            for position, arg in zip(scalar_positions, new.args, strict=True):
                arg.name_hint = block.args[position].name_hint
                self.scalars[block.args[position]] = arg
            for arg, state in zip(block.args, states, strict=True):
                if state is not None:
                    self.buffers[arg] = state
            return new

        before = enter(op.before_region.block)
        condition = op.before_region.block.last_op
        assert isinstance(condition, scf.ConditionOp)
        ops = self._region_ops(list(op.before_region.block.ops))
        forwarded = [self._operand(condition.args[i]) for i in scalar_positions]
        before.add_ops([*ops, scf.ConditionOp(self._operand(condition.condition), *forwarded)])

        after = enter(op.after_region.block)
        ops = self._region_ops(list(op.after_region.block.ops))
        terminator = op.after_region.block.last_op
        assert isinstance(terminator, scf.YieldOp)
        update, temporaries = self._update_states(list(terminator.arguments), states)
        ops += update
        ops.append(scf.YieldOp(*(self._operand(terminator.arguments[i])
                                 for i in scalar_positions)))
        after.add_ops(ops)
        while_op = scf.WhileOp([self._operand(op.arguments[i]) for i in scalar_positions],
                               scalar_types, Region(before), Region(after))
        while_op.location = op.location
        for position, result in zip(scalar_positions, while_op.results, strict=True):
            self.scalars[op.results[position]] = result
        self.body.append(while_op)
        return temporaries

    def _update_states(self, yielded: list[SSAValue], states: list[SSAValue | None]
                       ) -> tuple[list[Operation], list[SSAValue]]:
        """Copies of the yielded tensors into the state buffers; a yielded state buffer that
        another state also receives is copied through a temporary first."""
        ops: list[Operation] = []
        temporaries: list[SSAValue] = []
        sources = [self.buffers.get(v) if s is not None else None
                   for v, s in zip(yielded, states, strict=True)]
        for index, (source, state) in enumerate(zip(sources, states, strict=True)):
            if state is None or source is None or source is state or source not in states:
                continue
            temp = AllocOp(source.type, "global")  # type: ignore[arg-type]
            temp.result.name_hint = "carried"
            self.body.append(temp)
            ops += self._copy(source, temp.result, "loop_swap")
            sources[index] = temp.result
            temporaries.append(temp.result)
        for source, state in zip(sources, states, strict=True):
            if state is not None and source is not None and source is not state:
                ops += self._copy(source, state, "loop_carry")
        return ops, temporaries


# ----------------------------------------------------------------------------------------------
# The pass
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvertTensorExprToLoopPass(ModulePass):
    """Bufferizes tensor_expr functions into destination-passing functions of loop nests.

    *Input invariant*: the module holds only `func.func`s whose signatures are ranked tensors,
    each dim static or dynamic (a runtime number of rows, an image of runtime height and
    width; scalar arguments are allowed too) and whose single-block bodies hold
    `tensor_expr.compute` (bodies of `tensor_expr.read`, scalar `arith`/`math`,
    `tensor_expr.yield`), `tensor_expr.scan` (whose body holds computes, scalar
    `arith.constant`s and its `tensor_expr.scan_yield`), `arith.constant dense<...> : tensor<...>`,
    scalar `arith`/`math` ops, `func.call` and `func.return`, and the control flow
    `convert-graph-to-tensor-expr` makes of graph.if / graph.loop (rewrites/control_flow.py):
    `tensor.dim` of an argument at a constant index (a compute's `sizes`), `tensor.extract`,
    and `scf.if` / `scf.while` on tensors and scalars whose regions hold only
    `func.call`, `tensor.extract`, `tensor.from_elements`, `tensor.insert_slice` (a row at a
    dynamic leading offset), scalar `arith` ops and their terminators. Anything else fails the
    pass with a diagnostic naming the op (also a scan yielding one state as another's next
    state).

    *Output IR*: every function becomes `func.func @f(%in0: memref<..>, ..., %out0: memref<..>)`
    without results and with `dlc.num_outputs = N : i64`: inputs keep their order (tensors become
    identity-layout memrefs, scalars stay scalars), then one output buffer per original result,
    in result order, then, for a function with dynamic dims, one `index` argument per dynamic
    dim of those memrefs (argument by argument; `dlc.dim_args = K : i64`), which its
    `tensor.dim`s read and the loops over those dims take as bounds, directly or through the
    scalar `arith` ops on them that size a compute (`%oh = arith.subi %h, %c2`: a valid
    window's output), which are cloned in order (the caller passes them: a
    `func.call` passes the sizes of its operands' dynamic dims after them; a call's result of
    dynamic shape must be returned, the caller's output giving its size). Tensor constants
    become `memref.global "private" constant @<fn>_cst<k>` (the same dense attribute, so the
    same bytes; identical constants share one global) read with `memref.get_global` at the top
    of the function, with the `arith.constant`s of index type
    the loops use. Each compute becomes one nest: a `loop.for` (serial, `[0, extent)`, step 1)
    per result dimension, outermost first, around a `loop.block "<compute name>"` with the
    compute's reads and writes, a `loop.load` per `tensor_expr.read`, the body's `arith`/`math`
    ops cloned, and a `loop.store` of the yielded value. Axis names are the body's index
    argument names when all are distinct identifiers, else `i0..` (spatial) and `r0..`
    (reduction): see `axis_names`. A reduction is laid out as: spatial loops outside; inside
    them a block `"<name>_init"` storing the init value at the point; then the reduction loops
    around the block `"<name>"`, which loads the accumulator, combines the term (sum: addf/addi,
    prod: mulf/muli, max: maximumf/maxsi, min: minimumf/minsi) and stores it back. A compute
    whose result is returned writes straight into its output buffer; other results get
    `loop.alloc global` (with the sizes of their dynamic dims) before their nest and
    `loop.dealloc` after their last use. A returned value that is an argument, a constant or
    already another output is copied by a nest whose block is `"copy_out<k>"`. `func.call`s
    pass buffers: the caller allocates the callee's outputs (or passes its own output when the
    call's result is returned). Epilogue fusion
    (below) puts several blocks in one nest. Computes are never dropped, even if unused.
    A scan becomes: nests `"<scan>_init<k>"` copying each init into the buffer of the scan's
    result k (the state lives there), `loop.alloc global`s for the step's computes, then one
    serial `loop.for` axis `"<scan>_t"` with `annotations {dlc.scan}` over the steps (reversed:
    `t_rev = T-1-t`) holding the step's nests (a read of a sequence's slice reads the
    sequence at the step's index first), then `"<scan>_state<k>"` nests copying each next state
    over its state and `"<scan>_out<k>"` nests storing each step output into row t of its
    stacked result; the step's buffers are freed after the loop.

    Control flow is bufferized in place: `tensor.extract` becomes a `loop.load`; every tensor
    made inside a region (call results, `tensor.from_elements`) gets a `loop.alloc global`
    before the `scf` op and a `loop.dealloc` after it (so memory planning sees them at the top
    level, live across the whole op). `scf.if` becomes a result-less `scf.if` whose branches
    copy the yielded buffers into the result buffers (nests with blocks `"copy_out<k>"`).
    `scf.while` keeps only its scalars as loop-carried values: each carried tensor lives in one
    state buffer (the result's, so the output when it is returned), initialised by a
    `"loop_init"` copy before the loop and updated by a `"loop_carry"` copy at the end of each
    iteration (through a `"loop_swap"` temporary when it receives another state's buffer);
    `tensor.insert_slice` of a scan element writes into its state buffer at the row
    (`"scan_insert"`).

    *Invariants*: one block per compute, named after it, in the loops named after its axes
    (blocks of fused epilogues sit in the loops of their reduction and use its spatial axis
    names); every buffer a block loads from is in its reads or writes; the function computes
    the same values as the tensor_expr function; no value other than index constants and
    function-level scalars crosses a block boundary except through buffers.

    Options:
        fuse_epilogue (`fuse-epilogue`, default true): a compute without reductions, with the
            same shape as a reduction and reading it (or an epilogue already fused into it)
            only at its own spatial index, such as `relu(conv + bias[c])`, is fused into the
            reduction's nest: after the reduction loops of each spatial point its block reads the
            accumulated value and stores its own result. Chains of such epilogues fuse too. A
            fused compute whose value nothing outside the nest reads lives in a
            `loop.alloc local : memref<1xT>` made and freed at each spatial point (`%acc` for
            the reduction); otherwise it keeps its buffer. The nest is emitted where its last
            member was, so an epilogue is fused only if no other op needs a member earlier.
    """

    name: ClassVar[str] = "convert-tensor-expr-to-loop"

    fuse_epilogue: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_input(op)
        _ModuleLowering(op, self.fuse_epilogue).run()
