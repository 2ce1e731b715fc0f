"""Applying a tuning log at compile time: each kernel gets the best schedule recorded for it.

Counterpart: TVM's `ApplyHistoryBest` (AutoTVM) / `database.query_tuning_record` +
`ApplyDatabase` (MetaSchedule). A loop-level function whose workload key (autotune/workload.py)
has a successful record for this target gets that record's transform script, applied to the
function alone, and is marked `dlc.scheduled` so that `loop-default-schedule` leaves it alone;
the others keep their default schedule. `dlc.compile(path, tuning_log=F)` calls
`apply_tuning_log` through `driver.compiler.apply_tuning_log_to` right after the loop lowering.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dlc.autotune.log import Record, best_records, read_log, same_cpu_key, tuning_key
from dlc.autotune.space import run_script
from dlc.autotune.workload import Workload, kernel_functions, make_context
from dlc.dialects.contracts import SCHEDULED_ATTR
from dlc.target import CpuTarget
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.dialects.memref import GetGlobalOp, GlobalOp
from xdsl.utils.exceptions import DiagnosticException


class TuningLogError(DiagnosticException):
    """A record's script does not apply to the kernel it was recorded for."""


def load_best(logs: str | Path | Iterable[str | Path], target: CpuTarget) -> dict[str, Record]:
    """The best successful record per workload key in one or more logs, for `target` (records
    of other targets are ignored)."""
    paths = [logs] if isinstance(logs, str | Path) else list(logs)
    records = [record for path in paths for record in read_log(path).records]
    key = tuning_key(target)
    best = best_records(records, key)
    if not best:
        # Records of the same CPU at another thread count still describe good schedules.
        same_cpu = [r for r in records if same_cpu_key(r.target) == same_cpu_key(key)]
        best = best_records(same_cpu)
    return best


def apply_records(module: ModuleOp, best: dict[str, Record], ctx: Context | None = None
                  ) -> dict[str, str]:
    """Schedules every kernel function of a loop-level module that has a record in `best`;
    returns {function name: workload key} of those scheduled. A record whose script is None
    marks the function scheduled as it is when the untuned kernel was fastest, and leaves it to
    `loop-default-schedule` when the default schedule was."""
    ctx = ctx or make_context()
    applied: dict[str, str] = {}
    globals_by_name = {
        op.sym_name.data: op for op in module.ops if isinstance(op, GlobalOp)
    }
    for func in kernel_functions(module):
        if SCHEDULED_ATTR in func.attributes:
            continue
        key = Workload.from_function(func).key
        record = best.get(key)
        if record is None or record.knobs.get("baseline") == "default":
            continue  # no record, or the default schedule was fastest: leave it to that
        if record.script is not None:
            _apply_to_function(func, record, globals_by_name, ctx)
        func.attributes[SCHEDULED_ATTR] = UnitAttr()
        applied[func.sym_name.data] = key
    return applied


def _apply_to_function(func: FuncOp, record: Record, globals_by_name: dict[str, GlobalOp],
                       ctx: Context) -> None:
    """Runs the record's script on a module holding a clone of `func` (and the globals it
    reads), then moves the scheduled body back into `func`."""
    clone = func.clone()
    used = {
        op.name_.root_reference.data for op in clone.walk() if isinstance(op, GetGlobalOp)
    }
    scratch = ModuleOp([g.clone() for name, g in globals_by_name.items() if name in used])
    scratch.body.block.add_op(clone)
    try:
        assert record.script is not None
        run_script(scratch, record.script, ctx)
    except Exception as error:  # noqa: BLE001 - reported with the function and record
        raise TuningLogError(
            f"'func.func' op @{func.sym_name.data}: expected the tuning record of workload "
            f"{record.workload} (trial {record.trial}) to apply, found: {error}"
        ) from None
    old = func.body.detach_block(0)
    new = clone.body.detach_block(0)
    func.body.add_block(new)
    old.erase(safe_erase=False)


TUNING_LOOP_PASS = "convert-tensor-expr-to-loop{fuse-epilogue=false}"
"""How a pipeline that applies a log of the sketch or template spaces lowers to the loop level
(as tuning did; the `rules` space tunes the kernels of the compile's own lowering)."""


def records_fuse_epilogues(module: ModuleOp, best: dict[str, Record],
                           ctx: Context | None = None) -> bool:
    """Whether `best` was tuned on kernels lowered with epilogues fused (the `rules` space):
    true unless lowering (a copy of) the graph- or tensor_expr-level `module` as tuning does
    (`autotune.tasks.lower_model`) without fusion gives more kernels that have a record than
    lowering it with fusion."""
    from dlc.autotune.tasks import lower_model

    ctx = ctx or make_context()
    matches = {}
    for fuse in (True, False):
        lowered = lower_model(module.clone(), ctx, fuse_epilogue=fuse)
        matches[fuse] = sum(
            Workload.from_function(func).key in best for func in kernel_functions(lowered)
        )
    return matches[True] >= matches[False]


def apply_tuning_log(
    module: ModuleOp,
    tuning_log: str | Path | Iterable[str | Path],
    ctx: Context | None = None,
    *,
    target: CpuTarget,
) -> dict[str, str]:
    """The hook for a compile pipeline: schedules the kernels of a loop-level module (lowered
    with `TUNING_LOOP_PASS`, before functions are deduplicated or planned) with the log's best
    records for `target` (the compile's), and marks them `dlc.scheduled`; returns {function:
    workload key} of those scheduled."""
    return apply_records(module, load_best(tuning_log, target), ctx)
