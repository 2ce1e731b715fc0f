"""Tuning workloads: one loop-level kernel as a standalone module, its key, FLOPs and structure.

Counterpart: TVM MetaSchedule's `TuneContext.mod` / Ansor's `ComputeDAG` with its workload key.
A workload is a module holding one public `func.func @kernel` in destination-passing style
(`dlc.num_outputs`), made from a fused group's function after `convert-tensor-expr-to-loop`:
constants read with `memref.get_global` become inputs after the others, marked `dlc.constant`
(so the key does not depend on weights and the runner can feed random ones; the measurement
treats them as the compile does: what only re-lays them out runs once, not in the timed kernel),
SSA names are dropped, and the key is a hash of the printed text. The same kernel always gets
the same key, wherever it comes from.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import cached_property

from dlc.dialects import make_context
from dlc.dialects.contracts import CONSTANT_ARG_ATTR, NUM_OUTPUTS_ATTR, ONNX_NODES_ATTR
from dlc.dialects.loop.ops import AllocOp, BlockOp, ForOp, LoadOp, StoreOp
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.dialects.memref import GetGlobalOp
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

KERNEL_NAME = "kernel"
"""The name every workload's function gets."""


def constant_arguments(func: FuncOp) -> list[int]:
    """The indices of `func`'s arguments marked `CONSTANT_ARG_ATTR`."""
    attrs = func.arg_attrs.data if func.arg_attrs is not None else ()
    return [index for index, attr in enumerate(attrs) if CONSTANT_ARG_ATTR in attr.data]



class WorkloadError(DiagnosticException):
    """A function cannot be a tuning workload (no loop blocks, calls another function, ...)."""


def parse_module(text: str, ctx: Context | None = None) -> ModuleOp:
    """Parse module text with every dlc dialect."""
    return Parser(ctx or make_context(), text).parse_module()


def kernel_functions(module: ModuleOp) -> list[FuncOp]:
    """The functions of a loop-level module that are tuning workloads: those holding loop
    blocks, calling no other function, and declaring `dlc.num_outputs`."""
    found: list[FuncOp] = []
    for op in module.ops:
        if not isinstance(op, FuncOp) or NUM_OUTPUTS_ATTR not in op.attributes:
            continue
        inner = list(op.walk())
        if any(isinstance(o, CallOp) for o in inner):
            continue
        if any(isinstance(o, BlockOp) for o in inner):
            found.append(op)
    return found


def extract_kernel(func: FuncOp) -> ModuleOp:
    """The canonical workload module of a kernel function (see the module docstring).

    The function is cloned as public `@kernel`; each `memref.get_global` becomes a new input
    argument placed after the existing inputs (in order of appearance) and marked
    `CONSTANT_ARG_ATTR`; every SSA name hint is cleared. Raises WorkloadError if `func` cannot
    be a workload.
    """
    if NUM_OUTPUTS_ATTR not in func.attributes:
        raise WorkloadError(
            f"'func.func' op @{func.sym_name.data}: expected a '{NUM_OUTPUTS_ATTR}' attribute "
            "(a loop-level function in destination-passing style), found none"
        )
    if any(isinstance(o, CallOp) for o in func.walk()):
        raise WorkloadError(
            f"'func.func' op @{func.sym_name.data}: expected a kernel without func.call, "
            "found a call"
        )
    clone = func.clone()
    num_outputs = _num_outputs(clone)
    body = clone.body.block
    first_output = len(body.args) - num_outputs
    globals_read = [op for op in body.ops if isinstance(op, GetGlobalOp)]
    for offset, get_global in enumerate(globals_read):
        arg = body.insert_arg(get_global.memref.type, first_output + offset)
        get_global.memref.replace_all_uses_with(arg)
        body.erase_op(get_global)
    inputs = [arg.type for arg in body.args]
    clone.function_type = FunctionType.from_lists(inputs, [])
    clone.sym_name = StringAttr(KERNEL_NAME)
    clone.sym_visibility = None
    clone.arg_attrs = None
    if globals_read:
        constant = range(first_output, first_output + len(globals_read))
        clone.arg_attrs = ArrayAttr(
            DictionaryAttr({CONSTANT_ARG_ATTR: UnitAttr()} if index in constant else {})
            for index in range(len(body.args))
        )
    clone.res_attrs = None
    clone.attributes.pop(ONNX_NODES_ATTR, None)  # where it came from is not what it is
    for op in [clone, *clone.walk()]:
        for result in op.results:
            result.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return ModuleOp([clone])


def _num_outputs(func: FuncOp) -> int:
    attr = func.attributes[NUM_OUTPUTS_ATTR]
    assert isinstance(attr, IntegerAttr)
    return int(attr.value.data)


