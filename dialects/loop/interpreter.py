"""A NumPy interpreter of loop-level functions: the oracle for lowerings to loops and schedules.

Counterpart: running a TVM PrimFunc with its (slow) TIR interpreter, or MLIR's reference
execution. It executes `func.func`s over memrefs one op at a time: `loop.for` (every kind runs
serially, in order), `loop.block`, `loop.load`/`loop.store` (scalar or vector), `loop.alloc`/
`loop.dealloc` (sized by their operands for runtime rows), `loop.rows` (a slice of the rows),
`memref.get_global`, `memref.collapse_shape` (a view of the same buffer),
`func.call`/`func.return`, `loop.intrinsic` (the library entry's reference), and `arith`,
`math`, `vector.broadcast`, `vector.fma`, `vector.insert`/`vector.extract` (static positions) on
NumPy scalars (`index` values are Python ints, `i1` is `np.bool_`, vectors are 1-D arrays).
Buffers are NumPy arrays, updated in place. Fine for the small shapes of tests.

A warp-level `loop.intrinsic` (PTX `mma.sync`) is a call by all 32 lanes of a warp: the loop
bound to `threadIdx.x` around it runs its lanes in lock step, each with its own values, up to
the call; the call then sees every lane's fragments (the intrinsic's model,
`target.intrinsics.warp_reference`, gathers the tiles by the PTX fragment layouts), and the
lanes go on to the next call or the end of the loop body. A `loop.matrix_load` (PTX
`ldmatrix`) is such a call too: it reads the 8-element row at each lane's address and hands
each lane its elements by the entry's layout (`target.intrinsics.matrix_load_reference`).

`loop.async_copy` (PTX `cp.async`) copies nothing when it runs: the copy joins the open
group, which `loop.async_commit` closes, and happens (reading its source then) at the
`loop.async_wait` that leaves its group no longer pending, so that reading the destination
too early reads stale data (NaN in fresh shared buffers).

It is strict where compiled code would silently misbehave, so that it makes a good oracle: an
access out of bounds, to a freed buffer, or a store into a constant global is an error; fresh
allocations (and the outputs `run_function` makes) are filled with NaN (integers: a garbage
pattern), so reading what nobody wrote shows in the results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from dlc.dialects.arith_numpy import ARITH_MATH_OPS, INTEGER_DIVISIONS, OpImpl, numpy_dtype
from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
from dlc.dialects.graph.ops import elements_to_array
from dlc.dialects.loop.ops import (
    AllocOp,
    AsyncCommitOp,
    AsyncCopyOp,
    AsyncWaitOp,
    BlockOp,
    DeallocOp,
    ForOp,
    IntrinsicOp,
    LoadOp,
    MatrixLoadOp,
    PrefetchOp,
    RowsOp,
    StoreOp,
    YieldOp,
    dim_args,
)
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

_GARBAGE = 0x5A5A5A5A5A5A5A5A
"""What fresh integer buffers are filled with, so that reading them unwritten shows."""


class LoopInterpreterError(Exception):
    """The interpreter met IR it cannot run, or the IR did something undefined."""


class LoopUnsupportedError(LoopInterpreterError):
    """The IR holds an op (or an op's form) the interpreter has no implementation for: the IR is
    out of its reach, not wrong."""


Value = Any
"""A runtime value: a Python int (index), a NumPy scalar, or a NumPy array (vector, buffer)."""


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def run_function(
    module: ModuleOp, name: str, inputs: Sequence[np.ndarray | int | float],
    output_shapes: Sequence[Sequence[int]] | None = None,
) -> list[np.ndarray]:
    """Runs the destination-passing function @name on `inputs` and returns its outputs.

    `inputs` are the function's arguments except the last `dlc.num_outputs` ones, which are
    allocated here (filled with NaN or garbage), passed to the function and returned, and
    except the sizes of dynamic dims (`dlc.dim_args`), which are read off the arrays. Outputs
    with dynamic dims need their shapes in `output_shapes` (one per output).
    """
    interpreter = LoopInterpreter(module)
    function = interpreter.function(name)
    count = function.attributes.get(NUM_OUTPUTS_ATTR)
    if not isinstance(count, IntegerAttr):
        raise LoopInterpreterError(
            f"expected @{name} to have the attribute {NUM_OUTPUTS_ATTR}, found none"
        )
    sizes = dim_args(function)
    arg_types = function.function_type.inputs.data[: len(function.function_type.inputs) -
                                                   len(sizes)]
    num_inputs = len(arg_types) - count.value.data
    if len(inputs) != num_inputs:
        raise LoopInterpreterError(f"@{name} expected {num_inputs} inputs, found {len(inputs)}")
    output_types = arg_types[num_inputs:]
    if output_shapes is None:
        if any(not t.has_static_shape() for t in output_types if isinstance(t, MemRefType)):
            raise LoopInterpreterError(
                f"@{name} has outputs with dynamic dims: expected their shapes (output_shapes)"
            )
        outputs = [_fresh_buffer(type_) for type_ in output_types]
    else:
        outputs = [_fresh_buffer(type_, shape)
                   for type_, shape in zip(output_types, output_shapes, strict=True)]
    arrays: list[Any] = [*inputs, *outputs]
    extents = [int(np.shape(arrays[argument])[dim]) for argument, dim in sizes]
    interpreter.call(name, [*arrays, *extents])
    return outputs


class LoopInterpreter:
    """Runs the functions of one loop-level module (see the module docstring).

    Each block is translated once into a list of Python closures ("steps") over an environment
    that maps SSA values to runtime values; running a loop runs its body's steps.
    """

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self._globals: dict[str, np.ndarray] = {}
        self._freed: set[int] = set()
        self._kept: list[np.ndarray] = []  # freed buffers stay alive: their ids stay unique
        self._steps: dict[Block, list[Step]] = {}
        # async copies (`loop.async_copy`): the open group, then the committed ones, oldest
        # first; each copy is (destination buffer and index, source buffer and index or None)
        self._async_open: list[Any] = []
        self._async_groups: list[list[Any]] = []

    def function(self, name: str) -> func.FuncOp:
        """The function @name of the module."""
        for op in self.module.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name:
                return op
        raise LoopInterpreterError(f"expected a function @{name} in the module, found none")

    def call(self, name: str, args: Sequence[Value]) -> list[Value]:
        """Runs @name on `args` (buffers are updated in place) and returns what it returns."""
        function = self.function(name)
        if not function.body.blocks:
            raise LoopInterpreterError(f"expected a body for @{name}, found a declaration")
        block = function.body.block
        if len(args) != len(block.args):
            raise LoopInterpreterError(
                f"@{name} expected {len(block.args)} arguments, found {len(args)}"
            )
        env: dict[SSAValue, Value] = {}
        for index, (arg, value) in enumerate(zip(block.args, args, strict=True)):
            env[arg] = self._argument(arg.type, value, f"argument #{index} of @{name}")
        with np.errstate(all="ignore"):
            result = self._run(block, env)
        return [] if result is None else result

    def _run(self, block: Block, env: dict[SSAValue, Value]) -> list[Value] | None:
        """Runs `block`; returns the values of a `func.return` if it meets one."""
        steps = self._steps.get(block)
        if steps is None:
            steps = self._steps[block] = [self._compile(op) for op in block.ops]
        for step in steps:
            returned = step(env)
            if returned is not None:
                return returned
        return None

    # -- translating ops into steps -------------------------------------------------------------

    def _compile(self, op: Operation) -> Step:
        compiler = _COMPILERS.get(type(op))
        if compiler is not None:
            return compiler(self, op)
        impl = _SCALAR_OPS.get(op.name)
        if impl is None or len(op.results) != 1:
            raise LoopUnsupportedError(f"'{op.name}' op is not supported by the loop interpreter")
        operands, result = tuple(op.operands), op.results[0]
        convert = _converter(result.type)

        def scalar(env: dict[SSAValue, Value]) -> None:
            env[result] = convert(impl(op, [env[value] for value in operands]))

        return scalar

    def _for(self, op: ForOp) -> Step:
        lb, ub, step, iv, body = op.lb, op.ub, op.step, op.induction_var, op.body.block
        run, axis = self._run, op.axis.data
        if any(_is_warp_call(nested) and _enclosing_for(nested) is op for nested in op.walk()):
            return self._warp(op)

        def loop(env: dict[SSAValue, Value]) -> None:
            if env[step] <= 0:
                raise LoopInterpreterError(f"'loop.for' \"{axis}\" has step {env[step]} <= 0")
            for value in range(env[lb], env[ub], env[step]):
                env[iv] = value
                run(body, env)

        return loop

    def _warp(self, op: ForOp) -> Step:
        """A loop over a warp's lanes around warp-level intrinsic calls (`mma.sync`): the lanes
        run in lock step around each call, which then sees every lane's fragments (between
        calls, lane after lane, as the serial loop would)."""
        axis = op.axis.data
        if op.kind.data != "bound" or op.thread is None or op.thread.data != "threadIdx.x":
            raise LoopUnsupportedError(
                f"'loop.for' \"{axis}\" expected a warp-level 'loop.intrinsic' inside a loop "
                f"bound to threadIdx.x, found it inside a {op.kind.data} loop")
        phases: list[list[Step]] = [[]]
        calls: list[Callable[[list[dict[SSAValue, Value]]], None]] = []
        for nested in _straight_line(op.body.block, axis):
            if isinstance(nested, MatrixLoadOp):
                calls.append(self._matrix_load(nested))
                phases.append([])
            elif _is_warp_call(nested):
                assert isinstance(nested, IntrinsicOp)
                calls.append(_warp_intrinsic(nested))
                phases.append([])
            else:
                phases[-1].append(self._compile(nested))
        lb, ub, step, iv = op.lb, op.ub, op.step, op.induction_var

        def lock_step(env: dict[SSAValue, Value]) -> None:
            from dlc.target.intrinsics import WARP_SIZE

            lanes = list(range(env[lb], env[ub], env[step]))
            if lanes != list(range(WARP_SIZE)):
                raise LoopInterpreterError(
                    f"'loop.for' \"{axis}\" expected the {WARP_SIZE} lanes of a warp around a "
                    f"warp-level 'loop.intrinsic', found iterations {lanes[:3]}...")
            envs = [dict(env) for _ in lanes]
            for lane, lane_env in zip(lanes, envs, strict=True):
                lane_env[iv] = lane
            for phase, call in zip(phases, [*calls, None], strict=True):
                for lane_env in envs:
                    for run_step in phase:
                        run_step(lane_env)
                if call is not None:
                    call(envs)

        return lock_step

    def _matrix_load(self, op: MatrixLoadOp) -> Callable[[list[dict[SSAValue, Value]]], None]:
        """The warp's `ldmatrix`: the 8-element row at each lane's address, then each lane's
        elements by the entry's layout (rows must be 16-byte aligned, as on the GPU)."""
        from dlc.target.intrinsics import MatrixLoad, get_matrix_load, matrix_load_reference

        entry = get_matrix_load(op.intrinsic.data)
        vector_type = VectorType(op.memref.type.get_element_type(),  # type: ignore[attr-defined]
                                 [MatrixLoad.ROWS])
        where, result = self._access(op, vector_type), op.result

        def load(envs: list[dict[SSAValue, Value]]) -> None:
            rows = []
            for lane_env in envs:
                buffer, position = where(lane_env)
                flat = np.ravel_multi_index(
                    tuple(p.start if isinstance(p, slice) else p for p in position), buffer.shape)
                if flat % MatrixLoad.ROWS:
                    raise LoopInterpreterError(
                        f"'loop.matrix_load' \"{entry.name}\" expected 16-byte aligned rows "
                        f"(element offsets multiple of {MatrixLoad.ROWS}), found offset {flat} "
                        f"in {op.memref.type}")
                rows.append(buffer[position].copy())
            values = matrix_load_reference(entry, np.stack(rows))
            for lane_env, row in zip(envs, values, strict=True):
                lane_env[result] = row.copy()

        return load

    def _block(self, op: BlockOp) -> Step:
        body, run = op.body.block, self._run
        return lambda env: run(body, env)

    def _region(self, block: Block, env: dict[SSAValue, Value], args: Sequence[Value]
                ) -> list[Value]:
        """Runs a region of `scf.if` / `scf.while` on `args`; returns its terminator's operands
        (for `scf.condition`: the condition, then the forwarded values)."""
        for arg, value in zip(block.args, args, strict=True):
            env[arg] = value
        terminator = block.last_op
        steps = self._steps.get(block)
        if steps is None:
            steps = self._steps[block] = [self._compile(op) for op in block.ops
                                          if op is not terminator]
        for step in steps:
            step(env)
        assert terminator is not None
        return [env[value] for value in terminator.operands]

    def _if(self, op: scf.IfOp) -> Step:
        cond, results = op.cond, op.results
        then_block = op.true_region.block
        else_block = op.false_region.blocks.first

        def choose(env: dict[SSAValue, Value]) -> None:
            block = then_block if env[cond] else else_block
            if block is not None:
                for result, value in zip(results, self._region(block, env, []), strict=True):
                    env[result] = value

        return choose

    def _while(self, op: scf.WhileOp) -> Step:
        before, after = op.before_region.block, op.after_region.block

        def loop(env: dict[SSAValue, Value]) -> None:
            state = [env[value] for value in op.arguments]
            while True:
                cond, *forwarded = self._region(before, env, state)
                if not cond:
                    break
                state = self._region(after, env, forwarded)
            for result, value in zip(op.results, forwarded, strict=True):
                env[result] = value

        return loop

    def _access(
        self, op: LoadOp | StoreOp | MatrixLoadOp | _AccessView, value_type: Attribute
    ) -> Callable[[dict[SSAValue, Value]], tuple[np.ndarray, tuple[int | slice, ...]]]:
        """A function giving the buffer and the NumPy index an access reads or writes."""
        memref_value, indices = op.memref, tuple(op.indices)
        width = value_type.get_shape()[0] if isinstance(value_type, VectorType) else 0
        freed, name = self._freed, op.name

        def where(env: dict[SSAValue, Value]) -> tuple[np.ndarray, tuple[int | slice, ...]]:
            buffer = env[memref_value]
            if id(buffer) in freed:
                raise LoopInterpreterError(
                    f"'{name}' accesses {memref_value.type} after its dealloc")
            position = tuple(env[index] for index in indices)
            for axis, (index, dim) in enumerate(zip(position, buffer.shape, strict=True)):
                last = index + width - 1 if width and axis == len(position) - 1 else index
                if index < 0 or last >= dim:
                    raise LoopInterpreterError(
                        f"'{name}' accesses {memref_value.type} out of bounds: index #{axis} "
                        f"is {index if last == index else f'{index}..{last}'}, "
                        f"expected [0, {dim - 1}]"
                    )
            if not width:
                return buffer, position
            return buffer, (*position[:-1], slice(position[-1], position[-1] + width))

        return where

    def _load(self, op: LoadOp) -> Step:
        where, result = self._access(op, op.result.type), op.result
        is_index = isinstance(result.type, IndexType)

        def load(env: dict[SSAValue, Value]) -> None:
            buffer, position = where(env)
            value = buffer[position]
            if isinstance(value, np.ndarray):
                value = value.copy()
            elif is_index:
                value = int(value)
            env[result] = value

        return load

    def _store(self, op: StoreOp) -> Step:
        where, value, memref_type = self._access(op, op.value.type), op.value, op.memref.type

        def store(env: dict[SSAValue, Value]) -> None:
            buffer, position = where(env)
            if not buffer.flags.writeable:
                raise LoopInterpreterError(f"'loop.store' stores into a constant {memref_type}")
            buffer[position] = env[value]

        return store

    def _intrinsic(self, op: IntrinsicOp) -> Step:
        from dlc.target.intrinsics import get_intrinsic

        reference = get_intrinsic(op.intrinsic.data).reference
        acc, lhs, rhs, result = op.acc, op.lhs, op.rhs, op.result

        def call(env: dict[SSAValue, Value]) -> None:
            env[result] = reference(env[acc], env[lhs], env[rhs])

        return call

    def _async_copy(self, op: AsyncCopyOp) -> Step:
        """Records the copy in the open group; it happens at the `loop.async_wait` that
        completes its group (reading the source then)."""
        vector = VectorType(op.dest.type.get_element_type(),  # type: ignore[attr-defined]
                            [op.width])
        source = self._access(_AccessView(op.source, op.source_indices, op.name), vector)
        dest = self._access(_AccessView(op.dest, op.dest_indices, op.name), vector)
        valid, width = op.valid, op.width

        def start(env: dict[SSAValue, Value]) -> None:
            count = env[valid]
            if count not in (0, width):
                raise LoopInterpreterError(
                    f"'loop.async_copy' expected {width} or 0 valid elements, found {count}")
            target = dest(env)
            origin = source(env) if count else None
            self._async_open.append((target, origin))

        return start

    def _async_commit(self, op: AsyncCommitOp) -> Step:
        def commit(env: dict[SSAValue, Value]) -> None:
            self._async_groups.append(self._async_open)
            self._async_open = []

        return commit

    def _async_wait(self, op: AsyncWaitOp) -> Step:
        pending = op.pending.value.data

        def wait(env: dict[SSAValue, Value]) -> None:
            while len(self._async_groups) > pending:
                for (buffer, where), origin in self._async_groups.pop(0):
                    if origin is None:
                        buffer[where] = 0
                    else:
                        source, at = origin
                        buffer[where] = source[at]

        return wait

    def _alloc(self, op: AllocOp) -> Step:
        result, type_, sizes = op.result, op.result.type, tuple(op.sizes)
        assert isinstance(type_, MemRefType)
        static = tuple(type_.get_shape())

        def alloc(env: dict[SSAValue, Value]) -> None:
            dynamic = iter(sizes)
            shape = [size if size >= 0 else int(env[next(dynamic)]) for size in static]
            env[result] = _fresh_buffer(type_, shape)

        return alloc

    def _dealloc(self, op: DeallocOp) -> Step:
        memref_value = op.memref

        def dealloc(env: dict[SSAValue, Value]) -> None:
            buffer = env[memref_value]
            if id(buffer) in self._freed:
                raise LoopInterpreterError(f"'loop.dealloc' frees {memref_value.type} twice")
            self._freed.add(id(buffer))
            self._kept.append(buffer)

        return dealloc

    def _get_global(self, op: memref.GetGlobalOp) -> Step:
        name, result = op.name_.string_value(), op.memref

        def get_global(env: dict[SSAValue, Value]) -> None:
            array = self._globals.get(name)
            if array is None:
                array = self._globals[name] = self._load_global(name)
            env[result] = array

        return get_global

    def _load_global(self, name: str) -> np.ndarray:
        for candidate in self.module.ops:
            if isinstance(candidate, memref.GlobalOp) and candidate.sym_name.data == name:
                value = candidate.initial_value
                if not isinstance(value, DenseIntOrFPElementsAttr):
                    raise LoopInterpreterError(f"'memref.global' @{name} has no initial value")
                array = elements_to_array(value, candidate.name)
                return array if candidate.constant is not None else array.copy()
        raise LoopInterpreterError(f"'memref.get_global' expected a memref.global @{name}, "
                                   "found none")

    def _rows(self, op: RowsOp) -> Step:
        source, first, result, rows = op.source, op.first, op.result, op.rows

        def view(env: dict[SSAValue, Value]) -> None:
            buffer, start = env[source], int(env[first])
            if not 0 <= start <= start + rows <= buffer.shape[0]:
                raise LoopInterpreterError(
                    f"'{op.name}' of rows [{start}, {start + rows}) out of the {buffer.shape[0]} "
                    f"of {source.type}")
            env[result] = buffer[start:start + rows]

        return view

    def _collapse_shape(self, op: memref.CollapseShapeOp) -> Step:
        source, result = op.src, op.result
        result_type = result.type
        assert isinstance(result_type, MemRefType)
        shape = tuple(max(size, -1) for size in result_type.get_shape())  # -1: runtime size

        def collapse(env: dict[SSAValue, Value]) -> None:
            buffer = env[source]
            view = buffer.reshape(shape)
            if buffer.size and not np.shares_memory(view, buffer):
                raise LoopInterpreterError(
                    f"'{op.name}' expected a contiguous {source.type}, found a strided one")
            env[result] = view

        return collapse

    def _call(self, op: func.CallOp) -> Step:
        callee, arguments, results = op.callee.string_value(), tuple(op.arguments), op.results

        def call(env: dict[SSAValue, Value]) -> None:
            values = self.call(callee, [env[value] for value in arguments])
            for result, value in zip(results, values, strict=True):
                env[result] = value

        return call

    def _return(self, op: func.ReturnOp) -> Step:
        arguments = tuple(op.arguments)
        return lambda env: [env[value] for value in arguments]

    def _constant(self, op: arith.ConstantOp) -> Step:
        value, type_, result = op.value, op.result.type, op.result
        if isinstance(value, IntegerAttr | FloatAttr):
            constant = _converter(type_)(value.value.data)
        elif isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type_, VectorType):
            constant = elements_to_array(value, op.name)
        else:
            raise LoopUnsupportedError(f"'{op.name}' of {type_} is not supported")

        def define(env: dict[SSAValue, Value]) -> None:
            env[result] = constant

        return define

    def _argument(self, type_: Attribute, value: Value, what: str) -> Value:
        if not isinstance(type_, MemRefType):
            return _converter(type_)(value)
        if not isinstance(value, np.ndarray):
            raise LoopInterpreterError(f"expected {what} to be a NumPy array, found {value!r}")
        shape = tuple(type_.get_shape())
        dtype = _dtype(type_.get_element_type())
        matches = len(value.shape) == len(shape) and all(
            size < 0 or size == found for size, found in zip(shape, value.shape, strict=True)
        )
        if not matches or value.dtype != dtype:
            raise LoopInterpreterError(
                f"expected {what} of shape {shape} and dtype {dtype}, "
                f"found {value.shape} and {value.dtype}"
            )
        return value


