"""External code generation (BYOC): regions of an external target become calls of a library.

Counterpart: TVM's BYOC codegens (`relay.ext.<compiler>`: `CSourceModuleCodegen` for the DNNL
and cblas examples). `offload(module, "cblas")` folds the graph (graph-opt's folds), partitions
it (`graph-annotate-target{targets="cblas,llvm"}`, `graph-merge-regions`,
`graph-partition{outline=cblas}`), writes C source for each cblas region (one `cblas_sgemm` per
`graph.matmul`, temporaries between them; `onednn`: `driver/byoc_onednn.py`),
compiles it into a shared library linked to the external library, and replaces the region's
function by a declaration carrying `dlc.extern_library`: from there on it is an external
function like a custom op's, called with one pointer per tensor (inputs, then outputs), loaded
in process to run and linked into exported libraries.

The external libraries are optional extras: `cblas` needs OpenBLAS from `scipy-openblas32`
(`pip install dlc[cblas]`), `onednn` oneDNN's CPU wheels (`dlc[onednn]`), and both a C
compiler; `available_reason` says what is missing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dlc.dialects.graph.custom import EXTERN_LIBRARY_ATTR, EXTERN_OP_ATTR
from dlc.dialects.graph.ops import MatmulOp
from dlc.driver.errors import CompileError
from dlc.driver.heterogeneous import GRAPH_FOLDS
from dlc.pipelines import parse_pipeline
from dlc.rewrites.partition_targets import TARGET_ATTR
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import PassPipeline


@dataclass(frozen=True)
class ExternalLibrary:
    """Where an external library is: its library folder and the linker flags to use it."""

    lib_dir: str
    link_flags: tuple[str, ...]


def cblas_library() -> ExternalLibrary | None:
    """OpenBLAS of the `scipy-openblas32` package, or None where it is not installed."""
    try:
        import scipy_openblas32  # type: ignore[import-not-found]
    except ImportError:
        return None
    lib_dir = scipy_openblas32.get_lib_dir()
    return ExternalLibrary(lib_dir, (f"-L{lib_dir}", f"-l{scipy_openblas32.get_library()}",
                                     f"-Wl,-rpath,{lib_dir}"))


def onednn_library() -> ExternalLibrary | None:
    """oneDNN of the `onednn-cpu-gomp` and `onednn-devel-cpu-gomp` packages (a CPU build: the
    `onednn` wheels are SYCL builds whose CPU engine needs a SYCL CPU device), or None."""
    from dlc.driver.byoc_onednn import onednn_prefix

    prefix = onednn_prefix()
    if prefix is None:
        return None
    lib_dir = str(prefix / "lib")
    # DT_RPATH (not RUNPATH) also finds libdnnl's own dependencies (TBB, the SYCL runtime),
    # which the wheels put beside it without a run path of their own.
    return ExternalLibrary(lib_dir, (f"-I{prefix / 'include'}", f"-L{lib_dir}", "-ldnnl",
                                     "-Wl,--disable-new-dtags", f"-Wl,-rpath,{lib_dir}"))


def available_reason(name: str) -> str | None:
    """Why the BYOC target `name` cannot be used here, or None if it can."""
    if name not in CODEGENS:
        return f"unknown BYOC target '{name}' (known: {', '.join(sorted(CODEGENS))})"
    if shutil.which("cc") is None:
        return "no C compiler (cc) to build the external code"
    if name == "cblas" and cblas_library() is None:
        return "scipy-openblas32 is not installed (pip install 'dlc[cblas]')"
    if name == "onednn" and onednn_library() is None:
        return ("oneDNN is not installed (pip install 'dlc[onednn]': onednn-cpu-gomp, "
                "onednn-devel-cpu-gomp)")
    return None


# ---------------------------------------------------------------------------------------------
# C source of a region
# ---------------------------------------------------------------------------------------------


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def cblas_region_source(function: func.FuncOp, threads: int = 0) -> str:
    """The C function `void <name>(const float *arg0, ..., float *out0, ...)` computing the
    cblas region `function` (2-D f32 matmuls) with `scipy_cblas_sgemm`; with `threads` > 0,
    the first call sets OpenBLAS's thread count to it (so that OpenBLAS's pool and dlc's do
    not oversubscribe the cores)."""
    name = function.sym_name.data
    block = function.body.block
    names: dict[SSAValue, str] = {}
    params = []
    for index, arg in enumerate(block.args):
        names[arg] = f"in{index}"
        params.append(f"const float *in{index}")
    terminator = block.last_op
    assert isinstance(terminator, func.ReturnOp)
    for index in range(len(terminator.arguments)):
        params.append(f"float *out{index}")
    outputs = {v: f"out{i}" for i, v in enumerate(terminator.arguments)}
    lines = [
        "#include <stdlib.h>",
        "void scipy_cblas_sgemm(int order, int transa, int transb, int m, int n, int k,",
        "                       float alpha, const float *a, int lda, const float *b, int ldb,",
        "                       float beta, float *c, int ldc);",
        "void scipy_openblas_set_num_threads(int threads);",
        f"void {name}({', '.join(params)}) {{",
    ]
    if threads > 0:
        lines += ["  static int configured = 0;",
                  f"  if (!configured) {{ scipy_openblas_set_num_threads({threads}); "
                  "configured = 1; }"]
    temporaries: list[str] = []
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        if not isinstance(op, MatmulOp):
            raise CompileError(f"'{op.name}' op: the cblas codegen computes graph.matmul only")
        (m, k), (_, n) = _shape(op.lhs), _shape(op.rhs)
        target = outputs.get(op.result)
        if target is None:
            target = f"t{len(temporaries)}"
            temporaries.append(target)
            lines.append(f"  float *{target} = (float *)malloc(sizeof(float) * {m * n});")
        names[op.result] = target
        lines.append(
            f"  scipy_cblas_sgemm(101, 111, 111, {m}, {n}, {k}, 1.0f, {names[op.lhs]}, {k}, "
            f"{names[op.rhs]}, {n}, 0.0f, {target}, {n});"
        )
    for value, out in outputs.items():
        if names.get(value, out) != out:  # an argument returned as it is
            count = 1
            for dim in _shape(value):
                count *= dim
            lines.append(f"  for (long i = 0; i < {count}; ++i) {out}[i] = {names[value]}[i];")
    lines += [f"  free({t});" for t in temporaries]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _onednn_source(function: func.FuncOp, threads: int) -> str:
    from dlc.driver.byoc_onednn import onednn_region_source

    return onednn_region_source(function, threads)


CODEGENS: dict[str, Callable[[func.FuncOp, int], str]] = {
    "cblas": cblas_region_source, "onednn": _onednn_source,
}
"""The C source generator of each BYOC target, by partition target name."""

LIBRARIES: dict[str, Callable[[], ExternalLibrary | None]] = {
    "cblas": cblas_library, "onednn": onednn_library,
}


def byoc_cache_dir() -> Path:
    """Where the compiled region libraries are kept (by the hash of their source)."""
    return Path.home() / ".cache" / "dlc" / "byoc"


def build_region_library(source: str, library: ExternalLibrary, directory: Path) -> Path:
    """Compiles `source` into a shared library in `directory`, named by the source's hash
    (reused when it is already there)."""
    key = hashlib.sha256((source + "\n".join(library.link_flags)).encode()).hexdigest()[:24]
    path = directory / f"libdlc_byoc_{key}.so"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    source_path = directory / f"byoc_{key}.c"
    source_path.write_text(source)
    scratch = directory / f".{path.name}.tmp"
    result = subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-o", str(scratch), str(source_path),
         *library.link_flags],
        capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        raise CompileError(f"compiling the external code {source_path} failed: "
                           f"{result.stderr.strip()}")
    scratch.replace(path)
    return path


def offload(module: ModuleOp, target: str, ctx: Context,
            directory: Path | None = None, threads: int = 0) -> list[str]:
    """Partitions `module` (graph level) between `target` and dlc and turns each `target`
    region into an external function (using `threads` threads; 0: the library's default);
    returns the regions' symbols.

    Raises:
        CompileError: `target` is unknown or its library is missing (the message says why).
    """
    reason = available_reason(target)
    if reason is not None:
        raise CompileError(f"--byoc {target}: {reason}")
    library = LIBRARIES[target]()
    assert library is not None
    # The graph folds first, so that weights transposed by Gemm reach the library folded.
    spec = (f'{GRAPH_FOLDS},graph-annotate-target{{targets="{target},llvm"}},'
            f"graph-merge-regions,graph-partition{{outline={target}}}")
    PassPipeline(parse_pipeline(spec)).apply(ctx, module)
    regions: list[str] = []
    for function in list(module.ops):
        mark = function.attributes.get(TARGET_ATTR)
        if not isinstance(function, func.FuncOp) or not isinstance(mark, StringAttr):
            continue
        source = CODEGENS[target](function, threads)
        path = build_region_library(source, library, directory or byoc_cache_dir())
        name = function.sym_name.data
        declaration = func.FuncOp.external(name, list(function.function_type.inputs),
                                           list(function.function_type.outputs))
        declaration.attributes[EXTERN_LIBRARY_ATTR] = StringAttr(str(path))
        declaration.attributes[EXTERN_OP_ATTR] = StringAttr(f"{target} region @{name}")
        module.body.block.insert_op_before(declaration, function)
        function.detach()
        function.erase()
        regions.append(name)
    for op in module.walk():
        if isinstance(op, func.CallOp) and TARGET_ATTR in op.attributes:
            del op.attributes[TARGET_ATTR]
    return regions