def module_key(text: str) -> str:
    """The workload key of a canonical module text: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------------------------
# Structure: blocks, axes, accesses
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """One buffer access of a block: the buffer's index and shape, and for each dimension the
    loop axes its index depends on."""

    buffer: int
    shape: tuple[int, ...]
    axes: tuple[frozenset[str], ...]
    is_write: bool
    element_bytes: int


@dataclass(frozen=True)
class BlockInfo:
    """A `loop.block` as schedules see it.

    Attributes:
        name: the block's name ("matmul", "conv2d_init", "relu", ...).
        nest: the index of its top-level nest in the function (program order).
        loops: the axes of the loops around it, outermost first, with their trip counts.
        spatial: its spatial axes; reduction: its reduction axes.
        accesses: its loads and stores.
        flops: floating-point ops per execution of the body (mulf, addf, ...).
        writes_alloc: it writes a `loop.alloc` buffer (an intermediate, inlinable producer).
        reads_buffers: buffers it reads (by buffer index).
        writes_buffers: buffers it writes (by buffer index).
        reads_order: the buffer index of each of its `reads` operands, in order.
    """

    name: str
    nest: int
    loops: tuple[tuple[str, int], ...]
    spatial: tuple[str, ...]
    reduction: tuple[str, ...]
    accesses: tuple[Access, ...]
    flops: int
    writes_alloc: bool
    reads_buffers: frozenset[int]
    writes_buffers: frozenset[int]
    reads_order: tuple[int, ...] = ()

    @property
    def trip_count(self) -> int:
        """How many times the block's body runs."""
        return math.prod(extent for _, extent in self.loops)

    @property
    def total_flops(self) -> int:
        return self.flops * self.trip_count

    def extent(self, axis: str) -> int:
        return dict(self.loops)[axis]


_FLOAT_OPS: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp,
    arith.NegfOp, xmath.ExpOp, xmath.TanhOp, xmath.SqrtOp, xmath.LogOp,
)


