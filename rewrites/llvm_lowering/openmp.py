"""Parallel loops on CPU threads through libgomp (MLIR's `convert-openmp-to-llvm` for a static
`omp.wsloop`, TVM's `parallel` for_kind lowered by `codegen_cpu` to its thread pool).

A `loop.for` of kind `parallel` is outlined into two internal functions and replaced by one call:

    // at the loop: the captured values go into 8-byte slots of a block on the stack
    llvm.store %v_k, (getelementptr i8 %data[8 * k])
    llvm.call @GOMP_parallel(@f_parallel0, %data, num_threads, 0)

    llvm.func internal @f_parallel0(%data: !llvm.ptr)           // run by every thread
      %v_k = llvm.load (getelementptr i8 %data[8 * k])         // ..., the trip count last
      %tid = omp_get_thread_num(), %nth = omp_get_num_threads()
      // static: this thread's chunk, ceil(trip / nth) iterations from tid * chunk
      llvm.call @f_parallel0_body(%v_0, ..., %first, %last)

    func.func private @f_parallel0_body(%v_0: memref<..>, ..., %first: index, %last: index)
      loop.for %i = %lb + %first * %step to %lb + %last * %step step %step { <the body> }

With `parallel_schedule = "dynamic"` the thread function instead takes one iteration at a
time from libgomp (`GOMP_loop_dynamic_start`/`_next`, `GOMP_loop_end_nowait`) until none is
left: a thread the OS preempts then delays nobody. `guided` is the same with libgomp's guided
chunks (`GOMP_loop_guided_start`/`_next`: each chunk the remaining iterations over the thread
count, at least one): few hand-outs while every thread runs, single iterations at the end, so
that a thread that starts late (descheduled, or woken from sleep) finds the work done by the
others instead of holding them up with a static chunk of its own.

With `adaptive_threads` (the default) the call site reads the module's countdown
`@dlc_team_serial_regions`: above 0, the region runs on the calling thread alone
(`num_threads = 1`); it times the region with `omp_get_wtime`, and thread 0 of the thread
function stores when it ran out of iterations into `@dlc_team_master_done`. A region whose
caller then waited longer than max(half the region, 50 us) for the rest of its team (threads
that the OS ran late: the cores are shared) sets the countdown to 64; every region counts it
down, so the team is tried again. The state is per module (per kernel unit) and unsynchronised:
concurrent calls may blur a measurement, never a result (every schedule runs each iteration
once, whatever the team size).

Constants the loop uses are cloned into the body function instead of being passed.

The body function keeps the loop-level ops: the rest of `convert-loop-to-llvm` lowers them like
any others, and a `loop.alloc local` inside gets its stack slot in the body function (so LLVM can
promote a register tile). Buffers are passed `noalias` when each is a `loop.alloc`, a global, or
an argument of an entry function (which the runtime never aliases): the body function then
carries `dlc.num_outputs = 0`, so `FuncLowering` marks its buffer arguments `noalias` as it does
an entry function's; LLVM keeps that knowledge when it inlines the body into the thread
function. `GOMP_parallel` runs the thread function on `num_threads` threads and returns when all
are done: the value of the global `dlc_num_threads` (`NUM_THREADS_SYMBOL`, defined `weak` in the
module) where it is not 0, else the lowering's `num_threads` (0: the OpenMP runtime's default,
all cores).
"""

from __future__ import annotations

from collections.abc import Callable

from dlc.dialects.contracts import NUM_OUTPUTS_ATTR
from dlc.dialects.loop.ops import AllocOp, ForOp
from dlc.rewrites.llvm_lowering.common import (
    LLVMLowering,
    call_intrinsic,
    ensure_declared,
    int_constant,
    lowered,
    lowering_error,
)
from dlc.rewrites.llvm_lowering.memref import entry_block_of, strides_and_offset
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    f64,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.dialects.memref import AllocOp as MemrefAllocOp
from xdsl.dialects.memref import GetGlobalOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

PARALLEL_RUNTIMES = ("gomp", "dlc")
"""What runs parallel loops (`LLVMLowering.parallel_runtime`): libgomp, or dlc's pool."""

