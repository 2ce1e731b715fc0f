"""Named pass pipelines (MLIR's `PassPipelineRegistration`), as lists of pass objects.

A pipeline is a tuple of `ModulePass` objects parsed from `-p` syntax by xDSL's own parser;
options change with `dataclasses.replace` (`with_options`), never by editing strings. This module
is the one place that expands named pipelines: `dlc-opt` (each named pipeline is also usable as
one pass in `-p`), the driver and the tuner all call `parse_pipeline`.

The abstraction levels a module can be at (`LEVELS`) and which passes of a pipeline apply to a
module (`applicable`) are decided here too, so that loop-level IR goes straight to its lowering.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass, PassPipeline


class PipelineError(ValueError):
    """A pipeline that cannot be built: an unknown pass or pipeline, or a bad option."""


@dataclass(frozen=True)
class NamedPipeline:
    """A pipeline's name, what it is for, and its pass list in `-p` syntax."""

    name: str
    summary: str
    spec: str


_GRAPH_FOLDS = (
    "graph-fold-qdq,graph-fold-constants,graph-simplify,graph-fold-batch-norm,graph-simplify,cse,dce"
)
"""The graph-level folds every pipeline starts with (the part of `graph-opt` before fusion)."""

CPU_BATCH_ROWS = "graph-batch-rows{block=8 tails=true}"
"""How the `cpu` pipelines compile a dynamic batch: one row and blocks of rows (static shapes)."""

CPU_GRAPH_PASSES = (
    f"{CPU_BATCH_ROWS},{_GRAPH_FOLDS},"
    "graph-convert-layout{integer_only=true depthwise_regions=true},graph-conv-subsample,"
    "graph-conv-split-bands,"
    "graph-conv-transpose-to-subpixel,graph-conv-column-to-row,"
    "graph-winograd-conv,graph-fold-lookup-tables,graph-fuse-ops"
)
"""The graph-level part of the `cpu` pipeline: a dynamic batch compiled as one row and as blocks of
8 rows, and of the sizes up to 16 that still cost less than reading the weights or that keep a
tail of rows near a block of its own where each call's parallel loops weigh (`graph-batch-rows`;
the runtime runs the largest blocks, then the rows left by their cheapest plan), then `graph-opt`
with int8 convs (`conv2d_integer`) in NHWC (graph-convert-layout's `integer_only`: the VNNI
kernel reads a 1x1 conv's input rows in place and stores whole vectors of output channels) and
the float convs of depthwise regions too (`depthwise_regions`: depthwise convs and the
pointwise convs around them, a MobileNet's blocks; other float convs keep NCHW), strided
one-tap conv axes reading a sliced input (ResNet's 1x1 stride-2 shortcuts), convs
whose taps read padding over bands of the output split into one conv per band, transposed
convs turned into sub-pixel convs, convs down a width-1 column into convs along
a row, the 3-row convs into Winograd convs, and elementwise chains over one int8 tensor into
table lookups (`graph-fold-lookup-tables`) before fusion (the kernels the CPU compiles, and
so the tuner's tasks)."""

LOOP_LOWERING = "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop"
"""From fused graph functions to loop nests (the part of every pipeline the tuner's kernels
come from)."""

_CPU_LOWERING = (
    f"{LOOP_LOWERING},"
    "loop-dedup-functions,loop-plan-memory,loop-default-schedule,loop-fold-constant-nests,"
    "loop-fuse-nests,loop-collapse-parallel,math-polynomial-approximation,"
    "loop-linearize-runtime-strides,"
    "convert-memref-view-to-llvm,"
    "convert-loop-to-llvm"
)
"""The `cpu` pipelines after the graph level: to loops, scheduled, to LLVM for the module's
target (its `dlc.target`, which the driver sets; else `dlc.target.DEFAULT_CPU_TARGET`)."""

