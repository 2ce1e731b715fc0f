"""GPU benchmarks: dlc's CUDA path (gpu-ptx pipeline, PTX through the CUDA driver) against cuBLAS
(through CuPy or PyTorch, whichever is installed) and ONNX Runtime's CUDA provider.

Needs an NVIDIA GPU (written for an H100/H200: sm_90), its driver, and `pip install cuda-python`
(plus cupy or torch for the cuBLAS column, onnxruntime-gpu or torchvision for the ResNet-18
column). It cannot run on machines without them: it then prints why and exits with status 2.
`--compile-only sm_90` needs no GPU: it compiles the GEMMs for that architecture and prints
what `ptxas -v` says of each kernel (registers, shared memory, spills), then exits.

Measured, side by side in one run, with CUDA events around the kernels only (inputs already on
the device; warm-up runs first):
- GEMM C = A @ B, 4096^3 (`--gemm N`), fp32 (and fp16 when dlc compiles it): TFLOP/s of dlc and
  of cuBLAS, and their ratio (fp32 cuBLAS with TF32 disabled, so both do IEEE fp32 FMAs);
- ResNet-18, batch 1, 224x224 (`--skip-resnet` to leave it out): latency of dlc and of ONNX
  Runtime with the CUDA provider, and dlc's effective TFLOP/s (3.64 GFLOP per image).

    python3 benchmarks/gpu.py [--gemm 4096] [--repeat 20] [--skip-resnet] [--json out.json]
    python3 benchmarks/gpu.py --compile-only sm_80 --gemm 1024

The fp16 GEMM runs on tensor cores (the `mma-gemm` rule: ldmatrix + mma.sync m16n8k16, f32
accumulation); its reference is cuBLAS's fp16 GEMM (`torch.matmul` where CuPy is missing).

Runs on H200s (sm_90), 2026-11-29, `--gemm 4096 --repeat 20`: GEMM fp32 30.6 TFLOP/s, 0.60x
cuBLAS (51.4); GEMM fp16 45.0 TFLOP/s, 0.06x cuBLAS (722-760), measured before the fp16 GEMM
ran on tensor cores (not measured since: no GPU); ResNet-18 1.84-1.89 ms against PyTorch
eager on cuDNN at 1.30-1.99 ms on different machines (0.71-1.05x; this ONNX Runtime had no
CUDA provider), output within 4.7e-7 of ONNX Runtime on the CPU; as a CUDA graph 1.839 ms
against 1.885 ms launched kernel by kernel. (The first run, before GEMM thread tiles shrank to
fill the grid, had ResNet-18 at 7.07 ms.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# The repository root first: xdsl installs a top-level `benchmarks` package of its own.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESNET18_FLOP = 3.64e9
"""Floating-point operations of one ResNet-18 inference at 224x224 (2 x 1.82 G multiply-adds)."""


@dataclass
class Result:
    """One benchmark line: times in milliseconds, rates in TFLOP/s, None where not measured."""

    name: str
    dlc_ms: float | None = None
    reference_ms: float | None = None
    reference: str = ""
    flop: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def dlc_tflops(self) -> float | None:
        return self.flop / self.dlc_ms / 1e9 if self.dlc_ms else None

    @property
    def reference_tflops(self) -> float | None:
        return self.flop / self.reference_ms / 1e9 if self.reference_ms else None

    @property
    def ratio(self) -> float | None:
        """dlc's speed relative to the reference (> 1: dlc is faster)."""
        if self.dlc_ms and self.reference_ms:
            return self.reference_ms / self.dlc_ms
        return None


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(results: list[Result]) -> None:
    header = f"{'benchmark':<26}{'dlc ms':>10}{'dlc TF/s':>10}{'ref ms':>10}{'ref TF/s':>10}" \
             f"{'ratio':>8}  reference"
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{r.name:<26}{_fmt(r.dlc_ms, '.3f'):>10}{_fmt(r.dlc_tflops, '.2f'):>10}"
              f"{_fmt(r.reference_ms, '.3f'):>10}{_fmt(r.reference_tflops, '.2f'):>10}"
              f"{_fmt(r.ratio, '.2f'):>8}  {r.reference}")
        for note in r.notes:
            print(f"    note: {note}")


# ----------------------------------------------------------------------------------------------
# dlc
# ----------------------------------------------------------------------------------------------


def gemm_module(n: int, dtype: str) -> Any:
    """A graph-level module `@gemm(A: n x n, B: n x n) -> A @ B` of `dtype`."""
    import dlc.dialects.graph as graph
    from xdsl.dialects import func
    from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp, TensorType
    from xdsl.ir import Block, Region

    element = Float16Type() if dtype == "float16" else Float32Type()
    block = Block(arg_types=[TensorType(element, [n, n])] * 2)
    product = graph.MatmulOp(block.args[0], block.args[1])
    block.add_ops([product, func.ReturnOp(product.result)])
    function = func.FuncOp.from_region(
        "gemm", [a.type for a in block.args], [product.result.type], Region(block)
    )
    return ModuleOp([function])


