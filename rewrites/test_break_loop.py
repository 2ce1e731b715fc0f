"""test-break-loop: a deliberately wrong loop-level pass, for testing `dlc-opt --check-semantics`
only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.loop.ops import ForOp
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class TestBreakLoopPass(ModulePass):
    """Swap the bounds of the first `loop.for` — a broken pass that `--check-semantics` must
    catch at the loop level.

    *Input invariant*: any module; one without a `loop.for` is left as it is.

    *Output IR*: the first `loop.for %i = %lb to %ub` (in walk order) is
    `loop.for %i = %ub to %lb`: a loop that ran `ub - lb > 0` times runs no more, so what its body
    stored is never written.

    *Invariants*: none on purpose. Test only.

    No options.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name

    name: ClassVar[str] = "test-break-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loop = next((o for o in op.walk() if isinstance(o, ForOp)), None)
        if loop is not None:
            loop.operands = (loop.ub, loop.lb, loop.step)
