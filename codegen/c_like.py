"""A printer of `target_gpu` kernels as C-like GPU source (tinygrad's `CStyleLanguage`, TVM's
`CodeGenC` / `CodeGenOpenCL` / `CodeGenCUDA`).

`CLikePrinter` prints the kernels of a module's `target_gpu.module`s: their bodies are `loop`
ops (for, block, load, store, alloc local), `scf.if`, `arith`, `math`, `vector.broadcast`/
`vector.fma`, and the `target_gpu` coordinate, barrier and shared-memory ops. Everything a GPU
C dialect spells differently (qualifiers, thread coordinates, barriers, vector loads, type and
function names) is a field or a small method, so that an OpenCL C printer (`codegen.opencl`) and
a CUDA C printer differ only there. Printing only: a construct it cannot print is a diagnostic
naming the op.
"""

from __future__ import annotations

import math
import re
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from dlc.dialects.loop.ops import (
    AllocOp,
    BlockOp,
    DeallocOp,
    ForOp,
    LoadOp,
    PrefetchOp,
    StoreOp,
    YieldOp,
)
from dlc.dialects.memref_layout import MemRefLayoutError, memref_layout
from dlc.dialects.target_gpu.ops import (
    BarrierOp,
    BlockDimOp,
    BlockIdOp,
    GridDimOp,
    KernelOp,
    ReturnOp,
    SharedAllocOp,
    ThreadIdOp,
)
from dlc.dialects.target_gpu.ops import ModuleOp as GpuModuleOp
from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

BINARY_OPERATORS: dict[str, str] = {
    "arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.divsi": "/",
    "arith.remsi": "%", "arith.andi": "&", "arith.ori": "|", "arith.xori": "^",
    "arith.shli": "<<", "arith.shrsi": ">>",
    "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/",
}
"""arith ops printed as an infix operator on their operands."""

UNSIGNED_OPERATORS: dict[str, str] = {"arith.divui": "/", "arith.remui": "%", "arith.shrui": ">>"}
"""arith ops printed as an infix operator on the operands reinterpreted as unsigned."""

CMPI_OPERATORS: dict[str, tuple[str, bool]] = {
    "eq": ("==", False), "ne": ("!=", False),
    "slt": ("<", False), "sle": ("<=", False), "sgt": (">", False), "sge": (">=", False),
    "ult": ("<", True), "ule": ("<=", True), "ugt": (">", True), "uge": (">=", True),
}
"""`arith.cmpi` predicates: (C operator, whether it compares unsigned)."""

CMPF_TEMPLATES: dict[str, str] = {
    "false": "0", "true": "1",
    "oeq": "({a} == {b})", "ogt": "({a} > {b})", "oge": "({a} >= {b})",
    "olt": "({a} < {b})", "ole": "({a} <= {b})", "one": "({a} < {b} || {a} > {b})",
    "ord": "(!isnan({a}) && !isnan({b}))", "uno": "(isnan({a}) || isnan({b}))",
    "ueq": "!({a} < {b} || {a} > {b})", "ugt": "!({a} <= {b})", "uge": "!({a} < {b})",
    "ult": "!({a} >= {b})", "ule": "!({a} > {b})", "une": "({a} != {b})",
}
"""`arith.cmpf` predicates as C expressions (C's comparisons are ordered, `!=` unordered)."""

FLOAT_FUNCTIONS: dict[str, str] = {
    "math.absf": "fabs", "math.ceil": "ceil", "math.floor": "floor", "math.round": "round",
    "math.roundeven": "rint", "math.trunc": "trunc", "math.sqrt": "sqrt", "math.rsqrt": "rsqrt",
    "math.exp": "exp", "math.exp2": "exp2", "math.expm1": "expm1", "math.log": "log",
    "math.log2": "log2", "math.log10": "log10", "math.log1p": "log1p", "math.sin": "sin",
    "math.cos": "cos", "math.tan": "tan", "math.asin": "asin", "math.acos": "acos",
    "math.atan": "atan", "math.sinh": "sinh", "math.cosh": "cosh", "math.tanh": "tanh",
    "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh", "math.erf": "erf",
    "math.cbrt": "cbrt", "math.powf": "pow", "math.atan2": "atan2",
    "math.copysign": "copysign", "math.fma": "fma", "vector.fma": "fma",
    "arith.maximumf": "fmax", "arith.maxnumf": "fmax", "arith.minimumf": "fmin",
    "arith.minnumf": "fmin", "arith.remf": "fmod",
}
"""Float ops printed as a call of the C math function (overloaded on float/double/vectors)."""

