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
    "graph-fold-constants": ("dlc.rewrites.graph_fold_constants", "GraphFoldConstantsPass"),
    "graph-fold-lookup-tables": ("dlc.rewrites.graph_fold_lookup_tables",
                                 "GraphFoldLookupTablesPass"),
    "graph-fold-batch-norm": ("dlc.rewrites.graph_fold_batch_norm", "GraphFoldBatchNormPass"),
    "graph-fold-qdq": ("dlc.rewrites.graph_fold_qdq", "GraphFoldQdqPass"),
    "graph-simplify": ("dlc.rewrites.graph_simplify", "GraphSimplifyPass"),
    "graph-mark-valid-extents": (
        "dlc.rewrites.graph_mark_valid_extents", "GraphMarkValidExtentsPass"),
    "graph-convert-layout": ("dlc.rewrites.graph_convert_layout", "GraphConvertLayoutPass"),
    "graph-winograd-conv": ("dlc.rewrites.graph_winograd_conv", "GraphWinogradConvPass"),
    "graph-conv-column-to-row": (
        "dlc.rewrites.graph_conv_column_to_row", "GraphConvColumnToRowPass"),
    "graph-conv-subsample": ("dlc.rewrites.graph_conv_subsample", "GraphConvSubsamplePass"),
    "graph-batch-rows": ("dlc.rewrites.graph_batch_rows", "GraphBatchRowsPass"),
    "graph-conv-split-bands": ("dlc.rewrites.graph_conv_split_bands", "GraphConvSplitBandsPass"),
    "graph-conv-transpose-to-subpixel": (
        "dlc.rewrites.graph_conv_transpose_to_subpixel", "GraphConvTransposeToSubpixelPass"),
    "graph-to-low-precision": (
        "dlc.rewrites.graph_to_low_precision", "GraphToLowPrecisionPass"),
    "graph-fuse-ops": ("dlc.rewrites.graph_fuse_ops", "GraphFuseOpsPass"),
    "graph-annotate-target": (
        "dlc.rewrites.graph_annotate_target", "GraphAnnotateTargetPass"),
    "graph-merge-regions": ("dlc.rewrites.graph_merge_regions", "GraphMergeRegionsPass"),
    "graph-partition": ("dlc.rewrites.graph_partition", "GraphPartitionPass"),
    # graph -> tensor_expr -> loop
    "convert-graph-to-tensor-expr": (
        "dlc.rewrites.convert_graph_to_tensor_expr", "ConvertGraphToTensorExprPass"),
    "tensor-expr-inline": ("dlc.rewrites.tensor_expr_inline", "TensorExprInlinePass"),
    "convert-tensor-expr-to-loop": (
        "dlc.rewrites.convert_tensor_expr_to_loop", "ConvertTensorExprToLoopPass"),
    # schedules
    "loop-interpret-transforms": (
        "dlc.rewrites.loop_interpret_transforms", "LoopInterpretTransformsPass"),
    "loop-default-schedule": ("dlc.rewrites.loop_default_schedule", "LoopDefaultSchedulePass"),
    "loop-gpu-default-schedule": (
        "dlc.rewrites.loop_gpu_default_schedule", "LoopGpuDefaultSchedulePass"),
    "loop-apply-tuning-log": ("dlc.rewrites.loop_apply_tuning_log", "LoopApplyTuningLogPass"),
    "loop-dedup-functions": ("dlc.rewrites.loop_dedup_functions", "LoopDedupFunctionsPass"),
    "loop-plan-memory": ("dlc.rewrites.loop_plan_memory", "LoopPlanMemoryPass"),
    "loop-fold-constant-nests": (
        "dlc.rewrites.loop_fold_constant_nests", "LoopFoldConstantNestsPass"),
    "loop-fuse-nests": ("dlc.rewrites.loop_fuse_nests", "LoopFuseNestsPass"),
    "loop-collapse-parallel": (
        "dlc.rewrites.loop_collapse_parallel", "LoopCollapseParallelPass"),
    # loop -> llvm
    "math-polynomial-approximation": (
        "dlc.rewrites.math_polynomial_approximation", "MathPolynomialApproximationPass"),
    "loop-linearize-runtime-strides": (
        "dlc.rewrites.loop_linearize_runtime_strides", "LoopLinearizeRuntimeStridesPass"),
    "convert-memref-view-to-llvm": (
        "dlc.rewrites.convert_memref_view_to_llvm", "ConvertMemrefViewToLLVMPass"),
    "convert-loop-to-llvm": ("dlc.rewrites.convert_loop_to_llvm", "ConvertLoopToLLVMPass"),
    # loop -> target_gpu: outline kernels, then make them SIMT code, one job per pass
    "convert-loop-to-target-gpu": (
        "dlc.rewrites.convert_loop_to_target_gpu", "ConvertLoopToTargetGpuPass"),
    "target-gpu-compact-private-buffers": (
        "dlc.rewrites.target_gpu_compact_private_buffers", "TargetGpuCompactPrivateBuffersPass"),
    "target-gpu-insert-barriers": (
        "dlc.rewrites.target_gpu_insert_barriers", "TargetGpuInsertBarriersPass"),
    "target-gpu-map-bound-loops": (
        "dlc.rewrites.target_gpu_map_bound_loops", "TargetGpuMapBoundLoopsPass"),
    "target-gpu-unroll": ("dlc.rewrites.target_gpu_unroll", "TargetGpuUnrollPass"),
    "target-gpu-vectorize": ("dlc.rewrites.target_gpu_vectorize", "TargetGpuVectorizePass"),
    "target-gpu-lower-to-nvvm": (
        "dlc.rewrites.target_gpu_lower_to_nvvm", "TargetGpuLowerToNvvmPass"),
    # test only: deliberately wrong, to test `dlc-opt --check-semantics`
    "test-break-add": ("dlc.rewrites.test_break_add", "TestBreakAddPass"),
    "test-break-loop": ("dlc.rewrites.test_break_loop", "TestBreakLoopPass"),
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
    """Every pass: xDSL's upstream passes, then dlc's (the named pipelines, a layer above, are
    added by `dlc.pipelines.get_pipeline_registry`)."""
    from xdsl.transforms import get_all_passes as upstream

    passes = dict(upstream())
    passes.update(get_dlc_passes())
    return passes
