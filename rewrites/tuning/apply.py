"""Replaying tuning records on a module: each kernel gets the best schedule recorded for it.

Counterpart: TVM's `ApplyHistoryBest` (AutoTVM) / `database.query_tuning_record` +
`ApplyDatabase` (MetaSchedule). A loop-level function whose workload key (`workload`) has a
successful record gets that record's transform script, applied to the function alone, and is
marked `dlc.scheduled` (so that `loop-default-schedule` leaves it alone) and `dlc.tuned`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dlc.dialects import make_context
from dlc.dialects.contracts import SCHEDULED_ATTR, TUNED_ATTR
from dlc.rewrites.tuning.log import Record, best_records, read_log, same_cpu_key
from dlc.rewrites.tuning.workload import Workload, kernel_functions, parse_module
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.dialects.memref import GetGlobalOp, GlobalOp
from xdsl.utils.exceptions import DiagnosticException


class TuningLogError(DiagnosticException):
    """A record's script does not apply to the kernel it was recorded for, or a log line is
    not a valid record."""


def load_best(logs: str | Path | Iterable[str | Path], target: str = "") -> dict[str, Record]:
    """The best successful record per workload key in one or more logs for the target whose
    tuning key is `target` (`tuning_key`: `llvm -mcpu=... -num-cores=N`); records of the same
    CPU at another thread count when there are none for it (they still describe good
    schedules); every record when `target` is empty. Raises `TuningLogError` naming the file
    and line of the first line that is JSON but not a valid record (a torn line is skipped)."""
    paths = [logs] if isinstance(logs, str | Path) else list(logs)
    records: list[Record] = []
    for path in paths:
        contents = read_log(path)
        if contents.invalid:
            number, problem = contents.invalid[0]
            raise TuningLogError(f"invalid tuning log record at {path}:{number}: {problem}")
        records.extend(contents.records)
    if not target:
        return best_records(records)
    best = best_records(records, target)
    if not best:
        cpu = same_cpu_key(target)
        best = best_records([r for r in records if same_cpu_key(r.target) == cpu])
    return best


def run_script(payload: ModuleOp, script: str, ctx: Context | None = None) -> None:
    """Runs the script's `@__transform_main` on `payload` in place (`loop-interpret-transforms`
    with the script nested in the payload, then erased)."""
    from dlc.rewrites.loop_interpret_transforms import LoopInterpretTransformsPass

    ctx = ctx or make_context()
    payload.body.block.add_op(parse_module(script, ctx))
    LoopInterpretTransformsPass().apply(ctx, payload)


def apply_records(module: ModuleOp, best: dict[str, Record], ctx: Context | None = None
                  ) -> dict[str, str]:
    """Schedules every kernel function of a loop-level module that has a record in `best`;
    returns {function name: workload key} of those scheduled. A record whose script is None
    marks the function scheduled as it is when the untuned kernel was fastest, and leaves it to
    `loop-default-schedule` when the default schedule was."""
    ctx = ctx or make_context()
    applied: dict[str, str] = {}
    globals_by_name = {op.sym_name.data: op for op in module.ops if isinstance(op, GlobalOp)}
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
        func.attributes[TUNED_ATTR] = StringAttr(key)
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
