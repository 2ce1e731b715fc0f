"""Build a model into an executable: the driver's entry point (TVM's `relay.build` /
`tvm.compile`), which `dlc.compile` calls.

It resolves the target (`host` here, through `driver.target`, and nowhere else), reads the
model, runs the pipeline whole-module and per kernel (`driver.compiler`), with the on-disk
cache, and links the result in process (code for another architecture, a cross compile, is
only described: `artifact.ForeignModule`, to export); for a GPU target it lowers with the
target's pipeline and hands the module to the GPU driver (`driver.gpu`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from dlc.dialects import make_context
from dlc.dialects.contracts import TARGET_ATTR
from dlc.dialects.graph.custom import registered_custom_ops
from dlc.driver.artifact import CompiledModel, ForeignModule
from dlc.driver.cache import DEFAULT_MAX_BYTES, CompileCache, CompileOptions
from dlc.driver.compiler import PRECISIONS, Progress, compile_module, pipeline_passes
from dlc.driver.errors import CompileError
from dlc.driver.source import ModelSource, Source
from dlc.driver.target import resolve_target
from dlc.runtime.executable import Executable, NativeModule
from dlc.runtime.library import machine_arch
from dlc.target import GpuTarget
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException

DEVICE_TARGETS: dict[str, str] = {"opencl": "gpu-opencl", "cuda": "gpu-ptx"}
"""GPU targets, and the pipeline that lowers to each (used when `pipeline` is left at `cpu`);
`driver.gpu.compile_for_device` emits, plans and loads the lowered module."""


def lower(
    module: ModuleOp, pipeline: str = "cpu", ctx: Context | None = None,
    threads: int | None = None,
    check_bounds: bool = False,
) -> ModuleOp:
    """Run the named pipeline's applicable passes on `module` in place and return it.

    `threads` (if given) sets the thread count of the passes that take one: the default
    schedule's parallel loops and `GOMP_parallel`'s team size (0: all cores); `check_bounds`
    turns on `convert-loop-to-llvm`'s bounds checks.
    """
    passes = pipeline_passes(module, pipeline, threads, check_bounds=check_bounds)
    if passes:
        PassPipeline(passes).apply(ctx or make_context(), module)
    return module


def build(
    model: ModelSource,
    target: str = "host",
    entry: str | None = None,
    *,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    opt_level: int = 3,
    pipeline: str = "cpu",
    threads: int = 0,
    tuning_log: str | Path | None = None,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    cache_max_bytes: int | None = DEFAULT_MAX_BYTES,
    progress: bool = False,
    jobs: int | None = None,
    check_bounds: bool = False,
    byoc: str | None = None,
    precision: str = "fp32",
    dynamic_batch: bool = False,
    dynamic_shapes: bool = False,
) -> Executable:
    """Compile a model into an `Executable` (`dlc.compile` documents the arguments).

    Raises:
        CompileError: the model cannot be read, imported or compiled (the message says why).
    """
    if threads < 0:
        raise CompileError(f"expected a non-negative number of threads (0: all cores), found "
                           f"{threads}")
    if jobs is not None and jobs < 1:
        raise CompileError(f"expected a positive number of compile jobs, found {jobs}")
    resolved = resolve_target(target, threads)
    if isinstance(resolved, GpuTarget) and check_bounds:
        raise CompileError(
            f"expected a CPU target with check_bounds (bounds checks are CPU code), found "
            f"'{target}'"
        )
    if precision not in PRECISIONS:
        raise CompileError(f"expected precision fp32, bf16 or f16, found '{precision}'")
    if isinstance(resolved, GpuTarget) and precision != "fp32":
        raise CompileError(
            f"expected a CPU target with precision {precision} (mixed precision is lowered for "
            f"CPUs), found '{target}'"
        )
    if isinstance(resolved, GpuTarget):
        return _build_for_device(model, resolved, entry, input_shapes, pipeline)
    options = CompileOptions(
        str(resolved), opt_level, pipeline, threads, Path(tuning_log) if tuning_log else None,
        check_bounds, precision,
    )
    store = CompileCache(cache_dir, cache_max_bytes) if cache else None
    source = Source(model, input_shapes, dynamic_batch, dynamic_shapes)
    # A custom op's compute and library are Python objects the model's bytes do not name: with
    # any registered, whole models are not cached (kernels still are, by their loop IR).
    whole_model = store is not None and not registered_custom_ops() and byoc is None
    key = source.cache_key(options, store) if whole_model else None
    compiled = store.load_model(key) if store is not None and key is not None else None
    if compiled is None:
        compiled = _compile_source(source, options, store, key, progress, jobs, byoc)
    native: NativeModule
    if compiled.arch != machine_arch():
        native = ForeignModule(compiled, machine_arch())  # exported, never called here
    else:
        try:
            native = compiled.link_in_process()
        except RuntimeError as e:
            raise CompileError(str(e)) from None
    executable = Executable(native, entry, compiled.export)
    executable.stats = compiled.stats
    executable.compiled = compiled
    return executable


def _compile_source(
    source: Source, options: CompileOptions, store: CompileCache | None, key: str | None,
    progress: bool, jobs: int | None, byoc: str | None = None,
) -> CompiledModel:
    reporter = Progress(source.label, progress)
    start = time.perf_counter()
    ctx = make_context()
    try:
        module = source.module(ctx)
        if byoc is not None:
            from dlc.driver.byoc import offload

            offload(module, byoc, ctx, threads=options.threads)
        imported = time.perf_counter() - start
        compiled, kernel_keys = compile_module(module, options, store, reporter, ctx, jobs)
    except DiagnosticException as e:
        error = CompileError(str(e))
        error.__notes__ = list(getattr(e, "__notes__", []))
        error.diagnostic = e  # type: ignore[attr-defined] - driver.specialize reads it
        raise error from None
    compiled.stats.seconds = {"import": imported, **compiled.stats.seconds}
    if store is not None and key is not None:
        reporter.stage("caching")
        store.store_model(key, compiled, kernel_keys)
    if store is not None:
        store.evict()
    reporter.done()
    return compiled


def export_for_device(
    model: ModelSource, target: str, path: str | Path, *,
    input_shapes: Mapping[str, Sequence[int]] | None = None, pipeline: str = "cpu",
    c_prefix: str | None = None, c_header: str | Path | None = None,
    c_interface_optional: bool = False,
) -> Path:
    """Compile a model for a GPU target (`opencl`, `cuda`, `cuda -arch=sm_90`) into the shared
    library `path`: the kernels' source (OpenCL C, or PTX for the target's architecture) and
    native host code that launches them (`driver.gpu_library`). Nothing runs: no GPU needed.

    A model (one entry function) gets the C interface of `runtime.c_api` for a GPU library
    under `c_prefix` (default: the file name made a C identifier); its header is written to
    `c_header` if given. `c_interface_optional`: a module with several entry functions is
    exported without one (and no header) instead of refusing `c_prefix`/`c_header` (what
    `dlc compile` does unless its options name them).

    Raises:
        CompileError: a CPU target, or the model cannot be compiled or linked.
        CApiError: a bad prefix, or `c_prefix`/`c_header` for a module without a C interface.
    """
    from dlc.driver.gpu import gpu_program
    from dlc.driver.gpu_library import export_gpu_library

    resolved = resolve_target(target)
    if not isinstance(resolved, GpuTarget):
        raise CompileError(f"expected a GPU target (opencl, cuda ...), found '{target}'")
    ctx = make_context()
    try:
        module = Source(model, input_shapes).module(ctx)
        module.attributes[TARGET_ATTR] = StringAttr(str(resolved))
        lower(module, DEVICE_TARGETS[resolved.kind] if pipeline == "cpu" else pipeline, ctx)
        program = gpu_program(module, resolved.kind, resolved.arch if resolved.is_cuda else None)
        if c_interface_optional and len(program.plan.signatures) != 1:
            c_prefix = c_header = None
        return export_gpu_library(program, path, c_prefix, c_header)
    except (DiagnosticException, RuntimeError) as e:
        raise CompileError(str(e)) from None


def _build_for_device(
    model: ModelSource, target: GpuTarget, entry: str | None,
    input_shapes: Mapping[str, Sequence[int]] | None, pipeline: str,
) -> Executable:
    """`build` for a GPU target: lower with the target's pipeline, then emit the kernels, plan
    the host functions and load them on the target's runtime (`driver.gpu`); returns its
    executable (same call API)."""
    from dlc.driver.gpu import compile_for_device

    ctx = make_context()
    try:
        module = Source(model, input_shapes).module(ctx)
        module.attributes[TARGET_ATTR] = StringAttr(str(target))
        lower(module, DEVICE_TARGETS[target.kind] if pipeline == "cpu" else pipeline, ctx)
        return compile_for_device(module, target.kind, entry)
    except DiagnosticException as e:
        raise CompileError(str(e)) from None
