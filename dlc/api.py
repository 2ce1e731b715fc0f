"""dlc's public Python API: compile a module for the host CPU, load a compiled library.

Counterpart: TVM's `relay.build` + `tvm.runtime.load_module`. `dlc.load` runs with ctypes and
NumPy only; xDSL and llvmlite are imported by `dlc.compile` when it runs, not by `import dlc`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Union

from dlc.driver.errors import CompileError
from dlc.runtime.executable import Executable, library_exporter
from dlc.runtime.library import load_library

if TYPE_CHECKING:
    import onnx
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp

    from dlc.driver.artifact import CompiledModel
    from dlc.driver.cache import CompileCache, CompileOptions
    from dlc.target import GpuTarget

LEVELS: tuple[str, ...] = ("graph", "tensor_expr", "loop")
"""dlc's abstraction levels, in the order a pipeline lowers through them."""

TARGETS: tuple[str, ...] = ("host", "llvm")
"""The CPU targets `compile` builds executables for: `host` (this machine) and `llvm ...` target
strings (`dlc.target.parse`)."""

DEVICE_TARGETS: dict[str, tuple[str, str]] = {
    "opencl": ("dlc.runtime.opencl", "gpu-opencl"),
    "cuda": ("dlc.runtime.cuda", "gpu-ptx"),
}
"""GPU targets: the runtime module whose `load_module(module, entry)` runs the lowered module,
and the pipeline that lowers to it (used when `pipeline` is left at `cpu`)."""


def make_context() -> Context:
    """An xDSL context that knows every dialect dlc reads (lazily loaded)."""
    from xdsl.context import Context

    from dlc.dialects import get_all_dialects

    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_module(path: str | Path, ctx: Context | None = None) -> ModuleOp:
    """Parse the MLIR file at `path` (generic or custom syntax) and verify it."""
    from xdsl.parser import Parser

    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise CompileError(f"cannot read {path}: {e.strerror}") from None
    module = Parser(ctx or make_context(), text, name=str(path)).parse_module()
    module.verify()
    return module


def module_level(module: ModuleOp) -> str:
    """The highest abstraction level that `module` has ops of; `graph` when it has none of
    graph or tensor_expr but a function over tensors (an ONNX Identity model), else `loop`
    (plain func/arith/memref IR is loop-level)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import TensorType

    found = {op.name.split(".", 1)[0] for op in module.walk()}
    level = next((level for level in LEVELS if level in found), None)
    if level is not None:
        return level
    for op in module.ops:
        if isinstance(op, func.FuncOp) and any(
            isinstance(t, TensorType)
            for t in (*op.function_type.inputs, *op.function_type.outputs)
        ):
            return "graph"
    return "loop"


def pass_level(pass_name: str) -> str | None:
    """The level whose ops a pass reads: `convert-<level>-to-*` and `<level>-*` passes read that
    level; dialect-agnostic passes (cse, canonicalize, ...) have none."""
    if pass_name.startswith("convert-"):
        source = pass_name.removeprefix("convert-").split("-to-", 1)[0].replace("-", "_")
        return source if source in LEVELS else None
    for level in LEVELS:
        if pass_name.startswith(level.replace("_", "-") + "-"):
            return level
    return None


def applicable_passes(module: ModuleOp, spec: str) -> list[str]:
    """The passes of the pipeline `spec` that apply to `module`: those reading a level above
    the module's are skipped, so that loop-level IR goes straight to its lowering."""
    start = LEVELS.index(module_level(module))
    passes = [item.strip() for item in _split_pipeline(spec) if item.strip()]
    kept = []
    for item in passes:
        level = pass_level(item.split("{", 1)[0])
        if level is None or LEVELS.index(level) >= start:
            kept.append(item)
    return kept


def _split_pipeline(spec: str) -> list[str]:
    """Split a `-p` pipeline at the commas outside option braces."""
    items, depth, current = [], 0, ""
    for char in spec:
        depth += char == "{"
        depth -= char == "}"
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    return items


THREAD_OPTIONS: dict[str, str] = {
    "loop-default-schedule": "threads",
    "convert-loop-to-llvm": "num_threads",
}
"""The pass options that carry `compile(..., threads=N)` into a pipeline."""


