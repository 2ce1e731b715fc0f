"""graph-mark-valid-extents: check the uses of data-dependent extents and mark the results the
runtimes trim (XLA's dynamic padder, with static bounds; `dialects.graph.extents`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.graph.extents import ExtentError, mark_valid_extents
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class GraphMarkValidExtentsPass(ModulePass):
    """Mark the results padded by `graph.nonzero` / `graph.non_max_suppression` for trimming.

    *Input invariant*: graph-level functions, before `graph-fuse-ops` (a fused group is a
    region, which this pass does not look into). The ONNX importer runs the same marking, so an
    imported model needs no pass; IR written by hand runs it before lowering.

    *Output IR*: every public function whose result carries a data-dependent valid extent (the
    padded result of a nonzero or non_max_suppression, through ops that ignore the padding)
    returns the count as one more result, marked `dlc.extent_count`, and the padded result is
    marked `dlc.valid_extent = array<i64: axis, count result>`. A consumer that would read the
    padding (a reduction, a matmul, a slice or concat of the padded axis, control flow) fails
    the pass with an error naming it and the data-dependent op.

    *Invariants*: no op is changed; a function already marked is left alone (idempotent).

    No options.
    """

    name: ClassVar[str] = "graph-mark-valid-extents"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            try:
                mark_valid_extents(function)
            except ExtentError as e:
                raise PassFailedException(str(e)) from None
