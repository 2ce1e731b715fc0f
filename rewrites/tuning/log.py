"""The tuning log: append-only JSON lines, one record per measured trial (TVM's tuning records).

Each record is one line written with a single `os.write` of the whole line followed by
`os.fsync`, so a kill at any moment leaves at most one torn line, the last one. Opening a log
for appending first terminates a torn last line with a newline, and readers skip lines that do
not parse (and say how many), so a resumed run appends cleanly after a crash.

Record fields (format version `FORMAT_VERSION`):
    v: format version; workload: workload key (hash of the canonical kernel IR); task: a
    readable name; target: the target key (`tuning_key`: `llvm -mcpu=znver4 -num-cores=2`);
    space: the space's name; script: the schedule as transform-script text (null: the untuned
    kernel); knobs: knob values; costs: seconds per run (median is the cost; empty on error);
    error: null or {"kind": invalid|build|crash|timeout|wrong|run, "message": ...}; flops: FLOPs per
    run; trial: index within the task; time: UNIX time of the measurement; build_s, run_s:
    how long building and running took.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dlc.target import CpuTarget

FORMAT_VERSION = 1
"""The version written in every record; readers skip records of other versions."""

ERROR_KINDS: tuple[str, ...] = ("invalid", "build", "crash", "timeout", "wrong", "run")
"""Why a trial has no cost: rejected before building, failed to build (a schedule precondition,
LLVM), crashed while running, ran past the timeout, computed a wrong result, failed otherwise."""


@dataclass
class Record:
    """One measured (or failed) trial."""

    workload: str
    target: str
    script: str | None
    knobs: dict[str, Any] = field(default_factory=dict)
    costs: list[float] = field(default_factory=list)
    error: dict[str, str] | None = None
    flops: float = 0.0
    task: str = ""
    space: str = ""
    trial: int = 0
    time: float = field(default_factory=time.time)
    build_s: float = 0.0
    run_s: float = 0.0
    v: int = FORMAT_VERSION

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.costs)

    @property
    def cost(self) -> float:
        """The median run time in seconds (infinite for a failed trial)."""
        return statistics.median(self.costs) if self.ok else float("inf")

    @property
    def gflops(self) -> float:
        return self.flops / self.cost / 1e9 if self.ok and self.cost > 0 else 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> Record:
        """The record of a log line. Raises `json.JSONDecodeError` for a line that is not JSON (a
        torn line), `ValueError` naming the field for a JSON line that is not a record."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, found {_json_kind(data)}")
        for name in ("workload", "target"):
            if name not in data:
                raise ValueError(f"expected a '{name}' field, found none")
        for name, kinds in _FIELD_KINDS.items():
            if name in data and not isinstance(data[name], kinds):
                raise ValueError(f"expected '{name}' to be {_KIND_NAMES[name]}, found "
                                 f"{_json_kind(data[name])}")
        costs, error = data.get("costs", []), data.get("error")
        if any(isinstance(c, bool) or not isinstance(c, int | float) for c in costs):
            raise ValueError("expected 'costs' to be a list of numbers")
        if error is not None and not all(isinstance(v, str) for v in error.values()):
            raise ValueError("expected 'error' to map names to strings")
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


_FIELD_KINDS: dict[str, type | tuple[type, ...]] = {
    "workload": str, "target": str, "script": (str, type(None)), "knobs": dict, "costs": list,
    "error": (dict, type(None)), "flops": (int, float), "task": str, "space": str,
    "trial": int, "time": (int, float), "build_s": (int, float), "run_s": (int, float),
    "v": int,
}
_KIND_NAMES = {
    "workload": "a string", "target": "a string", "script": "a string or null",
    "knobs": "an object", "costs": "a list", "error": "an object or null", "flops": "a number",
    "task": "a string", "space": "a string", "trial": "an integer", "time": "a number",
    "build_s": "a number", "run_s": "a number", "v": "an integer",
}