DLC_PARALLEL_FOR = "dlc_parallel_for"
"""dlc's pool (`runtime/thread_pool/pool.c`): `void dlc_parallel_for(void (*task)(void *data,
int64_t first, int64_t last), void *data, int64_t trip, int32_t threads)`."""

PARALLEL_SCHEDULES = ("static", "dynamic", "guided")
"""How the iterations of a parallel loop are shared out (`LLVMLowering.parallel_schedule`)."""

GOMP_PARALLEL = "GOMP_parallel"
"""libgomp's entry: `void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads,
unsigned flags)`."""


NUM_THREADS_SYMBOL = "dlc_num_threads"
"""The i32 global that every `GOMP_parallel` call reads its team size from when it is not 0 (a
shared library's `<prefix>_set_num_threads` writes it; 0, the initial value, keeps the count the
code was compiled with). Each unit that has parallel loops defines it `weak`, so that the units
of one library (or one JIT library) share one copy."""


def thread_count(anchor: Operation, compiled: int, rewriter: PatternRewriter) -> list[Operation]:
    """Ops computing a parallel loop's team size (the last result, i32): `NUM_THREADS_SYMBOL`'s
    value where it is not 0, else `compiled` (0: the OpenMP runtime's default); defines the
    global in `anchor`'s module unless it is."""
    module = _module_of(anchor)
    if not any(
        isinstance(op, llvm.GlobalOp) and op.sym_name.data == NUM_THREADS_SYMBOL
        for op in module.ops
    ):
        rewriter.insert(
            llvm.GlobalOp(i32, NUM_THREADS_SYMBOL, "weak", value=IntegerAttr(0, i32),
                          alignment=4),
            InsertPoint.at_start(module.body.block),
        )
    address = llvm.AddressOfOp(NUM_THREADS_SYMBOL, llvm.LLVMPointerType())
    setting = llvm.LoadOp(address, i32, alignment=4)
    zero = int_constant(0, i32)
    is_set = llvm.ICmpOp(setting.dereferenced_value, zero.result,
                         IntegerAttr(llvm.ICmpPredicateFlag("ne").to_int(), 64))
    default = int_constant(compiled, i32)
    threads = llvm.SelectOp(is_set, setting.dereferenced_value, default)
    return [address, setting, zero, is_set, default, threads]


SERIAL_REGIONS = "dlc_team_serial_regions"
"""An internal i32 global per module: how many more parallel regions run on the calling
thread alone (`LLVMLowering.adaptive_threads`); 0: the whole team."""

MASTER_DONE = "dlc_team_master_done"
"""An internal f64 global per module: when (`omp_get_wtime`) thread 0 of the last region ran
out of iterations."""

SCRATCH = "dlc_team_scratch"
"""An internal f64 global per module that the other threads' finishing times go to."""

SERIAL_AFTER_WAIT = 64
"""How many regions run serially after a region whose caller waited for its team (then the
team is tried again)."""

MIN_WAIT_SECONDS = 5e-5
"""A wait at the end of a region shorter than this never counts as contention (waking a thread
costs some tens of microseconds)."""


def _ensure_team_globals(anchor: Operation, rewriter: PatternRewriter) -> None:
    """The module's adaptive-team state (`SERIAL_REGIONS`, `MASTER_DONE`, `SCRATCH`)."""
    module = _module_of(anchor)
    taken = {
        attr.data for op in module.ops
        if isinstance(attr := getattr(op, "sym_name", None), StringAttr)
    }
    state = [(SERIAL_REGIONS, i32, IntegerAttr(0, i32)), (MASTER_DONE, f64, FloatAttr(0.0, f64)),
             (SCRATCH, f64, FloatAttr(0.0, f64))]
    for name, type_, value in state:
        if name not in taken:
            global_op = llvm.GlobalOp(type_, name, "internal", value=value, alignment=8)
            rewriter.insert(global_op, InsertPoint.at_end(module.body.block))


