"""dlc-translate: translations into dlc's IR, the mlir-translate of dlc.

    dlc-translate --import-onnx model.onnx [-o out.mlir] [--input-shape name=1x3x224x224 ...]

prints the graph dialect module that `frontends.onnx.import_onnx` builds. Any failure is one
diagnostic on stderr naming the node and op, exit code 1, and no output file.
"""

from __future__ import annotations

import argparse
import sys
from io import StringIO

from dlc.runtime.files import write_atomically
from dlc.tools.diagnostics import ToolError, run_tool
from xdsl.printer import Printer


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`name=1x3x224x224` -> ("name", (1, 3, 224, 224)); `name=` is a scalar (rank 0)."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise ToolError(f"invalid --input-shape '{text}': expected NAME=D0xD1x..., e.g. "
                        "input=1x3x224x224")
    try:
        shape = tuple(int(d) for d in dims.split("x")) if dims else ()
    except ValueError:
        raise ToolError(f"invalid --input-shape '{text}': dimensions must be integers "
                        "separated by 'x'") from None
    return name, shape


def build_parser() -> argparse.ArgumentParser:
    """The command line of dlc-translate."""
    parser = argparse.ArgumentParser(prog="dlc-translate", description=__doc__.splitlines()[0])
    parser.add_argument("input_file", help="the model to translate ('-' reads stdin)")
    parser.add_argument("--import-onnx", action="store_true", required=True,
                        help="translate an ONNX model into graph dialect IR")
    parser.add_argument("-o", "--output-file", help="write the IR here instead of stdout")
    parser.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0xD1x...",
                        help="static shape of a graph input (repeatable); needed for inputs "
                             "with dynamic dimensions")
    parser.add_argument("--print-op-generic", action="store_true",
                        help="print ops in the generic form")
    parser.add_argument("--print-debuginfo", action="store_true",
                        help="print op locations (the ONNX node names)")
    parser.add_argument("--show-traceback", action="store_true",
                        help="on an internal error, show the Python traceback (for developers)")
    return parser


def translate(args: argparse.Namespace) -> None:
    """Import the model named by `args` and write its IR."""
    from dlc.frontends.onnx import import_onnx
    from dlc.frontends.onnx.importer import load_model, parse_model

    shapes: dict[str, tuple[int, ...]] = {}
    for text in args.input_shape:
        name, shape = parse_input_shape(text)
        if name in shapes:
            raise ToolError(f"--input-shape given twice for '{name}'")
        shapes[name] = shape
    if args.input_file == "-":
        model = parse_model(sys.stdin.buffer.read(), "<stdin>")
    else:
        model = load_model(args.input_file)
    module = import_onnx(model, shapes)
    text = StringIO()
    printer = Printer(stream=text, print_generic_format=args.print_op_generic,
                      print_debuginfo=args.print_debuginfo)
    printer.print_op(module)
    text.write("\n")
    if args.output_file is None:
        sys.stdout.write(text.getvalue())
    else:
        write_atomically(args.output_file, text.getvalue())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dlc-translate` console script."""
    argv = sys.argv[1:] if argv is None else argv
    show = "--show-traceback" in argv
    return run_tool("dlc-translate", lambda: translate(build_parser().parse_args(argv)),
                    show_traceback=show)


if __name__ == "__main__":
    sys.exit(main())
