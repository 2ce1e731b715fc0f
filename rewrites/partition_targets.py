"""The targets a graph can be partitioned between, each with its per-op support predicate.

Counterpart: TVM's BYOC `target.<name>` op attributes (`tvm.ir.register_op_attr(op,
"target.dnnl")`) read by `AnnotateTarget`. A target says which graph ops it can run;
`graph-annotate-target` gives each op the first target of its list that supports it. Targets
register themselves with `register_partition_target`; `llvm` (the CPU), `opencl` (GPUs) and
`cblas` and `onednn` (external libraries: `driver.byoc` generates their code) are built in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dlc.dialects.graph.custom import CustomOp, lookup_custom_op
from dlc.dialects.graph.ops import AvgPool2DOp, Conv2DOp, MatmulOp, MaxPool2DOp, ReluOp
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


def _f32_tensors(op: Operation, rank: int | None = None) -> bool:
    types = [v.type for v in (*op.operands, *op.results)]
    return all(isinstance(t, TensorType) and t.get_element_type() == f32
               and (rank is None or len(t.get_shape()) == rank) for t in types)


def _onednn_supports(op: Operation) -> bool:
    """The ops `driver/byoc_onednn.py` makes oneDNN primitives of (f32, plain layouts)."""
    if isinstance(op, Conv2DOp):
        return (_f32_tensors(op, None) and op.layout.data == "NCHW"
                and op.kernel_layout.data == "OIHW" and len(_shape(op.input)) == 4)
    if isinstance(op, MaxPool2DOp | AvgPool2DOp):
        dilation = getattr(op, "dilation", None)
        undilated = dilation is None or all(d == 1 for d in dilation.get_values())
        return (_f32_tensors(op, 4) and op.layout.data == "NCHW"
                and not op.ceil_mode.value.data and undilated)
    if isinstance(op, MatmulOp):
        return _f32_tensors(op, 2)
    if isinstance(op, ReluOp):
        return _f32_tensors(op)
    return False


def _shape(value: object) -> tuple[int, ...]:
    type = getattr(value, "type", None)
    return tuple(type.get_shape()) if isinstance(type, TensorType) else ()


register_partition_target(PartitionTarget(
    "onednn", _onednn_supports,
    "oneDNN primitives (onednn, onednn-devel): f32 NCHW conv2d, max/avg pool, 2-D matmul, "
    "relu (fused into a conv or matmul it follows)", external=True))


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