def _record_master_done(ops: list[Operation]) -> None:
    """Ops storing `omp_get_wtime()` into `MASTER_DONE` on thread 0, `SCRATCH` on the others
    (branch-free)."""
    pointer = llvm.LLVMPointerType()
    tid = llvm.CallOp("omp_get_thread_num", return_type=i32)
    zero = int_constant(0, i32)
    is_master = llvm.ICmpOp(tid.returned, zero.result, IntegerAttr(0, i64))  # eq
    done = llvm.AddressOfOp(MASTER_DONE, pointer)
    scratch = llvm.AddressOfOp(SCRATCH, pointer)
    target = llvm.SelectOp(is_master, done, scratch)
    now = llvm.CallOp("omp_get_wtime", return_type=f64)
    ops += [tid, zero, is_master, done, scratch, target, now,
            llvm.StoreOp(now.returned, target.res, 8)]


def _adaptive_call(
    thread_fn: SSAValue, data: SSAValue, full: SSAValue, flags: SSAValue
) -> list[Operation]:
    """`GOMP_parallel` on the whole team (`full` threads) or, while `SERIAL_REGIONS` counts
    down, on the calling thread alone; afterwards, a region whose caller waited at its end for
    longer than half the region (and `MIN_WAIT_SECONDS`) for threads that the OS ran late
    makes the next `SERIAL_AFTER_WAIT` regions serial."""
    pointer = llvm.LLVMPointerType()
    ops: list[Operation] = []
    countdown_address = llvm.AddressOfOp(SERIAL_REGIONS, pointer)
    countdown = llvm.LoadOp(countdown_address, i32, 4)
    zero, one = int_constant(0, i32), int_constant(1, i32)
    serial = llvm.ICmpOp(countdown.dereferenced_value, zero.result, IntegerAttr(4, i64))  # sgt
    threads = llvm.SelectOp(serial, one, full)
    start = llvm.CallOp("omp_get_wtime", return_type=f64)
    call = llvm.CallOp(GOMP_PARALLEL, thread_fn, data, threads.res, flags)
    end = llvm.CallOp("omp_get_wtime", return_type=f64)
    done_address = llvm.AddressOfOp(MASTER_DONE, pointer)
    done = llvm.LoadOp(done_address, f64, 8)
    waited = llvm.FSubOp(end.returned, done.dereferenced_value)
    took = llvm.FSubOp(end.returned, start.returned)
    half = llvm.ConstantOp(FloatAttr(0.5, f64), f64)
    half_took = llvm.FMulOp(took, half)
    least = llvm.ConstantOp(FloatAttr(MIN_WAIT_SECONDS, f64), f64)
    threshold = call_intrinsic("llvm.maxnum.f64", [half_took.res, least.result], f64)
    long_wait = llvm.FCmpOp(waited, threshold, "ogt")
    false = int_constant(0, i1)
    contended = llvm.SelectOp(serial, false, long_wait)
    less = llvm.SubOp(countdown.dereferenced_value, one.result)
    clamped = call_intrinsic("llvm.smax.i32", [less.res, zero.result], i32)
    again = int_constant(SERIAL_AFTER_WAIT, i32)
    following = llvm.SelectOp(contended, again, clamped)
    ops += [countdown_address, countdown, zero, one, serial, threads, start, call, end,
            done_address, done, waited, took, half, half_took, least, threshold, long_wait, false,
            contended, less, clamped, again, following,
            llvm.StoreOp(following.res, countdown_address, 4)]
    return ops


def captured_values(loop: ForOp) -> list[SSAValue]:
    """The values the loop uses that are defined outside it (its bounds first), in order."""
    captured: list[SSAValue] = []
    seen: set[SSAValue] = set()
    for value in loop.operands:
        if value not in seen:
            seen.add(value)
            captured.append(value)
    for op in loop.walk():
        if op is loop:
            continue
        for value in op.operands:
            if value in seen or _defined_inside(value, loop):
                continue
            seen.add(value)
            captured.append(value)
    return captured


def _defined_inside(value: SSAValue, loop: ForOp) -> bool:
    owner = value.owner
    if isinstance(owner, Block):
        holder = owner.parent_op()
        return holder is not None and loop.is_ancestor(holder)
    return loop.is_ancestor(owner)


def _function_of(op: Operation) -> func.FuncOp | llvm.FuncOp:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp | llvm.FuncOp):
        parent = parent.parent_op()
    if parent is None:
        raise lowering_error(op, "expected to be nested in a function")
    return parent


def _module_of(op: Operation) -> ModuleOp:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ModuleOp):
        parent = parent.parent_op()
    if parent is None:
        raise lowering_error(op, "expected to be nested in a builtin.module")
    return parent