def lowered_gemm(n: int, dtype: str, arch: str) -> Any:
    """The n^3 GEMM of `dtype` through the gpu-ptx pipeline, scheduled for `arch` (its
    multiprocessors size the grid)."""
    from dlc.dialects import make_context
    from dlc.dialects.contracts import TARGET_ATTR
    from dlc.driver.build import lower
    from xdsl.dialects.builtin import StringAttr

    module = gemm_module(n, dtype)
    module.attributes[TARGET_ATTR] = StringAttr(f"cuda -arch={arch}")
    return lower(module, "gpu-ptx", make_context())


def ptxas_report(n: int, dtypes: list[str], arch: str) -> int:
    """Print `ptxas -v`'s resources of each GEMM kernel for `arch` (no GPU needed)."""
    import re
    import shutil
    import subprocess
    import tempfile

    from dlc.codegen.ptx import emit_ptx

    if shutil.which("ptxas") is None:
        print("benchmarks/gpu.py --compile-only needs ptxas on the PATH", file=sys.stderr)
        return 2
    for dtype in dtypes:
        ptx = emit_ptx(lowered_gemm(n, dtype, arch), arch)
        with tempfile.NamedTemporaryFile("w", suffix=".ptx") as source:
            source.write(ptx)
            source.flush()
            done = subprocess.run(["ptxas", "-v", f"-arch={arch}", source.name, "-o",
                                   "/dev/null"], capture_output=True, text=True)
        if done.returncode:
            print(f"gemm {n}^3 {dtype}: ptxas failed:\n{done.stderr}", file=sys.stderr)
            return 1
        kinds = sorted(set(re.findall(r"\b(mma\.sync\.\S+|ldmatrix\.\S+)", ptx)))
        print(f"gemm {n}^3 {dtype} ({arch}; {', '.join(kinds) or 'no tensor cores'}):")
        for line in done.stderr.splitlines():
            if "entry function" in line or "Used" in line or "spill" in line:
                print("  " + line.replace("ptxas info    : ", "").strip())
    return 0


def time_dlc(executable: Any, inputs: list[np.ndarray], repeat: int) -> tuple[float, float]:
    """Milliseconds per call of a CUDA `GpuExecutable` between CUDA events (inputs already on
    the device): the host plan launching kernel by kernel, and its launches replayed as a CUDA
    graph (`DeviceCall.capture`)."""
    call = executable.prepare(*inputs)
    call.run()
    call.outputs()  # warm-up (module JIT, buffer pool)
    launched = executable.backend.elapsed_ms(call.run, repeat)
    call.capture()
    call.run()
    graph = executable.backend.elapsed_ms(call.run, repeat)
    call.release()
    return launched, graph


def dlc_gemm(n: int, dtype: str, repeat: int, arch: str) -> tuple[float | None, list[str]]:
    from dlc.driver.gpu import compile_for_device

    import dlc

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    try:
        executable = compile_for_device(lowered_gemm(n, dtype, arch), "cuda", arch=arch)
    except Exception as e:  # an unsupported dtype is a result line, not a crash
        return None, [f"dlc could not compile the {dtype} GEMM: {e}"]
    notes = []
    if n <= 2048:
        check = executable(a, b)
        want = a.astype(np.float64) @ b.astype(np.float64)
        error = float(np.abs(check.astype(np.float64) - want).max() / np.abs(want).max())
        notes.append(f"max |error| vs NumPy, relative to max |C|: {error:.3g}")
    del dlc
    launched, graph = time_dlc(executable, [a, b], repeat)
    notes.append(f"launched: {launched:.3f} ms; replayed as a CUDA graph: {graph:.3f} ms")
    return graph, notes


# ----------------------------------------------------------------------------------------------
# References
# ----------------------------------------------------------------------------------------------


def cublas_gemm(n: int, dtype: str, repeat: int) -> tuple[float | None, str]:
    """Milliseconds of cuBLAS's GEMM through CuPy or PyTorch, or None."""
    try:
        import cupy

        a = cupy.random.standard_normal((n, n)).astype(dtype)
        b = cupy.random.standard_normal((n, n)).astype(dtype)
        cupy.matmul(a, b)
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(repeat):
            cupy.matmul(a, b)
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / repeat, "cuBLAS (CuPy)"
    except ImportError:
        pass
    try:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = False
        torch_dtype = torch.float16 if dtype == "float16" else torch.float32
        a = torch.randn((n, n), dtype=torch_dtype, device="cuda")
        b = torch.randn((n, n), dtype=torch_dtype, device="cuda")
        torch.matmul(a, b)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            torch.matmul(a, b)
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) / repeat, "cuBLAS (PyTorch)"
    except ImportError:
        return None, "cuBLAS: install cupy or torch"