class _AccessView:
    """An access's buffer and indices, as `LoopInterpreter._access` reads them off a load."""

    def __init__(self, memref: SSAValue, indices: Sequence[SSAValue], name: str) -> None:
        self.memref, self.indices, self.name = memref, indices, name


def _warp_intrinsic(call: IntrinsicOp) -> Callable[[list[dict[SSAValue, Value]]], None]:
    """A warp-level `loop.intrinsic` on the environments of the warp's lanes."""
    from dlc.target.intrinsics import get_intrinsic, warp_reference

    entry = get_intrinsic(call.intrinsic.data)

    def run(envs: list[dict[SSAValue, Value]]) -> None:
        operands = [np.stack([lane_env[value] for lane_env in envs])
                    for value in (call.acc, call.lhs, call.rhs)]
        result = warp_reference(entry, *operands)
        for lane_env, row in zip(envs, result, strict=True):
            lane_env[call.result] = row.copy()

    return run


def _is_warp_call(op: Operation) -> bool:
    """Whether `op` is made by all the lanes of a warp together: a warp-level intrinsic or a
    matrix load."""
    if isinstance(op, MatrixLoadOp):
        return True
    if not isinstance(op, IntrinsicOp):
        return False
    from dlc.target.intrinsics import IntrinsicError, get_intrinsic

    try:
        return get_intrinsic(op.intrinsic.data).warp_level
    except IntrinsicError:
        return False