INTEGER_FUNCTIONS: dict[str, tuple[str, bool]] = {
    "arith.maxsi": ("max", False), "arith.minsi": ("min", False),
    "arith.maxui": ("max", True), "arith.minui": ("min", True),
    "math.ctlz": ("clz", False), "math.ctpop": ("popcount", False),
}
"""Integer ops printed as a call: (function, whether its operands are reinterpreted unsigned)."""

C_RESERVED: frozenset[str] = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool half uchar ushort uint ulong size_t kernel global "
    "local constant private read_only write_only true false min max select exp log sqrt fabs "
    "fmax fmin pow erf tanh sin cos fma rint barrier vload vstore get_local_id get_group_id "
    "threadIdx blockIdx blockDim gridDim".split()
)
"""Names a C variable may not take (keywords and the builtins the printers emit)."""


def printer_error(op: Operation, message: str) -> DiagnosticException:
    """A diagnostic naming `op`: `'dialect.op' op <message>`."""
    return DiagnosticException(f"'{op.name}' op {message}")


def strides_and_offset(memref_type: MemRefType, op: Operation) -> tuple[list[int], int]:
    """The element strides and offset of a memref of static shape and layout."""
    try:
        strides, offset, _ = memref_layout(memref_type)
    except MemRefLayoutError as e:
        raise printer_error(op, str(e)) from None
    return strides, offset


def element_count(memref_type: MemRefType) -> int:
    return math.prod(memref_type.get_shape())


@dataclass
class Names:
    """C identifiers for SSA values: the name hint when it is a free identifier, else `v<N>`."""

    taken: set[str] = field(default_factory=lambda: set(C_RESERVED))
    names: dict[SSAValue, str] = field(default_factory=dict)
    counter: int = 0

    def fresh(self, hint: str | None) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint) if hint else ""
        if not base or base[0].isdigit():
            base = f"v{base}" if base else "v"
        name = base
        while name in self.taken:
            self.counter += 1
            name = f"{base}_{self.counter}"
        self.taken.add(name)
        return name

    def define(self, value: SSAValue) -> str:
        name = self.fresh(value.name_hint)
        self.names[value] = name
        return name

    def __getitem__(self, value: SSAValue) -> str:
        return self.names[value]


