"""dlc: compile, run, profile and benchmark whole models (tvmc for dlc).

    dlc compile model.onnx [--target host|'llvm -mcpu=...'] [--threads N] [--tuning-log F]
                [--check-bounds] [--precision fp32|bf16|f16] [--c-prefix NAME]
                [--c-header model.h] [--input-shape x=1x3x224x224] -o model.so|model.tar
    dlc compile model.onnx --target opencl|cuda [--arch sm_90] [--c-prefix NAME]
                [--c-header model.h] -o model.so   (a GPU library)
    dlc compile model.onnx --target cuda|opencl|host|'llvm ...' --emit ptx|opencl|llvm [-o FILE]
    dlc run model.so|model.onnx --input x=x.npy|--seed N [--output-dir D]
    dlc profile model.onnx|model.so [--input x=x.npy] [--repeat N] [--top K]
    dlc bench model.onnx|model.so [--compare ort] [--repeat N]
    dlc tune model.onnx|kernel.mlir --trials N [--log F]   (then: dlc compile --tuning-log F)
    dlc tune replay model.onnx --log F [-o scheduled.mlir]
    dlc cache info|clear [--cache-dir D]
    dlc quantize model.onnx --calibration data.npz|DIR -o model.int8.onnx [--method entropy]

`compile` writes a shared library holding the model's code and weights, which `dlc.load` (NumPy
and ctypes only) and `dlc run` open, and its C header (model.h, `dlc.runtime.c_api`): C programs
call `<prefix>_run`, the library's only exported functions. For another architecture (--target
'llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72') it links with that architecture's cross
compiler (aarch64-linux-gnu-gcc), or writes a .tar of objects, weights, the C interface and
link.sh to link on the target (-o model.tar). The other commands take a .so or compile the model
on the way (compiles are cached in ~/.cache/dlc, at most --cache-max-size, see --cache-dir,
--no-cache and `dlc cache`). Inputs not given are random (from --seed, default 0; integers are
zeros), except for `run`, which makes them only when given --seed. Any failure is one `dlc:
error: ...` line and exit code 1; no output file is left half-written.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from dlc.runtime.executable import Executable, ExecutableError
from dlc.runtime.files import write_atomically
from dlc.runtime.metadata import format_bytes
from dlc.tools.diagnostics import ToolError, run_tool, save_outputs
from dlc.tools.dlc_run import _load_input

DEFAULT_CACHE_BYTES = 2 << 30
"""The compile cache's default size limit (driver.cache.DEFAULT_MAX_BYTES, which the tool does
not import before it needs the compiler)."""

_SHAPE = re.compile(r"^([^=]+)=(\d+(?:[x,]\d+)*|)$")


def _shape_arg(text: str) -> tuple[str, list[int]]:
    match = _SHAPE.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"expected NAME=DIMS such as x=1x3x224x224 (or x= for a scalar), found '{text}'"
        )
    name, dims = match.groups()
    return name, [int(d) for d in re.split(r"[x,]", dims)] if dims else []


_VARIANT = re.compile(r"^([^=,]+)=((?:\d+|\?)(?:x(?:\d+|\?))*)$")


def _variant_arg(text: str) -> dict[str, list[int | None]]:
    """`x=?x3x320x320,y=1x4`: one variant's input shapes (`?`: the declared dim)."""
    variant: dict[str, list[int | None]] = {}
    for part in text.split(";" if ";" in text else ","):
        match = _VARIANT.match(part.strip())
        if match is None or match.group(1) in variant:
            raise argparse.ArgumentTypeError(
                f"expected NAME=DIMS[,NAME=DIMS...] such as x=?x3x320x320 (? keeps the "
                f"declared dim, the dynamic batch), found '{text}'")
        name, dims = match.groups()
        variant[name] = [None if d == "?" else int(d) for d in dims.split("x")]
    return variant