def _enclosing_for(op: Operation) -> ForOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ForOp):
        parent = parent.parent_op()
    return parent


def _straight_line(block: Block, axis: str) -> list[Operation]:
    """The ops of `block` with the bodies of its `loop.block`s inlined, in order; a warp-level
    call must not sit in other control flow (the lanes could not meet at it)."""
    ops: list[Operation] = []
    for op in block.ops:
        if isinstance(op, BlockOp):
            ops.extend(_straight_line(op.body.block, axis))
            continue
        if op.regions and any(_is_warp_call(nested) for nested in op.walk()):
            raise LoopUnsupportedError(
                f"'loop.for' \"{axis}\" expected its warp-level 'loop.intrinsic' outside "
                f"control flow, found it inside a '{op.name}'")
        ops.append(op)
    return ops


Step = Callable[[dict[SSAValue, Value]], list[Value] | None]
"""One op, translated: runs it on an environment; returns a list only for `func.return`."""

_COMPILERS: dict[type[Operation], Callable[[LoopInterpreter, Any], Step]] = {
    ForOp: LoopInterpreter._for,
    BlockOp: LoopInterpreter._block,
    scf.IfOp: LoopInterpreter._if,
    scf.WhileOp: LoopInterpreter._while,
    YieldOp: lambda interpreter, op: lambda env: None,
    LoadOp: LoopInterpreter._load,
    PrefetchOp: lambda interpreter, op: lambda env: None,  # a hint: nothing to run
    StoreOp: LoopInterpreter._store,
    IntrinsicOp: LoopInterpreter._intrinsic,
    AsyncCopyOp: LoopInterpreter._async_copy,
    AsyncCommitOp: LoopInterpreter._async_commit,
    AsyncWaitOp: LoopInterpreter._async_wait,
    AllocOp: LoopInterpreter._alloc,
    DeallocOp: LoopInterpreter._dealloc,
    memref.GetGlobalOp: LoopInterpreter._get_global,
    memref.CollapseShapeOp: LoopInterpreter._collapse_shape,
    RowsOp: LoopInterpreter._rows,
    func.CallOp: LoopInterpreter._call,
    func.ReturnOp: LoopInterpreter._return,
    arith.ConstantOp: LoopInterpreter._constant,
}
"""Ops with their own translation: control flow, memory, calls and constants."""


