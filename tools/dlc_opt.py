"""dlc-opt: the mlir-opt of dlc, a subclass of xDSL's `xDSLOptMain`.

It knows dlc's dialects, the upstream dialects dlc uses, dlc's passes, the named pipelines and the
`-t` targets, all registered lazily so that the tool starts fast.

dlc's own flags: `--check-semantics` (run the interpreter of the module's level, graph,
tensor_expr or loop, after every pass and stop at the first pass that changes a result, see
tools/check_semantics.py), `--timing` (seconds per pass, a
table on stderr like mlir-opt's `--mlir-timing`; xDSL's `--time-passes` is another name for it)
and `--dump-graph=FILE` (the final graph as Graphviz DOT, see tools/graph_dot.py). With the first
two, named pipelines run pass by pass. `--elide-elementsattrs-if-larger=N` (default 16; 0: never)
prints large constants as `dense_resource<__elided__>`, see tools/elide_constants.py.

For users: `--help` lists dlc's passes, pipelines and targets first (tools/pass_catalog.py),
`--list-passes` their options, `--help-pass NAME` one pass's documentation, `--version` dlc's
version and xDSL's.
`--dlc-target=TARGET` sets every module's `dlc.target` (which passes with an empty `target`
option read); `host` there or as a pass's `target=host` is this machine, the only way dlc-opt's
output can depend on the host.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from io import BytesIO, StringIO
from pathlib import Path
from typing import IO, Any

from dlc.runtime.files import write_atomically
from dlc.tools.diagnostics import ToolError, run_tool
from dlc.tools.elide_constants import (
    DEFAULT_ELIDE_LIMIT,
    elide_large_constants,
    elided_constant_error,
    find_elided_constant,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_pipeline, parse_spec
from xdsl.xdsl_opt_main import xDSLOptMain


class _PendingOutput(StringIO):
    """Collects the output; xDSL closes it when done, which must not discard the text."""

    def close(self) -> None:  # keep the buffer readable after xDSL's `close()`
        pass


class PassTimer:
    """Wall-clock seconds per pass of the pipeline (summed over `--split-input-file` chunks)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[int, str], float] = {}

    def add(self, key: tuple[int, str], seconds: float) -> None:
        self.rows[key] = self.rows.get(key, 0.0) + seconds

    def report(self) -> str:
        """The table, in pipeline order, with percentages and the total (mlir-opt's layout)."""
        total = sum(self.rows.values())
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            "Execution time report".center(79).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for (_, name), seconds in sorted(self.rows.items()):
            share = 100.0 * seconds / total if total else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines)


_PARSE, _PASSES, _VERIFY, _CHECK, _OUTPUT = 0, 1, 1_000_000, 1_000_001, 1_000_002
"""Row order of the timing table: parsing, the passes in order, then the bookkeeping rows."""


def dlc_version() -> str:
    """dlc's version: the installed package's, else the checkout's pyproject.toml's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dlc")
    except PackageNotFoundError:
        pass
    import tomllib

    try:
        with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
            return str(tomllib.load(f)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def _version_line() -> str:
    from importlib.metadata import version

    return f"dlc-opt from dlc {dlc_version()}, built on xdsl {version('xdsl')}"


def _element_count(text: str) -> int:
    """The N of `--elide-elementsattrs-if-larger=N`: a count of elements, 0 or more."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(
            f"expected a number of elements (0 or more), found '{text}'")
    return count


class _PrintAction(argparse.Action):
    """A flag like `--help`: prints text, made only when the flag is given, and exits.

    The text is made lazily so that a normal run does not import what it needs (every pass).
    """

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        render: Callable[[argparse.ArgumentParser, str | None], str],
        nargs: int | None = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=nargs,
            **kwargs)
        self.render = render

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(self.render(parser, values if isinstance(values, str) else None))
        parser.exit()


