"""dlc-opt: the mlir-opt of dlc, a subclass of xDSL's `xDSLOptMain`.

It knows dlc's dialects, the upstream dialects dlc uses, dlc's passes, the named pipelines and the
`-t` targets, all registered lazily so that the tool starts fast.

dlc's own flags: `--check-semantics` (run the graph interpreter after every pass and stop at the
first pass that changes a result, see tools/check_semantics.py), `--timing` (seconds per pass, a
table on stderr like mlir-opt's `--mlir-timing`) and `--dump-graph=FILE` (the final graph as
Graphviz DOT, see tools/graph_dot.py). With the first two, named pipelines run pass by pass.
`--dlc-target=TARGET` sets every module's `dlc.target` (which passes with an empty `target`
option read); `host` there or as a pass's `target=host` is this machine, the only way dlc-opt's
output can depend on the host.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from io import StringIO
from typing import IO

from dlc.tools.diagnostics import ToolError, run_tool, write_atomically
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
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


def expand_pipelines(passes: tuple[ModulePass, ...]) -> tuple[ModulePass, ...]:
    """`passes` with each named pipeline (e.g. graph-opt) replaced by its own passes."""
    from dlc.pipelines import PIPELINES
    from dlc.rewrites import get_all_passes

    expanded: list[ModulePass] = []
    for module_pass in passes:
        pipeline = PIPELINES.get(module_pass.name)
        if pipeline is None:
            expanded.append(module_pass)
            continue
        inner = PassPipeline.parse_spec(get_all_passes(), pipeline.spec).passes
        expanded.extend(expand_pipelines(inner))
    return tuple(expanded)


class DlcOptMain(xDSLOptMain):
    """The dlc-opt driver: xdsl-opt with dlc's registries."""

    version_format = "dlc-opt (xdsl {xdsl_version})"

    def __init__(self, args: list[str] | None = None) -> None:
        self._resolved_targets: dict[str, str] = {}
        """Target strings as given -> as resolved (`host` asked once)."""
        super().__init__(args=args)

    def register_all_dialects(self) -> None:
        from dlc.dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        from dlc.rewrites import get_all_passes

        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from dlc.codegen import get_dlc_targets

        self.available_targets.update(get_dlc_targets())
        super().register_all_targets()

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--show-traceback",
            action="store_true",
            help="on an internal error, show the Python traceback (for dlc's developers)",
        )
        arg_parser.add_argument(
            "--check-semantics",
            action="store_true",
            help="run the public functions with the graph interpreter on seeded random inputs "
            "after every pass; stop with an error at the first pass that changes a result",
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
            "--timing",
            action="store_true",
            help="print the wall time of parsing, each pass and printing as a table on stderr",
        )
        arg_parser.add_argument(
            "--dlc-target",
            metavar="TARGET",
            default=None,
            help="set each module's dlc.target, the target of every pass whose target option is "
            "empty: a target string ('llvm -mcpu=znver3', 'cuda -arch=sm_90', opencl) or host "
            "(this machine; also accepted as a pass option, target=host)",
        )
        arg_parser.add_argument(
            "--dump-graph",
            metavar="FILE",
            default=None,
            help="write the final graph as Graphviz DOT to FILE, fused groups as clusters",
        )

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except ValueError as e:  # unknown pass names, bad or missing pass options
            raise ToolError(f"invalid pass pipeline '{self.args.passes}': {e}") from None
        self.pipeline = PassPipeline(
            tuple(self._with_host_resolved(p) for p in self.pipeline.passes),
            self.pipeline.callback,
        )
        self.timer = PassTimer() if self.args.timing else None
        self.checker = None
        self.dot_graphs: list[str] = []
        if self.args.check_semantics:
            from dlc.tools.check_semantics import DEFAULT_ATOL, DEFAULT_RTOL, SemanticsChecker

            rtol, atol = self.args.check_semantics_rtol, self.args.check_semantics_atol
            self.checker = SemanticsChecker(
                seed=self.args.check_semantics_seed,
                rtol=DEFAULT_RTOL if rtol is None else rtol,
                atol=DEFAULT_ATOL if atol is None else atol,
            )
        if self.timer is not None or self.checker is not None:
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
        upstream = pipeline.callback
        passes = expand_pipelines(pipeline.passes)
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
            started = time.perf_counter()

        return PassPipeline(passes, callback)

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        started = time.perf_counter()
        module = super().parse_chunk(chunk, file_extension, start_offset)
        if self.timer is not None:
            self.timer.add((_PARSE, "(parse)"), time.perf_counter() - started)
        return module

    def output_resulting_program(self, prog: ModuleOp) -> str:
        started = time.perf_counter()
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
        super().apply_passes(prog)
        if self.args.dump_graph is not None:
            from dlc.tools.graph_dot import module_to_dot

            self.dot_graphs.append(module_to_dot(prog, f"dlc_{len(self.dot_graphs)}"))

    def run(self) -> None:
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
