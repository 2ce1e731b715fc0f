"""Named pass pipelines (MLIR's `PassPipelineRegistration`): each is usable as one pass in `-p`.

`pipelines/schedules/` holds the transform scripts that the default schedules apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline


@dataclass(frozen=True)
class NamedPipeline:
    """A pipeline's name, what it is for, and its pass list in `-p` syntax."""

    name: str
    summary: str
    spec: str


_GRAPH_FOLDS = (
    "graph-fold-constants,graph-simplify,graph-fold-batch-norm,graph-simplify,cse,dce"
)
"""The graph-level folds every pipeline starts with (the part of `graph-opt` before fusion)."""

CPU_GRAPH_PASSES = f"{_GRAPH_FOLDS},graph-winograd-conv,graph-fuse-ops"
"""The graph-level part of the `cpu` pipeline: `graph-opt` with the 3-row convs turned into
Winograd convs before fusion (the kernels the CPU compiles, and so the tuner's tasks)."""

_CPU_LOWERING = (
    "convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
    "loop-dedup-functions,loop-plan-memory,loop-default-schedule,loop-fold-constant-nests,"
    "math-polynomial-approximation,convert-memref-view-to-llvm,convert-loop-to-llvm"
)
"""The `cpu` pipelines after the graph level: to loops, scheduled, to LLVM for the module's
target (its `dlc.target`, which the driver sets; else `dlc.target.DEFAULT_CPU_TARGET`)."""

PIPELINES: dict[str, NamedPipeline] = {
    p.name: p
    for p in (
        NamedPipeline(
            "graph-opt",
            "graph-level optimizations: fold constants and batch norms, simplify, fuse",
            f"{_GRAPH_FOLDS},graph-fuse-ops",
        ),
        NamedPipeline(
            "cpu",
            "graph-opt with Winograd convs -> tensor_expr -> loop -> dedup, memory plan -> "
            "(default schedules) -> constant packing folded -> exp/erf as polynomials -> llvm for "
            "the module's target CPU",
            f"{CPU_GRAPH_PASSES},{_CPU_LOWERING}",
        ),
        NamedPipeline(
            "cpu-direct",
            "cpu without Winograd: every conv direct (for comparison, or to keep the direct "
            "conv's rounding)",
            f"graph-opt,{_CPU_LOWERING}",
        ),
        NamedPipeline(
            "gpu-ptx",
            "graph-opt -> tensor_expr -> loop -> dedup -> default GPU schedule -> target_gpu -> "
            "NVVM, for NVIDIA GPUs: the module's dlc.target, else sm_80 (print the kernels with "
            "-t ptx)",
            "graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
            "loop-dedup-functions,loop-gpu-default-schedule,convert-loop-to-target-gpu,"
            "target-gpu-lower-to-nvvm",
        ),
        NamedPipeline(
            "gpu-opencl",
            "graph-opt -> tensor_expr -> loop -> dedup -> default GPU schedule -> target_gpu, "
            "for OpenCL devices (print the kernels with -t opencl)",
            "graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,"
            "loop-dedup-functions,loop-gpu-default-schedule{target=opencl},"
            "convert-loop-to-target-gpu{target=opencl}",
        ),
    )
}


def pipeline_pass(pipeline: NamedPipeline) -> type[ModulePass]:
    """A ModulePass class that runs `pipeline`'s passes in order."""

    @dataclass(frozen=True)
    class PipelinePass(ModulePass):
        name: ClassVar[str] = pipeline.name

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            from dlc.rewrites import get_all_passes

            PassPipeline.parse_spec(get_all_passes(), pipeline.spec).apply(ctx, op)

    PipelinePass.__name__ = PipelinePass.__qualname__ = (
        "".join(w.capitalize() for w in pipeline.name.split("-")) + "PipelinePass"
    )
    PipelinePass.__doc__ = (
        f"Named pipeline `{pipeline.name}`: {pipeline.summary}.\n\n{pipeline.spec}")
    return PipelinePass


def get_all_pipelines() -> dict[str, Callable[[], type[ModulePass]]]:
    """The named pipelines, by name, as pass factories."""
    return {name: (lambda p=p: pipeline_pass(p)) for name, p in PIPELINES.items()}