class DlcOptMain(xDSLOptMain):
    """The dlc-opt driver: xdsl-opt with dlc's registries."""

    def __init__(self, args: list[str] | None = None) -> None:
        self._resolved_targets: dict[str, str] = {}
        """Target strings as given -> as resolved (`host` asked once)."""
        super().__init__(args=args)

    def register_all_dialects(self) -> None:
        from dlc.dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        from dlc.pipelines import get_pipeline_registry

        for name, factory in get_pipeline_registry().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from dlc.codegen import get_dlc_targets

        self.available_targets.update(get_dlc_targets())
        super().register_all_targets()

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = "dlc-opt"
        arg_parser.usage = "%(prog)s [options] [input_file]"
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        # dlc-opt redefines some of xdsl-opt's flags (help, version, -p, -t, --time-passes): a
        # flag added again replaces the inherited one. argparse copies the conflict handler into
        # the parser's argument groups when it makes them, so it is set there too.
        for container in (arg_parser, *arg_parser._action_groups):  # pyright: ignore[reportPrivateUsage]
            container.conflict_handler = "resolve"
        arg_parser.add_argument(
            "-h", "--help", action=_PrintAction, render=self._help,
            help="show this help: dlc's passes, pipelines and targets, the options, then xDSL's "
            "passes",
        )
        arg_parser.add_argument(
            "-v", "--version", action=_PrintAction, render=lambda _p, _v: _version_line(),
            help="print dlc's version and xDSL's",
        )
        arg_parser.add_argument(
            "--list-passes", action=_PrintAction, render=self._list_passes,
            help="list dlc's passes and pipelines, each with its summary and options",
        )
        arg_parser.add_argument(
            "--help-pass", action=_PrintAction, render=self._help_pass, nargs=None,
            metavar="NAME", help="print the documentation and options of the pass NAME",
        )
        arg_parser.add_argument(
            "-p", "--passes", default="", metavar="PIPELINE",
            help="the passes to run, in order: comma-separated, options in braces, e.g. "
            "-p 'graph-opt,loop-default-schedule{threads=4 pack=false}'; dlc's passes and "
            "pipelines are listed above, xDSL's below",
        )
        arg_parser.add_argument(
            "-t", "--target", default="mlir", metavar="TARGET",
            help="what to print: the IR (mlir, the default) or code for one of the targets "
            "listed above, options in braces, e.g. -t 'ptx{arch=sm_90}'",
        )
        arg_parser.add_argument(
            "--elide-elementsattrs-if-larger", type=_element_count, default=DEFAULT_ELIDE_LIMIT,
            metavar="N",
            help="print dense constants of more than N elements as dense_resource<__elided__> "
            f"(as mlir-opt does; default {DEFAULT_ELIDE_LIMIT}, 0 prints every constant in "
            "full); dlc-opt refuses to read elided IR back",
        )
        arg_parser.add_argument(
            "--show-traceback",
            action="store_true",
            help="on an internal error, show the Python traceback (for dlc's developers)",
        )
        arg_parser.add_argument(
            "--check-semantics",
            action="store_true",
            help="run the public functions with the interpreter of the module's level (graph, "
            "tensor_expr, loop) on seeded random inputs after every pass; stop with an error at "
            "the first pass that changes a result (checking stops at the llvm dialect)",
        )
        arg_parser.add_argument(
            "--check-semantics-seed", type=int, default=0, metavar="N",
            help="seed of the random inputs of --check-semantics (default 0)",
        )
        arg_parser.add_argument(
            "--check-semantics-rtol", type=float, default=None, metavar="X",
            help="relative tolerance of --check-semantics, times the largest magnitude of each "
            "output (default 1e-4)",
        )
        arg_parser.add_argument(
            "--check-semantics-atol", type=float, default=None, metavar="X",
            help="absolute tolerance of --check-semantics (default 1e-4)",
        )
        arg_parser.add_argument(
            "--check-semantics-max-elements", type=int, default=None, metavar="N",
            help="skip a function at the loop level (its interpreter runs op by op in Python) "
            "when its arguments hold more than N elements (default 32768)",
        )
        arg_parser.add_argument(
            "--timing", "--time-passes",
            action="store_true",
            help="print the wall time of parsing, each pass and printing as a table on stderr "
            "(mlir-opt's --mlir-timing)",
        )
        arg_parser.set_defaults(time_passes=False)  # xdsl-opt's own timing lines stay off
        arg_parser.add_argument(
            "--dlc-target",
            metavar="TARGET",
            default=None,
            help="set each module's dlc.target, the target of every pass whose target option is "
            "empty: a target string ('llvm -mcpu=znver3', 'cuda -arch=sm_90', opencl) or host "
            "(this machine; also accepted as a pass option, target=host)",
        )
        arg_parser.add_argument(
            "--custom-ops",
            metavar="FILE.py",
            default=None,
            help="a Python file to run first, that registers custom ops "
            "(dlc.custom_op.register_op): graph.custom ops of them then verify and run",
        )
        arg_parser.add_argument(
            "--dump-graph",
            metavar="FILE",
            default=None,
            help="write the final graph as Graphviz DOT to FILE, fused groups as clusters",
        )

    def _help(self, parser: argparse.ArgumentParser, _: str | None) -> str:
        from dlc.codegen import TARGETS
        from dlc.tools.pass_catalog import help_catalog, upstream_epilog

        width = shutil.get_terminal_size().columns - 2  # as argparse's help
        title = textwrap.fill(
            f"{_version_line()}: the mlir-opt of dlc. It reads MLIR, runs the passes of -p and "
            "prints the IR, or code with -t.", width)
        upstream_targets = [t for t in self.available_targets if t not in TARGETS]
        # Made here, not with the parser: the catalog imports every pass module.
        parser.description = f"{title}\n\n{help_catalog(upstream_targets, width)}"
        parser.epilog = upstream_epilog(self.available_passes, width)
        return parser.format_help().rstrip()

    def _list_passes(self, _parser: argparse.ArgumentParser, _: str | None) -> str:
        from dlc.tools.pass_catalog import list_passes

        return list_passes(self.available_passes, shutil.get_terminal_size().columns - 2)

    def _help_pass(self, _parser: argparse.ArgumentParser, name: str | None) -> str:
        from dlc.tools.pass_catalog import help_pass

        return help_pass(name or "", self.available_passes)

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except ValueError as e:  # unknown pass names, bad or missing pass options
            from dlc.tools.pass_catalog import did_you_mean

            hints = [
                f"\n  '{spec.name}': {hint}?"
                for spec in parse_pipeline(self.args.passes)
                if spec.name not in self.available_passes
                and (hint := did_you_mean(spec.name, self.available_passes))
            ]
            raise ToolError(
                f"invalid pass pipeline '{self.args.passes}': {e}{''.join(hints)}") from None
        self.pipeline = PassPipeline(
            tuple(self._with_host_resolved(p) for p in self.pipeline.passes),
            self.pipeline.callback,
        )
        self.timer = PassTimer() if self.args.timing else None
        self.checker = None
        self.dot_graphs: list[str] = []
        if self.args.check_semantics:
            from dlc.tools.check_semantics import (
                DEFAULT_ATOL,
                DEFAULT_MAX_LOOP_ELEMENTS,
                DEFAULT_RTOL,
                SemanticsChecker,
            )

            rtol, atol = self.args.check_semantics_rtol, self.args.check_semantics_atol
            max_elements = self.args.check_semantics_max_elements
            self.checker = SemanticsChecker(
                seed=self.args.check_semantics_seed,
                rtol=DEFAULT_RTOL if rtol is None else rtol,
                atol=DEFAULT_ATOL if atol is None else atol,
                max_loop_elements=(
                    DEFAULT_MAX_LOOP_ELEMENTS if max_elements is None else max_elements),
            )
        self.graph_snapshot: tuple[str, str] | None = None
        """(the pass after which, DOT) of the last graph-level module, for --dump-graph."""
        if self.timer is not None or self.checker is not None or self.args.dump_graph is not None:
            self.pipeline = self._instrumented(self.pipeline)

    def _resolve(self, text: str) -> str:
        """A target string with `host` resolved to this machine's (asked once)."""
        from dlc.driver.errors import CompileError
        from dlc.driver.target import resolve_target

        resolved = self._resolved_targets
        if text not in resolved:
            try:
                resolved[text] = str(resolve_target(text))
            except CompileError as e:
                raise ToolError(str(e)) from None
        return resolved[text]

    def _with_host_resolved(self, module_pass: ModulePass) -> ModulePass:
        """`module_pass` with a `target=host` option replaced by this machine's target string."""
        if getattr(module_pass, "target", None) != "host":
            return module_pass
        return dataclasses.replace(module_pass, target=self._resolve("host"))  # type: ignore[type-var]

    def _instrumented(self, pipeline: PassPipeline) -> PassPipeline:
        """`pipeline` run pass by pass, timing each and checking semantics after each."""
        from dlc.pipelines import expand

        upstream = pipeline.callback
        passes = expand(pipeline.passes)
        position = {id(p): index for index, p in enumerate(passes)}
        started = time.perf_counter()

        def callback(
            previous: ModulePass | None, module: ModuleOp, following: ModulePass | None
        ) -> None:
            nonlocal started
            now = time.perf_counter()
            if previous is not None and self.timer is not None:
                self.timer.add((_PASSES + position[id(previous)], previous.name), now - started)
            if upstream is not None:  # verification and --print-between-passes
                upstream(previous, module, following)
            verified = time.perf_counter()
            if self.checker is not None:
                if previous is None:
                    self.checker.start(module)
                else:
                    self.checker.check(module, previous.name)
            checked = time.perf_counter()
            if self.timer is not None:
                self.timer.add((_VERIFY, "(verifier)"), verified - now)
                if self.checker is not None:
                    self.timer.add((_CHECK, "(check-semantics)"), checked - verified)
            if self.args.dump_graph is not None:
                self._snapshot_graph(previous, module)
            started = time.perf_counter()

        return PassPipeline(passes, callback)

    def _snapshot_graph(self, previous: ModulePass | None, module: ModuleOp) -> None:
        """Keeps the DOT of `module` while it is at the graph level, so that --dump-graph draws
        the last graph even when the pipeline lowers below it."""
        from dlc.pipelines import module_level
        from dlc.tools.graph_dot import module_to_dot

        if module_level(module) == "graph":
            name = "the input" if previous is None else f"pass '{previous.name}'"
            self.graph_snapshot = (name, module_to_dot(module, f"dlc_{len(self.dot_graphs)}"))

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        started = time.perf_counter()
        source = chunk.read()
        try:
            source.decode()
        except UnicodeDecodeError as e:
            from dlc.driver.source import not_utf8

            raise ToolError(f"{self.get_input_name()}: {not_utf8(e, start_offset)}") from None
        module = super().parse_chunk(BytesIO(source), file_extension, start_offset)
        if self.timer is not None:
            self.timer.add((_PARSE, "(parse)"), time.perf_counter() - started)
        if module is not None and (elided := find_elided_constant(module)) is not None:
            raise elided_constant_error(elided, source, self.get_input_name())
        if module is not None and not self.args.disable_verify:
            from dlc.dialects.dominance import verify_dominance
            from dlc.dialects.shape_bounds import verify_shape_bounds

            verify_dominance(module)
            verify_shape_bounds(module)
        return module

    def output_resulting_program(self, prog: ModuleOp) -> str:
        started = time.perf_counter()
        if parse_spec(self.args.target).name == "mlir":
            printed = elide_large_constants(prog, self.args.elide_elementsattrs_if_larger)
            if printed is not prog:  # the printer looks up dense_resource blobs in `builtin`
                self.ctx.get_dialect("builtin")
            prog = printed
        text = super().output_resulting_program(prog)
        if self.timer is not None:
            self.timer.add((_OUTPUT, "(output)"), time.perf_counter() - started)
        return text

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file == "-":
            self.args.input_file = None
        try:
            stream, extension = super().get_input_stream()
        except OSError as e:
            name = self.args.input_file
            raise ToolError(f"cannot open input file '{name}': {e.strerror}") from None
        if self.args.frontend:  # the format named: whatever the file is called
            return stream, self.args.frontend.split("{", 1)[0]
        if extension not in self.available_frontends:
            stream.close()
            known = ", ".join(f".{name}" for name in self.available_frontends)
            raise ToolError(
                f"cannot read '{self.args.input_file}': unrecognized file extension "
                f"'.{extension}' (expected {known}, or name the format with --frontend)")
        return stream, extension

    def prepare_output(self) -> IO[str]:
        if self.args.output_file is None:
            return sys.stdout
        self.pending_output = _PendingOutput()
        return self.pending_output

    def apply_passes(self, prog: ModuleOp) -> None:
        if self.args.dlc_target is not None:
            from dlc.dialects.contracts import TARGET_ATTR
            from xdsl.dialects.builtin import StringAttr

            prog.attributes[TARGET_ATTR] = StringAttr(self._resolve(self.args.dlc_target))
        if not self.args.disable_verify:
            prog.verify()
        self.graph_snapshot = None
        super().apply_passes(prog)
        if self.args.dump_graph is not None:
            self.dot_graphs.append(self._final_graph(prog))

    def _final_graph(self, prog: ModuleOp) -> str:
        """The DOT --dump-graph writes for this module: the final graph, or the last one the
        pipeline had (with a note saying after which pass) when it lowered below graph level."""
        from dlc.pipelines import module_level
        from dlc.tools.graph_dot import module_to_dot

        if module_level(prog) == "graph":
            return module_to_dot(prog, f"dlc_{len(self.dot_graphs)}")
        if self.graph_snapshot is not None:
            after, dot = self.graph_snapshot
            print(f"dlc-opt: note: --dump-graph: the module left the graph level; writing the "
                  f"graph as it was after {after}", file=sys.stderr)
            return dot
        print("dlc-opt: note: --dump-graph: the module has no graph-level ops; writing an empty "
              "graph", file=sys.stderr)
        return module_to_dot(prog, f"dlc_{len(self.dot_graphs)}")

    def run(self) -> None:
        if self.args.custom_ops is not None:
            from dlc.custom_op import CustomOpError, load_custom_ops

            try:
                load_custom_ops(self.args.custom_ops)
            except CustomOpError as e:
                raise ToolError(str(e)) from None
        super().run()
        if self.args.output_file is not None:
            write_atomically(self.args.output_file, self.pending_output.getvalue())
        if self.args.dump_graph is not None:
            try:
                write_atomically(self.args.dump_graph, "".join(self.dot_graphs))
            except OSError as e:
                raise ToolError(
                    f"cannot write --dump-graph file '{self.args.dump_graph}': {e.strerror}"
                ) from None
        if self.timer is not None:
            print(self.timer.report(), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dlc-opt` console script."""
    args = sys.argv[1:] if argv is None else argv
    show = "--show-traceback" in args
    return run_tool("dlc-opt", lambda: DlcOptMain(args=args).run(), show_traceback=show)


if __name__ == "__main__":
    sys.exit(main())
