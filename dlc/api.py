"""dlc's public Python API: compile a module for the host CPU, load a compiled library.

Counterpart: TVM's `relay.build` + `tvm.runtime.load_module`. `dlc.load` runs with ctypes and
NumPy only; xDSL and llvmlite are imported by `dlc.compile` when it runs, not by `import dlc`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from runtime.executable import Executable, library_exporter
from runtime.library import load_library

if TYPE_CHECKING:
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp

LEVELS: tuple[str, ...] = ("graph", "tensor_expr", "loop")
"""dlc's abstraction levels, in the order a pipeline lowers through them."""

TARGETS: tuple[str, ...] = ("llvm",)
"""The targets `compile` builds executables for (the host CPU through LLVM)."""


class CompileError(ValueError):
    """`dlc.compile` was given something it cannot compile (unknown target, missing pass)."""


def make_context() -> Context:
    """An xDSL context that knows every dialect dlc reads (lazily loaded)."""
    from xdsl.context import Context

    from dialects import get_all_dialects

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
    """The highest abstraction level that `module` has ops of; `loop` when it has none of
    graph or tensor_expr (plain func/arith/memref IR is loop-level)."""
    found = {op.name.split(".", 1)[0] for op in module.walk()}
    return next((level for level in LEVELS if level in found), "loop")


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


def lower(module: ModuleOp, pipeline: str = "cpu", ctx: Context | None = None) -> ModuleOp:
    """Run the named pipeline's applicable passes on `module` in place and return it."""
    from xdsl.passes import PassPipeline

    from pipelines import PIPELINES
    from rewrites import get_all_passes

    if pipeline not in PIPELINES:
        raise CompileError(
            f"no pipeline named '{pipeline}' (pipelines: {', '.join(sorted(PIPELINES))})"
        )
    passes = applicable_passes(module, PIPELINES[pipeline].spec)
    available = get_all_passes()
    missing = [p for p in passes if p.split("{", 1)[0] not in available]
    if missing:
        raise CompileError(
            f"pipeline '{pipeline}' needs passes not available in this checkout: "
            f"{', '.join(missing)}"
        )
    if passes:
        PassPipeline.parse_spec(available, ",".join(passes)).apply(ctx or make_context(), module)
    return module


def compile(  # noqa: A001 - dlc.compile, like re.compile
    module_or_path: ModuleOp | str | Path,
    target: str = "llvm",
    entry: str | None = None,
    *,
    opt_level: int = 3,
    pipeline: str = "cpu",
) -> Executable:
    """Compile a module (an xDSL `ModuleOp`, or the path of an `.mlir` file) for the host CPU.

    Runs the pipeline (default `cpu`: graph -> tensor_expr -> loop -> llvm, skipping what the
    module is already below), prints LLVM IR and JIT-compiles it at `opt_level`. `entry` names
    the function to call when the module has several entry functions. A `ModuleOp` argument is
    not modified.
    """
    from xdsl.dialects.builtin import ModuleOp

    from codegen.llvm import emit_llvm_ir
    from runtime.jit import compile_llvm_ir
    from runtime.library import export_shared_library

    if target not in TARGETS:
        raise CompileError(
            f"expected target {' or '.join(repr(t) for t in TARGETS)}, found {target!r}"
        )
    ctx = make_context()
    if isinstance(module_or_path, ModuleOp):
        module = module_or_path.clone()
    else:
        module = parse_module(module_or_path, ctx)
    lower(module, pipeline, ctx)
    llvm_ir = emit_llvm_ir(module)
    jit = compile_llvm_ir(llvm_ir, opt_level)

    def export(path: Path) -> Path:
        return export_shared_library(llvm_ir, path, opt_level)

    return Executable(jit, entry, export)


def load(path: str | Path, entry: str | None = None) -> Executable:
    """Open a shared library written by `Executable.export` (ctypes and NumPy only)."""
    library = load_library(path)
    return Executable(library, entry, library_exporter(library.path))