def _count(least: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer of at least `least` (0: non-negative, 1: positive)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            kind = "non-negative" if least == 0 else "positive"
            raise argparse.ArgumentTypeError(f"expected a {kind} {what}, found '{text}'")
        return value

    return parse


def _common(parser: argparse.ArgumentParser, compiling: bool = True) -> None:
    what = "an ONNX model (.onnx) or an .mlir module"
    if not compiling:
        what += ", or a library written by dlc compile (.so)"
    parser.add_argument("model", type=Path, help=what)
    parser.add_argument("--target", default="host",
                        help="the target: host (this machine, the default), a CPU target string "
                        "('llvm -mcpu=znver3 -num-cores=4', 'llvm -mtriple=aarch64-linux-gnu "
                        "-mcpu=cortex-a72'), or cuda ('cuda -arch=sm_90') or opencl with --emit")
    parser.add_argument("--threads", type=_count(0, "number of threads"), default=0, metavar="N",
                        help="threads for parallel loops (0: DLC_NUM_THREADS, else all cores)")
    parser.add_argument("--pipeline", default="cpu", metavar="NAME",
                        help="the named pipeline for the CPU (default cpu; cpu-direct: "
                        "no Winograd convs)")
    parser.add_argument("--tuning-log", type=Path, metavar="FILE",
                        help="an autotuning log (dlc tune): tuned kernels get its best "
                        "schedules")
    parser.add_argument("--input-shape", dest="input_shapes", type=_shape_arg, action="append",
                        default=[], metavar="NAME=DIMS",
                        help="static shape of an input with dynamic dimensions, e.g. "
                        "x=1x3x224x224 (repeatable)")
    parser.add_argument("--specialize", dest="variants", type=_variant_arg, action="append",
                        default=[], metavar="NAME=DIMS[,NAME=DIMS]",
                        help="compile for these input shapes (repeatable: one variant each, "
                        "one library of all; ? keeps a dim dynamic, the batch with "
                        "--dynamic-batch), e.g. --specialize x=?x3x320x320 --specialize "
                        "x=?x3x640x640")
    parser.add_argument("--dynamic-batch", action="store_true",
                        help="compile a model whose inputs share a dynamic leading dim (the "
                        "batch) once for every batch size (falls back to shapes per call when "
                        "its ops mix rows)")
    parser.add_argument("--dynamic-shapes", action="store_true",
                        help="compile a model with dynamic dims anywhere (batch, height, width) "
                        "once for every shape: kernels over runtime sizes (falls back to "
                        "--dynamic-batch if given, else to shapes per call, when an op has no "
                        "definition over runtime sizes)")
    parser.add_argument("--opt-level", type=int, default=3, choices=range(4), help="LLVM -O")
    parser.add_argument("--jobs", "-j", type=_count(1, "number of jobs"), metavar="N",
                        help="processes compiling kernels (default: one per CPU)")
    parser.add_argument("--cache-dir", type=Path, help="the compile cache (default ~/.cache/dlc)")
    parser.add_argument("--no-cache", action="store_true", help="do not use the compile cache")
    parser.add_argument("--check-bounds", action="store_true",
                        help="check every load's and store's indices; abort with a report on "
                        "a violation (a debugging build)")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "bf16", "f16"),
                        help="bf16 or f16: convs and matmuls in that type with f32 "
                        "accumulation, sensitive ops (softmax, reductions, exp, ...) in f32 "
                        "(graph-to-low-precision); inputs and outputs keep their types")
    parser.add_argument("--byoc", metavar="LIBRARY",
                        help="offload the ops an external library supports to it (cblas: "
                        "2-D f32 matmuls as OpenBLAS sgemm calls)")
    parser.add_argument("--custom-ops", type=Path, metavar="FILE.py",
                        help="a Python file to run first, that registers custom ops "
                        "(dlc.custom_op.register_op)")
    _cache_size_option(parser)


def _size_arg(text: str) -> int:
    match = re.fullmatch(r"(\d+)([KMG]i?B?|B)?", text.strip(), re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"expected a size in bytes such as 2G, 500M or 1048576, found '{text}'"
        )
    unit = (match.group(2) or "B")[0].upper()
    return int(match.group(1)) << {"B": 0, "K": 10, "M": 20, "G": 30}[unit]