# ---------------------------------------------------------------------------------------------
# Values and types
# ---------------------------------------------------------------------------------------------


def _dtype(type_: Attribute) -> np.dtype:
    try:
        return numpy_dtype(type_)
    except ValueError as e:
        raise LoopInterpreterError(str(e)) from None


def _fresh_buffer(type_: Attribute, shape: Sequence[int] | None = None) -> np.ndarray:
    """A new buffer of a memref type (of `shape` where given: the sizes of its dynamic dims),
    filled with NaN (floats) or a garbage pattern."""
    assert isinstance(type_, MemRefType)
    dtype = _dtype(type_.get_element_type())
    shape = tuple(type_.get_shape()) if shape is None else tuple(shape)
    if dtype.kind == "f":
        return np.full(shape, np.nan, dtype=dtype)
    if dtype.kind == "b":
        return np.ones(shape, dtype=dtype)
    return np.full(shape, _GARBAGE, dtype=np.uint64).astype(dtype)


def _converter(type_: Attribute) -> Callable[[Value], Value]:
    """A function making a runtime value of `type_` (integers wrap to the type's width)."""
    if isinstance(type_, IndexType):
        return int
    if isinstance(type_, VectorType):
        vector_dtype = _dtype(type_.get_element_type())
        return lambda value: np.asarray(value).astype(vector_dtype, copy=False)
    dtype = _dtype(type_)
    scalar_type = dtype.type
    width = type_.width.data if isinstance(type_, IntegerType) else 0

    def convert(value: Value) -> Value:
        if type(value) is scalar_type:
            return value
        if width and isinstance(value, int):  # a Python int (or bool): wrap it
            value %= 2**width
            if width > 1 and value >= 2 ** (width - 1):
                value -= 2**width
            return scalar_type(value)
        return np.asarray(value).astype(dtype)[()]

    return convert