def _unique_symbol(module: ModuleOp, base: str) -> str:
    taken = {
        attr.data for op in module.ops
        if isinstance(attr := getattr(op, "sym_name", None), StringAttr)
    }
    index = 0
    while f"{base}{index}" in taken or f"{base}{index}_body" in taken:
        index += 1
    return f"{base}{index}"


def _is_unaliased_buffer(value: SSAValue) -> bool:
    """Whether `value` is a buffer no other distinct buffer value can overlap."""
    owner = value.owner
    if isinstance(owner, AllocOp | MemrefAllocOp | GetGlobalOp):
        return True
    if isinstance(owner, Block):
        function = owner.parent_op()
        return (
            isinstance(function, func.FuncOp)
            and NUM_OUTPUTS_ATTR in function.attributes
            and owner is function.body.blocks[0]
        )
    return False


def _trip_count(
    lb: SSAValue, ub: SSAValue, step: SSAValue, emit: Callable[[Operation], SSAValue]
) -> SSAValue:
    """`ceil(max(ub - lb, 0) / step)` in `index` arithmetic."""
    zero = emit(arith.ConstantOp.from_int_and_width(0, IndexType()))
    one = emit(arith.ConstantOp.from_int_and_width(1, IndexType()))
    span = emit(arith.MaxSIOp(emit(arith.SubiOp(ub, lb)), zero))
    step_less_one = emit(arith.SubiOp(step, one))
    return emit(arith.DivUIOp(emit(arith.AddiOp(span, step_less_one)), step))


def _body_function(
    name: str, loop: ForOp, captured: list[SSAValue], noalias: bool
) -> func.FuncOp:
    """`@<name>_body(captured..., first, last)`: iterations `[first, last)` of the loop, as a
    private `func.func` of loop-level ops (lowered by the rest of the pass like any other)."""
    entry = Block(arg_types=[*(value.type for value in captured), IndexType(), IndexType()])
    mapped: dict[SSAValue, SSAValue] = {}
    for value, arg in zip(captured, entry.args, strict=False):
        arg.name_hint = value.name_hint
        mapped[value] = arg
    first, last = entry.args[-2:]
    first.name_hint, last.name_hint = "first", "last"
    ops: list[Operation] = []
    for op in _rematerialized(loop):
        clone = op.clone()
        ops.append(clone)
        mapped[op.results[0]] = clone.results[0]
    lb, _, step = (mapped[value] for value in loop.operands)

    def emit(op: Operation, hint: str | None = None) -> SSAValue:
        ops.append(op)
        if hint is not None:
            op.results[0].name_hint = hint
        return op.results[0]

    begin = emit(arith.AddiOp(lb, emit(arith.MuliOp(first, step))), "begin")
    end = emit(arith.AddiOp(lb, emit(arith.MuliOp(last, step))), "end")
    body = loop.detach_region(loop.body)
    chunk_loop = ForOp(begin, end, step, body, loop.axis, "serial", None, loop.annotations)
    ops.append(chunk_loop)
    for value, replacement in mapped.items():
        value.replace_uses_with_if(
            replacement, lambda use: chunk_loop.is_ancestor(use.operation)
        )
    ops.append(func.ReturnOp())
    entry.add_ops(ops)
    body_fn = func.FuncOp(
        f"{name}_body",
        FunctionType.from_lists([arg.type for arg in entry.args], []),
        Region(entry),
        "private",
    )
    if noalias:
        # The arguments are distinct buffers, as an entry function's are: FuncLowering marks
        # them noalias.
        body_fn.attributes[NUM_OUTPUTS_ATTR] = IntegerAttr(0, i64)
    return body_fn


def _rematerialized(loop: ForOp) -> list[Operation]:
    """The constants the loop uses from outside: cloned into the body function rather than
    passed (the vectorizer and LLVM need to see them as constants)."""
    constants: list[Operation] = []
    for value in captured_values(loop):
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and owner not in constants:
            constants.append(owner)
    return constants