@dataclass
class CLikePrinter(ABC):
    """Prints `target_gpu` kernels in a C-like GPU language; subclasses set the fields.

    The class fields below are the whole difference between two C dialects:
        kernel_prefix: what precedes a kernel's return type (`__kernel`).
        global_qualifier: the address space of buffer arguments (`__global`).
        shared_qualifier: the declaration qualifier of shared buffers (`__local`).
        restrict: the no-alias qualifier of buffer arguments.
        index_type: the C type of `index` values.
        thread_id / block_id / block_dim / grid_dim: C expressions of the coordinates, with
            `{d}` the dimension number (0, 1, 2) and `{x}` its letter.
    """

    kernel_prefix: ClassVar[str] = ""
    global_qualifier: ClassVar[str] = ""
    shared_qualifier: ClassVar[str] = ""
    restrict: ClassVar[str] = "restrict"
    index_type: ClassVar[str] = "long"
    thread_id: ClassVar[str] = ""
    block_id: ClassVar[str] = ""
    block_dim: ClassVar[str] = ""
    grid_dim: ClassVar[str] = ""

    lines: list[str] = field(default_factory=list)
    indent: int = 0
    names: Names = field(default_factory=Names)
    uses_f16: bool = False
    uses_f64: bool = False

    # -- dialect hooks ----------------------------------------------------------------------

    @abstractmethod
    def barrier(self, op: BarrierOp) -> str:
        """The statement of a block-wide barrier."""
        raise NotImplementedError

    @abstractmethod
    def vector_load(self, vector_type: VectorType, pointer: str) -> str:
        """An expression loading `vector_type` from `pointer` (element-aligned)."""
        raise NotImplementedError

    @abstractmethod
    def vector_store(self, vector_type: VectorType, value: str, pointer: str) -> str:
        """A statement storing the vector `value` at `pointer` (element-aligned)."""
        raise NotImplementedError

    @abstractmethod
    def vector_splat(self, vector_type: VectorType, value: str) -> str:
        """An expression broadcasting the scalar `value` to every lane."""
        raise NotImplementedError

    def preamble(self) -> list[str]:
        """Lines printed before the kernels (extension pragmas, includes)."""
        return []

    def scalar_type(self, type_: Attribute, op: Operation) -> str:
        """The C type of a scalar type."""
        if isinstance(type_, IndexType):
            return self.index_type
        if isinstance(type_, Float32Type):
            return "float"
        if isinstance(type_, Float64Type):
            self.uses_f64 = True
            return "double"
        if isinstance(type_, Float16Type):
            self.uses_f16 = True
            return "half"
        if isinstance(type_, IntegerType):
            width = type_.width.data
            if width == 1:
                return "bool"
            names = {8: "char", 16: "short", 32: "int", 64: "long"}
            if width not in names:
                raise printer_error(op, f"expected an integer of 1, 8, 16, 32 or 64 bits, "
                                        f"found {type_}")
            unsigned = type_.signedness.data == Signedness.UNSIGNED
            return ("u" if unsigned else "") + names[width]
        raise printer_error(op, f"expected a scalar type C can print, found {type_}")

    def unsigned_type(self, type_: Attribute, op: Operation) -> str:
        """The unsigned C type of the same width (to reinterpret for unsigned ops)."""
        name = self.type_name(type_, op)
        return name if name.startswith("u") else "u" + name

    def type_name(self, type_: Attribute, op: Operation) -> str:
        """The C type of a scalar or (OpenCL-style) vector type."""
        if isinstance(type_, VectorType):
            return f"{self.scalar_type(type_.element_type, op)}{type_.element_count()}"
        return self.scalar_type(type_, op)

    def storage_type(self, element: Attribute, op: Operation) -> str:
        """The C type of a buffer's elements (`i1` buffers hold bytes)."""
        if isinstance(element, IntegerType) and element.width.data == 1:
            return "uchar"
        return self.scalar_type(element, op)

    # -- modules and kernels ----------------------------------------------------------------

    def print_module(self, module: ModuleOp) -> str:
        """The source of every kernel of the module's `target_gpu.module`s."""
        kernels = [op for op in module.walk() if isinstance(op, KernelOp)]
        for op in module.walk():
            if isinstance(op, GpuModuleOp | KernelOp):
                continue
            parent = op.parent_op()
            if isinstance(parent, GpuModuleOp) and not isinstance(op, KernelOp):
                raise printer_error(op, "expected only target_gpu.kernel ops in a "
                                        "target_gpu.module printed as C")
        body: list[str] = []
        for kernel in kernels:
            self.lines = []
            self.names = Names()
            self.print_kernel(kernel)
            body.extend(self.lines)
            body.append("")
        text = "\n".join([*self.preamble(), *body]).rstrip("\n")
        return text + "\n"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.indent + line)

    def print_kernel(self, kernel: KernelOp) -> None:
        stored = {op.memref for op in kernel.walk() if isinstance(op, StoreOp)}
        params = []
        for arg in kernel.args:
            name = self.names.define(arg)
            if isinstance(arg.type, MemRefType):
                element = self.storage_type(arg.type.get_element_type(), kernel)
                const = "" if arg in stored else "const "
                qualifier = f"{self.global_qualifier} " if self.global_qualifier else ""
                params.append(f"{const}{qualifier}{element}* {self.restrict} {name}")
            else:
                params.append(f"{self.type_name(arg.type, kernel)} {name}")
        prefix = f"{self.kernel_prefix} " if self.kernel_prefix else ""
        self.emit(f"{prefix}void {kernel.sym_name.data}({', '.join(params)}) {{")
        self.indent += 1
        self.print_block(kernel.body.block)
        self.indent -= 1
        self.emit("}")

    def print_block(self, block: Block) -> None:
        for op in block.ops:
            self.print_op(op)

    # -- statements -------------------------------------------------------------------------

    def print_op(self, op: Operation) -> None:
        handler = self._STATEMENTS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if len(op.results) != 1 or op.regions:
            raise printer_error(op, "has no C form (expected loop, scf.if, arith, math, vector "
                                    "and target_gpu ops in kernels)")
        result = op.results[0]
        expression = self.expression(op)
        name = self.names.define(result)
        self.emit(f"{self.type_name(result.type, op)} {name} = {expression};")

    def print_for(self, op: ForOp) -> None:
        if op.kind.data == "bound":
            thread = op.thread.data if op.thread is not None else "?"
            raise printer_error(
                op,
                f'expected no loop bound to a GPU axis in a kernel (run '
                f'target-gpu-map-bound-loops first), found axis "{op.axis.data}" bound to {thread}',
            )
        iv = self.names.define(op.induction_var)
        lb, ub, step = (self.names[v] for v in (op.lb, op.ub, op.step))
        if op.kind.data == "unrolled":
            self.emit("#pragma unroll")
        annotation = f"  // {op.axis.data}" + (f" ({op.kind.data})" if op.kind.data != "serial"
                                                else "")
        self.emit(f"for ({self.index_type} {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{"
                  f"{annotation}")
        self.indent += 1
        self.print_block(op.body.block)
        self.indent -= 1
        self.emit("}")

    def print_loop_block(self, op: BlockOp) -> None:
        self.emit(f"{{  // block \"{op.block_name.data}\"")
        self.indent += 1
        self.print_block(op.body.block)
        self.indent -= 1
        self.emit("}")

    def print_if(self, op: scf.IfOp) -> None:
        results = [self.names.define(r) for r in op.results]
        for name, result in zip(results, op.results, strict=True):
            self.emit(f"{self.type_name(result.type, op)} {name};")
        self.emit(f"if ({self.names[op.cond]}) {{")
        self._print_branch(op.true_region.block if op.true_region.blocks else None, results)
        if op.false_region.blocks and any(
            not isinstance(o, scf.YieldOp) or o.operands for o in op.false_region.block.ops
        ):
            self.emit("} else {")
            self._print_branch(op.false_region.block, results)
        self.emit("}")

    def _print_branch(self, block: Block | None, results: list[str]) -> None:
        if block is None:
            return
        self.indent += 1
        for inner in block.ops:
            if isinstance(inner, scf.YieldOp):
                for name, value in zip(results, inner.operands, strict=True):
                    self.emit(f"{name} = {self.names[value]};")
            else:
                self.print_op(inner)
        self.indent -= 1

    def print_load(self, op: LoadOp) -> None:
        memref_type = op.memref.type
        assert isinstance(memref_type, MemRefType)
        offset = self.offset(memref_type, list(op.indices), op)
        base = self.names[op.memref]
        name = self.names.define(op.result)
        type_ = op.result.type
        if isinstance(type_, VectorType):
            expression = self.vector_load(type_, f"{base} + {offset}")
        else:
            expression = f"{base}[{offset}]"
            if isinstance(type_, IntegerType) and type_.width.data == 1:
                expression = f"({expression} != 0)"
        self.emit(f"{self.type_name(type_, op)} {name} = {expression};")

    def print_store(self, op: StoreOp) -> None:
        memref_type = op.memref.type
        assert isinstance(memref_type, MemRefType)
        offset = self.offset(memref_type, list(op.indices), op)
        base, value = self.names[op.memref], self.names[op.value]
        if isinstance(op.value.type, VectorType):
            self.emit(self.vector_store(op.value.type, value, f"{base} + {offset}") + ";")
        else:
            self.emit(f"{base}[{offset}] = {value};")

    def offset(self, memref_type: MemRefType, indices: list[SSAValue], op: Operation) -> str:
        """The C expression of the row-major element offset of `indices`."""
        strides, start = strides_and_offset(memref_type, op)
        terms = [str(start)] if start else []
        for index, stride in zip(indices, strides, strict=True):
            name = self.names[index]
            terms.append(name if stride == 1 else f"{name} * {stride}")
        return " + ".join(terms) if terms else "0"

    def print_alloc(self, op: AllocOp) -> None:
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        if op.scope.data != "local":
            raise printer_error(op, f"expected scope local inside a kernel (shared memory is "
                                    f"target_gpu.shared_alloc), found '{op.scope.data}'")
        element = self.storage_type(memref_type.get_element_type(), op)
        name = self.names.define(op.result)
        self.emit(f"{element} {name}[{max(1, element_count(memref_type))}];")

    def print_shared_alloc(self, op: SharedAllocOp) -> None:
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        element = self.storage_type(memref_type.get_element_type(), op)
        name = self.names.define(op.result)
        size = max(1, element_count(memref_type))
        self.emit(f"{self.shared_qualifier} {element} {name}[{size}];")

    def print_coordinate(self, op: ThreadIdOp | BlockIdOp | BlockDimOp | GridDimOp) -> None:
        template = {
            ThreadIdOp: self.thread_id, BlockIdOp: self.block_id,
            BlockDimOp: self.block_dim, GridDimOp: self.grid_dim,
        }[type(op)]
        dimension = op.dimension.data
        expression = template.format(d="xyz".index(dimension), x=dimension)
        name = self.names.define(op.result)
        self.emit(f"{self.index_type} {name} = ({self.index_type}){expression};")

    def print_barrier(self, op: BarrierOp) -> None:
        self.emit(self.barrier(op) + ";")

    def print_return(self, op: ReturnOp) -> None:
        block = op.parent_block()
        kernel = op.parent_op()
        if kernel is not None and block is not kernel.regions[0].blocks.last:
            self.emit("return;")

    _STATEMENTS: ClassVar[dict[type[Operation], Callable[[CLikePrinter, Operation], None]]] = {}

    # -- expressions ------------------------------------------------------------------------

    def expression(self, op: Operation) -> str:
        """The C expression computing the single result of a side-effect-free op."""
        operands = [self.names[v] for v in op.operands]
        name = op.name
        result_type = op.results[0].type
        if isinstance(op, arith.ConstantOp):
            return self.constant(op)
        if name in BINARY_OPERATORS:
            return f"{operands[0]} {BINARY_OPERATORS[name]} {operands[1]}"
        if name in UNSIGNED_OPERATORS:
            unsigned = self.unsigned_type(result_type, op)
            signed = self.type_name(result_type, op)
            a, b = operands
            return f"({signed})(({unsigned}){a} {UNSIGNED_OPERATORS[name]} ({unsigned}){b})"
        if name in FLOAT_FUNCTIONS:
            return f"{FLOAT_FUNCTIONS[name]}({', '.join(operands)})"
        if name in INTEGER_FUNCTIONS:
            function, unsigned = INTEGER_FUNCTIONS[name]
            if unsigned:
                u = self.unsigned_type(result_type, op)
                args = ", ".join(f"({u}){a}" for a in operands)
                return f"({self.type_name(result_type, op)}){function}({args})"
            return f"{function}({', '.join(operands)})"
        return self.special_expression(op, operands)

    def special_expression(self, op: Operation, operands: list[str]) -> str:
        result_type = op.results[0].type
        if isinstance(op, arith.CmpiOp):
            predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            operator, unsigned = CMPI_OPERATORS[predicate]
            a, b = operands
            if unsigned:
                u = self.unsigned_type(op.lhs.type, op)
                a, b = f"({u}){a}", f"({u}){b}"
            return f"{a} {operator} {b}"
        if isinstance(op, arith.CmpfOp):
            predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            return CMPF_TEMPLATES[predicate].format(a=operands[0], b=operands[1])
        if isinstance(op, arith.SelectOp):
            if isinstance(result_type, VectorType):
                raise printer_error(op, "expected a scalar select, found a vector select")
            return f"{operands[0]} ? {operands[1]} : {operands[2]}"
        if isinstance(op, arith.NegfOp):
            return f"-{operands[0]}"
        if isinstance(op, vector.BroadcastOp):
            assert isinstance(result_type, VectorType)
            return self.vector_splat(result_type, operands[0])
        if name_is_cast(op):
            return self.cast(op, operands[0])
        if op.name == "math.absi":
            return f"({self.type_name(result_type, op)})abs({operands[0]})"
        if op.name in ("arith.floordivsi", "arith.ceildivsi", "arith.ceildivui"):
            return self.rounded_division(op, operands)
        if op.name == "math.fpowi":
            return f"pown({operands[0]}, (int){operands[1]})"
        raise printer_error(op, "has no C form")

    def rounded_division(self, op: Operation, operands: list[str]) -> str:
        a, b = operands
        if op.name == "arith.ceildivui":
            u = self.unsigned_type(op.results[0].type, op)
            signed = self.type_name(op.results[0].type, op)
            return f"({signed})((({u}){a} + ({u}){b} - 1) / ({u}){b})"
        quotient = f"{a} / {b}"
        if op.name == "arith.floordivsi":
            return f"({quotient} - (({a} % {b} != 0) && (({a} < 0) != ({b} < 0))))"
        return f"({quotient} + (({a} % {b} != 0) && (({a} < 0) == ({b} < 0))))"

    def cast(self, op: Operation, operand: str) -> str:
        source, target = op.operands[0].type, op.results[0].type
        target_name = self.type_name(target, op)
        if op.name == "arith.bitcast":
            return f"as_{target_name}({operand})"
        if op.name in ("arith.extui", "arith.uitofp", "arith.index_castui"):
            if isinstance(source, IntegerType) and source.width.data == 1:
                return f"({target_name}){operand}"
            return f"({target_name})({self.unsigned_type(source, op)}){operand}"
        if op.name == "arith.fptoui":
            return f"({target_name})({self.unsigned_type(target, op)}){operand}"
        return f"({target_name}){operand}"

    def constant(self, op: arith.ConstantOp) -> str:
        value, type_ = op.value, op.result.type
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type_, VectorType):
            values = value.get_values()
            if len(set(values)) != 1:
                raise printer_error(op, "expected a splat vector constant")
            scalar = self.scalar_literal(values[0], type_.element_type, op)
            return self.vector_splat(type_, scalar)
        if isinstance(value, IntegerAttr | FloatAttr):
            return self.scalar_literal(value.value.data, type_, op)
        raise printer_error(op, f"expected a scalar or splat constant, found {value}")

    def scalar_literal(self, value: float | int, type_: Attribute, op: Operation) -> str:
        """A C literal of `type_` with exactly `value` (hex floats keep every bit)."""
        if isinstance(type_, IntegerType) and type_.width.data == 1:
            return "true" if value else "false"
        if isinstance(type_, IntegerType | IndexType):
            name = self.type_name(type_, op)
            number = int(value)
            if name in ("long", "ulong") and number == -(2**63):
                return f"({name})(-{2**63 - 1}L - 1)"
            if name in ("long", "ulong"):
                return f"{number}{'UL' if name == 'ulong' else 'L'}"
            return f"({name}){number}" if name != "int" else str(number)
        number = float(value)
        suffix = "f" if isinstance(type_, Float32Type) else ""
        cast = "(half)" if isinstance(type_, Float16Type) else ""
        if math.isnan(number):
            return f"{cast}NAN"
        if math.isinf(number):
            return f"{cast}{'-' if number < 0 else ''}INFINITY"
        if isinstance(type_, Float32Type):
            number = struct.unpack("<f", struct.pack("<f", number))[0]
        return f"{cast}{float.hex(number)}{suffix}"