# ---------------------------------------------------------------------------------------------
# arith, math and vector on NumPy scalars and vectors
# ---------------------------------------------------------------------------------------------


def _checked_division(name: str) -> OpImpl:
    """`name`'s semantics, where a division by zero (a trap in compiled code) is an error."""
    impl = ARITH_MATH_OPS[name]

    def run(op: Operation, args: list[Value]) -> Value:
        if np.any(np.asarray(args[1]) == 0):
            raise LoopInterpreterError(f"'{name}' divides by zero")
        return impl(op, args)

    return run


def _shape_of(type_: Attribute) -> tuple[int, ...]:
    return tuple(type_.get_shape()) if isinstance(type_, VectorType) else ()


_SCALAR_OPS: dict[str, OpImpl] = {
    **ARITH_MATH_OPS,
    **{name: _checked_division(name) for name in INTEGER_DIVISIONS},
    "vector.broadcast": lambda op, args: np.broadcast_to(
        args[0], _shape_of(op.results[0].type)).copy(),
    "vector.fma": lambda op, args: args[0] * args[1] + args[2],
    "vector.insert": lambda op, args: _insert(op, args),
    "vector.extract": lambda op, args: np.asarray(args[0])[tuple(op.static_position.get_values())],
}


def _insert(op: Operation, args: list[Any]) -> np.ndarray:
    """`vector.insert` at a static position: a copy of the vector with one element set."""
    result = np.array(args[1], copy=True)
    result[tuple(op.static_position.get_values())] = args[0]  # type: ignore[attr-defined]
    return result
"""Scalar (and elementwise vector) ops: operands in, one result out, converted to its type."""
