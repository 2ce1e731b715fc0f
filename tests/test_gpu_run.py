"""GPU code run on the two GPU runtimes against the graph interpreter: graph models compiled with
`dlc.compile(..., target="opencl")` (the gpu-opencl pipeline: default GPU schedules, kernels,
OpenCL C, the host plan on pyopencl; PoCL on the CPU here) and `target="cuda"` (the gpu-ptx
pipeline: the same schedules, PTX loaded through the CUDA driver). Each target's tests are
skipped, with the reason, where its runtime is missing: CUDA needs an NVIDIA GPU and cuda-python.

PoCL builds each OpenCL program in about a second (cached afterwards in ~/.cache/pocl), so the
quick tests put many entry functions into one module and build it once per target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import dlc.dialects.graph as g
import numpy as np
import pytest
from dlc.dialects.graph.interpreter import run_module
from dlc.runtime.cuda import cuda_unavailable_reason
from dlc.runtime.gpu_host import GpuExecutable
from dlc.runtime.opencl import unavailable_reason as opencl_unavailable_reason
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue

import dlc

RNG = np.random.default_rng(20261129)
RTOL = ATOL = 2e-4

Build = Callable[..., Sequence[Operation]]




def _target(name: str, reason: str | None) -> object:
    return pytest.param(name, marks=pytest.mark.skipif(reason is not None, reason=f"{reason}"))


OPENCL = _target("opencl", opencl_unavailable_reason())
TARGETS = [OPENCL, _target("cuda", cuda_unavailable_reason())]
"""The GPU targets the numeric tests run on, each skipped where its runtime is missing."""


def function(name: str, shapes: Sequence[Sequence[int]], build: Build) -> func.FuncOp:
    """`func.func @name` over f32 tensors of `shapes`, returning the last op's result."""
    block = Block(arg_types=[TensorType(f32, list(shape)) for shape in shapes])
    ops = list(build(*block.args))
    block.add_ops([*ops, func.ReturnOp(ops[-1].results[0])])
    return func.FuncOp.from_region(
        name, [a.type for a in block.args], [ops[-1].results[0].type], Region(block)
    )


def constant(shape: Sequence[int], value: float) -> g.ConstantOp:
    return g.ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(f32, list(shape)), [value]))


def inputs_for(function_op: func.FuncOp, positive: bool) -> list[np.ndarray]:
    arrays = []
    for type_ in function_op.function_type.inputs.data:
        assert isinstance(type_, TensorType)
        array = RNG.standard_normal(type_.get_shape()).astype(np.float32)
        arrays.append(np.abs(array) + 0.5 if positive else array)
    return arrays


def layer_norm(x: SSAValue, gamma: SSAValue, beta: SSAValue) -> list[Operation]:
    """LayerNorm over the last axis from graph ops: (x - mean) / sqrt(var + eps) * g + b."""
    mean = g.ReduceOp(x, "mean", [-1], True)
    centered = g.SubOp(x, mean)
    squared = g.MulOp(centered, centered)
    variance = g.ReduceOp(squared, "mean", [-1], True)
    eps = constant([1], 1e-5)
    shifted = g.AddOp(variance, eps)
    root = g.SqrtOp(shifted)
    normalized = g.DivOp(centered, root)
    scaled = g.MulOp(normalized, gamma)
    return [mean, centered, squared, variance, eps, shifted, root, normalized, scaled,
            g.AddOp(scaled, beta)]


# ----------------------------------------------------------------------------------------------
# The base set of graph ops, one entry function each, built into one OpenCL program
# ----------------------------------------------------------------------------------------------

POSITIVE = {"log_sqrt_pow", "batch_norm"}
"""Entries whose inputs must be positive."""


def _elementwise(a: SSAValue, b: SSAValue) -> list[Operation]:
    total = g.AddOp(a, b)
    product = g.MulOp(total, b)
    difference = g.SubOp(product, a)
    magnitude = g.AbsOp(b)
    one = constant([1], 1.0)
    denominator = g.AddOp(magnitude, one)
    quotient = g.DivOp(difference, denominator)
    return [total, product, difference, magnitude, one, denominator, quotient, g.TanhOp(quotient)]


def _activations(x: SSAValue) -> list[Operation]:
    sigmoid = g.SigmoidOp(x)
    exp = g.ExpOp(sigmoid)
    erf = g.ErfOp(exp)
    return [sigmoid, exp, erf, g.NegOp(erf), g.ReciprocalOp(exp)]


def _log_sqrt_pow(x: SSAValue, y: SSAValue) -> list[Operation]:
    log = g.LogOp(x)
    root = g.SqrtOp(x)
    return [log, root, g.PowOp(root, y)]


