"""The targets a graph can be partitioned between, each with its per-op support predicate.

Counterpart: TVM's BYOC `target.<name>` op attributes (`tvm.ir.register_op_attr(op,
"target.dnnl")`) read by `AnnotateTarget`. A target says which graph ops it can run;
`graph-annotate-target` gives each op the first target of its list that supports it. Targets
register themselves with `register_partition_target`; `llvm` (the CPU), `opencl` (GPUs) and
`cblas` (an external library: `driver.byoc` generates its code) are built in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dlc.dialects.graph.custom import CustomOp, lookup_custom_op
from dlc.dialects.graph.ops import MatmulOp
from dlc.rewrites.topi import lookup_definition
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

TARGET_ATTR = "dlc.partition_target"
"""The attribute of a graph op (set by graph-annotate-target) and of a partitioned region's
function (set by graph-partition) naming the target that runs it."""

REGION_ATTR = "dlc.partition_region"
"""The attribute of a graph op giving the index of its region (set by graph-merge-regions)."""


@dataclass(frozen=True)
class PartitionTarget:
    """A target a region can run on: its name and which graph ops it supports."""

    name: str
    supports: Callable[[Operation], bool]
    summary: str
    external: bool = False
    """Whether an external library computes its regions (BYOC): graph-partition then passes
    the constants a region reads as arguments instead of copying them in."""


def _has_compute(op: Operation) -> bool:
    return lookup_definition(type(op)) is not None


def _is_extern_call(op: Operation) -> bool:
    if not isinstance(op, CustomOp):
        return False
    definition = lookup_custom_op(op.op_type.data)
    return definition is not None and definition.extern is not None


_TARGETS: dict[str, PartitionTarget] = {}


def register_partition_target(target: PartitionTarget) -> PartitionTarget:
    """Adds `target`; a second target of the same name is an error."""
    if target.name in _TARGETS:
        raise ValueError(f"partition target '{target.name}' is already registered")
    _TARGETS[target.name] = target
    return target


register_partition_target(PartitionTarget(
    "llvm", _has_compute, "the CPU: every graph op with a compute definition"))
register_partition_target(PartitionTarget(
    "opencl", lambda op: _has_compute(op) and not _is_extern_call(op),
    "OpenCL devices: ops with a compute definition, but no calls of external C functions"))


def _is_f32_matrix_product(op: Operation) -> bool:
    if not isinstance(op, MatmulOp):
        return False
    types = [op.lhs.type, op.rhs.type, op.result.type]
    return all(isinstance(t, TensorType) and t.get_element_type() == f32
               and len(t.get_shape()) == 2 for t in types)


register_partition_target(PartitionTarget(
    "cblas", _is_f32_matrix_product,
    "OpenBLAS's cblas_sgemm (scipy-openblas32): 2-D f32 graph.matmul", external=True))


def known_targets() -> list[str]:
    """The names of the registered partition targets, sorted."""
    return sorted(_TARGETS)


def partition_target(name: str) -> PartitionTarget:
    """The target `name`.

    Raises:
        PassFailedException: no target has that name (the message lists the known ones).
    """
    target = _TARGETS.get(name)
    if target is None:
        raise PassFailedException(
            f"unknown partition target '{name}' (known targets: {', '.join(known_targets())})"
        )
    return target
