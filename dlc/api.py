"""dlc's public Python API: compile a model, load a compiled library.

Counterpart: TVM's `relay.build` + `tvm.runtime.load_module`. A thin façade: compiling is the
driver's (`dlc.driver.build`), loading the runtime's (`dlc.runtime`). `dlc.load` runs with ctypes
and NumPy only; xDSL and llvmlite are imported by `dlc.compile` when it runs, not by `import dlc`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Union

from dlc.runtime.executable import Executable, ExecutableError, library_exporter
from dlc.runtime.library import load_library

if TYPE_CHECKING:
    import onnx
    from xdsl.dialects.builtin import ModuleOp

ModelSource = Union["ModuleOp", "onnx.ModelProto", str, Path]
"""What `compile` accepts: an xDSL module, an ONNX model, or the path of a .onnx or .mlir file."""


def compile(  # noqa: A001 - dlc.compile, like re.compile
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
    cache_max_bytes: int | None = 2 << 30,
    progress: bool = False,
    jobs: int | None = None,
    check_bounds: bool = False,
    fallback: str | None = None,
    byoc: str | None = None,
    precision: str = "fp32",
    dynamic_batch: bool = False,
    dynamic_shapes: bool = False,
    specialize: Sequence[Mapping[str, Sequence[int | None]]] | None = None,
) -> Executable:
    """Compile a model for the host CPU: one native entry function that calls its kernels.

    Args:
        model: an ONNX model (`onnx.ModelProto` or a `.onnx` path), an `.mlir` path, or an xDSL
            `ModuleOp` (not modified) at any level (graph, tensor_expr, loop).
        target: `host` (this machine, resolved once), a CPU target string (`llvm -mcpu=znver3`,
            `dlc.target.parse_target`), or a GPU target (`cuda`, `cuda -arch=sm_90`, `opencl`:
            kernels run on the GPU).
        entry: the function to call when the module has several entry functions.
        input_shapes: static shapes of ONNX inputs by name, for inputs with dynamic dimensions.
        opt_level: LLVM's optimization level, 0-3.
        pipeline: the named pipeline (default `cpu`: graph-opt with Winograd convs,
            tensor_expr, loops, memory plan, schedules, llvm; `cpu-direct`: the same with every
            conv direct); passes for levels above the module's are skipped.
        threads: threads for parallel loops (1: none; 0: the environment variable
            `DLC_NUM_THREADS` where set, else all the cores this process may use).
        tuning_log: an autotuning log (`dlc tune`): kernels with a record for this host get
            its best schedule (applied after `convert-tensor-expr-to-loop`, which then leaves
            epilogues unfused as tuning did), the others the default schedule; the log's
            content is part of the cache keys.
        cache: use the on-disk compile cache (kernel object code by structural hash; whole
            models by file content), so that compiling again is fast.
        cache_dir: the cache's directory (default `~/.cache/dlc`).
        cache_max_bytes: the cache's size limit (default 2 GiB; None: no limit): after a
            compile, the least recently used entries are removed until the cache fits.
        progress: print progress on stderr when the compile takes more than a couple of seconds.
        jobs: processes compiling kernels in parallel (default: one per CPU).
        check_bounds: every load and store checks its indices against the buffer's shape; a
            violation prints `dlc: out-of-bounds load of buffer A (arg 0) in @kernel: index 8
            not in [0, 8) ...` to stderr and aborts the process (a debugging build: slower;
            off by default, and then the code is unchanged).
        fallback: heterogeneous execution: each op runs on `target` (a partition target:
            `opencl`, `llvm`) when that target supports it, else on `fallback` (`llvm`: the
            host CPU); the graph is partitioned into regions (`graph-annotate-target`,
            `graph-merge-regions`, `graph-partition`), each compiled for its target, and the
            result (`driver.heterogeneous.HeterogeneousExecutable`) runs them in order, the
            data copied to and from the device at region boundaries.
        byoc: an external library that computes the ops it supports (BYOC): `cblas` (2-D f32
            matmuls as OpenBLAS sgemm calls; the `cblas` extra). The graph is partitioned
            (`graph-annotate-target{targets="cblas,llvm"}`, ...) and each region becomes
            generated C code calling the library (`driver.byoc`).
        precision: `fp32` (default: the model's own types), or `bf16` / `f16` (`fp16`): mixed
            precision as TVM's ToMixedPrecision does it (`graph-to-low-precision`): convs and
            matmuls take low-precision inputs and weights (stored rounded to nearest even),
            accumulate in f32 and round their result once; elementwise and data-movement ops
            between them follow; softmax, reductions, normalizations, exp/log and divisions
            stay in f32. Inputs and outputs keep their types.
        dynamic_batch: compile an ONNX model whose inputs share a dynamic leading dim (a
            `dim_param`, the batch) once for every batch size: the importer keeps it as `?`
            (`import_onnx(dynamic_batch=True)`), `graph-batch-rows` compiles the function of one
            row and of blocks of rows with static shapes and the default schedules, and the
            executable runs them over the call's rows (checking that the inputs agree on
            their number). A model that is not
            batch-polymorphic (an op mixing rows, a Shape of the batch, other dynamic dims)
            falls back to specialization, as without the option. CPU targets only.
        dynamic_shapes: compile an ONNX model with dynamic dims anywhere (a detector's batch,
            height and width: `dim_param`s) once for every shape: the importer keeps every
            named dim as `?` (`import_onnx(dynamic_shapes=True)`), the kernels loop over
            runtime extents with their own schedule (`loop-default-schedule`'s rule of runtime
            extents), and the executable sizes outputs and intermediates from the inputs'
            shapes (shape functions), checking that dims with one name agree. A model with an
            op that has no definition over runtime extents (a reshape or a shape computation
            on a dynamic dim, a resize whose taps depend on the size) falls back to
            `dynamic_batch` where that is also asked, else to specialization. CPU targets only.
        specialize: an ONNX model compiled for each of these input shapes (`{"x": (None, 3,
            320, 320)}`: a shape per input named, None keeping the declared dim, which only a
            `dynamic_batch` may leave dynamic): the result
            (`runtime.variants.ShapeVariantsExecutable`) runs each call on the variant its
            shapes select, other shapes on the model compiled as without `specialize`, and
            `export` writes every variant into one library (`driver.shape_variants`).

    Returns:
        An `Executable`: `m(x, ...)` with inputs in order, `m.run({"name": x})` by name,
        `m.export("model.so")`.

    Raises:
        CompileError: the model cannot be read, imported or compiled (the message says why).
    """
    if specialize is not None:
        from dlc.driver.errors import CompileError
        from dlc.driver.target import resolve_target
        from dlc.target import CpuTarget

        if fallback is not None or not isinstance(resolve_target(target, threads), CpuTarget):
            raise CompileError(f"expected a CPU target and no fallback with specialize (a "
                               f"library of several shapes runs on one CPU), found target "
                               f"'{target}'" + (f" and fallback '{fallback}'" if fallback else ""))
    if fallback is not None and precision != "fp32":
        from dlc.driver.errors import CompileError

        raise CompileError(f"expected no fallback with precision {precision} (heterogeneous "
                           "execution runs the model's own types)")
    if fallback is not None:
        from dlc.driver.heterogeneous import build_heterogeneous

        return build_heterogeneous(  # type: ignore[return-value] - the same call API
            model, target, fallback, input_shapes=input_shapes, opt_level=opt_level,
            threads=threads, cache=cache, cache_dir=cache_dir, jobs=jobs,
        )
    from dlc.driver.build import build
    from dlc.driver.specialize import build_onnx

    def builder(**dynamic: bool) -> Callable[[ModelSource, Mapping[str, Sequence[int]]],
                                             Executable]:
        """`build` with this call's options, for the given input shapes (and `dynamic`:
        `dynamic_batch=True` or `dynamic_shapes=True`)."""
        def build_with(source: ModelSource, shapes: Mapping[str, Sequence[int]]) -> Executable:
            return build(
                source, target, entry, input_shapes=shapes or None, opt_level=opt_level,
                pipeline=pipeline, threads=threads, tuning_log=tuning_log, cache=cache,
                cache_dir=cache_dir, cache_max_bytes=cache_max_bytes, progress=progress,
                jobs=jobs, check_bounds=check_bounds, byoc=byoc, precision=precision,
                **dynamic,
            )

        return build_with

    build_for = builder()
    cpu = pipeline.startswith("cpu")
    batched = builder(dynamic_batch=True) if dynamic_batch and cpu else None
    polymorphic = builder(dynamic_shapes=True) if dynamic_shapes and cpu else None
    if specialize is not None:
        from dlc.driver.shape_variants import build_variants
        from dlc.driver.specialize import read_onnx

        proto = read_onnx(model)
        return build_variants(  # type: ignore[return-value] - the same call API
            proto, specialize, lambda m: build_onnx(m, input_shapes, build_for, batched),
            lambda: build_onnx(proto, input_shapes, build_for, batched, polymorphic))
    return build_onnx(model, input_shapes, build_for, batched,  # type: ignore[return-value]
                      polymorphic)


def load(path: str | Path, entry: str | None = None) -> Executable:
    """Open a shared library written by `Executable.export` (ctypes and NumPy only).

    Trust: loading a library runs its code (its constructors run as it loads, with this
    process's rights). A model library from an untrusted source is code from an untrusted
    source: load only libraries you would run as programs.
    """
    library = load_library(path)
    table = library.variants_text()
    if table is not None:
        from dlc.runtime.metadata import MetadataError
        from dlc.runtime.variants import ShapeVariantsExecutable, decode_variants

        try:
            variants = decode_variants(table)
        except MetadataError as e:
            raise ExecutableError(f"{path}: {e}") from None
        exporter = library_exporter(library.path)
        return ShapeVariantsExecutable(  # type: ignore[return-value] - the same call API
            [Executable(library.variant(v.prefix), entry, exporter) for v in variants],
            exporter=exporter, prefixes=[v.prefix for v in variants])
    return Executable(library, entry, library_exporter(library.path))
