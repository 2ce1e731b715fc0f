"""dlc's passes, one module per pass, and the lazy registry dlc-opt reads.

A pass named `graph-fuse-ops` lives in `rewrites/graph_fuse_ops.py` as `GraphFuseOpsPass`;
`PASSES` maps each name to its module and class so that nothing is imported until a pass is used.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from xdsl.passes import ModulePass

PASSES: dict[str, tuple[str, str]] = {
    # graph level
    "graph-fold-constants": ("rewrites.graph_fold_constants", "GraphFoldConstantsPass"),
    "graph-fold-batch-norm": ("rewrites.graph_fold_batch_norm", "GraphFoldBatchNormPass"),
    "graph-simplify": ("rewrites.graph_simplify", "GraphSimplifyPass"),
    "graph-convert-layout": ("rewrites.graph_convert_layout", "GraphConvertLayoutPass"),
    "graph-winograd-conv": ("rewrites.graph_winograd_conv", "GraphWinogradConvPass"),
    "graph-fuse-ops": ("rewrites.graph_fuse_ops", "GraphFuseOpsPass"),
    # graph -> tensor_expr -> loop
    "convert-graph-to-tensor-expr": (
        "rewrites.convert_graph_to_tensor_expr", "ConvertGraphToTensorExprPass"),
    "tensor-expr-inline": ("rewrites.tensor_expr_inline", "TensorExprInlinePass"),
    "convert-tensor-expr-to-loop": (
        "rewrites.convert_tensor_expr_to_loop", "ConvertTensorExprToLoopPass"),
    # schedules
    "loop-interpret-transforms": (
        "rewrites.loop_interpret_transforms", "LoopInterpretTransformsPass"),
    "loop-default-schedule": ("rewrites.loop_default_schedule", "LoopDefaultSchedulePass"),
    "loop-gpu-default-schedule": (
        "rewrites.loop_gpu_default_schedule", "LoopGpuDefaultSchedulePass"),
    "loop-dedup-functions": ("rewrites.loop_dedup_functions", "LoopDedupFunctionsPass"),
    "loop-plan-memory": ("rewrites.loop_plan_memory", "LoopPlanMemoryPass"),
    "loop-fold-constant-nests": (
        "rewrites.loop_fold_constant_nests", "LoopFoldConstantNestsPass"),
    # loop -> llvm
    "math-polynomial-approximation": (
        "rewrites.math_polynomial_approximation", "MathPolynomialApproximationPass"),
    "convert-memref-view-to-llvm": (
        "rewrites.convert_memref_view_to_llvm", "ConvertMemrefViewToLLVMPass"),
    "convert-loop-to-llvm": ("rewrites.convert_loop_to_llvm", "ConvertLoopToLLVMPass"),
    "convert-loop-to-target-gpu": (
        "rewrites.convert_loop_to_target_gpu", "ConvertLoopToTargetGpuPass"),
    "target-gpu-lower-to-nvvm": ("rewrites.target_gpu_lower_to_nvvm", "TargetGpuLowerToNvvmPass"),
    # test only: deliberately wrong, to test `dlc-opt --check-semantics`
    "test-break-add": ("rewrites.test_break_add", "TestBreakAddPass"),
}
"""dlc's own passes: name -> (module, class). Modules not yet written are simply not listed."""


def _factory(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        return getattr(importlib.import_module(module), cls)

    return load


def available_dlc_passes() -> dict[str, tuple[str, str]]:
    """The entries of `PASSES` whose module exists in this checkout."""
    found: dict[str, tuple[str, str]] = {}
    for name, (module, cls) in PASSES.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = (module, cls)
    return found


def get_dlc_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """dlc's own passes, by name, each behind a factory that imports it on first use."""
    return {name: _factory(*entry) for name, entry in available_dlc_passes().items()}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass dlc-opt knows: xDSL's upstream passes, then dlc's and the named pipelines."""
    from xdsl.transforms import get_all_passes as upstream

    from pipelines import get_all_pipelines

    passes = dict(upstream())
    passes.update(get_dlc_passes())
    passes.update(get_all_pipelines())
    return passes
