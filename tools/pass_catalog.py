"""dlc-opt's catalog of passes: what `--help`, `--list-passes` and `--help-pass NAME` print.

mlir-opt lists its passes in `--help`; dlc-opt lists dlc's passes and named pipelines first, each
with the first line of its docstring, then its targets, then xDSL's upstream passes by name.
Building the catalog imports every dlc pass module, which only these flags do: a normal run
imports just the passes it runs.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dlc.tools.diagnostics import ToolError
from xdsl.passes import ModulePass
from xdsl.utils.hints import type_repr

PassFactory = Callable[[], type[ModulePass]]


def docstring(cls: type) -> str:
    """The class's own docstring, dedented; "" if it has none (not the dataclass signature)."""
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(f"{cls.__name__}("):  # what @dataclass writes for an undocumented class
        return ""
    return inspect.cleandoc(doc)


def summary(cls: type) -> str:
    """The first line of the class's docstring."""
    doc = docstring(cls)
    return doc.splitlines()[0] if doc else "(undocumented)"


def _option_value(value: Any) -> str:
    """`value` as a pass option is written in `-p`: true, 8,4, NHWC."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return ",".join(_option_value(v) for v in value) or "(empty)"
    if isinstance(value, str) and (not value or any(c in value for c in " ,{}=\"'")):
        return '"' + value.replace('"', '\\"') + '"'
    return str(value)


def option_lines(cls: type[ModulePass]) -> list[str]:
    """One line per option of the pass (a field of its dataclass): `name: type = default`."""
    lines: list[str] = []
    for field in dataclasses.fields(cls):
        kind = field.type if isinstance(field.type, str) else type_repr(field.type)
        name = field.name.replace("_", "-")
        if field.default is not dataclasses.MISSING:
            lines.append(f"{name}: {kind} = {_option_value(field.default)}")
        elif field.default_factory is not dataclasses.MISSING:
            lines.append(f"{name}: {kind} = {_option_value(field.default_factory())}")
        else:
            lines.append(f"{name}: {kind} (required)")
    return lines


def _wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """`text` wrapped to `width` columns, never breaking a name at its hyphens."""
    return textwrap.wrap(
        text, max(width, 20), initial_indent=indent if first is None else first,
        subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)


def _table(rows: Iterable[tuple[str, str]], width: int) -> list[str]:
    """`name  summary` rows, summaries wrapped in a column, as argparse lays out its options."""
    rows = list(rows)
    column = min(max(len(name) for name, _ in rows) + 4, 34)
    lines: list[str] = []
    for name, text in rows:
        wrapped = _wrap(text, width - column) or [""]
        head = f"  {name}"
        if len(head) + 2 > column:
            lines.append(head)
            head = ""
        lines.append(head.ljust(column) + wrapped[0])
        lines.extend(" " * column + rest for rest in wrapped[1:])
    return lines


def dlc_pass_classes() -> dict[str, type[ModulePass]]:
    """dlc's own passes by name, in the registry's order (imports every pass module)."""
    from dlc.rewrites import get_dlc_passes

    return {name: factory() for name, factory in get_dlc_passes().items()}


def pipeline_summaries() -> dict[str, str]:
    """The named pipelines and what each is for."""
    from dlc.pipelines import PIPELINES

    return {name: pipeline.summary for name, pipeline in PIPELINES.items()}


def help_catalog(upstream_targets: Iterable[str], width: int) -> str:
    """`--help`'s list of dlc's passes, named pipelines and targets, before the options."""
    from dlc.codegen import TARGETS

    passes = dlc_pass_classes()
    lines = [
        *_wrap("dlc passes (-p 'pass,pass{option=value ...}'; dlc-opt --list-passes shows their "
               "options, dlc-opt --help-pass NAME one pass's documentation):", width),
        *_table(((name, summary(cls)) for name, cls in passes.items()), width),
        "",
        "named pipelines (each runs as one pass in -p):",
        *_table(pipeline_summaries().items(), width),
        "",
        "targets (-t NAME; without -t, dlc-opt prints the IR):",
        *_table(((name, entry.summary) for name, entry in TARGETS.items()), width),
        *_wrap("and xDSL's: " + ", ".join(upstream_targets), width, indent="    ", first="  "),
    ]
    return "\n".join(lines)


def upstream_pass_names(available: Iterable[str]) -> list[str]:
    """The passes of `available` that are xDSL's, not dlc's passes or pipelines, sorted."""
    from dlc.rewrites import available_dlc_passes

    own = {*available_dlc_passes(), *pipeline_summaries()}
    return sorted(name for name in available if name not in own)


def upstream_epilog(available: Iterable[str], width: int) -> str:
    """`--help`'s closing list of xDSL's upstream passes, also usable in -p."""
    title = _wrap(
        "upstream xDSL passes, also usable in -p (dlc-opt --help-pass NAME prints a pass's "
        "docstring):", width)
    return "\n".join([*title, *_wrap(", ".join(upstream_pass_names(available)), width, "  ")])


def _entry(name: str, text: str, cls: type[ModulePass], width: int) -> list[str]:
    """A pass of `--list-passes`: its name, then its summary and options, indented."""
    lines = [f"  {name}"]
    lines.extend(_wrap(text, width, indent="    "))
    options = option_lines(cls)
    if options:
        lines.append("    options:")
        lines.extend(f"      {option}" for option in options)
    return lines


def list_passes(available: Mapping[str, PassFactory], width: int) -> str:
    """`--list-passes`: every dlc pass and named pipeline, its summary and its options."""
    lines = ["dlc passes:"]
    for name, cls in dlc_pass_classes().items():
        lines.extend(_entry(name, summary(cls), cls, width))
    lines += ["", "named pipelines (dlc-opt --help-pass NAME shows a pipeline's passes):"]
    for name, text in pipeline_summaries().items():
        lines.extend(_entry(name, text, available[name](), width))
    lines.append("")
    lines.append("upstream xDSL passes (dlc-opt --help-pass NAME documents one):")
    lines.extend(_wrap(", ".join(upstream_pass_names(available)), width, "  "))
    return "\n".join(lines)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`did you mean 'a' or 'b'` with the known names closest to `name`, or "" if none is."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    if not close:
        return ""
    return "did you mean " + " or ".join(f"'{c}'" for c in close)


def help_pass(name: str, available: Mapping[str, PassFactory]) -> str:
    """`--help-pass NAME`: the pass's whole docstring and its options.

    Raises:
        ToolError: no pass or pipeline is called `name`.
    """
    factory = available.get(name)
    if factory is None:
        hint = did_you_mean(name, available)
        raise ToolError(
            f"unknown pass '{name}'" + (f"; {hint}?" if hint else "")
            + " (dlc-opt --list-passes lists dlc's passes and pipelines, dlc-opt --help all)"
        )
    cls = factory()
    doc = docstring(cls) or "(undocumented)"
    lines = [name, "", *(f"  {line}".rstrip() for line in doc.splitlines()), ""]
    options = option_lines(cls)
    if not options:
        return "\n".join([*lines, "No options."])
    lines.append(f"Options, their types and defaults (-p '{name}{{option=value ...}}'):")
    lines.extend(f"  {option}" for option in options)
    return "\n".join(lines)
