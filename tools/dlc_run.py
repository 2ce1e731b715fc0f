"""dlc-run: compile an MLIR file for the host CPU and run one entry function on .npy inputs
(mlir-runner for dlc).

    dlc-run model.mlir --entry main --input a.npy b.npy            prints the outputs
    dlc-run model.mlir --entry main --input a.npy --output-dir out  saves out/main_out0.npy, ...
    dlc-run model.so --input a.npy                                  runs an exported library

Any failure (unreadable file, parse error, input of the wrong shape or dtype) is printed as one
`dlc-run: error: ...` line and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from dlc.tools.diagnostics import ToolError, run_tool, save_outputs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlc-run", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("file", type=Path, help="an .mlir module, or a .so written by dlc")
    parser.add_argument("--entry", help="the entry function (needed if there are several)")
    parser.add_argument(
        "--input", dest="inputs", type=Path, nargs="+", action="extend", default=[],
        metavar="NPY", help="the inputs, in order, as .npy files",
    )
    parser.add_argument(
        "--output-dir", type=Path,
        help="save each output as <name>.npy here (names: the model's, else <entry>_out<i>)"
    )
    parser.add_argument("--opt-level", type=int, default=3, choices=range(4), help="LLVM -O")
    parser.add_argument(
        "--show-traceback", action="store_true",
        help="on an internal error, show the Python traceback (for dlc's developers)",
    )
    return parser


def _load_input(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise ToolError(f"no such input file: {path}") from None
    except (OSError, ValueError) as e:
        raise ToolError(f"cannot read {path} as a .npy array: {e}") from None


def run(args: argparse.Namespace) -> None:
    """Compile (or load) `args.file`, run its entry on the inputs, print or save the outputs."""
    from dlc.runtime.library import LibraryError

    import dlc

    if not args.file.is_file():
        raise ToolError(f"no such file: {args.file}")
    inputs = [_load_input(path) for path in args.inputs]
    try:
        if args.file.suffix == ".so":
            executable = dlc.load(args.file, args.entry)
        else:
            executable = dlc.compile(args.file, entry=args.entry, opt_level=args.opt_level)
        results = executable(*inputs)
    except (dlc.ExecutableError, dlc.CompileError, LibraryError) as e:
        raise ToolError(str(e)) from None
    outputs = results if isinstance(results, tuple) else (results,)
    named = dict(zip(executable.output_names, outputs, strict=True))
    if args.output_dir is not None:
        save_outputs(args.output_dir, named, "dlc-run")
        return
    for name, output in named.items():
        print(f"// {name}: {output.dtype} {list(output.shape)}")
        print(np.array2string(output, threshold=sys.maxsize, separator=", "))


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dlc-run` console script."""
    args_list = sys.argv[1:] if argv is None else argv
    show = "--show-traceback" in args_list
    return run_tool("dlc-run", lambda: run(_parser().parse_args(args_list)), show_traceback=show)


if __name__ == "__main__":
    sys.exit(main())
