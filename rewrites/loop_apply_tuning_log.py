"""The pass `loop-apply-tuning-log`: schedule the kernels that a tuning log has records for.

Counterpart: TVM's `ApplyHistoryBest` / MetaSchedule's `ApplyDatabase` context around
`relay.build`, here an ordinary pass that a pipeline runs right after the loop lowering.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from dlc.rewrites.tuning.apply import apply_records, load_best
from dlc.rewrites.tuning.log import read_log
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class LoopApplyTuningLogPass(ModulePass):
    """Schedule every kernel that the tuning log has a record for with the record's schedule.

    *Input invariant*: loop-level IR lowered the way the log's tasks were (its header's
    `loop_lowering`: `convert-tensor-expr-to-loop{fuse-epilogue=false}` for the sketch and
    template spaces, the default lowering for the rules space), before
    `loop-dedup-functions` and `loop-plan-memory`; kernels are the functions with
    `dlc.num_outputs` whose bodies hold loop blocks and call nothing.

    *Output IR*: each kernel without `dlc.scheduled` whose workload key (the hash of its
    canonical IR, `rewrites/tuning/workload.py`) has a successful record for the target gets
    the record's transform script applied to it alone, then `dlc.scheduled` and
    `dlc.tuned = "<workload key>"`; a record of the untuned kernel (no script) only marks it;
    a record saying the default schedule was fastest leaves it to `loop-default-schedule`.

    *Invariants*: kernels without a record are unchanged; a record whose script does not
    apply is an error naming the function and the record (nothing half-applied: the script
    runs on a clone); results are those of the unscheduled kernels.

    Options:
        log: the tuning log (`dlc tune --log`); an empty or missing log schedules nothing.
        target: the tuning key of the target whose records to use (`llvm -mcpu=rocketlake
            -threads=2`; records of the same CPU at another thread count when there are none
            for it); empty: the best record of each kernel whatever its target.
    """

    name: ClassVar[str] = "loop-apply-tuning-log"

    log: str = ""
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.log:
            raise PassFailedException(f"'{self.name}' expected a log option, found none")
        path = Path(self.log)
        if path.exists() and not path.is_file():
            raise PassFailedException(f"'{self.name}' expected a log file, found {path}")
        apply_records(op, load_best(path, self.target), ctx)


def log_loop_lowering(path: str | Path) -> str | None:
    """The loop lowering a log's tasks were made with (`-p` syntax): its header's, or for a log
    without a header, the default lowering when its records come from the `rules` space (which
    tunes the compile's own kernels) and the unfused one otherwise; None for a log with no
    records."""
    contents = read_log(path)
    if contents.header is not None:
        return contents.header.loop_lowering
    if not contents.records:
        return None
    if all(record.space == "rules" for record in contents.records):
        return "convert-tensor-expr-to-loop"
    return "convert-tensor-expr-to-loop{fuse-epilogue=false}"