PIPELINES: dict[str, NamedPipeline] = {
    p.name: p
    for p in (
        NamedPipeline(
            "graph-opt",
            "graph-level optimizations: fold QDQ pairs, constants and batch norms, simplify, "
            "int8 chains as lookup tables, fuse",
            f"{_GRAPH_FOLDS},graph-fold-lookup-tables,graph-fuse-ops",
        ),
        NamedPipeline(
            "cpu",
            "graph-opt with int8 convs and depthwise regions in NHWC, dilated convs split into "
            "bands where taps read "
            "padding, sub-pixel transposed convs, column convs as rows and Winograd convs "
            "-> tensor_expr -> loop -> dedup, memory plan -> "
            "(default schedules) -> constant packing folded -> nests fused, a runtime batch "
            "collapsed into the parallel loop inside it -> exp/erf as polynomials -> llvm for "
            "the module's target CPU",
            f"{CPU_GRAPH_PASSES},{_CPU_LOWERING}",
        ),
        NamedPipeline(
            "cpu-runtime-rows",
            "cpu with a dynamic batch kept in the kernels: their loops over the batch take its "
            "size at run time (blocks of static rows by the default schedule) instead of "
            "graph-batch-rows' entries of one row and of blocks of rows",
            f"{CPU_GRAPH_PASSES.removeprefix(CPU_BATCH_ROWS + ',')},{_CPU_LOWERING}",
        ),
        NamedPipeline(
            "cpu-direct",
            "cpu without Winograd: every conv direct (for comparison, or to keep the direct "
            "conv's rounding)",
            f"{CPU_BATCH_ROWS},graph-opt,{_CPU_LOWERING}",
        ),
        NamedPipeline(
            "gpu-ptx",
            "graph-opt -> tensor_expr -> loop -> dedup -> default GPU schedule -> target_gpu -> "
            "NVVM, for NVIDIA GPUs: the module's dlc.target, else sm_80 (print the kernels with "
            "-t ptx)",
            f"graph-opt,{LOOP_LOWERING},"
            "loop-dedup-functions,loop-gpu-default-schedule,"
            "convert-loop-to-target-gpu,target-gpu-compact-private-buffers,"
            "target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,"
            "target-gpu-vectorize,target-gpu-lower-to-nvvm",
        ),
        NamedPipeline(
            "gpu-opencl",
            "graph-opt -> tensor_expr -> loop -> dedup -> default GPU schedule -> target_gpu, "
            "for OpenCL devices (print the kernels with -t opencl)",
            f"graph-opt,{LOOP_LOWERING},"
            "loop-dedup-functions,loop-gpu-default-schedule{target=opencl},"
            "convert-loop-to-target-gpu{target=opencl},target-gpu-compact-private-buffers,"
            "target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,"
            "target-gpu-vectorize",
        ),
    )
}


# ---------------------------------------------------------------------------------------------
# The registry xDSL's pipeline parser reads
# ---------------------------------------------------------------------------------------------


def pipeline_pass(pipeline: NamedPipeline) -> type[ModulePass]:
    """A ModulePass class that runs `pipeline`'s passes in order (a named pipeline in `-p`)."""

    @dataclass(frozen=True)
    class PipelinePass(ModulePass):
        name: ClassVar[str] = pipeline.name

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            PassPipeline(parse_pipeline(pipeline.spec)).apply(ctx, op)

    PipelinePass.__name__ = PipelinePass.__qualname__ = (
        "".join(w.capitalize() for w in pipeline.name.split("-")) + "PipelinePass"
    )
    PipelinePass.__doc__ = (
        f"Named pipeline `{pipeline.name}`: {pipeline.summary}.\n\n{pipeline.spec}")
    return PipelinePass


def get_all_pipelines() -> dict[str, Callable[[], type[ModulePass]]]:
    """The named pipelines, by name, as pass factories."""
    return {name: (lambda p=p: pipeline_pass(p)) for name, p in PIPELINES.items()}


