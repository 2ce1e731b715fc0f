"""GPU code generation without a GPU: default GPU schedules keep results (loop interpreter),
barriers, target limits as data, device code emission, ptxas validity, and the CUDA launcher
(run where a GPU and cuda-python exist, skipped with the reason elsewhere)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence

import dlc.dialects.graph as g
import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.contracts import GLOBAL_FENCE_ATTR
from dlc.dialects.loop.interpreter import run_function
from dlc.dialects.target_gpu import BarrierOp, KernelOp, LaunchOp
from dlc.driver.emit import emit_device_code
from dlc.driver.source import parse_module
from dlc.pipelines import parse_pipeline
from dlc.target import OPENCL
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

import dlc

RNG = np.random.default_rng(7)
TO_LOOPS = "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop"


def to_kernels(target: str = "cuda -arch=sm_80") -> str:
    """The passes from scheduled loops to SIMT kernels for `target` (the GPU pipelines' part
    after the default schedule)."""
    return (f'convert-loop-to-target-gpu{{target="{target}"}},target-gpu-compact-private-buffers,'
            "target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,"
            "target-gpu-vectorize")


def graph_module(shapes: Sequence[Sequence[int]], build: Callable[..., Sequence[Operation]]):
    block = Block(arg_types=[TensorType(f32, list(s)) for s in shapes])
    ops = list(build(*block.args))
    block.add_ops([*ops, func.ReturnOp(ops[-1].results[0])])
    function = func.FuncOp.from_region(
        "f", [a.type for a in block.args], [ops[-1].results[0].type], Region(block)
    )
    module = ModuleOp([function])
    module.verify()
    return module


def lower(module: ModuleOp, spec: str) -> ModuleOp:
    PassPipeline(parse_pipeline(spec)).apply(make_context(), module)
    module.verify()
    return module


def random_inputs(module: ModuleOp) -> list[np.ndarray]:
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    return [
        RNG.standard_normal(t.get_shape()).astype(np.float32)  # type: ignore[attr-defined]
        for t in function.function_type.inputs.data
    ]


def check_schedule_keeps_results(module: ModuleOp, target: str = "opencl") -> ModuleOp:
    """The loop interpreter computes the same before and after loop-gpu-default-schedule; the
    scheduled module then converts to kernels. Returns the kernel module."""
    inputs = random_inputs(module)
    loops = lower(module.clone(), TO_LOOPS)
    want = run_function(loops, "f", inputs)
    scheduled = lower(loops.clone(), f"loop-gpu-default-schedule{{target={target}}}")
    got = run_function(scheduled, "f", inputs)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    return lower(scheduled, to_kernels(target))


# ----------------------------------------------------------------------------------------------
# Default schedules keep the loop IR's results
# ----------------------------------------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(
    m=st.integers(1, 36), n=st.integers(1, 36), k=st.integers(1, 12),
    batch=st.sampled_from([None, 2]),
)
def test_gemm_schedule_keeps_results(m: int, n: int, k: int, batch: int | None) -> None:
    lead = [] if batch is None else [batch]
    module = graph_module([(*lead, m, k), (*lead, k, n)], lambda a, b: [g.MatmulOp(a, b)])
    kernels = check_schedule_keeps_results(module)
    assert not any(op.name == "loop.for" and op.kind.data == "bound"  # type: ignore[attr-defined]
                   for op in kernels.walk())


def test_gemm_rule_applies_to_large_matmul() -> None:
    module = graph_module([(32, 8), (8, 40)], lambda a, b: [g.MatmulOp(a, b)])
    kernels = check_schedule_keeps_results(module)
    ranks = {len(op.result.type.get_shape()) for op in kernels.walk()
             if op.name == "target_gpu.shared_alloc"}  # type: ignore[attr-defined]
    assert ranks == {2}, "the GEMM stages A and B tiles in shared memory"


@pytest.mark.parametrize(
    "name, shapes, build",
    [
        ("softmax_long", [(2, 300)], lambda x: [g.SoftmaxOp(x, 1)]),
        ("reduce_all", [(3, 50)], lambda x: [g.ReduceOp(x, "sum", [], False)]),
        ("mean_all_register", [(4, 40)], lambda x: [g.ReduceOp(x, "mean", [], False)]),
        ("conv_gemm", [(1, 8, 6, 6), (16, 8, 3, 3)], lambda x, w: [g.Conv2DOp(x, w)]),
        ("pool", [(1, 2, 6, 6)], lambda x: [g.MaxPool2DOp(x, kernel=(2, 2), strides=(2, 2))]),
        ("elementwise", [(3, 700)], lambda x: [g.TanhOp(x)]),
    ],
)
def test_schedule_keeps_results(name: str, shapes: list, build: Callable) -> None:
    check_schedule_keeps_results(graph_module(shapes, build))


# ----------------------------------------------------------------------------------------------
# Kernels: barriers and target limits
# ----------------------------------------------------------------------------------------------

STAGED = """
func.func @staged(%a: memref<4x64xf32>, %out: memref<4x64xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %tile = loop.alloc shared : memref<64xf32>
  loop.for %k = %c0 to %c4 step %c1 axis "k" {
    loop.for %t = %c0 to %c64 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.block "copy" reads(%a : memref<4x64xf32>) writes(%tile : memref<64xf32>) {
        %v = loop.load %a[%k, %t] : memref<4x64xf32> -> f32
        loop.store %v, %tile[%t] : f32 -> memref<64xf32>
      }
    }
    loop.for %t = %c0 to %c64 step %c1 axis "t" kind bound thread "threadIdx.x" {
      loop.block "use" reads(%tile : memref<64xf32>) writes(%out : memref<4x64xf32>) {
        %r = arith.subi %c64, %t : index
        %s = arith.subi %r, %c1 : index
        %v = loop.load %tile[%s] : memref<64xf32> -> f32
        loop.store %v, %out[%k, %t] : f32 -> memref<4x64xf32>
      }
    }
  }
  func.return
}
"""


def test_barriers_separate_writes_from_reads_across_iterations(tmp_path) -> None:
    """Copy then use a shared tile in a serial loop: a barrier before the use (read after
    write) and one before the next copy (write after read), none between threads' own work."""
    path = tmp_path / "staged.mlir"
    path.write_text(STAGED)
    module = lower(parse_module(path), to_kernels())
    kernel = next(op for op in module.walk() if isinstance(op, KernelOp))
    loop = next(op for op in kernel.walk() if op.name == "loop.for")
    body = [op.name for op in loop.regions[0].block.ops if op.name != "loop.yield"]
    assert body == ["target_gpu.barrier", "loop.block", "target_gpu.barrier", "loop.block"]
    assert not any(GLOBAL_FENCE_ATTR in b.attributes for b in kernel.walk()
                   if isinstance(b, BarrierOp))