def _clip_max_min(a: SSAValue, b: SSAValue) -> list[Operation]:
    larger = g.MaxOp(a, b)
    smaller = g.MinOp(larger, a)
    return [larger, smaller, g.ClipOp(smaller, -0.5, 0.5)]


def _base_ops() -> list[func.FuncOp]:
    return [
        function("conv2d_bias_relu", [(1, 3, 10, 10), (8, 3, 3, 3), (8,)],
                 lambda x, w, b: (lambda c: [c, g.ReluOp(c)])(
                     g.Conv2DOp(x, w, b, padding=(1, 1, 1, 1)))),
        function("conv2d_strided_gemm", [(2, 16, 9, 9), (32, 16, 3, 3)],
                 lambda x, w: [g.Conv2DOp(x, w, strides=(2, 2))]),
        # Large enough that 2x4 thread tiles (vector reads of B) still make two blocks per
        # multiprocessor on an H100/H200.
        function("matmul_gemm", [(2048, 24), (24, 512)], lambda a, b: [g.MatmulOp(a, b)]),
        function("matmul_small", [(3, 20), (20, 5)], lambda a, b: [g.MatmulOp(a, b)]),
        function("matmul_batched", [(3, 20, 24), (3, 24, 36)], lambda a, b: [g.MatmulOp(a, b)]),
        function("max_pool", [(1, 4, 9, 9)],
                 lambda x: [g.MaxPool2DOp(x, kernel=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1))]),
        function("avg_pool", [(1, 4, 8, 8)],
                 lambda x: [g.AvgPool2DOp(x, kernel=(2, 2), strides=(2, 2))]),
        function("global_avg_pool", [(2, 6, 7, 7)], lambda x: [g.GlobalAvgPool2DOp(x)]),
        function("softmax_short", [(3, 10)], lambda x: [g.SoftmaxOp(x, 1)]),
        function("softmax_long", [(2, 700)], lambda x: [g.SoftmaxOp(x, -1)]),
        function("elementwise", [(4, 33), (4, 33)], _elementwise),
        function("activations", [(5, 17)], _activations),
        function("log_sqrt_pow", [(6, 9), (6, 9)], _log_sqrt_pow),
        function("clip_max_min", [(3, 8), (3, 8)], _clip_max_min),
        function("reduce_sum_axis", [(4, 5, 6)], lambda x: [g.ReduceOp(x, "sum", [1], True)]),
        function("reduce_max_long", [(3, 500)], lambda x: [g.ReduceOp(x, "max", [1], False)]),
        function("reduce_mean_all", [(7, 40)], lambda x: [g.ReduceOp(x, "mean", [], False)]),
        function("reduce_min", [(6, 4)], lambda x: [g.ReduceOp(x, "min", [0], False)]),
        function("batch_norm", [(2, 3, 4, 4), (3,), (3,), (3,), (3,)],
                 lambda x, s, b, m, v: [g.BatchNormOp(x, s, b, m, v)]),
        function("reshape_transpose", [(2, 3, 4)],
                 lambda x: (lambda t: [t, g.ReshapeOp(t, [4, 6])])(g.TransposeOp(x, [2, 0, 1]))),
        function("concat_flatten", [(2, 3, 2, 2), (2, 1, 2, 2)],
                 lambda a, b: (lambda c: [c, g.FlattenOp(c, 1)])(g.ConcatOp([a, b], 1))),
    ]


@pytest.fixture(scope="module", params=TARGETS)
def base_module(request: pytest.FixtureRequest) -> tuple[ModuleOp, GpuExecutable]:
    module = ModuleOp(_base_ops())
    module.verify()
    executable = dlc.compile(module, target=request.param, entry="conv2d_bias_relu")
    assert isinstance(executable, GpuExecutable)
    return module, executable


@pytest.mark.parametrize("entry", [f.sym_name.data for f in _base_ops()])
def test_graph_op_matches_interpreter(entry: str, base_module: tuple[ModuleOp, GpuExecutable]):
    module, executable = base_module
    function_op = next(f for f in module.ops if f.sym_name.data == entry)  # type: ignore[attr-defined]
    inputs = inputs_for(function_op, entry in POSITIVE)
    (want,) = run_module(module, inputs, entry)
    got = executable.entry(entry)(*inputs)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


KERNEL_SOURCE_MARKS = {
    "opencl": ["__local float a_tile[", "vload8(0, b_tile", "barrier(CLK_LOCAL_MEM_FENCE)",
               "_red[256]"],
    "cuda": ["matmul_a_tile[", "ld.shared.v4.b32", "bar.sync", "_red[1024]"],
}
"""Per target: the GEMM's shared-memory tile, its vector reads of the B tile (8 wide for the
OpenCL profile's 8x8 thread tiles; PTX reads the 4-wide rows of sm_90's 2x4 tiles), the barrier,
and the 256-float tree-reduction buffer of softmax_long and reduce_max_long."""