def onnxruntime_cuda(model: Any, feed: dict[str, np.ndarray], repeat: int) -> tuple[float | None,
                                                                                       str]:
    """Milliseconds per ResNet-18 inference with ONNX Runtime's CUDA provider, else with
    PyTorch's torchvision ResNet-18 on cuDNN (same shapes), or None."""
    try:
        import onnxruntime as ort
    except ImportError:
        return torch_resnet18(feed, repeat, "ONNX Runtime is not installed")
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return torch_resnet18(feed, repeat, "ONNX Runtime has no CUDA provider")
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CUDAExecutionProvider"])
    binding = session.io_binding()
    for name, array in feed.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array, "cuda", 0))
    for output in session.get_outputs():
        binding.bind_output(output.name, "cuda")
    session.run_with_iobinding(binding)
    start = time.perf_counter()
    for _ in range(repeat):
        session.run_with_iobinding(binding)
    binding.synchronize_outputs()
    return (time.perf_counter() - start) * 1e3 / repeat, "ONNX Runtime (CUDA EP)"


def torch_resnet18(feed: dict[str, np.ndarray], repeat: int, why: str) -> tuple[float | None, str]:
    """Milliseconds per inference of torchvision's ResNet-18 (eager, cuDNN autotuned, fp32
    without TF32) on the same input shape, or None without torch/torchvision."""
    try:
        import torch
        import torchvision
    except ImportError:
        return None, f"{why}; no torchvision either"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    (image,) = feed.values()
    model = torchvision.models.resnet18(num_classes=1000).eval().cuda()
    x = torch.from_numpy(image).cuda()
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            model(x)
        stop.record()
        torch.cuda.synchronize()
    return start.elapsed_time(stop) / repeat, f"PyTorch eager, cuDNN ({why})"


def max_relative_error_vs_onnxruntime_cpu(model: Any, feed: dict[str, np.ndarray],
                                          got: np.ndarray) -> str:
    """How far dlc's CUDA output is from ONNX Runtime's on the CPU, as a result note."""
    try:
        import onnxruntime as ort
    except ImportError:
        return "not checked: ONNX Runtime is not installed"
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feed)
    error = float(np.abs(got - want).max() / np.abs(want).max())
    return f"max |error| / max |ORT CPU| = {error:.2g}"


# ----------------------------------------------------------------------------------------------
# Benchmarks
# ----------------------------------------------------------------------------------------------


def bench_gemm(n: int, repeat: int, arch: str, dtypes: list[str]) -> list[Result]:
    results = []
    for dtype in dtypes:
        result = Result(f"gemm {n}^3 {dtype}", flop=2.0 * n**3)
        result.dlc_ms, result.notes = dlc_gemm(n, dtype, repeat, arch)
        result.reference_ms, result.reference = cublas_gemm(n, dtype, repeat)
        results.append(result)
    return results


def bench_resnet18(repeat: int) -> Result:
    import dlc
    from benchmarks.model_zoo import random_inputs, resnet18

    result = Result("resnet18 b1 224 fp32", flop=RESNET18_FLOP)
    model = resnet18(batch=1, image=224)
    feed = random_inputs(model)
    started = time.perf_counter()
    executable = dlc.compile(model, target="cuda")
    result.notes.append(f"dlc compile: {time.perf_counter() - started:.1f} s")
    result.notes.append(max_relative_error_vs_onnxruntime_cpu(model, feed,
                                                              executable(*feed.values())))
    launched, result.dlc_ms = time_dlc(executable, list(feed.values()), repeat)
    result.notes.append(f"dlc launching kernel by kernel: {launched:.3f} ms (the table: its "
                        "launches replayed as one CUDA graph)")
    result.reference_ms, result.reference = onnxruntime_cuda(model, feed, repeat)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gemm", type=int, default=4096, help="GEMM size N (N^3)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--skip-resnet", action="store_true")
    parser.add_argument("--no-fp16", action="store_true")
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument("--compile-only", metavar="ARCH",
                        help="compile the GEMMs for ARCH (sm_80, sm_90) and print ptxas's "
                        "register, shared memory and spill counts; needs no GPU")
    args = parser.parse_args(argv)
    if args.compile_only:
        dtypes = ["float32"] + ([] if args.no_fp16 else ["float16"])
        return ptxas_report(args.gemm, dtypes, args.compile_only)

    from dlc.runtime.cuda import cuda_unavailable_reason, device_arch

    reason = cuda_unavailable_reason()
    if reason is not None:
        print(f"benchmarks/gpu.py cannot run here: {reason}", file=sys.stderr)
        return 2
    arch = device_arch()
    from dlc.target import cuda_target

    target = cuda_target(arch)
    print(f"device architecture: {arch} (dlc target {target})")
    dtypes = ["float32"] + ([] if args.no_fp16 or not target.fp16 else ["float16"])
    runs: list[Callable[[], list[Result]]] = [
        lambda: bench_gemm(args.gemm, args.repeat, arch, dtypes)
    ]
    if not args.skip_resnet:
        runs.append(lambda: [bench_resnet18(args.repeat)])
    results = [result for run in runs for result in run()]
    print_table(results)
    if args.json:
        with open(args.json, "w") as out:
            json.dump([{**asdict(r), "dlc_tflops": r.dlc_tflops,
                        "reference_tflops": r.reference_tflops, "ratio": r.ratio}
                       for r in results], out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