def test_opencl_printer_refuses_bound_loops(tmp_path) -> None:
    """Kernels straight from outlining still hold their bound loops: printed, each thread would
    run every iteration. The OpenCL printer refuses and names the pass that maps them."""
    from dlc.codegen.opencl import emit_opencl

    path = tmp_path / "staged.mlir"
    path.write_text(STAGED)
    module = lower(parse_module(path), "convert-loop-to-target-gpu")
    with pytest.raises(DiagnosticException, match=r"'loop.for' op expected no loop bound to a "
                       r"GPU axis in a kernel \(run target-gpu-map-bound-loops first\)"):
        emit_opencl(module)
    assert "__kernel void" in emit_opencl(lower(module, ",".join(to_kernels().split(",")[1:])))


def test_target_limits_come_from_the_description(tmp_path) -> None:
    text = STAGED.replace("%c64 = arith.constant 64", "%c64 = arith.constant 512").replace(
        "memref<64xf32>", "memref<512xf32>").replace("4x64xf32", "4x512xf32")
    path = tmp_path / "wide.mlir"
    path.write_text(text)
    lower(parse_module(path), to_kernels("cuda -arch=sm_80"))  # 512 <= 1024
    assert OPENCL.max_threads_per_block == 256
    with pytest.raises(PassFailedException, match="at most 256 threads per block on opencl"):
        lower(parse_module(path), to_kernels("opencl"))
    with pytest.raises(PassFailedException, match="expected a CUDA architecture for -arch "
                                                  "\\(sm_80, sm_90\\), found 'sm_70'"):
        lower(parse_module(path), to_kernels("cuda -arch=sm_70"))