def get_pipeline_registry() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every name `-p` accepts: xDSL's upstream passes, dlc's passes, the named pipelines."""
    from dlc.rewrites import get_all_passes

    registry = dict(get_all_passes())
    registry.update(get_all_pipelines())
    return registry


# ---------------------------------------------------------------------------------------------
# Pipelines as pass objects
# ---------------------------------------------------------------------------------------------


def parse_pipeline(spec: str) -> tuple[ModulePass, ...]:
    """The passes of `spec` (`-p` syntax: `a,b{opt=1},c`), parsed by xDSL's pipeline parser,
    with every named pipeline given without options replaced by its own passes.

    Raises:
        PipelineError: an unknown pass or pipeline name, or an option the pass does not take.
    """
    try:
        passes = PassPipeline.parse_spec(get_pipeline_registry(), spec).passes
    except Exception as e:  # xDSL raises ValueError or its own parse errors
        raise PipelineError(f"invalid pass pipeline '{spec}': {e}") from None
    return expand(passes)


def expand(passes: Iterable[ModulePass]) -> tuple[ModulePass, ...]:
    """`passes` with each named pipeline replaced by its own passes (recursively)."""
    expanded: list[ModulePass] = []
    for module_pass in passes:
        pipeline = PIPELINES.get(module_pass.name)
        if pipeline is None:
            expanded.append(module_pass)
        else:
            expanded.extend(parse_pipeline(pipeline.spec))
    return tuple(expanded)


def named_pipeline(name: str) -> tuple[ModulePass, ...]:
    """The passes of the named pipeline `name`.

    Raises:
        PipelineError: no pipeline has that name (the message lists them).
    """
    pipeline = PIPELINES.get(name)
    if pipeline is None:
        raise PipelineError(
            f"no pipeline named '{name}' (pipelines: {', '.join(sorted(PIPELINES))})"
        )
    return parse_pipeline(pipeline.spec)


def with_options(passes: Sequence[ModulePass], **options: Any) -> tuple[ModulePass, ...]:
    """`passes` with each option set on the passes that have a field of that name (and left
    alone on the others), by `dataclasses.replace`: `with_options(p, threads=2)`."""
    result = []
    for module_pass in passes:
        fields = {f.name for f in dataclasses.fields(module_pass)}
        changes = {name: value for name, value in options.items() if name in fields}
        result.append(dataclasses.replace(module_pass, **changes) if changes else module_pass)
    return tuple(result)


def index_of(passes: Sequence[ModulePass], name: str) -> int | None:
    """The position of the first pass named `name`, or None."""
    return next((i for i, p in enumerate(passes) if p.name == name), None)


def to_spec(passes: Iterable[ModulePass]) -> str:
    """The `-p` text of `passes` (options included), the inverse of `parse_pipeline`."""
    return ",".join(str(p.pipeline_pass_spec()) for p in passes)


# ---------------------------------------------------------------------------------------------
# Levels: which passes of a pipeline apply to a module
# ---------------------------------------------------------------------------------------------

LEVELS: tuple[str, ...] = ("graph", "tensor_expr", "loop")
"""dlc's abstraction levels, in the order a pipeline lowers through them."""


def module_level(module: ModuleOp) -> str:
    """The highest abstraction level that `module` has ops of; `graph` when it has none of
    graph or tensor_expr but a function over tensors (an ONNX Identity model), else `loop`
    (plain func/arith/memref IR is loop-level)."""
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


def applicable(module: ModuleOp, passes: Sequence[ModulePass]) -> tuple[ModulePass, ...]:
    """The passes that apply to `module`: those reading a level above the module's are
    skipped, so that loop-level IR goes straight to its lowering."""
    start = LEVELS.index(module_level(module))
    kept = []
    for module_pass in passes:
        level = pass_level(module_pass.name)
        if level is None or LEVELS.index(level) >= start:
            kept.append(module_pass)
    return tuple(kept)


def run_pipeline(
    module: ModuleOp, passes: Sequence[ModulePass], ctx: Context,
    after: Callable[[ModulePass, ModuleOp], None] | None = None,
) -> None:
    """Runs `passes` on `module` in place, in order, calling `after(pass, module)` after each."""
    for module_pass in passes:
        module_pass.apply(ctx, module)
        if after is not None:
            after(module_pass, module)