def test_kernels_use_shared_memory_barriers_and_vectors(base_module, request):
    """The GEMM runs through shared-memory tiles and vector reads, long reductions through a
    tree: in OpenCL C, and in the PTX of the same kernels."""
    _, executable = base_module
    target = request.node.callspec.params["base_module"]
    for mark in KERNEL_SOURCE_MARKS[target]:
        assert mark in executable.source, mark


def test_outputs_into_caller_arrays(base_module):
    module, executable = base_module
    entry = executable.entry("matmul_small")
    a = RNG.standard_normal((3, 20)).astype(np.float32)
    b = RNG.standard_normal((20, 5)).astype(np.float32)
    out = np.empty((3, 5), dtype=np.float32)
    result = entry(a, b, out=[out])
    assert result is out
    np.testing.assert_allclose(out, a @ b, rtol=RTOL, atol=ATOL)


def test_inputs_and_outputs_by_name(base_module):
    _, executable = base_module
    entry = executable.entry("matmul_small")
    a = RNG.standard_normal((3, 20)).astype(np.float32)
    b = RNG.standard_normal((20, 5)).astype(np.float32)
    outputs = entry.run(dict(zip(entry.input_names, (a, b), strict=True)))
    assert list(outputs) == entry.output_names
    np.testing.assert_allclose(outputs[entry.output_names[0]], a @ b, rtol=RTOL, atol=ATOL)
    with pytest.raises(dlc.ExecutableError, match="missing"):
        entry.run({})


def test_wrong_inputs_are_reported(base_module):
    _, executable = base_module
    entry = executable.entry("matmul_small")
    with pytest.raises(dlc.ExecutableError, match="expected shape"):
        entry(np.zeros((2, 20), np.float32), np.zeros((20, 5), np.float32))
    with pytest.raises(dlc.ExecutableError, match="expects 2 inputs"):
        entry(np.zeros((3, 20), np.float32))


