"""How every dlc command-line tool turns a failure into a diagnostic and exit code 1.

A user of a tool sees a message that names what went wrong and where, never a Python traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from dlc.runtime.files import write_atomically
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError


class ToolError(Exception):
    """A user-facing error raised by a tool: the message is printed as is, exit code 1."""


def run_tool(name: str, body: Callable[[], None], show_traceback: bool = False) -> int:
    """Run `body`, print any failure as `<name>: error: ...` on stderr, return the exit code.
    Warnings `body` raises (a declared output shape the importer overrides, ...) are printed as
    `<name>: warning: ...` and do not change the exit code."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(name)
            body()
    except SystemExit as e:
        # argparse exits 2 on bad arguments after printing usage; dlc's tools exit 1 on any error.
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return 1 if code == 2 else code
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader of the output left (`dlc-opt ... | head`): stop quietly, as a C tool would.
        # Python would flush stdout again at exit and complain: point it at /dev/null.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ParseError, DiagnosticException, ToolError) as e:
        print(f"{name}: error: {str(e).rstrip()}", file=sys.stderr)
        for note in getattr(e, "__notes__", []):
            print(_annotated_excerpt(note), file=sys.stderr)
        return 1
    except ArgSpecParseError as e:
        print(f"{name}: error: invalid pass pipeline: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the last line of defence against a traceback
        if show_traceback:
            raise
        print(f"{name}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


def _warning_printer(name: str) -> Callable[..., None]:
    """A `warnings.showwarning` that prints `<name>: warning: <message>` on stderr."""

    def show(message: Warning | str, *_: object, **__: object) -> None:
        print(f"{name}: warning: {message}", file=sys.stderr)

    return show


def _annotated_excerpt(note: str, context: int = 3) -> str:
    """The lines of xDSL's annotated IR dump around the failing op (marked with `^^^`)."""
    lines = note.splitlines()
    marks = [i for i, line in enumerate(lines) if line.lstrip().startswith("^^^")]
    if not marks:
        return note.rstrip()
    first = marks[0]
    end = first + 1
    while end < len(lines) and not set(lines[end].strip()) <= {"-"}:
        end += 1
    return "\n".join(lines[max(0, first - context): end + 1])


_UNSAFE_FILE_CHAR = re.compile(r"[^A-Za-z0-9_.-]")


def output_file_names(names: list[str]) -> list[str]:
    """One `.npy` file name per output name, each a plain name inside the output directory
    and all different: characters other than letters, digits, `_`, `.` and `-` become `_`
    (so no `/`), a leading `.` becomes `_` (no `..`, no hidden file), and a name already
    taken (`y:0` and `y_0` both give `y_0`; compared ignoring case, for case-insensitive
    file systems) gets a suffix `_1`, `_2`, ..."""
    files: list[str] = []
    taken: set[str] = set()
    for name in names:
        stem = _UNSAFE_FILE_CHAR.sub("_", name) or "output"
        if stem.startswith("."):
            stem = "_" + stem[1:]
        candidate, suffix = stem, 0
        while candidate.lower() in taken:
            suffix += 1
            candidate = f"{stem}_{suffix}"
        taken.add(candidate.lower())
        files.append(f"{candidate}.npy")
    return files


def save_outputs(directory: Path, outputs: Mapping[str, np.ndarray], tool: str) -> None:
    """Save each output as a `.npy` file in `directory` (`output_file_names`), each written
    atomically, and print which file holds which output."""
    directory.mkdir(parents=True, exist_ok=True)
    files = output_file_names(list(outputs))
    for file, array in zip(files, outputs.values(), strict=True):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        write_atomically(directory / file, buffer.getvalue())
    print(f"{tool}: wrote {len(files)} outputs to {directory}")
    for name, file in zip(outputs, files, strict=True):
        print(f"  {name}: {directory / file}")
