"""A NumPy interpreter for graph-level IR: the oracle every pass and backend is checked against.

It runs `func.func` bodies over `graph` ops (plus `func.return`, `func.call`, `graph.fused` and
tensor-typed `arith.constant`), one NumPy implementation per op, registered with `@implements`.
Each op computes in its operands' dtype (float32 stays float32), except that f16 and bf16
operands (NumPy float16, `ml_dtypes.bfloat16`) are widened to float32 and each result of such an
op is rounded once, to nearest even, to its declared type: the semantics of a low-precision graph
op, which the compiled code keeps (accumulation in f32, one rounding per op). Every result is
checked against the op's declared result type, so a wrong implementation cannot go unnoticed.
"""

from __future__ import annotations

import math
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np
from dlc.dialects.arith_numpy import erf
from dlc.dialects.dim_symbols import argument_symbols, bind_symbols, fits_shape
from dlc.dialects.graph.attrs import BFLOAT16, to_numpy_dtype
from dlc.dialects.graph.ops import (
    AbsOp,
    AddOp,
    AvgPool2DOp,
    BatchNormOp,
    CeilOp,
    ClipOp,
    ConcatOp,
    ConstantOp,
    Conv2DOp,
    Conv2DWinogradOp,
    DivOp,
    ErfOp,
    ExpOp,
    FlattenOp,
    FloorOp,
    FusedOp,
    GlobalAvgPool2DOp,
    LogOp,
    MatmulOp,
    MaxOp,
    MaxPool2DOp,
    MinOp,
    ModOp,
    MulOp,
    NegOp,
    PowOp,
    ReciprocalOp,
    ReduceOp,
    ReluOp,
    ReshapeOp,
    RoundOp,
    SigmoidOp,
    SoftmaxOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TransposeOp,
    YieldOp,
    dynamic_reshape_segments,
    elements_to_array,
    window_output_size,
)
from dlc.dialects.graph.ops_control import IfOp, LoopOp
from dlc.dialects.graph.winograd import conv_rows
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException


class InterpreterError(DiagnosticException):
    """The interpreter met IR it cannot run, or inputs that do not fit the function."""


Implementation = Callable[[Any, list[np.ndarray]], np.ndarray | Sequence[np.ndarray]]
"""An op's NumPy implementation: (op, operand arrays) → its result array(s)."""

IMPLEMENTATIONS: dict[type[Operation], Implementation] = {}
"""The NumPy implementation of each op class, filled by `@implements`."""

_ImplT = TypeVar("_ImplT", bound=Implementation)


def implements(*op_types: type[Operation]) -> Callable[[_ImplT], _ImplT]:
    """Register the decorated function as the NumPy implementation of `op_types`."""

    def register(fn: _ImplT) -> _ImplT:
        for op_type in op_types:
            if op_type in IMPLEMENTATIONS:
                raise ValueError(f"'{op_type.name}' already has an implementation")
            IMPLEMENTATIONS[op_type] = fn
        return fn

    return register


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def run_module(
    module: ModuleOp, inputs: Sequence[np.ndarray], entry: str | None = None
) -> list[np.ndarray]:
    """Run the function `entry` of `module` (default: its only public function) on `inputs`.

    Results with a data-dependent valid extent come back trimmed to it, without their counts
    (`dialects.graph.extents`), as the compiled executables return them."""
    from dlc.dialects.graph.extents import trim_results

    funcs = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    if entry is None:
        public = [f for f in funcs if _is_public(f) and f.body.blocks]
        if len(public) != 1:
            names = ", ".join(f"@{f.sym_name.data}" for f in public) or "none"
            raise InterpreterError(
                f"graph interpreter: expected one public function to run, found {names}; "
                "name the entry"
            )
        return trim_results(public[0], run_function(public[0], inputs))
    for candidate in funcs:
        if candidate.sym_name.data == entry:
            return trim_results(candidate, run_function(candidate, inputs))
    raise InterpreterError(f"graph interpreter: no function @{entry} in the module")


