"""dlc-opt: the mlir-opt of dlc, a subclass of xDSL's `xDSLOptMain`.

It knows dlc's dialects, the upstream dialects dlc uses, dlc's passes, the named pipelines and the
`-t` targets, all registered lazily so that the tool starts fast.
"""

from __future__ import annotations

import argparse
import sys
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.xdsl_opt_main import xDSLOptMain

from tools.diagnostics import ToolError, run_tool, write_atomically


class _PendingOutput(StringIO):
    """Collects the output; xDSL closes it when done, which must not discard the text."""

    def close(self) -> None:  # keep the buffer readable after xDSL's `close()`
        pass


class DlcOptMain(xDSLOptMain):
    """The dlc-opt driver: xdsl-opt with dlc's registries."""

    version_format = "dlc-opt (xdsl {xdsl_version})"

    def register_all_dialects(self) -> None:
        from dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        from rewrites import get_all_passes

        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from codegen import get_dlc_targets

        self.available_targets.update(get_dlc_targets())
        super().register_all_targets()

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--show-traceback",
            action="store_true",
            help="on an internal error, show the Python traceback (for dlc's developers)",
        )

    def setup_pipeline(self) -> None:
        try:
            super().setup_pipeline()
        except ValueError as e:  # unknown pass names, bad or missing pass options
            raise ToolError(f"invalid pass pipeline '{self.args.passes}': {e}") from None

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        if self.args.input_file == "-":
            self.args.input_file = None
        try:
            return super().get_input_stream()
        except OSError as e:
            name = self.args.input_file
            raise ToolError(f"cannot open input file '{name}': {e.strerror}") from None

    def prepare_output(self) -> IO[str]:
        if self.args.output_file is None:
            return sys.stdout
        self.pending_output = _PendingOutput()
        return self.pending_output

    def apply_passes(self, prog: ModuleOp) -> None:
        if not self.args.disable_verify:
            prog.verify()
        super().apply_passes(prog)

    def run(self) -> None:
        super().run()
        if self.args.output_file is not None:
            write_atomically(self.args.output_file, self.pending_output.getvalue())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dlc-opt` console script."""
    args = sys.argv[1:] if argv is None else argv
    show = "--show-traceback" in args
    return run_tool("dlc-opt", lambda: DlcOptMain(args=args).run(), show_traceback=show)


if __name__ == "__main__":
    sys.exit(main())