def _json_kind(value: object) -> str:
    """What a JSON value is, for a message: 'a list', 'a string', ..."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class LogHeader:
    """How a log's kernels were made, written as its first line: a compile that applies the log
    must lower its model the same way for the records' workload keys to match its kernels.

    Attributes:
        graph_passes: the graph-level passes the tasks were extracted after (`-p` syntax).
        loop_lowering: the passes that lowered them to loops (`-p` syntax), e.g. with
            `convert-tensor-expr-to-loop{fuse-epilogue=false}` for the sketch space.
        space: the search space the records come from.
    """

    graph_passes: str
    loop_lowering: str
    space: str = ""
    v: int = FORMAT_VERSION

    def to_json(self) -> str:
        return json.dumps({"header": asdict(self)}, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> LogHeader:
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


class LogWriter:
    """Appends records to a log file, each with one write and an fsync; a new (empty) log
    starts with `header` when one is given."""

    def __init__(self, path: str | Path, header: LogHeader | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._terminate_torn_line()
        if header is not None and os.fstat(self._fd).st_size == 0:
            self._write_line(header.to_json())

    def _terminate_torn_line(self) -> None:
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        with open(self.path, "rb") as f:
            f.seek(size - 1)
            last = f.read(1)
        if last != b"\n":
            os.write(self._fd, b"\n")
            os.fsync(self._fd)

    def write(self, record: Record) -> None:
        self._write_line(record.to_json())

    def _write_line(self, line: str) -> None:
        data = (line + "\n").encode()
        written = os.write(self._fd, data)
        if written != len(data):
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()


@dataclass
class LogContents:
    """What a log holds: its records in order, how many lines were skipped, and its header
    (None for a log written before headers, or by a tuner of single kernels)."""

    records: list[Record]
    skipped: int = 0
    header: LogHeader | None = None
    invalid: list[tuple[int, str]] = field(default_factory=list)
    """(line number, what is wrong) of each JSON line that is not a valid record (also counted
    in `skipped`): not a torn line, but a log written or edited by something else."""


def read_log(path: str | Path) -> LogContents:
    """All records of a log (missing file: none). Lines that do not parse as a record of this
    format version (a torn line from a kill, a record of another version) are skipped; those
    that are JSON but not a valid record are also listed in `invalid`."""
    path = Path(path)
    if not path.exists():
        return LogContents([])
    records: list[Record] = []
    skipped = 0
    header: LogHeader | None = None
    invalid: list[tuple[int, str]] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            if line.startswith('{"header":'):
                try:
                    header = LogHeader.from_data(json.loads(line)["header"])
                except (ValueError, TypeError, KeyError):
                    skipped += 1
                continue
            try:
                record = Record.from_json(line)
            except json.JSONDecodeError:
                skipped += 1  # a torn line
                continue
            except (ValueError, TypeError) as e:
                skipped += 1
                invalid.append((number, str(e)))
                continue
            if record.v != FORMAT_VERSION:
                skipped += 1
                continue
            records.append(record)
    return LogContents(records, skipped, header, invalid)


def iter_records(paths: Iterable[str | Path]) -> Iterator[Record]:
    for path in paths:
        yield from read_log(path).records


def tuning_key(target: CpuTarget) -> str:
    """The target a record was measured on, as records name it: the CPU and the threads of
    its description (`llvm -mcpu=znver4 -num-cores=2`, itself a target string)."""
    return f"llvm -mcpu={target.cpu} -num-cores={target.threads}"


def same_cpu_key(key: str) -> str:
    """A record's target key without its thread count (records of logs written before the key
    said `-num-cores` said `-threads`)."""
    return key.split(" -num-cores=")[0].split(" -threads=")[0]


def is_default(record: Record) -> bool:
    """Whether `record` measured `loop-default-schedule`'s schedule (the 'default' baseline)."""
    return record.script is None and record.knobs.get("baseline") == "default"


def spread(record: Record) -> float:
    """How far apart a record's run times are (its largest less its smallest)."""
    return max(record.costs) - min(record.costs) if record.costs else math.inf


def beats_beyond_noise(candidate: Record, incumbent: Record) -> bool:
    """Whether `candidate` is faster than `incumbent` by more than the spread of either's run
    times: a difference within the noise of the measurements does not count."""
    if not candidate.ok or not incumbent.ok:
        return candidate.ok
    margin = max(spread(candidate), spread(incumbent))
    return incumbent.cost - candidate.cost > margin


def best_records(records: Iterable[Record], target: str | None = None) -> dict[str, Record]:
    """The fastest schedule per workload key (on `target`, if given), as its last successful
    record holding the run times of all its successful records: a schedule measured several
    times (the tuner's confirmation rounds) is judged on all its measurements, not on the
    luckiest one. A schedule is its script and knobs (the baselines have no script). Where
    the default schedule was measured, it stays the best unless the fastest tuned schedule
    (one with a script) beats it beyond the noise of their run times (`beats_beyond_noise`):
    tuning never trades the default for a schedule that is only luckier, nor for the untuned
    kernel, a baseline that was never checked against it."""
    pooled: dict[tuple[str, str, str], Record] = {}
    for record in records:
        if not record.ok:
            continue
        if target is not None and record.target != target:
            continue
        key = (record.workload, record.script or "",
               json.dumps(record.knobs, sort_keys=True, default=str))
        earlier = pooled.get(key)
        costs = [*earlier.costs, *record.costs] if earlier is not None else list(record.costs)
        pooled[key] = dataclasses.replace(record, costs=costs)
    best: dict[str, Record] = {}
    scheduled: dict[str, Record] = {}
    for record in pooled.values():
        for fastest in (best, scheduled) if record.script is not None else (best,):
            current = fastest.get(record.workload)
            if current is None or record.cost < current.cost:
                fastest[record.workload] = record
    for default in (r for r in pooled.values() if is_default(r)):
        rival = scheduled.get(default.workload)
        beaten = rival is not None and beats_beyond_noise(rival, default)
        best[default.workload] = rival if beaten and rival is not None else default
    return best