def with_threads(passes: list[str], threads: int | None) -> list[str]:
    """`passes` with the thread-count option set on the passes that take one (unless given)."""
    if threads is None:
        return passes
    result = []
    for item in passes:
        name = item.split("{", 1)[0].strip()
        option = THREAD_OPTIONS.get(name)
        if option is None or f"{option}=" in item:
            result.append(item)
        elif "{" in item:
            result.append(item.replace("{", f"{{{option}={threads} ", 1))
        else:
            result.append(f"{name}{{{option}={threads}}}")
    return result


def lower(
    module: ModuleOp, pipeline: str = "cpu", ctx: Context | None = None,
    threads: int | None = None,
) -> ModuleOp:
    """Run the named pipeline's applicable passes on `module` in place and return it.

    `threads` (if given) sets the thread count of the passes that take one: the default
    schedule's parallel loops and `GOMP_parallel`'s team size (0: all cores).
    """
    from xdsl.passes import PassPipeline

    from dlc.driver.compiler import pipeline_passes
    from dlc.rewrites import get_all_passes

    passes = pipeline_passes(module, pipeline, threads)
    if passes:
        PassPipeline.parse_spec(get_all_passes(), ",".join(passes)).apply(
            ctx or make_context(), module
        )
    return module


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
    progress: bool = False,
    jobs: int | None = None,
) -> Executable:
    """Compile a model for the host CPU: one native entry function that calls its kernels.

    Args:
        model: an ONNX model (`onnx.ModelProto` or a `.onnx` path), an `.mlir` path, or an xDSL
            `ModuleOp` (not modified) at any level (graph, tensor_expr, loop).
        target: `host` (this machine, resolved once), a CPU target string (`llvm -mcpu=znver3`,
            `dlc.target.parse`), or a GPU target (`cuda`, `cuda -arch=sm_90`, `opencl`).
        entry: the function to call when the module has several entry functions.
        input_shapes: static shapes of ONNX inputs by name, for inputs with dynamic dimensions.
        opt_level: LLVM's optimization level, 0-3.
        pipeline: the named pipeline (default `cpu`: graph-opt with Winograd convs,
            tensor_expr, loops, memory plan, schedules, llvm; `cpu-direct`: the same with every
            conv direct); passes for levels above the module's are skipped.
        threads: threads for parallel loops (0: all cores, 1: none).
        tuning_log: an autotuning log (`dlc tune`): kernels with a record for this host get
            its best schedule (applied after `convert-tensor-expr-to-loop`, which then leaves
            epilogues unfused as tuning did), the others the default schedule; the log's
            content is part of the cache keys.
        cache: use the on-disk compile cache (kernel object code by structural hash; whole
            models by file content), so that compiling again is fast.
        cache_dir: the cache's directory (default `~/.cache/dlc`).
        progress: print progress on stderr when the compile takes more than a couple of seconds.
        jobs: processes compiling kernels in parallel (default: one per CPU).

    Returns:
        An `Executable`: `m(x, ...)` with inputs in order, `m.run({"name": x})` by name,
        `m.export("model.so")`.

    Raises:
        CompileError: the model cannot be read, imported or compiled (the message says why).
    """
    from dlc.driver.cache import CompileCache, CompileOptions
    from dlc.driver.target import resolve_target
    from dlc.target import GpuTarget

    resolved = resolve_target(target, threads)
    if isinstance(resolved, GpuTarget):
        return _compile_for_device(model, resolved, entry, input_shapes, pipeline)
    options = CompileOptions(
        str(resolved), opt_level, pipeline, threads, Path(tuning_log) if tuning_log else None
    )
    store = CompileCache(cache_dir) if cache else None
    source = _Source(model, input_shapes)
    key = source.cache_key(options, store) if store is not None else None
    compiled = store.load_model(key) if store is not None and key is not None else None
    if compiled is None:
        compiled = _compile_source(source, options, store, key, progress, jobs)
    try:
        native = compiled.link_in_process()
    except RuntimeError as e:
        raise CompileError(str(e)) from None
    executable = Executable(native, entry, compiled.export)
    executable.stats = compiled.stats
    return executable