def test_launch_sizes_follow_the_bound_loops() -> None:
    module = graph_module([(3, 1000)], lambda x: [g.ReluOp(x)])
    kernels = lower(module, f"{TO_LOOPS},loop-gpu-default-schedule,{to_kernels()}")
    (launch,) = [op for op in kernels.walk() if isinstance(op, LaunchOp)]
    sizes = [op.owner.value.value.data for op in (*launch.grid, *launch.block)]  # type: ignore[union-attr]
    assert sizes == [12, 1, 1, 256, 1, 1]  # ceil(3000 / 256) blocks of 256 threads


# ----------------------------------------------------------------------------------------------
# Device code
# ----------------------------------------------------------------------------------------------


def small_model() -> ModuleOp:
    return graph_module([(16, 32), (32, 16)], lambda a, b: (lambda m: [m, g.ReluOp(m)])(
        g.MatmulOp(a, b)))


@pytest.mark.parametrize(
    "target, emit, marker",
    [("cuda", "ptx", ".entry"), ("opencl", "opencl", "__kernel void"),
     ("cuda", "llvm", "ptx_kernel"), ("llvm", "llvm", "define")],
)
def test_emit_device_code(target: str, emit: str, marker: str) -> None:
    module = small_model()
    text = emit_device_code(module, target, emit)
    assert marker in text
    assert any(op.name == "graph.matmul" for op in module.walk()), "the module is not modified"


def test_emit_device_code_rejects_unknown_pairs() -> None:
    with pytest.raises(DiagnosticException, match="found --target opencl --emit ptx"):
        emit_device_code(small_model(), "opencl", "ptx")


@pytest.mark.parametrize(("op_class", "ptx", "opencl"), [
    (g.CeilOp, "cvt.rpi.f32.f32", "ceil("), (g.FloorOp, "cvt.rmi.f32.f32", "floor("),
    (g.RoundOp, "cvt.rni.f32.f32", "rint(")])
def test_rounding_ops_emit_device_instructions(op_class: type[g.CeilOp], ptx: str,
                                               opencl: str) -> None:
    """graph.ceil / floor / round become PTX's round-to-integer conversions (toward +inf,
    -inf, nearest even) and OpenCL's built-ins: no libm call on the device."""
    def build(a: SSAValue) -> list[Operation]:
        scaled = g.MulOp(a, a)
        return [scaled, op_class(scaled)]

    assert ptx in emit_device_code(graph_module([(64, 64)], build), "cuda", "ptx")
    assert opencl in emit_device_code(graph_module([(64, 64)], build), "opencl", "opencl")


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_assembles(tmp_path, arch: str) -> None:
    path = tmp_path / "kernels.ptx"
    path.write_text(emit_device_code(small_model(), "cuda", "ptx", arch=arch))
    result = subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", "/dev/null"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# ----------------------------------------------------------------------------------------------
# CUDA (needs an NVIDIA GPU and cuda-python)
# ----------------------------------------------------------------------------------------------


def _cuda_reason() -> str | None:
    from dlc.runtime.cuda import cuda_unavailable_reason

    return cuda_unavailable_reason()


def test_cuda_unavailable_is_explained() -> None:
    reason = _cuda_reason()
    if reason is None:
        pytest.skip("a CUDA GPU is available here (see test_cuda_runs_matmul)")
    from dlc.runtime.cuda import CudaError

    with pytest.raises(CudaError, match="cannot run on CUDA: "):
        dlc.compile(small_model(), target="cuda")


@pytest.mark.skipif(_cuda_reason() is not None, reason=f"CUDA unavailable: {_cuda_reason()}")
def test_cuda_runs_matmul() -> None:
    module = graph_module([(70, 50), (50, 90)], lambda a, b: [g.MatmulOp(a, b)])
    a, b = random_inputs(module)
    got = dlc.compile(module, target="cuda")(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