def _element_bytes(memref: MemRefType) -> int:
    width = getattr(memref.element_type, "bitwidth", 32)
    return max(1, int(width) // 8)


def _index_axes(value: SSAValue, ivs: dict[SSAValue, str]) -> frozenset[str]:
    """The loop axes an index value depends on (through any pure index arithmetic)."""
    seen: set[SSAValue] = set()
    axes: set[str] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in ivs:
            axes.add(ivs[current])
            continue
        owner = current.owner
        if isinstance(owner, Operation) and not isinstance(owner, ForOp):
            stack.extend(owner.operands)
    return frozenset(axes)


@dataclass
class KernelInfo:
    """The structure of a workload's kernel: its blocks, buffers and FLOPs.

    Buffers are numbered: function arguments first (in order), then `loop.alloc`s in program
    order; `outputs` are the indices of the output arguments.
    """

    blocks: list[BlockInfo]
    buffer_shapes: list[tuple[int, ...]]
    outputs: frozenset[int]
    allocs: frozenset[int]
    num_nests: int
    _by_name: dict[str, BlockInfo] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_name = {block.name: block for block in self.blocks}

    def block(self, name: str) -> BlockInfo | None:
        return self._by_name.get(name)

    @property
    def raw_flops(self) -> int:
        """Floating-point operations of one run of the kernel."""
        return sum(block.total_flops for block in self.blocks)

    @property
    def flops(self) -> int:
        """Floating-point operations of one run of the kernel, at least 1 (a copy kernel's
        throughput is then its runs per second)."""
        return max(1, self.raw_flops)

    def anchor(self) -> BlockInfo:
        """The block a generated schedule is built around: the reduction block with the most
        FLOPs, else the block with the most work."""
        reductions = [block for block in self.blocks if block.reduction]
        pool = reductions or self.blocks
        return max(pool, key=lambda b: (b.total_flops, b.trip_count))

    def init_of(self, block: BlockInfo) -> BlockInfo | None:
        """The init block of a reduction block (`<name>_init`, writing the same buffer)."""
        init = self.block(f"{block.name}_init")
        if init is None or not (init.writes_buffers & block.writes_buffers):
            return None
        return init

    def consumers_of(self, block: BlockInfo) -> list[BlockInfo]:
        """Blocks in later nests that read what `block` writes."""
        return [
            other for other in self.blocks
            if other.nest > block.nest and other.reads_buffers & block.writes_buffers
        ]

    def producers_of(self, block: BlockInfo) -> list[BlockInfo]:
        """Blocks in earlier nests that write an intermediate buffer `block` reads."""
        return [
            other for other in self.blocks
            if other.nest < block.nest and other.writes_alloc
            and other.writes_buffers & block.reads_buffers & self.allocs
        ]


def analyze_kernel(module: ModuleOp) -> KernelInfo:
    """The structure of the one kernel function in a workload module."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    if len(funcs) != 1:
        raise WorkloadError(
            f"'builtin.module' op expected one kernel function in a workload, found {len(funcs)}"
        )
    func = funcs[0]
    buffers: dict[SSAValue, int] = {}
    shapes: list[tuple[int, ...]] = []
    for arg in func.body.block.args:
        if isinstance(arg.type, MemRefType):
            buffers[arg] = len(shapes)
            shapes.append(tuple(arg.type.get_shape()))
    num_args = len(shapes)
    num_outputs = _num_outputs(func)
    outputs = frozenset(range(num_args - num_outputs, num_args))
    allocs: set[int] = set()
    for op in func.walk():
        if isinstance(op, AllocOp):
            buffers[op.result] = len(shapes)
            allocs.add(len(shapes))
            shapes.append(tuple(op.result.type.get_shape()))  # type: ignore[union-attr]
    blocks: list[BlockInfo] = []
    nest = -1
    for top in func.body.block.ops:
        if not isinstance(top, ForOp | BlockOp):
            continue
        nest += 1
        for op in [top, *top.walk()]:
            if isinstance(op, BlockOp):
                blocks.append(_block_info(op, nest, buffers, frozenset(allocs)))
    return KernelInfo(blocks, shapes, outputs, frozenset(allocs), nest + 1)


def _enclosing(op: Operation) -> list[ForOp]:
    loops: list[ForOp] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ForOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def _block_info(
    block: BlockOp, nest: int, buffers: dict[SSAValue, int], allocs: frozenset[int]
) -> BlockInfo:
    loops = _enclosing(block)
    ivs = {loop.induction_var: loop.axis.data for loop in loops}
    extents = tuple((loop.axis.data, loop.trip_count() or 1) for loop in loops)
    accesses: list[Access] = []
    flops = 0
    for op in block.body.walk():
        if isinstance(op, _FLOAT_OPS):
            flops += 1
        if isinstance(op, LoadOp | StoreOp) and op.memref in buffers:
            memref = op.memref.type
            assert isinstance(memref, MemRefType)
            accesses.append(Access(
                buffers[op.memref],
                tuple(memref.get_shape()),
                tuple(_index_axes(index, ivs) for index in op.indices),
                isinstance(op, StoreOp),
                _element_bytes(memref),
            ))
    reads = frozenset(buffers[v] for v in block.reads if v in buffers)
    writes = frozenset(buffers[v] for v in block.writes if v in buffers)
    return BlockInfo(
        name=block.block_name.data,
        nest=nest,
        loops=extents,
        spatial=tuple(a.data for a in block.spatial_axes),
        reduction=tuple(a.data for a in block.reduction_axes),
        accesses=tuple(accesses),
        flops=flops,
        writes_alloc=bool(writes & allocs),
        reads_buffers=reads,
        reads_order=tuple(buffers.get(v, -1) for v in block.reads),
        writes_buffers=writes,
    )


# ----------------------------------------------------------------------------------------------
# The workload
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One tuning task's kernel.

    Attributes:
        text: the canonical module text (what the key hashes; what builders parse).
        name: a readable name (the function it came from, e.g. `fused_conv2d_relu_3`).
    """

    text: str
    name: str = KERNEL_NAME

    @cached_property
    def key(self) -> str:
        """The workload key: a hash of the canonical text."""
        return module_key(self.text)

    @cached_property
    def info(self) -> KernelInfo:
        """The kernel's blocks, buffers and FLOPs."""
        return analyze_kernel(self.module())

    @property
    def flops(self) -> int:
        return self.info.flops

    def module(self, ctx: Context | None = None) -> ModuleOp:
        """A fresh parse of the workload."""
        return parse_module(self.text, ctx)

    @cached_property
    def constant_inputs(self) -> tuple[int, ...]:
        """The indices of the inputs a model passes as constants (weights)."""
        return tuple(constant_arguments(kernel_function_of(self.module())))

    def argument_types(self) -> list[MemRefType]:
        """The kernel's arguments (inputs, then outputs)."""
        (func,) = [op for op in self.module().ops if isinstance(op, FuncOp)]
        return [arg.type for arg in func.body.block.args]  # type: ignore[misc]

    @classmethod
    def from_function(cls, func: FuncOp) -> Workload:
        """The workload of a loop-level kernel function (see `extract_kernel`)."""
        return cls(str(extract_kernel(func)), func.sym_name.data)


def kernel_function_of(module: ModuleOp) -> FuncOp:
    """The one function of a workload module."""
    (func,) = [op for op in module.ops if isinstance(op, FuncOp)]
    return func