def run_function(function: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `function` on `inputs` (one array per argument, of the argument's shape and dtype).

    `func.call` looks callees up in the enclosing module. Returns one array per result.
    """
    name = f"@{function.sym_name.data}"
    if not function.body.blocks:
        raise InterpreterError(f"graph interpreter: {name} is a declaration without a body")
    arg_types = function.function_type.inputs.data
    if len(inputs) != len(arg_types):
        raise InterpreterError(
            f"graph interpreter: {name} expects {len(arg_types)} inputs, found {len(inputs)}"
        )
    arrays = [
        _check_input(name, index, np.asarray(value), type)
        for index, (value, type) in enumerate(zip(inputs, arg_types, strict=True))
    ]
    try:
        bind_symbols(argument_symbols(function), [a.shape for a in arrays])
    except ValueError as e:
        raise InterpreterError(f"graph interpreter: {name} {e}") from None
    return _run_block(function.body.blocks[0], arrays, func.ReturnOp)


def _is_public(function: func.FuncOp) -> bool:
    visibility = function.sym_visibility
    return visibility is None or visibility.data == "public"


def _check_input(name: str, index: int, value: np.ndarray, type: Attribute) -> np.ndarray:
    if not isinstance(type, TensorType):
        raise InterpreterError(
            f"graph interpreter: {name} argument #{index} has type {type}; only tensor "
            "arguments can be run"
        )
    dtype = to_numpy_dtype(type.get_element_type())
    if not fits_shape(value.shape, type.get_shape()) or value.dtype != dtype:
        raise InterpreterError(
            f"graph interpreter: {name} expected input #{index} of type {type} ({dtype}, shape "
            f"{type.get_shape()}), found {value.dtype} array of shape {value.shape}"
        )
    return value


def _run_block(
    block: Block, args: Sequence[np.ndarray], terminator: type[Operation],
    outer: Mapping[SSAValue, np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Run `block` with `args` bound to its arguments; return the terminator's operands.

    `outer` holds the values of the enclosing blocks that a region's ops may use (captures)."""
    env: ChainMap[SSAValue, np.ndarray] = ChainMap(
        dict(zip(block.args, args, strict=True)), *(() if outer is None else (outer,))
    )
    for op in block.ops:
        operands = [env[v] for v in op.operands]
        if isinstance(op, terminator):
            return operands
        if isinstance(op, IfOp | LoopOp):
            results = _run_control_flow(op, operands, env)
        else:
            results = _run_op(op, operands)
        if len(results) != len(op.results):
            raise InterpreterError(
                f"graph interpreter: '{op.name}' produced {len(results)} results, "
                f"expected {len(op.results)}"
            )
        for value, result in zip(op.results, results, strict=True):
            env[value] = _check_result(op, value.type, result)
    raise InterpreterError(
        f"graph interpreter: block ended without '{terminator.name}' "
        f"(in '{block.parent_op().name if block.parent_op() else 'a detached block'}')"
    )


def _run_control_flow(
    op: IfOp | LoopOp, operands: list[np.ndarray], env: Mapping[SSAValue, np.ndarray]
) -> list[np.ndarray]:
    """`graph.if` runs one region, `graph.loop` its body per iteration (see ops_control.py)."""
    if isinstance(op, IfOp):
        region = op.then_region if bool(operands[0].reshape(-1)[0]) else op.else_region
        return _run_block(region.block, [], YieldOp, env)
    max_trip = int(operands[0].reshape(-1)[0])
    cond = bool(operands[1].reshape(-1)[0])
    carried = operands[2:]
    scans = [np.zeros(v.type.get_shape(), to_numpy_dtype(v.type.get_element_type()))
             for v in op.scan_outputs]  # pyright: ignore[reportAttributeAccessIssue]
    length = op.scan_length()
    if length is not None:
        max_trip = min(max_trip, length)
    iteration_type, cond_type = (arg.type for arg in op.body.block.args[:2])
    iteration = 0
    while iteration < max_trip and cond:
        args = [np.full(iteration_type.get_shape(), iteration, np.int64),  # type: ignore
                np.full(cond_type.get_shape(), cond, np.bool_), *carried]  # type: ignore
        yielded = _run_block(op.body.block, args, YieldOp, env)
        cond = bool(yielded[0].reshape(-1)[0])
        carried = yielded[1 : 1 + op.num_carried]
        for scan, element in zip(scans, yielded[1 + op.num_carried :], strict=True):
            scan[iteration] = element
        iteration += 1
    return [*carried, *scans]


def _run_op(op: Operation, operands: list[np.ndarray]) -> list[np.ndarray]:
    if isinstance(op, FusedOp):
        return _run_block(op.body.block, operands, YieldOp)
    if isinstance(op, func.CallOp):
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(callee, func.FuncOp):
            raise InterpreterError(
                f"graph interpreter: 'func.call' to {op.callee} which is not a function in "
                "the enclosing module"
            )
        return run_function(callee, operands)
    if isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            raise InterpreterError(
                f"graph interpreter: 'arith.constant' of tensor type needs a dense value, "
                f"found {value}"
            )
        return [elements_to_array(value, op.name)]
    implementation = IMPLEMENTATIONS.get(type(op))
    if implementation is None:
        raise InterpreterError(f"graph interpreter: no NumPy implementation for '{op.name}'")
    low_precision = any(a.dtype in _LOW_PRECISION for a in operands)
    if low_precision:
        operands = [a.astype(np.float32) if a.dtype in _LOW_PRECISION else a for a in operands]
    with np.errstate(all="ignore"):  # IEEE semantics: overflow, 0/0, log(0) give inf or NaN
        result = implementation(op, operands)
    results = [np.asarray(result)] if isinstance(result, np.ndarray | np.generic) else [
        np.asarray(r) for r in result
    ]
    if low_precision:
        results = [
            _round_to_declared(value, r.type)
            for value, r in zip(results, op.results, strict=False)
        ]
    return results


def run_op(op: Operation, operands: Sequence[np.ndarray]) -> list[np.ndarray]:
    """`op`'s results on `operands` as `run_module` computes them (f16 and bf16 in f32, each
    result rounded once), without checking them against `op`'s declared types: for operands
    of other shapes than the op's, where its semantics allow (elementwise ops on a vector of
    sample values)."""
    return _run_op(op, list(operands))


_LOW_PRECISION = (np.dtype(np.float16), BFLOAT16)
"""The dtypes of f16 and bf16: ops on them compute in float32 and round each result once."""


def _round_to_declared(value: np.ndarray, type: Attribute) -> np.ndarray:
    """A float32 `value` rounded (to nearest even) to the f16/bf16 of its declared type."""
    if not isinstance(type, TensorType) or value.dtype != np.float32:
        return value
    dtype = to_numpy_dtype(type.get_element_type())
    return value.astype(dtype) if dtype in _LOW_PRECISION else value


def _check_result(op: Operation, type: Attribute, value: np.ndarray) -> np.ndarray:
    if not isinstance(type, TensorType):
        return value
    dtype = to_numpy_dtype(type.get_element_type())
    if not fits_shape(value.shape, type.get_shape()) or value.dtype != dtype:
        raise InterpreterError(
            f"graph interpreter: the implementation of '{op.name}' returned a {value.dtype} "
            f"array of shape {value.shape}, expected {type}"
        )
    return value


# ---------------------------------------------------------------------------------------------
# Constants, elementwise ops
# ---------------------------------------------------------------------------------------------


@implements(ConstantOp)
def _constant(op: ConstantOp, args: list[np.ndarray]) -> np.ndarray:
    return op.to_array()


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Implementation:
    def run(op: Operation, args: list[np.ndarray]) -> np.ndarray:
        lhs, rhs = args
        return np.asarray(fn(lhs, rhs), dtype=lhs.dtype)

    return run


def _divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if np.issubdtype(lhs.dtype, np.integer):
        # ONNX Div on integers truncates toward zero; lhs - fmod is an exact multiple of rhs.
        safe = np.where(rhs == 0, 1, rhs)
        return (lhs - np.fmod(lhs, safe)) // safe
    return np.divide(lhs, rhs)


implements(AddOp)(_binary(np.add))
implements(SubOp)(_binary(np.subtract))
implements(MulOp)(_binary(np.multiply))
implements(DivOp)(_binary(_divide))
implements(MaxOp)(_binary(np.maximum))
implements(MinOp)(_binary(np.minimum))
implements(PowOp)(_binary(np.power))


@implements(ModOp)
def _mod(op: ModOp, args: list[np.ndarray]) -> np.ndarray:
    lhs, rhs = args
    with np.errstate(divide="ignore", invalid="ignore"):  # NumPy: 0 (ints), NaN (floats)
        result = np.fmod(lhs, rhs) if op.is_fmod() else np.mod(lhs, rhs)
    return np.asarray(result, dtype=lhs.dtype)


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Implementation:
    def run(op: Operation, args: list[np.ndarray]) -> np.ndarray:
        (x,) = args
        return np.asarray(fn(x), dtype=x.dtype)

    return run


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a non-positive number only: no overflow for large |x|.
    e = np.exp(-np.abs(x))
    one = x.dtype.type(1)
    return np.where(x >= 0, one / (one + e), e / (one + e))


def _erf(x: np.ndarray) -> np.ndarray:
    return erf(x).astype(x.dtype)


implements(ReluOp)(_unary(_relu))
implements(SigmoidOp)(_unary(_sigmoid))
implements(TanhOp)(_unary(np.tanh))
implements(ExpOp)(_unary(np.exp))
implements(ErfOp)(_unary(_erf))
implements(SqrtOp)(_unary(np.sqrt))
implements(NegOp)(_unary(np.negative))
implements(AbsOp)(_unary(np.abs))
implements(LogOp)(_unary(np.log))
implements(ReciprocalOp)(_unary(np.reciprocal))
implements(CeilOp)(_unary(np.ceil))
implements(FloorOp)(_unary(np.floor))
implements(RoundOp)(_unary(np.rint))  # halves to even, as ONNX Round


@implements(ClipOp)
def _clip(op: ClipOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    lo, hi = x.dtype.type(op.min_value()), x.dtype.type(op.max_value())
    return np.minimum(np.maximum(x, lo), hi)


# ---------------------------------------------------------------------------------------------
# Out-fusable ops
# ---------------------------------------------------------------------------------------------


@implements(MatmulOp)
def _matmul(op: MatmulOp, args: list[np.ndarray]) -> np.ndarray:
    lhs, rhs = args
    return np.asarray(np.matmul(lhs, rhs), dtype=lhs.dtype)


def _to_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return np.transpose(x, [layout.index(axis) for axis in "NCHW"])


def _from_nchw(x: np.ndarray, layout: str) -> np.ndarray:
    return np.transpose(x, ["NCHW".index(axis) for axis in layout])


def _nchw_shape(op: Conv2DOp | MaxPool2DOp | AvgPool2DOp, x: np.ndarray,
                kernel: Sequence[int]) -> tuple[int, ...]:
    """The op's result shape in NCHW order, its runtime dims (`?`) sized from the NCHW input
    `x` (`window_output_size`)."""
    shape = cast(TensorType, op.result.type).get_shape()
    nchw = [shape[op.layout_value().index(axis)] for axis in "NCHW"]
    padding, strides = op.padding_tuple(), op.strides_tuple()
    dilation = op.dilation_tuple() if isinstance(op, Conv2DOp | MaxPool2DOp) else (1, 1)
    ceil_mode = op.ceil_mode_value() if isinstance(op, MaxPool2DOp | AvgPool2DOp) else False
    for axis in range(2):
        if nchw[2 + axis] < 0:
            nchw[2 + axis] = window_output_size(
                x.shape[2 + axis], kernel[axis], strides[axis], padding[axis],
                padding[axis + 2], dilation[axis], ceil_mode)
    if nchw[0] < 0:
        nchw[0] = x.shape[0]
    return tuple(nchw)


def _windows(
    x: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilation: Sequence[int],
    out_size: Sequence[int],
) -> np.ndarray:
    """N×C×OH×OW×KH×KW view of the sliding windows of an N×C×H×W array (already padded)."""
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True)]
    view = np.lib.stride_tricks.sliding_window_view(x, extent, axis=(2, 3))
    view = view[:, :, :: strides[0], :: strides[1], :: dilation[0], :: dilation[1]]
    return view[:, :, : out_size[0], : out_size[1]]


def _pad_hw(
    x: np.ndarray, padding: Sequence[int], value: float, extra: Sequence[int] = (0, 0)
) -> np.ndarray:
    """Pad the H and W axes of an N×C×H×W array by [top, left, bottom + extra0, right + extra1]."""
    top, left, bottom, right = padding
    widths = ((0, 0), (0, 0), (top, bottom + extra[0]), (left, right + extra[1]))
    return np.pad(x, widths, constant_values=value)


@implements(Conv2DOp)
def _conv2d(op: Conv2DOp, args: list[np.ndarray]) -> np.ndarray:
    x = _to_nchw(args[0], op.layout_value())
    w = np.transpose(args[1], [op.kernel_layout_value().index(axis) for axis in "OIHW"])
    groups = op.groups_value()
    kernel = w.shape[2:]
    out = _nchw_shape(op, x, kernel)
    windows = _windows(
        _pad_hw(x, op.padding_tuple(), 0), kernel, op.strides_tuple(), op.dilation_tuple(),
        out[2:],
    )
    n, c, oh, ow = windows.shape[:4]
    o = w.shape[0]
    grouped = windows.reshape(n, groups, c // groups, oh, ow, *kernel)
    w_grouped = w.reshape(groups, o // groups, c // groups, *kernel)
    y = np.einsum("ngchwyx,gocyx->ngohw", grouped, w_grouped, optimize=True)
    y = y.reshape(n, o, oh, ow)
    if len(args) == 3:
        y = y + args[2].reshape(1, o, 1, 1)
    return _from_nchw(np.asarray(y, dtype=x.dtype), op.layout_value())


@implements(Conv2DWinogradOp)
def _conv2d_winograd(op: Conv2DWinogradOp, args: list[np.ndarray]) -> np.ndarray:
    y = conv_rows(args[0], args[1], op.padding_tuple(), op.tile_value())
    if len(args) == 3:
        y = y + args[2].reshape(1, -1, 1, 1)
    return np.asarray(y, dtype=args[0].dtype)


def _pool_geometry(op: MaxPool2DOp | AvgPool2DOp, x: np.ndarray) -> tuple[list[int], list[int]]:
    """(output H, W; extra end padding so that ceil-mode windows stay inside the array)."""
    kernel, strides = op.kernel_tuple(), op.strides_tuple()
    out = list(_nchw_shape(op, x, kernel)[2:])
    dilation = op.dilation_tuple() if isinstance(op, MaxPool2DOp) else (1, 1)
    padding = op.padding_tuple()
    extra = []
    for axis in range(2):
        needed = (out[axis] - 1) * strides[axis] + dilation[axis] * (kernel[axis] - 1) + 1
        padded = x.shape[2 + axis] + padding[axis] + padding[axis + 2]
        extra.append(max(0, needed - padded))
    return out, extra


@implements(MaxPool2DOp)
def _max_pool2d(op: MaxPool2DOp, args: list[np.ndarray]) -> np.ndarray:
    x = _to_nchw(args[0], op.layout_value())
    out, extra = _pool_geometry(op, x)
    # Padding never wins: -inf, or the integer type's minimum (int8/uint8 quantized pools).
    lowest = np.iinfo(x.dtype).min if np.issubdtype(x.dtype, np.integer) else -np.inf
    padded = _pad_hw(x, op.padding_tuple(), lowest, extra)
    windows = _windows(padded, op.kernel_tuple(), op.strides_tuple(), op.dilation_tuple(), out)
    return _from_nchw(windows.max(axis=(4, 5)), op.layout_value())


@implements(AvgPool2DOp)
def _avg_pool2d(op: AvgPool2DOp, args: list[np.ndarray]) -> np.ndarray:
    x = _to_nchw(args[0], op.layout_value())
    out, extra = _pool_geometry(op, x)
    kernel, strides, padding = op.kernel_tuple(), op.strides_tuple(), op.padding_tuple()
    sums = _windows(_pad_hw(x, padding, 0, extra), kernel, strides, (1, 1), out).sum(
        axis=(4, 5), dtype=x.dtype
    )
    # The divisor counts the input elements of each window, plus its explicit padding with
    # `count_include_pad`; the ceil-mode overhang never counts.
    h, w = x.shape[2:]
    if op.count_include_pad_value():
        counted = np.ones((1, 1, h + padding[0] + padding[2], w + padding[1] + padding[3]))
        counted = _pad_hw(counted, (0, 0, 0, 0), 0, extra)
    else:
        counted = _pad_hw(np.ones((1, 1, h, w)), padding, 0, extra)
    counts = _windows(counted, kernel, strides, (1, 1), out).sum(axis=(4, 5))
    return _from_nchw((sums / counts.astype(x.dtype)).astype(x.dtype), op.layout_value())


@implements(GlobalAvgPool2DOp)
def _global_avg_pool2d(op: GlobalAvgPool2DOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    layout = op.layout_value()
    axes = (layout.index("H"), layout.index("W"))
    return np.mean(x, axis=axes, keepdims=True, dtype=x.dtype)


# ---------------------------------------------------------------------------------------------
# Normalization, reductions
# ---------------------------------------------------------------------------------------------


@implements(BatchNormOp)
def _batch_norm(op: BatchNormOp, args: list[np.ndarray]) -> np.ndarray:
    x, scale, bias, mean, var = args
    shape = (1, -1) + (1,) * (x.ndim - 2)
    epsilon = x.dtype.type(op.epsilon_value())
    inv_std = scale / np.sqrt(var + epsilon)
    return (x - mean.reshape(shape)) * inv_std.reshape(shape) + bias.reshape(shape)


@implements(SoftmaxOp)
def _softmax(op: SoftmaxOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    axis = op.normalized_axis()
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True, dtype=x.dtype)


@implements(ReduceOp)
def _reduce(op: ReduceOp, args: list[np.ndarray]) -> np.ndarray:
    (x,) = args
    axes, keepdims, kind = op.normalized_axes(), op.keepdims_value(), op.kind_value()
    if kind == "mean" and not np.issubdtype(x.dtype, np.floating):
        # Integer mean: exact sum, then truncation toward zero.
        total = np.sum(x, axis=axes, keepdims=keepdims, dtype=np.int64)
        count = math.prod(x.shape[a] for a in axes)
        return np.asarray(np.trunc(total / count), dtype=x.dtype)
    if kind in ("sum", "prod", "mean"):
        fn = {"sum": np.sum, "prod": np.prod, "mean": np.mean}[kind]
        return np.asarray(fn(x, axis=axes, keepdims=keepdims, dtype=x.dtype), dtype=x.dtype)
    fn = np.max if kind == "max" else np.min
    return np.asarray(fn(x, axis=axes, keepdims=keepdims), dtype=x.dtype)


# ---------------------------------------------------------------------------------------------
# Injective ops
# ---------------------------------------------------------------------------------------------


@implements(ReshapeOp, FlattenOp)
def _reshape(op: ReshapeOp | FlattenOp, args: list[np.ndarray]) -> np.ndarray:
    shape = list(cast(TensorType, op.result.type).get_shape())
    declared = cast(TensorType, op.x.type).get_shape()
    if sum(1 for dim in declared if dim < 0) > 1:
        # each `?` keeps one of the operand's, or merges consecutive ones, in order
        segments = op.segments() if isinstance(op, ReshapeOp) else dynamic_reshape_segments(
            declared, shape)
        for in_axes, out_axes in segments or ():
            if in_axes and out_axes and shape[out_axes[0]] < 0:
                shape[out_axes[0]] = math.prod(args[0].shape[a] for a in in_axes)
    return args[0].reshape([-1 if dim < 0 else dim for dim in shape])  # `?`: the batch


@implements(TransposeOp)
def _transpose(op: TransposeOp, args: list[np.ndarray]) -> np.ndarray:
    return np.transpose(args[0], op.perm_tuple())


@implements(ConcatOp)
def _concat(op: ConcatOp, args: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(args, axis=op.normalized_axis())
