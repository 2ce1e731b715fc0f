"""A NumPy evaluator of tensor_expr-level functions: the oracle for passes below the graph level.

Counterpart: evaluating a TVM `te.compute` by hand. A `tensor_expr.compute` is evaluated over its
whole index space at once: each index variable is an `np.arange` laid along its own axis, every op
of the body is applied elementwise to NumPy arrays (NumPy broadcasting spreads them over the index
space), reads are NumPy fancy indexing, and the reduction axes are folded with the combiner. That
is the loop over the index space, written as array operations so that it stays fast for the small
shapes tests use; large index spaces are evaluated in chunks of the outermost axis.

Besides computes, a function may hold `arith.constant` tensors (weights), `func.call` to other
functions of the module and `func.return`, and the control flow of graph.if / graph.loop
(rewrites/control_flow.py): `scf.if`, `scf.while`, `tensor.extract`, `tensor.from_elements`,
`tensor.insert_slice` and scalar `arith` ops, and `tensor.dim` (the size of an argument's
dynamic dim: a compute's `sizes` take the extents of its dynamic dims from the environment, so
that one function runs on every size). A read out of bounds is an error (the IR must
clamp its indices), and so is an op the evaluator does not know.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from dlc.dialects.arith_numpy import ARITH_MATH_OPS, OpImpl, numpy_dtype, signed, unsigned
from dlc.dialects.contracts import UNSIGNED_ATTR
from dlc.dialects.graph.attrs import to_numpy_dtype
from dlc.dialects.graph.ops import elements_to_array
from dlc.dialects.tensor_expr.ops import ComputeOp, ReadOp, YieldOp
from dlc.dialects.tensor_expr.scan import ScanOp, ScanYieldOp
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable


class TensorExprInterpreterError(Exception):
    """The module cannot be evaluated: an unknown op, a bad input, a read out of bounds."""


class TensorExprUnsupportedError(TensorExprInterpreterError):
    """The IR holds an op (or an op's form) the evaluator has no implementation for: the IR is
    out of its reach, not wrong."""


MAX_CHUNK_ELEMENTS = 1 << 22
"""The largest index space (spatial × reduction points) evaluated as one array."""


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def run_module(
    module: ModuleOp, inputs: Sequence[np.ndarray], entry: str | None = None
) -> list[np.ndarray]:
    """Runs the function `entry` of `module` (default: its only public function) on `inputs`."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if entry is None:
        public = [f for f in functions if not _is_private(f)]
        if len(public) != 1:
            names = ", ".join(f"@{f.sym_name.data}" for f in public) or "none"
            raise TensorExprInterpreterError(
                f"expected one public function to run, found {len(public)} ({names})"
            )
        return run_function(public[0], inputs, module)
    for function in functions:
        if function.sym_name.data == entry:
            return run_function(function, inputs, module)
    raise TensorExprInterpreterError(f"expected a function @{entry} in the module, found none")


def run_function(
    function: func.FuncOp, inputs: Sequence[np.ndarray], module: ModuleOp | None = None
) -> list[np.ndarray]:
    """Runs `function` on `inputs` (one array per argument) and returns its results.

    `module` (default: the function's parent) resolves `func.call`. A result marked
    `dlc.unsigned` (signless here, unsigned in the graph) is returned as NumPy's `uint<N>`.
    """
    if module is None:
        parent = function.parent_op()
        module = parent if isinstance(parent, ModuleOp) else None
    args = function.body.block.args
    if len(inputs) != len(args):
        raise TensorExprInterpreterError(
            f"@{function.sym_name.data} expected {len(args)} inputs, found {len(inputs)}"
        )
    env: dict[SSAValue, np.ndarray] = {}
    for index, (arg, value) in enumerate(zip(args, inputs, strict=True)):
        env[arg] = _as_input(arg.type, value, f"input #{index} of @{function.sym_name.data}")
    for op in function.body.block.ops:
        if isinstance(op, func.ReturnOp):
            results = [env[v] for v in op.arguments]
            attrs = function.res_attrs.data if function.res_attrs is not None else ()
            return [
                unsigned(value) if i < len(attrs) and UNSIGNED_ATTR in attrs[i].data else value
                for i, value in enumerate(results)
            ]
        _run_function_level_op(op, env, module)
    raise TensorExprInterpreterError(f"@{function.sym_name.data} ended without func.return")


def evaluate_compute(compute: ComputeOp, tensors: Mapping[SSAValue, np.ndarray]) -> np.ndarray:
    """The tensor `compute` defines, given the arrays of the tensors its body reads (and the
    values of its `sizes`, for a result with dynamic dims)."""
    result_type = compute.result_type
    shape = tuple(size if isinstance(size, int) else int(tensors[size])
                  for size in compute.extents())
    extents = _reduction_extents(compute, tensors)
    dtype = to_numpy_dtype(result_type.get_element_type())
    points = math.prod(shape) * math.prod(extents)
    if not shape or points <= MAX_CHUNK_ELEMENTS or shape[0] <= 1:
        return _evaluate_chunk(compute, tensors, shape, 0, shape[0] if shape else 0, dtype)
    rows = max(1, MAX_CHUNK_ELEMENTS // (points // shape[0]))
    chunks = [
        _evaluate_chunk(compute, tensors, shape, start, min(start + rows, shape[0]), dtype)
        for start in range(0, shape[0], rows)
    ]
    return np.concatenate(chunks, axis=0)


# ---------------------------------------------------------------------------------------------
# Function level
# ---------------------------------------------------------------------------------------------


def _is_private(function: func.FuncOp) -> bool:
    return function.sym_visibility is not None and function.sym_visibility.data == "private"


def _as_input(type: Attribute, value: np.ndarray, what: str) -> np.ndarray:
    if not isinstance(type, TensorType):
        raise TensorExprInterpreterError(f"expected {what} to be a ranked tensor, found {type}")
    array = np.asarray(value)
    expected = tuple(type.get_shape())
    if len(array.shape) != len(expected) or any(
        size >= 0 and size != found for size, found in zip(expected, array.shape, strict=True)
    ):
        raise TensorExprInterpreterError(
            f"expected {what} of shape {expected}, found {array.shape}"
        )
    return array.astype(to_numpy_dtype(type.get_element_type()), copy=False)


def _run_function_level_op(
    op: Operation, env: dict[SSAValue, np.ndarray], module: ModuleOp | None
) -> None:
    if isinstance(op, ComputeOp):
        env[op.result] = evaluate_compute(op, env)
    elif isinstance(op, arith.ConstantOp):
        env[op.result] = _constant(op.value, op.result.type)
    elif isinstance(op, tensor.DimOp):
        env[op.result] = np.asarray(env[op.source].shape[int(env[op.index])], np.int64)
    elif isinstance(op, ScanOp):
        for result, value in zip(op.outs, _run_scan(op, env), strict=True):
            env[result] = value
    elif isinstance(op, func.CallOp):
        callee = None if module is None else SymbolTable.lookup_symbol(module, op.callee)
        if not isinstance(callee, func.FuncOp):
            raise TensorExprInterpreterError(
                f"'func.call' expected a function @{op.callee.string_value()} in the module, "
                "found none"
            )
        inputs = [env[v] for v in op.arguments]
        for result, value in zip(op.results, run_function(callee, inputs, module), strict=True):
            env[result] = value
    elif isinstance(op, scf.IfOp | scf.WhileOp | tensor.ExtractOp | tensor.FromElementsOp
                    | tensor.InsertSliceOp) or (op.name in _BODY_OPS and not op.regions):
        _run_control_flow_op(op, env, module)
    else:
        raise TensorExprUnsupportedError(
            f"'{op.name}' op is not evaluated at the tensor_expr level: expected "
            "tensor_expr.compute, tensor_expr.scan, arith.constant, tensor.dim, func.call, "
            "func.return or "
            "control flow (scf.if, scf.while, tensor.extract, tensor.from_elements, "
            "tensor.insert_slice)"
        )


def _run_scan(op: ScanOp, env: dict[SSAValue, np.ndarray]) -> list[np.ndarray]:
    """The final states and stacked step outputs of a `tensor_expr.scan`."""
    states = [env[v] for v in op.inits]
    sequences = [env[v] for v in op.sequences]
    num = len(states)
    stacked: list[np.ndarray] = []
    steps = range(op.steps - 1, -1, -1) if op.is_reverse else range(op.steps)
    for t in steps:
        inner = dict(env)
        inner.update(zip(op.state_args, states, strict=True))
        inner.update(zip(op.slice_args, (s[t] for s in sequences), strict=True))
        for inner_op in op.body.block.ops:
            if isinstance(inner_op, ScanYieldOp):
                break
            _run_function_level_op(inner_op, inner, None)
        values = [inner[v] for v in op.yielded]
        states = values[:num]
        if not stacked:
            stacked = [np.zeros((op.steps, *v.shape), v.dtype) for v in values[num:]]
        for out, value in zip(stacked, values[num:], strict=True):
            out[t] = value
    if not stacked:
        stacked = [np.zeros(_shape(r.type), to_numpy_dtype(_element(r.type)))
                   for r in op.outs[num:]]
    return [*states, *stacked]


def _shape(type: Attribute) -> tuple[int, ...]:
    assert isinstance(type, TensorType)
    return tuple(type.get_shape())


def _element(type: Attribute) -> Attribute:
    assert isinstance(type, TensorType)
    return type.get_element_type()


def _run_region(block: Block, args: Sequence[np.ndarray], env: dict[SSAValue, np.ndarray],
                module: ModuleOp | None) -> list[np.ndarray]:
    """Runs a region of `scf.if` / `scf.while`; returns what its terminator passes on (for
    `scf.condition`: the condition, then the forwarded values)."""
    local = dict(env)
    local.update(zip(block.args, args, strict=True))
    for op in block.ops:
        if isinstance(op, scf.YieldOp):
            return [local[v] for v in op.arguments]
        if isinstance(op, scf.ConditionOp):
            return [local[op.condition], *(local[v] for v in op.args)]
        _run_function_level_op(op, local, module)
    raise TensorExprInterpreterError(f"a region of '{block.parent_op()}' has no terminator")


def _run_control_flow_op(op: Operation, env: dict[SSAValue, np.ndarray],
                         module: ModuleOp | None) -> None:
    if isinstance(op, scf.IfOp):
        region = op.true_region if bool(env[op.cond]) else op.false_region
        results = _run_region(region.block, [], env, module)
    elif isinstance(op, scf.WhileOp):
        state = [env[v] for v in op.arguments]
        while True:
            cond, *forwarded = _run_region(op.before_region.block, state, env, module)
            if not bool(cond):
                results = forwarded
                break
            state = _run_region(op.after_region.block, forwarded, env, module)
    elif isinstance(op, tensor.ExtractOp):
        index = tuple(int(env[i]) for i in op.indices)
        results = [np.asarray(env[op.tensor][index])]
    elif isinstance(op, tensor.FromElementsOp):
        type_ = op.result.type
        assert isinstance(type_, TensorType)
        elements = [env[v] for v in op.elements]
        results = [np.array(elements, _dtype(type_.get_element_type()))
                   .reshape(type_.get_shape())]
    elif isinstance(op, tensor.InsertSliceOp):
        dest = env[op.dest].copy()
        dynamic = iter(op.offsets)
        offsets = [int(env[next(dynamic)]) if o < 0 else o
                   for o in op.static_offsets.get_values()]
        sizes = list(op.static_sizes.get_values())
        window = tuple(slice(o, o + n) for o, n in zip(offsets, sizes, strict=True))
        dest[window] = env[op.source].reshape(sizes)
        results = [dest]
    else:
        operands = [env[v] for v in op.operands]
        results = [np.asarray(_BODY_OPS[op.name](op, operands))
                   .astype(_dtype(op.results[0].type), copy=False)]
    for value, result in zip(op.results, results, strict=True):
        env[value] = result


def _constant(value: Attribute, type: Attribute) -> np.ndarray:
    if isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
        return elements_to_array(value, "arith.constant")
    if isinstance(value, IntegerAttr | FloatAttr):
        return np.asarray(value.value.data, dtype=_dtype(type))
    raise TensorExprUnsupportedError(f"'arith.constant' with {value} is not supported")


def _dtype(type: Attribute) -> np.dtype:
    try:
        return numpy_dtype(type)
    except ValueError as e:
        raise TensorExprInterpreterError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# Compute bodies
# ---------------------------------------------------------------------------------------------


def _reduction_extents(compute: ComputeOp, tensors: Mapping[SSAValue, np.ndarray]
                       ) -> list[int]:
    """The sizes of `compute`'s reduction axes (a runtime one from its `sizes` operand)."""
    return [size if isinstance(size, int) else int(tensors[size])
            for size in compute.reduction_sizes()]


def _evaluate_chunk(
    compute: ComputeOp,
    tensors: Mapping[SSAValue, np.ndarray],
    result_shape: Sequence[int],
    start: int,
    stop: int,
    dtype: np.dtype,
) -> np.ndarray:
    """The rows [start, stop) of the outermost axis (all of a rank-0 result)."""
    shape = list(result_shape)
    if shape:
        shape[0] = stop - start
    extents = _reduction_extents(compute, tensors)
    grid = [*shape, *extents]
    values: dict[SSAValue, np.ndarray] = {}
    for axis, arg in enumerate(compute.body.block.args):
        layout = [1] * len(grid)
        layout[axis] = grid[axis]
        offset = start if axis == 0 and shape else 0
        values[arg] = np.arange(offset, offset + grid[axis], dtype=np.int64).reshape(layout)
    with np.errstate(all="ignore"):
        for op in compute.body.block.ops:
            if isinstance(op, YieldOp):
                break
            _evaluate_body_op(op, compute, values, tensors)
        terms = np.broadcast_to(values[compute.yielded], grid).astype(dtype, copy=False)
        if not extents:
            return np.array(terms, dtype=dtype)
        assert compute.combiner is not None and compute.init is not None, "verified"
        return _combine(compute.combiner.data, compute.init, terms, len(shape), dtype)


def _combine(
    combiner: str, init: Attribute, terms: np.ndarray, rank: int, dtype: np.dtype
) -> np.ndarray:
    """Folds the reduction axes (those after `rank`) of `terms` into `init`.

    Integer max and min are signed (arith.maxsi / minsi), also on i1, where true is -1; sum
    and prod on i1 wrap (xor, and), as addi and muli do; maxui and minui read the bits as
    unsigned.
    """
    axes = tuple(range(rank, terms.ndim))
    assert isinstance(init, IntegerAttr | FloatAttr), "verified"
    if combiner in ("maxui", "minui"):
        unsigned_dtype = np.dtype(f"u{dtype.itemsize}") if dtype != np.bool_ else dtype
        start_bits = np.asarray(init.value.data).astype(dtype).astype(unsigned_dtype)
        folded = _combine(
            combiner.removesuffix("ui"), IntegerAttr(int(start_bits), 64), unsigned(terms),
            rank, unsigned_dtype,
        )
        return folded.astype(dtype)
    if dtype == np.bool_:
        as_signed = signed(terms).astype(np.int64)
        start = -int(bool(init.value.data))
        folded = _combine(combiner, IntegerAttr(start, 64), as_signed, rank, np.dtype(np.int64))
        return (folded % 2 != 0) if combiner in ("sum", "prod") else folded != 0
    start = np.asarray(init.value.data, dtype=dtype)
    if combiner == "sum":
        result = start + np.sum(terms, axis=axes, dtype=dtype)
    elif combiner == "prod":
        result = start * np.prod(terms, axis=axes, dtype=dtype)
    elif combiner == "max":
        result = np.maximum(start, np.max(terms, axis=axes))
    else:
        result = np.minimum(start, np.min(terms, axis=axes))
    return np.asarray(result, dtype=dtype)


def _evaluate_body_op(
    op: Operation,
    compute: ComputeOp,
    values: dict[SSAValue, np.ndarray],
    tensors: Mapping[SSAValue, np.ndarray],
) -> None:
    if isinstance(op, ReadOp):
        values[op.result] = _read(op, compute, values, tensors)
        return
    if isinstance(op, arith.ConstantOp):
        values[op.result] = _constant(op.value, op.result.type)
        return
    impl = _BODY_OPS.get(op.name)
    if impl is None:
        raise TensorExprUnsupportedError(
            f"'{op.name}' op in the body of compute \"{compute.block_name.data}\" is not "
            "supported by the tensor_expr interpreter"
        )
    operands = [values[v] if v in values else np.asarray(tensors[v]) for v in op.operands]
    result = impl(op, operands)  # a value from outside the body: a runtime size
    values[op.results[0]] = np.asarray(result).astype(_dtype(op.results[0].type), copy=False)


def _read(
    op: ReadOp,
    compute: ComputeOp,
    values: Mapping[SSAValue, np.ndarray],
    tensors: Mapping[SSAValue, np.ndarray],
) -> np.ndarray:
    array = values.get(op.tensor)
    if array is None:
        array = tensors.get(op.tensor)
    if array is None:
        raise TensorExprInterpreterError(
            f"'tensor_expr.read' in compute \"{compute.block_name.data}\" reads a tensor that "
            "has no value"
        )
    indices = [values[v] for v in op.indices]
    for axis, (index, dim) in enumerate(zip(indices, array.shape, strict=True)):
        if index.size == 0:  # an empty index space reads nothing
            continue
        low, high = int(index.min()), int(index.max())
        if low < 0 or high >= dim:
            raise TensorExprInterpreterError(
                f"'tensor_expr.read' in compute \"{compute.block_name.data}\" reads "
                f"{op.tensor.type} out of bounds: index #{axis} ranges over [{low}, {high}], "
                f"expected [0, {dim - 1}]"
            )
    return np.asarray(array[tuple(indices)])


_BODY_OPS: dict[str, OpImpl] = ARITH_MATH_OPS
"""The ops a compute body may hold besides reads and constants, by name."""