@pytest.mark.parametrize("target", [OPENCL])
def test_cache_read_into_shared_memory_with_primitives(target: str):
    """A hand schedule with the schedule primitives: B staged in shared memory by
    `cache_read(..., "shared")` + `compute_at`, rows bound to blocks and columns to threads;
    the copy runs on thread 0 of each block, a barrier before the threads read it."""
    from dlc.dialects import make_context
    from dlc.driver.gpu import compile_for_device
    from dlc.rewrites import get_all_passes
    from dlc.rewrites.gpu_schedule_rules import bind_spatial_loop
    from dlc.rewrites.schedule import bind, cache_read, compute_at, get_loops, match_blocks
    from xdsl.passes import PassPipeline

    module = ModuleOp([function("f", [(8, 16), (16, 12)], lambda a, b: [g.MatmulOp(a, b)])])
    a = RNG.standard_normal((8, 16)).astype(np.float32)
    b = RNG.standard_normal((16, 12)).astype(np.float32)
    passes = get_all_passes()
    PassPipeline.parse_spec(
        passes, "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop"
    ).apply(make_context(), module)
    function_op = next(op for op in module.ops if isinstance(op, func.FuncOp))
    (update,) = match_blocks(function_op, "matmul")
    compute_at(cache_read(update, 1, "shared"), get_loops(update)[0])
    rows, columns, _ = get_loops(update)
    # `bind` refuses this binding: its overlap check treats the shared copy as one buffer
    # for all blocks, while each block has its own.
    bind_spatial_loop(rows, "blockIdx.x")
    bind(columns, "threadIdx.x")
    to_kernels = (  # the gpu-opencl pipeline's passes after the default schedule
        "convert-loop-to-target-gpu{target=opencl},target-gpu-compact-private-buffers,"
        "target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,"
        "target-gpu-vectorize")
    PassPipeline.parse_spec(passes, to_kernels).apply(make_context(), module)
    executable = compile_for_device(module, "opencl", "f")
    assert "__local float" in executable.source and "barrier(CLK_LOCAL_MEM_FENCE)" in \
        executable.source
    np.testing.assert_allclose(executable(a, b), a @ b, rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------------------------
# A transformer block built from graph ops
# ----------------------------------------------------------------------------------------------


def transformer_block(seq: int, hidden: int, mlp: int) -> ModuleOp:
    """Single-head self-attention + MLP, post-norm, with layer norms made of reduces."""
    shapes = [(seq, hidden), (hidden, hidden), (hidden, hidden), (hidden, hidden),
              (hidden, hidden), (hidden,), (hidden,), (hidden, mlp), (mlp,), (mlp, hidden),
              (hidden,), (hidden,), (hidden,)]

    def build(x, wq, wk, wv, wo, g1, b1, w1, c1, w2, c2, g2, b2):  # noqa: ANN001, ANN202
        ops: list[Operation] = []

        def add(op: Operation) -> SSAValue:
            ops.append(op)
            return op.results[0]

        q = add(g.MatmulOp(x, wq))
        k = add(g.MatmulOp(x, wk))
        v = add(g.MatmulOp(x, wv))
        kt = add(g.TransposeOp(k, [1, 0]))
        scores = add(g.MatmulOp(q, kt))
        scale = add(constant([1], 1.0 / np.sqrt(hidden)))
        scaled = add(g.MulOp(scores, scale))
        attention = add(g.SoftmaxOp(scaled, -1))
        context = add(g.MatmulOp(attention, v))
        projected = add(g.MatmulOp(context, wo))
        residual = add(g.AddOp(x, projected))
        norm1 = layer_norm(residual, g1, b1)
        ops += norm1
        h = add(g.AddOp(add(g.MatmulOp(norm1[-1].results[0], w1)), c1))
        h = add(g.ReluOp(h))
        out = add(g.AddOp(add(g.MatmulOp(h, w2)), c2))
        residual2 = add(g.AddOp(norm1[-1].results[0], out))
        ops += layer_norm(residual2, g2, b2)
        return ops

    module = ModuleOp([function("transformer", shapes, build)])
    module.verify()
    return module


def check_transformer_block(target: str, size: int, mlp: int, scale: float) -> None:
    """A `size`-token, `size`-wide block on `target` vs the interpreter (inputs scaled down so
    that the softmax and the layer norms stay well-conditioned)."""
    module = transformer_block(seq=size, hidden=size, mlp=mlp)
    function_op = next(iter(module.ops))
    assert isinstance(function_op, func.FuncOp)
    inputs = [a * scale for a in inputs_for(function_op, positive=False)]
    (want,) = run_module(module, inputs)
    got = dlc.compile(module, target=target)(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", TARGETS)
def test_transformer_block_matches_interpreter(target: str):
    check_transformer_block(target, size=32, mlp=64, scale=0.3)


@pytest.mark.parametrize("target", TARGETS)
def test_captured_graph_replays_the_entry(target: str):
    """On CUDA a prepared call records its launches as a CUDA graph and replays it, giving the
    launch-by-launch result; OpenCL has no graphs and keeps interpreting the host plan."""
    module = transformer_block(seq=32, hidden=32, mlp=64)
    function_op = next(iter(module.ops))
    assert isinstance(function_op, func.FuncOp)
    inputs = [a * 0.3 for a in inputs_for(function_op, positive=False)]
    executable = dlc.compile(module, target=target)
    want = executable(*inputs)
    call = executable.prepare(*inputs)
    assert call.capture() == (target == "cuda")
    call.run()
    call.run()
    (got,) = call.outputs()
    call.release()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# Whole models (slow)
# ----------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_resnet18_matches_interpreter(target: str):
    from dlc.frontends.onnx import import_onnx

    from benchmarks.model_zoo import resnet18

    model = resnet18(batch=1, image=64, classes=100)
    module = import_onnx(model)
    x = RNG.standard_normal((1, 3, 64, 64)).astype(np.float32)
    (want,) = run_module(module, [x])
    got = dlc.compile(model, target=target)(x)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_transformer_block_at_scale(target: str):
    check_transformer_block(target, size=128, mlp=256, scale=0.2)


@pytest.mark.parametrize("target", ["host", *TARGETS])
def test_output_names_agree_across_targets(target: str, tmp_path) -> None:
    """One naming rule on every target (and in `dlc run` and `dlc-run`): the ONNX graph's
    output names for a model from ONNX, else `<function>_out<i>`."""
    import onnx
    from onnx import TensorProto, helper

    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["probabilities"]),
         helper.make_node("Neg", ["x"], ["y:0"])],
        "names", [info("x", TensorProto.FLOAT, [2, 8])],
        [info("probabilities", TensorProto.FLOAT, [2, 8]), info("y:0", TensorProto.FLOAT, [2, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    from_onnx = dlc.compile(model, target, cache=False)
    assert list(from_onnx.input_names) == ["x"]
    assert list(from_onnx.output_names) == ["probabilities", "y:0"]
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    np.testing.assert_allclose(from_onnx.run({"x": x})["y:0"], -x)
    mlir = tmp_path / "relu.mlir"
    onnx.save(model, tmp_path / "m.onnx")
    from dlc.frontends.onnx import import_onnx

    module = import_onnx(tmp_path / "m.onnx")
    entry = next(op for op in module.ops if isinstance(op, func.FuncOp))
    entry.res_attrs = None
    entry.arg_attrs = None
    mlir.write_text(str(module))
    from_mlir = dlc.compile(mlir, target, cache=False)
    assert list(from_mlir.output_names) == [f"{from_mlir.name}_out0", f"{from_mlir.name}_out1"]