def _cache_size_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-max-size", type=_size_arg, default=DEFAULT_CACHE_BYTES,
                        metavar="SIZE",
                        help="the compile cache's size limit, e.g. 2G or 500M (default 2G): "
                        "least recently used entries are removed after a compile")


def _inputs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input", dest="inputs", action="append", default=[],
                        metavar="[NAME=]FILE.npy",
                        help="an input as a .npy file, by name or in order (repeatable)")
    parser.add_argument("--seed", type=int, help="seed of the random inputs made for inputs not "
                        "given (default 0; dlc run makes random inputs only when given --seed)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlc", description=__doc__.splitlines()[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--show-traceback", action="store_true",
                        help="on an internal error, show the Python traceback")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    compile_parser = commands.add_parser("compile", help="compile a model into a shared library")
    _common(compile_parser)
    compile_parser.add_argument("-o", "--output", type=Path,
                                help="the library to write (default: <model>.so here), a .tar of "
                                "its objects and link command to link elsewhere, or the text "
                                "file for --emit (default: stdout)")
    compile_parser.add_argument("--c-prefix", metavar="NAME",
                                help="the prefix of the library's C functions (NAME_run, ...) "
                                "and header names: a C identifier (default: the model's file "
                                "name made one)")
    compile_parser.add_argument("--c-header", type=Path, metavar="PATH",
                                help="where to write the library's C header (default: the "
                                "library's path with .h)")
    compile_parser.add_argument("--emit", choices=["llvm", "ptx", "opencl"],
                                help="print the lowered code instead of writing a library: LLVM "
                                "IR (--target llvm or cuda), PTX (cuda) or OpenCL C (opencl)")
    compile_parser.add_argument("--arch", default="",
                                help="the CUDA architecture for --target cuda (default: the "
                                "target's -arch, else sm_80)")

    run_parser = commands.add_parser("run", help="run a model on .npy inputs")
    _common(run_parser, compiling=False)
    _inputs_option(run_parser)
    run_parser.add_argument("--output-dir", type=Path,
                            help="save each output as <name>.npy here instead of printing it")

    profile_parser = commands.add_parser("profile", help="time each kernel of a model")
    _common(profile_parser, compiling=False)
    _inputs_option(profile_parser)
    profile_parser.add_argument("--repeat", type=_count(1, "number of runs"), default=20,
                                help="runs per kernel")
    profile_parser.add_argument("--top", type=_count(0, "number of rows"),
                                help="only the K slowest calls")

    bench_parser = commands.add_parser("bench", help="median latency, optionally against ORT")
    _common(bench_parser, compiling=False)
    _inputs_option(bench_parser)
    bench_parser.add_argument("--repeat", type=_count(1, "number of runs"), default=50,
                              help="timed runs")
    bench_parser.add_argument("--compare", choices=["ort"], action="append", default=[],
                              help="also run ONNX Runtime (CPU) on the same inputs")

    cache_parser = commands.add_parser("cache", help="show or clear the compile cache")
    cache_parser.add_argument("action", choices=["info", "clear"],
                              help="info: location, entries and bytes; clear: remove them all")
    cache_parser.add_argument("--cache-dir", type=Path,
                              help="the compile cache (default ~/.cache/dlc)")
    _cache_size_option(cache_parser)

    from dlc.tools.dlc_quantize import add_quantize_subcommand
    from dlc.tools.dlc_tune import add_tune_subcommand

    add_tune_subcommand(commands)
    add_quantize_subcommand(commands)
    return parser


# ---------------------------------------------------------------------------------------------
# Getting an executable
# ---------------------------------------------------------------------------------------------


def _executable(args: argparse.Namespace) -> tuple[Executable, float | None]:
    """The model's executable (loaded from a .so, or compiled) and the compile's seconds."""
    import dlc

    if not args.model.is_file():
        raise ToolError(f"no such file: {args.model}")
    if args.model.suffix == ".so":
        if args.input_shapes or args.variants:
            option = "--input-shape" if args.input_shapes else "--specialize"
            raise ToolError(f"{option} applies when compiling, not to a compiled .so")
        return dlc.load(args.model), None
    if args.custom_ops is not None:
        load_custom_ops(args.custom_ops)
    start = time.perf_counter()
    executable = dlc.compile(
        args.model, args.target, input_shapes=dict(args.input_shapes) or None,
        opt_level=args.opt_level, pipeline=args.pipeline, threads=args.threads,
        tuning_log=args.tuning_log, cache=not args.no_cache, cache_dir=args.cache_dir,
        cache_max_bytes=args.cache_max_size,
        progress=True, jobs=args.jobs, check_bounds=args.check_bounds, byoc=args.byoc,
        precision=args.precision, dynamic_batch=args.dynamic_batch,
        dynamic_shapes=args.dynamic_shapes,
        specialize=args.variants or None,
    )
    return executable, time.perf_counter() - start


def _runtime_shapes(executable: object) -> bool:
    """Whether `executable` specializes per call shape (driver.specialize, imported only when
    a model has runtime shapes, so that the CLI starts fast)."""
    module = sys.modules.get("dlc.driver.specialize")
    return module is not None and isinstance(executable, module.SpecializingExecutable)


def load_custom_ops(path: Path) -> None:
    """Runs the Python file `path` (which registers custom ops)."""
    from dlc.custom_op import CustomOpError
    from dlc.custom_op import load_custom_ops as load

    try:
        load(str(path))
    except CustomOpError as e:
        raise ToolError(str(e)) from None


def _random_input(shape: Sequence[int], dtype: np.dtype[Any], rng: np.random.Generator
                  ) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return np.zeros(shape, dtype=dtype)


def _inputs(
    executable: Executable, specs: list[str], seed: int | None, required: bool
) -> list[np.ndarray]:
    """The inputs in order: from `--input NAME=FILE` or `--input FILE` (in order), else random
    from `seed` (default 0), or an error when `required`."""
    names = list(executable.input_names)
    given: dict[str, np.ndarray] = {}
    positional: list[np.ndarray] = []
    for spec in specs:
        name, _, file = spec.rpartition("=")
        if name:
            if name not in names:
                raise ToolError(
                    f"--input {spec}: the model has no input '{name}' (inputs: "
                    f"{', '.join(names)})"
                )
            given[name] = _load_input(Path(file))
        else:
            positional.append(_load_input(Path(file)))
    for name in names:
        if name not in given and positional:
            given[name] = positional.pop(0)
    if positional:
        raise ToolError(f"too many inputs: the model has {len(names)} ({', '.join(names)})")
    missing = [name for name in names if name not in given]
    if missing and required:
        raise ToolError(f"missing inputs: {', '.join(missing)} (give --input NAME=FILE.npy, "
                        "or --seed N for random inputs)")
    if missing and isinstance(executable, Executable):
        executable.check_memory()  # before making inputs a call could not run on
    if missing and _runtime_shapes(executable):
        raise ToolError(
            f"missing inputs: {', '.join(missing)}; the model's inputs have runtime shapes "
            f"({executable.describe()}), so random inputs need --input-shape for each, or give "
            "--input NAME=FILE.npy")
    rng = np.random.default_rng(0 if seed is None else seed)
    arrays = []
    for index, name in enumerate(names):
        if name in given:
            arrays.append(given[name])
            continue
        # a library of several shapes: the first variant's (one row of a dynamic batch)
        first = getattr(executable, "variants", (executable,))[0]
        spec = first.signature.inputs[index]
        arrays.append(_random_input(spec.shape, np.dtype(spec.dtype), rng))
    return arrays


# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------


def emit_command(args: argparse.Namespace) -> None:
    """`dlc compile --emit`: the lowered code as text (codegen.emit_device_code)."""
    from dlc.dialects import make_context
    from dlc.dialects.contracts import TARGET_ATTR
    from dlc.driver.emit import emit_device_code
    from dlc.driver.source import parse_module
    from dlc.driver.target import resolve_target
    from dlc.target import CpuTarget
    from xdsl.dialects.builtin import StringAttr

    if not args.model.is_file():
        raise ToolError(f"no such file: {args.model}")
    if getattr(args, "precision", "fp32") != "fp32":
        raise ToolError(f"expected no --emit with --precision {args.precision} (--emit prints "
                        "the model's own types; compile a library instead)")
    if args.model.suffix == ".onnx":
        from dlc.frontends.onnx import import_onnx

        module = import_onnx(args.model, dict(args.input_shapes) or None)
    else:
        module = parse_module(args.model, make_context())
    target = resolve_target(args.target, args.threads)
    arch = args.arch
    if isinstance(target, CpuTarget):
        module.attributes[TARGET_ATTR] = StringAttr(str(target))
    elif target.is_cuda:
        arch = arch or target.arch
    text = emit_device_code(
        module, target.kind, args.emit, arch=arch, check_bounds=args.check_bounds
    )
    if args.output is None:
        sys.stdout.write(text)
        return
    write_atomically(args.output, text)
    print(f"dlc: wrote {args.emit} for {args.target} to {args.output}")


def _c_interface_options(args: argparse.Namespace, output: Path) -> tuple[str, Path]:
    """The library's C prefix (checked: before anything is compiled or written) and the path
    of its header."""
    from dlc.runtime.c_api import CApiError, check_c_prefix, default_c_prefix

    prefix = args.c_prefix if args.c_prefix is not None else default_c_prefix(args.model.stem)
    try:
        check_c_prefix(prefix)
    except CApiError as e:
        raise ToolError(f"--c-prefix: {e}") from None
    header = args.c_header if args.c_header is not None else output.with_suffix(".h")
    if header.resolve() == output.resolve():
        raise ToolError(f"--c-header {header}: the header would overwrite the library")
    if not header.resolve().parent.is_dir():
        raise ToolError(f"--c-header {header}: no such directory {header.parent}")
    return prefix, header


def compile_command(args: argparse.Namespace) -> None:
    """`dlc compile`: compile and export; print what the compile did."""
    if args.emit is not None:
        emit_command(args)
        return
    from dlc.driver.target import resolve_target
    from dlc.target import CpuTarget

    output = args.output or Path(args.model.with_suffix(".so").name)
    if output.suffix not in (".so", ".tar"):
        raise ToolError(f"expected an output path ending in .so or .tar, found '{output}'")
    if not isinstance(resolve_target(args.target, args.threads), CpuTarget):
        if output.suffix != ".so":
            raise ToolError(f"expected an output path ending in .so for a GPU library, found "
                            f"'{output}'")
        device_library_command(args, output, *_c_interface_options(args, output))
        return
    prefix, header = _c_interface_options(args, output)
    executable, seconds = _executable(args)
    assert seconds is not None, "a compile is timed"
    variants = getattr(executable, "variants", None)
    if variants is not None:  # a library of several shapes (runtime.variants)
        executable.export(output, c_prefix=prefix, c_header=header)
        print(f"dlc: compiled {args.model} -> {output} in {seconds:.2f} s "
              f"({len(variants)} shapes)")
        from dlc.runtime.variants import variant_info

        names = [f"{prefix}_{tag}" for tag in _variant_tags(variants)]
        for name, variant in zip(names, variants, strict=True):
            print(f"  {name}: {variant_info(name, variant).describe()}")
            _print_stats(variant.stats, args, "    ")
        if header is not None:
            print(f"  C header:  {header} (functions {names[0]}_run, ..., {prefix}_variants)")
        return
    if executable.model is None and args.c_prefix is None and args.c_header is None:
        header = None  # several entry functions: no C interface (nor header) to write
        executable.export(output)
    else:
        executable.export(output, c_prefix=prefix, c_header=header)
    stats = executable.stats
    assert stats is not None, "a compile has stats"
    cached = "model from the cache" if stats.model_cache_hit else (
        f"{stats.kernels_cached}/{stats.kernels} kernels from the cache")
    print(f"dlc: compiled {args.model} -> {output} in {seconds:.2f} s "
          f"({cached})")
    _print_stats(stats, args, "  ")
    if header is not None:
        print(f"  C header:  {header} (functions {prefix}_run, {prefix}_run_with_workspace, "
              "...)")


def _variant_tags(variants: Sequence[Executable]) -> list[str]:
    from dlc.driver.shape_variants import variant_tags
    from dlc.runtime.variants import variant_info

    return variant_tags([[shape for _, shape in variant_info("", v).shapes] for v in variants])


def _print_stats(stats: Any, args: argparse.Namespace, indent: str) -> None:
    """What one compile did: kernels, workspace, weights, tuning, the slowest stages."""
    if stats.calls:
        saved = ""
        if stats.unplanned_bytes:
            saved = f" ({format_bytes(stats.unplanned_bytes)} without the plan)"
        print(f"{indent}kernels:   {stats.calls} calls of {stats.kernels} distinct kernels")
        print(f"{indent}workspace: {format_bytes(stats.workspace_bytes)} planned{saved}")
    print(f"{indent}weights:   {format_bytes(stats.weight_bytes)}")
    if args.tuning_log is not None and not stats.model_cache_hit:
        kept = ", ".join(f"@{name}" for name in stats.kept_default) or "none"
        print(f"{indent}tuning:    applied {len(stats.tuned)} record(s) from {args.tuning_log}; "
              f"kept the default schedule: {kept}")
    slow = sorted(stats.seconds.items(), key=lambda item: -item[1])[:4]
    if slow and not stats.model_cache_hit:
        print(f"{indent}stages:    " + ", ".join(f"{name} {seconds:.2f} s"
                                                 for name, seconds in slow)
              + " (summed over processes)")


def device_library_command(
    args: argparse.Namespace, output: Path, prefix: str, header: Path
) -> None:
    """`dlc compile --target cuda|opencl`: a GPU library (device code, native host code) with
    its C interface and header (a model's); nothing runs, so no GPU is needed."""
    from dlc.driver.build import export_for_device

    if not args.model.is_file():
        raise ToolError(f"no such file: {args.model}")
    if args.check_bounds:
        raise ToolError(f"expected a CPU --target with --check-bounds (bounds checks are CPU "
                        f"code), found '{args.target}'")
    if args.precision != "fp32":
        raise ToolError(f"expected a CPU --target with --precision {args.precision} (mixed "
                        f"precision is lowered for CPUs), found '{args.target}'")
    target = args.target
    if args.arch:
        if not target.strip().startswith("cuda"):
            raise ToolError(f"--arch applies to --target cuda, found '{target}'")
        target = f"cuda -arch={args.arch}"
    start = time.perf_counter()
    explicit = args.c_prefix is not None or args.c_header is not None
    before = header.stat().st_mtime_ns if header.exists() else None
    export_for_device(args.model, target, output, input_shapes=dict(args.input_shapes) or None,
                      c_prefix=prefix, c_header=header, c_interface_optional=not explicit)
    print(f"dlc: compiled {args.model} -> {output} for {target} in "
          f"{time.perf_counter() - start:.2f} s (device code and host code; dlc.load runs it)")
    if header.is_file() and header.stat().st_mtime_ns != before:  # not so for several entries
        print(f"  C header:  {header} (functions {prefix}_run, {prefix}_last_error, ...)")


def run_command(args: argparse.Namespace) -> None:
    """`dlc run`: run once on the given inputs; print or save the outputs."""
    executable, _ = _executable(args)
    inputs = _inputs(executable, args.inputs, args.seed, required=args.seed is None)
    results = executable.run(dict(zip(executable.input_names, inputs, strict=True)))
    if args.output_dir is not None:
        save_outputs(args.output_dir, results, "dlc")
        return
    for name, array in results.items():
        print(f"// {name}: {array.dtype} {list(array.shape)}")
        print(np.array2string(array, threshold=64, separator=", "))


def profile_command(args: argparse.Namespace) -> None:
    """`dlc profile`: the per-kernel time table."""
    from dlc.runtime.profiler import profile

    executable, _ = _executable(args)
    inputs = _inputs(executable, args.inputs, args.seed, required=False)
    if hasattr(executable, "specialization"):  # this call's specialization, or variant
        try:
            executable, inputs = executable.specialization(inputs)
        except ExecutableError as e:
            raise ToolError(str(e)) from None
    print(profile(executable, inputs, args.repeat).table(args.top))


def bench_command(args: argparse.Namespace) -> None:
    """`dlc bench`: median latency of dlc, and of ONNX Runtime on the same inputs."""
    executable, compile_seconds = _executable(args)
    inputs = _inputs(executable, args.inputs, args.seed, required=False)
    runs: dict[str, Callable[[], object]] = {"dlc": lambda: executable(*inputs)}
    if "ort" in args.compare:
        if args.model.suffix != ".onnx":
            raise ToolError("--compare ort needs the .onnx model")
        try:
            import onnxruntime
        except ImportError:
            print("dlc: onnxruntime is not installed; timing dlc alone", file=sys.stderr)
        else:
            session = onnxruntime.InferenceSession(
                str(args.model), providers=["CPUExecutionProvider"])
            feed = {i.name: x for i, x in zip(session.get_inputs(), inputs, strict=True)}
            runs["onnxruntime"] = lambda: session.run(None, feed)
    from dlc.runtime.profiler import median_seconds

    medians = {
        name: median_seconds(function, args.repeat) * 1e3 for name, function in runs.items()
    }
    if compile_seconds is not None:
        print(f"dlc: compiled {args.model.name} in {compile_seconds:.2f} s")
    for name, median in medians.items():
        ratio = ""
        if name != "dlc":
            ratio = f"  (dlc / {name}: {medians['dlc'] / median:.2f}x)"
        print(f"{name:>12}: {median:8.3f} ms median of {args.repeat}{ratio}")


def cache_command(args: argparse.Namespace) -> None:
    """`dlc cache info|clear`: what the compile cache holds, or remove it all."""
    from dlc.driver.cache import CompileCache

    cache = CompileCache(args.cache_dir, args.cache_max_size)
    if args.action == "clear":
        removed = cache.clear()
        print(f"dlc: removed {removed.kernels} kernels and {removed.models} models "
              f"({format_bytes(removed.bytes)}) from {removed.directory}")
        return
    usage = cache.usage()
    print(f"location: {usage.directory}")
    print(f"entries:  {usage.kernels} kernels, {usage.models} models")
    print(f"size:     {format_bytes(usage.bytes)} ({usage.bytes} bytes; limit "
          f"{format_bytes(args.cache_max_size)})")


def quantize_command(args: argparse.Namespace) -> None:
    """`dlc quantize` (tools/dlc_quantize.py): int8 post-training quantization into QDQ ONNX."""
    from dlc.tools.dlc_quantize import quantize_command as run_quantize

    run_quantize(args)


def tune_command(args: argparse.Namespace) -> None:
    """`dlc tune` (tools/dlc_tune.py): tune a model's kernels into a log, or replay a log."""
    from dlc.tools.dlc_tune import run_tune

    code = run_tune(args)
    if code:
        raise SystemExit(code)


COMMANDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "compile": compile_command,
    "run": run_command,
    "profile": profile_command,
    "bench": bench_command,
    "tune": tune_command,
    "cache": cache_command,
    "quantize": quantize_command,
}


def _main(argv: list[str]) -> None:
    from dlc.runtime.c_api import CApiError
    from dlc.runtime.library import LibraryError

    import dlc

    args = _parser().parse_args(argv)
    try:
        COMMANDS[args.command](args)
    except (dlc.CompileError, dlc.ExecutableError, LibraryError, CApiError) as e:
        raise ToolError(str(e)) from None
    except OSError as e:
        raise ToolError(f"{e.filename or ''}: {e.strerror}" if e.strerror else str(e)) from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `dlc` console script."""
    args = sys.argv[1:] if argv is None else argv
    return run_tool("dlc", lambda: _main(args), show_traceback="--show-traceback" in args)


if __name__ == "__main__":
    sys.exit(main())