def _slot_offsets(types: list[Attribute], lowering: LLVMLowering) -> tuple[list[int], int]:
    """Byte offsets of the captured values in the data block (8-byte slots), and its size."""
    offsets: list[int] = []
    size = 0
    for type_ in types:
        offsets.append(size)
        width = 8 if isinstance(type_, llvm.LLVMPointerType) else lowering.size_in_bytes(type_)
        size += ((width or 8) + 7) // 8 * 8
    return offsets, max(size, 8)


def _slot(data: SSAValue, offset: int, type_: Attribute) -> list[Operation]:
    """The address of the slot at byte `offset`, as a pointer to `type_` (the typed second
    GEP is a no-op for LLVM, but llvmlite's IR builder checks pointee types; pointers travel as
    i64 for the same reason)."""
    byte = llvm.GEPOp(data, [offset], i8, inbounds=True)
    typed = llvm.GEPOp(byte.result, [0], type_, inbounds=True)
    return [byte, typed]


def _static_chunk(trip: SSAValue, ops: list[Operation]) -> tuple[SSAValue, SSAValue]:
    """`[first, last)` of this thread: `ceil(trip / nth)` iterations from `tid * chunk`."""
    ids: list[SSAValue] = []
    for callee in ("omp_get_thread_num", "omp_get_num_threads"):
        call = llvm.CallOp(callee, return_type=i32)
        widened = llvm.SExtOp(call.returned, i64)  # type: ignore[arg-type]
        ops += [call, widened]
        ids.append(widened.res)
    tid, nth = ids
    one = int_constant(1, i64)
    nth_less_one = llvm.SubOp(nth, one.result)
    rounded = llvm.AddOp(trip, nth_less_one.res)
    chunk = llvm.UDivOp(rounded.res, nth)
    start = llvm.MulOp(tid, chunk.res)
    first = call_intrinsic("llvm.umin.i64", [start.res, trip], i64)
    stop = llvm.AddOp(first.results[0], chunk.res)
    last = call_intrinsic("llvm.umin.i64", [stop.res, trip], i64)
    ops += [one, nth_less_one, rounded, chunk, start, first, stop, last]
    return first.results[0], last.results[0]


def _unpack(data: SSAValue, offsets: list[int], types: list[Attribute]
            ) -> tuple[list[Operation], list[SSAValue]]:
    """Loads of the values the call site stored in the data block."""
    ops: list[Operation] = []
    values: list[SSAValue] = []
    for offset, type_ in zip(offsets, types, strict=True):
        pointer_slot = isinstance(type_, llvm.LLVMPointerType)
        address = _slot(data, offset, i64 if pointer_slot else type_)
        load = llvm.LoadOp(address[-1].results[0], i64 if pointer_slot else type_, 8)
        ops += [*address, load]
        if pointer_slot:
            as_pointer = llvm.IntToPtrOp(load.dereferenced_value)
            ops.append(as_pointer)
            values.append(as_pointer.results[0])
        else:
            values.append(load.dereferenced_value)
    return ops, values


