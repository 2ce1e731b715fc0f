"""Heterogeneous compilation: each op on the first target that supports it (GPU, then CPU).

Counterpart: TVM's BYOC flow (`AnnotateTarget` → `MergeCompilerRegions` → `PartitionGraph`,
then one module per external compiler) and Relay's heterogeneous execution with device copies.
The model's graph is folded (`graph-opt`'s folds), then partitioned by `graph-annotate-target
{targets="<target>,<fallback>"}`, `graph-merge-regions` and `graph-partition`; each region's
function is compiled on its own for its target (an OpenCL program, or native CPU code), and
`HeterogeneousExecutable` runs the entry function's calls in order on the host. The copies at
region boundaries are the regions' own: a GPU region uploads its arguments and downloads its
results (host arrays in between), a CPU region works on the host arrays in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from dlc.dialects import make_context
from dlc.dialects.graph.interpreter import IMPLEMENTATIONS
from dlc.dialects.graph.ops import ConstantOp
from dlc.driver.errors import CompileError
from dlc.driver.source import ModelSource, Source
from dlc.pipelines import PipelineError, parse_pipeline
from dlc.rewrites.partition_targets import TARGET_ATTR, known_targets
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException

GRAPH_FOLDS = "graph-fold-constants,graph-simplify,graph-fold-batch-norm,graph-simplify,cse,dce"
"""The graph folds run before partitioning (those every pipeline starts with)."""

PARTITION = "graph-annotate-target{{targets=\"{targets}\"}},graph-merge-regions,graph-partition"


@dataclass
class Region:
    """One partitioned region: its function's name, its target and its compiled executable."""

    name: str
    target: str
    executable: Any


class HeterogeneousExecutable:
    """The entry function of a partitioned model, run on the host: constants, then each
    region's executable in program order (`m(x, ...)` as `Executable`)."""

    def __init__(self, entry: func.FuncOp, regions: Mapping[str, Region]) -> None:
        self.entry = entry
        self.regions = dict(regions)

    @property
    def num_inputs(self) -> int:
        """The number of inputs."""
        return len(self.entry.function_type.inputs)

    def __call__(self, *inputs: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
        if len(inputs) != self.num_inputs:
            raise ValueError(f"expected {self.num_inputs} inputs, found {len(inputs)}")
        values: dict[SSAValue, np.ndarray] = dict(
            zip(self.entry.body.block.args, (np.asarray(x) for x in inputs), strict=True)
        )
        for op in self.entry.body.block.ops:
            if isinstance(op, ConstantOp):
                values[op.results[0]] = np.asarray(IMPLEMENTATIONS[ConstantOp](op, []))
            elif isinstance(op, func.CallOp):
                region = self.regions[op.callee.string_value()]
                found = region.executable(*(values[v] for v in op.arguments))
                results = found if isinstance(found, tuple | list) else (found,)
                values.update(zip(op.results, results, strict=True))
            elif isinstance(op, func.ReturnOp):
                outputs = tuple(values[v] for v in op.arguments)
                return outputs[0] if len(outputs) == 1 else outputs
            else:
                raise CompileError(f"'{op.name}' op is not in any region: it has no target")
        raise CompileError("the entry function has no func.return")


def region_module(function: func.FuncOp) -> ModuleOp:
    """A module whose public `@main` is a copy of the region `function`."""
    clone = function.clone()
    clone.sym_name = StringAttr("main")
    clone.sym_visibility = None
    del clone.attributes[TARGET_ATTR]
    return ModuleOp([clone])


def _compile_region(module: ModuleOp, target: str, options: Mapping[str, Any]) -> Any:
    from dlc.driver.build import build

    return build(module, target, **options)


def build_heterogeneous(
    model: ModelSource,
    target: str,
    fallback: str,
    *,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    **cpu_options: Any,
) -> HeterogeneousExecutable:
    """Compile `model` with each op on `target` if it supports it, else on `fallback`.

    Args:
        model: as for `dlc.compile`, at the graph level.
        target: a partition target (`opencl`, `llvm`).
        fallback: the partition target of the ops `target` lacks (`llvm`).
        input_shapes: as for `dlc.compile`.
        cpu_options: options of `build` for the CPU regions (threads, opt_level, cache, ...).

    Raises:
        CompileError: an unknown target (the message lists the known ones), or the model or a
            region does not compile.
    """
    for name in (target, fallback):
        if name not in known_targets():
            raise CompileError(
                f"unknown partition target '{name}' (known targets: {', '.join(known_targets())})"
            )
    ctx = make_context()
    try:
        module = Source(model, input_shapes).module(ctx)
        spec = f"{GRAPH_FOLDS},{PARTITION.format(targets=f'{target},{fallback}')}"
        PassPipeline(parse_pipeline(spec)).apply(ctx, module)
    except (DiagnosticException, PipelineError) as e:
        raise CompileError(str(e)) from None
    entries = [f for f in module.ops if isinstance(f, func.FuncOp)
               and f.sym_visibility is None and f.body.blocks]
    if len(entries) != 1:
        raise CompileError(f"expected one entry function, found {len(entries)}")
    regions: dict[str, Region] = {}
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        mark = function.attributes.get(TARGET_ATTR)
        if not isinstance(mark, StringAttr):
            continue
        name = function.sym_name.data
        region_target = "host" if mark.data == "llvm" else mark.data
        options = dict(cpu_options) if region_target == "host" else {}
        regions[name] = Region(name, mark.data,
                               _compile_region(region_module(function), region_target, options))
    return HeterogeneousExecutable(entries[0], regions)