def name_is_cast(op: Operation) -> bool:
    return op.name in (
        "arith.extsi", "arith.extui", "arith.trunci", "arith.sitofp", "arith.uitofp",
        "arith.fptosi", "arith.fptoui", "arith.extf", "arith.truncf", "arith.index_cast",
        "arith.index_castui", "arith.bitcast",
    )


CLikePrinter._STATEMENTS = {
    ForOp: CLikePrinter.print_for,
    BlockOp: CLikePrinter.print_loop_block,
    scf.IfOp: CLikePrinter.print_if,
    LoadOp: CLikePrinter.print_load,
    StoreOp: CLikePrinter.print_store,
    AllocOp: CLikePrinter.print_alloc,
    DeallocOp: lambda printer, op: None,
    YieldOp: lambda printer, op: None,
    PrefetchOp: lambda printer, op: None,  # a hint: OpenCL C and CUDA C go without
    SharedAllocOp: CLikePrinter.print_shared_alloc,
    ThreadIdOp: CLikePrinter.print_coordinate,
    BlockIdOp: CLikePrinter.print_coordinate,
    BlockDimOp: CLikePrinter.print_coordinate,
    GridDimOp: CLikePrinter.print_coordinate,
    BarrierOp: CLikePrinter.print_barrier,
    ReturnOp: CLikePrinter.print_return,
}  # type: ignore[assignment]