def _thread_function(
    name: str, offsets: list[int], types: list[Attribute], schedule: str, adaptive: bool = False
) -> llvm.FuncOp:
    """`@<name>(data)`: unpack the captured values (the trip count last), take this thread's
    iterations, run the body on them.

    `static`: one chunk per thread from `omp_get_thread_num`/`omp_get_num_threads`.
    `dynamic`: chunks of one iteration handed out by libgomp (`GOMP_loop_dynamic_start`/`next`)
    until none is left, so that a thread that the OS preempts does not hold the others up;
    `guided`: the same with shrinking chunks (`GOMP_loop_guided_start`/`next`).
    """
    pointer = llvm.LLVMPointerType()
    entry = Block(arg_types=[pointer])
    data = entry.args[0]
    data.name_hint = "data"
    ops, values = _unpack(data, offsets, types)
    *captured, trip = values
    blocks = [entry]
    if schedule == "static":
        first, last = _static_chunk(trip, ops)
        ops.append(llvm.CallOp(f"{name}_body", *captured, first, last))
        if adaptive:
            _record_master_done(ops)
        ops.append(llvm.ReturnOp())
        entry.add_ops(ops)
    else:
        one_slot = int_constant(1, i64)
        bounds = [llvm.AllocaOp(one_slot, i64, alignment=8) for _ in range(2)]
        zero, one = int_constant(0, i64), int_constant(1, i64)
        started = llvm.CallOp(f"GOMP_loop_{schedule}_start", zero.result, trip, one.result,
                              one.result, bounds[0].res, bounds[1].res,
                              return_type=i8)
        flag_zero = int_constant(0, i8)
        any_work = llvm.ICmpOp(started.returned, flag_zero, IntegerAttr(1, i64))  # ne
        body, done = Block(), Block()
        ops += [one_slot, *bounds, zero, one, started, flag_zero, any_work,
                llvm.CondBrOp(any_work, body, [], done, [])]
        entry.add_ops(ops)
        first = llvm.LoadOp(bounds[0].res, i64, 8)
        last = llvm.LoadOp(bounds[1].res, i64, 8)
        more = llvm.CallOp(f"GOMP_loop_{schedule}_next", bounds[0].res, bounds[1].res,
                           return_type=i8)
        again_zero = int_constant(0, i8)
        again = llvm.ICmpOp(more.returned, again_zero, IntegerAttr(1, i64))
        body.add_ops([first, last,
                      llvm.CallOp(f"{name}_body", *captured, first.dereferenced_value,
                                  last.dereferenced_value),
                      more, again_zero, again, llvm.CondBrOp(again, body, [], done, [])])
        finish: list[Operation] = []
        if adaptive:
            _record_master_done(finish)
        done.add_ops([*finish, llvm.CallOp("GOMP_loop_end_nowait"), llvm.ReturnOp()])
        blocks += [body, done]
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType([pointer], llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("internal"),
        body=Region(blocks),
    )


def _chunk_function(name: str, offsets: list[int], types: list[Attribute]) -> llvm.FuncOp:
    """`@<name>(data, first, last)` for dlc's pool: unpack the captured values and run the body
    on iterations `[first, last)` (the pool hands out the chunks)."""
    pointer = llvm.LLVMPointerType()
    entry = Block(arg_types=[pointer, i64, i64])
    data, first, last = entry.args
    data.name_hint, first.name_hint, last.name_hint = "data", "first", "last"
    ops, values = _unpack(data, offsets, types)
    *captured, _trip = values
    ops += [llvm.CallOp(f"{name}_body", *captured, first, last), llvm.ReturnOp()]
    entry.add_ops(ops)
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType([pointer, i64, i64], llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("internal"),
        body=Region([entry]),
    )


def _declare_runtime(loop: ForOp, lowering: LLVMLowering, rewriter: PatternRewriter) -> None:
    """Declare the runtime functions that `lowering`'s parallel loops call."""
    pointer, void = llvm.LLVMPointerType(), llvm.LLVMVoidType()
    declarations: dict[str, llvm.LLVMFunctionType] = {}
    schedule = lowering.parallel_schedule
    if lowering.parallel_runtime == "dlc":
        declarations[DLC_PARALLEL_FOR] = llvm.LLVMFunctionType([pointer, pointer, i64, i32], void)
    else:
        declarations[GOMP_PARALLEL] = llvm.LLVMFunctionType([pointer, pointer, i32, i32], void)
        if lowering.adaptive_threads:
            declarations["omp_get_thread_num"] = llvm.LLVMFunctionType([], i32)
            declarations["omp_get_wtime"] = llvm.LLVMFunctionType([], f64)
            _ensure_team_globals(loop, rewriter)
        if schedule == "static":
            for callee in ("omp_get_thread_num", "omp_get_num_threads"):
                declarations[callee] = llvm.LLVMFunctionType([], i32)
        else:
            declarations.update({
                f"GOMP_loop_{schedule}_start": llvm.LLVMFunctionType([i64] * 4 + [pointer] * 2, i8),
                f"GOMP_loop_{schedule}_next": llvm.LLVMFunctionType([pointer] * 2, i8),
                "GOMP_loop_end_nowait": llvm.LLVMFunctionType([], void),
            })
    for callee, function_type in declarations.items():
        ensure_declared(loop, callee, function_type, rewriter)