def _compile_source(
    source: _Source, options: CompileOptions, store: CompileCache | None, key: str | None,
    progress: bool, jobs: int | None,
) -> CompiledModel:
    import time

    from xdsl.utils.exceptions import DiagnosticException

    from dlc.driver.compiler import Progress, compile_module

    reporter = Progress(source.label, progress)
    start = time.perf_counter()
    ctx = make_context()
    try:
        module = source.module(ctx)
        imported = time.perf_counter() - start
        compiled, kernel_keys = compile_module(module, options, store, reporter, ctx, jobs)
    except DiagnosticException as e:
        error = CompileError(str(e))
        error.__notes__ = list(getattr(e, "__notes__", []))
        raise error from None
    compiled.stats.seconds = {"import": imported, **compiled.stats.seconds}
    if store is not None and key is not None:
        reporter.stage("caching")
        store.store_model(key, compiled, kernel_keys)
    reporter.done()
    return compiled


def _compile_for_device(
    model: ModelSource, target: GpuTarget, entry: str | None,
    input_shapes: Mapping[str, Sequence[int]] | None, pipeline: str,
) -> Executable:
    """`compile` for a GPU target: lower with the target's pipeline, hand the module (host
    functions + kernels) to the target's runtime; returns its executable (same call API)."""
    import importlib

    from xdsl.dialects.builtin import StringAttr
    from xdsl.utils.exceptions import DiagnosticException

    from dlc.dialects.contracts import TARGET_ATTR

    runtime_module, default_pipeline = DEVICE_TARGETS[target.kind]
    ctx = make_context()
    try:
        module = _Source(model, input_shapes).module(ctx)
        module.attributes[TARGET_ATTR] = StringAttr(str(target))
        lower(module, default_pipeline if pipeline == "cpu" else pipeline, ctx)
    except DiagnosticException as e:
        raise CompileError(str(e)) from None
    return importlib.import_module(runtime_module).load_module(module, entry)


class _Source:
    """A model to compile, and how to read it and to name it in the cache."""

    def __init__(self, model: ModelSource, input_shapes: Mapping[str, Sequence[int]] | None):
        self.model = model
        self.input_shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
        self.path = Path(model) if isinstance(model, str | Path) else None
        self.label = self.path.name if self.path is not None else type(model).__name__
        if self.path is not None:
            if not self.path.is_file():
                raise CompileError(f"cannot read {self.path}: no such file")
            if self.path.suffix not in (".onnx", ".mlir"):
                raise CompileError(
                    f"expected a .onnx or .mlir file, found '{self.path.name}'"
                )
        if self.input_shapes and self.kind != "onnx":
            raise CompileError("input_shapes applies to ONNX models only")

    @property
    def kind(self) -> str:
        if self.path is not None:
            return self.path.suffix.removeprefix(".")
        return "module" if type(self.model).__name__ == "ModuleOp" else "onnx"

    def cache_key(self, options: CompileOptions, store: CompileCache) -> str | None:
        """The model-level cache key, or None for an xDSL module (only its kernels are cached)."""
        import json

        from dlc.driver.cache import digest

        if self.kind == "module":
            return None
        if self.path is not None:
            try:
                content = store.file_digest(self.path)
            except OSError as e:
                raise CompileError(f"cannot read {self.path}: {e.strerror}") from None
        else:
            content = digest(self.model.SerializeToString())  # type: ignore[union-attr]
        shapes = json.dumps(self.input_shapes, sort_keys=True)
        return digest(options.fingerprint(), self.kind, content, shapes)

    def module(self, ctx: Context) -> ModuleOp:
        """The model as a module (imported, parsed or copied)."""
        if self.kind == "onnx":
            from dlc.frontends.onnx import import_onnx

            return import_onnx(self.model, self.input_shapes)  # type: ignore[arg-type]
        if self.path is not None:
            return parse_module(self.path, ctx)
        return self.model.clone()  # type: ignore[union-attr]


def load(path: str | Path, entry: str | None = None) -> Executable:
    """Open a shared library written by `Executable.export` (ctypes and NumPy only)."""
    library = load_library(path)
    return Executable(library, entry, library_exporter(library.path))