def outline_parallel_loop(loop: ForOp, lowering: LLVMLowering, rewriter: PatternRewriter) -> None:
    """Replace the parallel `loop` by a `GOMP_parallel` call running it on a thread team (see
    the module's docstring)."""
    function = _function_of(loop)
    module = _module_of(loop)
    name = _unique_symbol(module, f"{function.sym_name.data}_parallel")
    constants = set(_rematerialized(loop))
    captured = [value for value in captured_values(loop) if value.owner not in constants]
    for value in captured:
        if isinstance(value.type, MemRefType):
            strides_and_offset(value.type, loop)  # a static layout (rows of runtime count too)
    trip_ops: list[Operation] = []

    def emit(op: Operation) -> SSAValue:
        trip_ops.append(op)
        return op.results[0]

    trip = _trip_count(loop.lb, loop.ub, loop.step, emit)
    rewriter.insert(trip_ops, InsertPoint.before(loop))
    lowered_values = [lowered(value, lowering, rewriter) for value in [*captured, trip]]
    types = [value.type for value in lowered_values]
    offsets, size = _slot_offsets(types, lowering)
    memrefs = [value for value in captured if isinstance(value.type, MemRefType)]
    noalias = all(_is_unaliased_buffer(value) for value in memrefs)

    pointer = llvm.LLVMPointerType()
    runtime, schedule = lowering.parallel_runtime, lowering.parallel_schedule
    if runtime not in PARALLEL_RUNTIMES:
        raise lowering_error(
            loop, f"expected a parallel runtime among {', '.join(PARALLEL_RUNTIMES)}, "
            f"found '{runtime}'"
        )
    if schedule not in PARALLEL_SCHEDULES:
        raise lowering_error(
            loop, f"expected a parallel schedule among {', '.join(PARALLEL_SCHEDULES)}, "
            f"found '{schedule}'"
        )
    if runtime == "dlc" and (schedule != "static" or lowering.adaptive_threads):
        raise lowering_error(
            loop, "expected the default parallel_schedule (static) and no adaptive_threads "
            "with parallel_runtime=dlc (the pool hands out chunks itself), found "
            f"parallel_schedule={schedule} adaptive_threads={lowering.adaptive_threads}"
        )
    _declare_runtime(loop, lowering, rewriter)
    nbytes = int_constant(size, lowering.index_type)
    data = llvm.AllocaOp(nbytes, i8, alignment=16)
    data.res.name_hint = "data"
    rewriter.insert([nbytes, data], InsertPoint.at_start(entry_block_of(loop)))
    call_site: list[Operation] = []
    for offset, value in zip(offsets, lowered_values, strict=True):
        if isinstance(value.type, llvm.LLVMPointerType):
            as_integer = llvm.PtrToIntOp(value)
            call_site.append(as_integer)
            value = as_integer.results[0]
        address = _slot(data.res, offset, value.type)
        call_site += [*address, llvm.StoreOp(value, address[-1].results[0], 8)]
    thread_fn = llvm.AddressOfOp(name, pointer)
    count = thread_count(loop, lowering.num_threads, rewriter)
    if loop.trip_count() is None:  # a runtime trip count: a single iteration needs no team
        trip = lowered_values[-1]
        two = int_constant(2, trip.type)
        few = llvm.ICmpOp(trip, two.result,
                          IntegerAttr(llvm.ICmpPredicateFlag("slt").to_int(), 64))
        one = int_constant(1, i32)
        count += [two, few, one, llvm.SelectOp(few, one.result, count[-1].results[0])]
    threads = count[-1].results[0]
    flags = int_constant(0, i32)
    call_site += [thread_fn, *count, flags]
    if runtime == "dlc":
        call_site.append(llvm.CallOp(DLC_PARALLEL_FOR, thread_fn, data.res, lowered_values[-1],
                                     threads))
    elif lowering.adaptive_threads:
        call_site += _adaptive_call(thread_fn.result, data.res, threads, flags.result)
    else:
        call_site.append(llvm.CallOp(GOMP_PARALLEL, thread_fn, data.res, threads, flags))
    rewriter.insert(call_site, InsertPoint.before(loop))

    body_fn = _body_function(name, loop, captured, noalias)
    thread = (_chunk_function(name, offsets, types) if runtime == "dlc"
              else _thread_function(name, offsets, types, schedule, lowering.adaptive_threads))
    rewriter.insert([thread, body_fn], InsertPoint.at_end(module.body.block))
    rewriter.erase(loop)
