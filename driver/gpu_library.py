"""GPU programs as shared libraries: the device code (OpenCL C or PTX) and native host code that
launches it, linked by `cc -shared` (TVM's `export_library` for a GPU module: the host module
compiled, the device module's code embedded).

The host plan (`runtime.gpu_host.HostPlan`, plain data made by `driver.gpu`) is translated into
one C translation unit, each host function a C function of its steps (allocations, weights,
launches with their grid, block and arguments, calls), and compiled with the library's device
runtime (`runtime/gpu_shim`: `common.c` and `opencl.c` or `cuda.c`), which opens the driver
library (libOpenCL.so.1, libcuda.so.1) with dlopen at the first call. C rather than LLVM IR
through the CPU lowering: the host code is a straight list of calls into that runtime with
constant arguments, which C states directly (and `cc` is what links libraries already), while
the LLVM path would need a second lowering of the same plan into `llvm` ops for no better code.

The library's ABI (what `dlc.load` reads, `runtime.metadata.DEVICE_KEY`): for each entry
function `f`, `int f(void *arg0, ..., void *argN)` with host pointers to C-contiguous arrays,
the inputs then the outputs as in the `dlc_metadata` signature; it copies the inputs to the
device, runs the host plan, copies the outputs back, and returns 0, else nonzero with the
message in `const char *dlc_last_error(void)` (the library's last failure in the calling
thread). `int dlc_set_driver_library(const char *path)` names the driver library to open
instead of the default, before the first call. Calls are serialised by a lock per library.
A program with one entry function (a model) gets the C interface of `runtime.c_api` on top
(`<prefix>_run` over host arrays, `<prefix>_last_error`, `<prefix>_set_driver_library`):
then those and `dlc_prefix` are all the library exports, and `dlc.load` finds the entry and
the functions above through `<prefix>_dlc_symbol`.
The kernels' source is the null-terminated string `dlc_gpu_kernels`; the constants are
weights (`dlc_gpu_constant_<i>`), uploaded at their first use and kept on the device.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import dlc.runtime
import numpy as np
from dlc.driver.export import c_compiler, link_shared_library
from dlc.runtime.c_api import (
    LAST_ERROR_SYMBOL,
    SET_DRIVER_SYMBOL,
    CInterface,
    c_interface,
    check_c_prefix,
    check_export_request,
    default_c_prefix,
)
from dlc.runtime.c_api import c_header as c_header_text
from dlc.runtime.gpu_host import (
    Alloc,
    Free,
    GpuProgram,
    HostFunction,
    Launch,
    Scalar,
    Step,
    Weight,
)
from dlc.runtime.library import LibraryError
from dlc.runtime.metadata import METADATA_SYMBOL, ModelInfo, encode_metadata

KERNELS_SYMBOL = "dlc_gpu_kernels"
"""The symbol of the kernels' source (OpenCL C or PTX), a null-terminated string."""

CONSTANT_SYMBOL = "dlc_gpu_constant_{}"
"""The symbol of the plan's i-th constant (in the plan's order)."""

SHIM_DIRECTORY = Path(dlc.runtime.__file__).resolve().parent / "gpu_shim"
"""The device runtime's C sources (package data of `dlc.runtime`)."""

SHIM_SOURCES: dict[str, tuple[str, ...]] = {
    "opencl": ("common.c", "opencl.c"),
    "cuda": ("common.c", "cuda.c"),
}
"""The device runtime's units for each target."""

C_TYPES: dict[str, str] = {
    "float32": "float", "float64": "double",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "bool": "uint8_t",
}
"""The C type of a scalar launch argument, by NumPy dtype name."""

C_FLAGS = ("-O2", "-fPIC", "-fvisibility=hidden", "-std=gnu11")
"""How the host code and the device runtime are compiled."""


def gpu_c_interface(program: GpuProgram, prefix: str) -> CInterface | None:
    """The C interface (`runtime.c_api`, GPU flavour) of `program` under `prefix`, or None
    when it has several entry functions. Raises `CApiError` for a prefix that is not a C
    identifier or clashes with the library's symbols."""
    check_c_prefix(prefix)
    signatures = list(program.plan.signatures.values())
    if len(signatures) != 1:
        return None
    (signature,) = signatures
    info = ModelInfo(signature.name, tuple(a.name for a in signature.inputs),
                     tuple(a.name for a in signature.outputs))
    internal = [signature.name, METADATA_SYMBOL, KERNELS_SYMBOL, LAST_ERROR_SYMBOL,
                SET_DRIVER_SYMBOL,
                *(CONSTANT_SYMBOL.format(i) for i in range(len(program.plan.constants)))]
    return c_interface(prefix, signature, info, internal, device=program.target)


def export_gpu_library(
    program: GpuProgram, path: str | Path, c_prefix: str | None = None,
    c_header: str | Path | None = None,
) -> Path:
    """Write `program` (device code and host plan, `driver.gpu.gpu_program`) as the shared
    library `path`, which `dlc.load` opens and C calls (see the module docstring for the ABI).

    A program with one entry function gets the C interface of `runtime.c_api` for a GPU
    library under `c_prefix` (default: the library's file name made a C identifier) and
    exports nothing else; `c_header`, if given, is where its header is written (after the
    library). A program with several exports its entry functions and runtime functions as
    they are. The library appears at `path` atomically; nothing is left there on failure.

    Raises:
        CApiError: a prefix that is not a C identifier, or `c_prefix`/`c_header` for a
            program with several entry functions (before anything is written).
        LibraryError: no C compiler, a target without a device runtime, a plan the host code
            cannot express, or a failed compile or link.
    """
    from dlc.runtime.files import write_atomically

    path = Path(path)
    units = SHIM_SOURCES.get(program.target)
    if units is None:
        raise LibraryError(
            f"expected a GPU program for {' or '.join(SHIM_SOURCES)}, found one for "
            f"'{program.target}'"
        )
    api = gpu_c_interface(program, c_prefix if c_prefix is not None
                          else default_c_prefix(path.stem))
    check_export_request(api, c_prefix, c_header, "GPU program")
    compiler = c_compiler()
    sources = {f"{name}": (SHIM_DIRECTORY / name).read_text() for name in units}
    sources["host.c"] = host_code(program)
    objects = _compile_units(compiler, sources)
    weights: dict[str, np.ndarray] = {
        KERNELS_SYMBOL: np.frombuffer(program.source.encode() + b"\0", dtype=np.uint8),
    }
    for index, array in enumerate(program.plan.constants.values()):
        weights[CONSTANT_SYMBOL.format(index)] = np.ascontiguousarray(array)
    library = link_shared_library(objects, weights, path, libraries=("-ldl", "-lpthread"),
                                  c_api=api)
    if api is not None and c_header is not None:
        write_atomically(c_header, c_header_text(api, path.name), mode=0o644)
    return library


def _compile_units(compiler: str, sources: Mapping[str, str]) -> list[bytes]:
    """The object code of each C unit (the device runtime's header beside them)."""
    objects = []
    with tempfile.TemporaryDirectory(prefix="dlc-gpu-library-") as scratch:
        for name, text in sources.items():
            source = Path(scratch) / name
            source.write_text(text)
            result = subprocess.run(
                [compiler, *C_FLAGS, "-I", str(SHIM_DIRECTORY), "-c", str(source), "-o",
                 str(source.with_suffix(".o"))],
                capture_output=True, text=True, check=False,
            )
            if result.returncode != 0:
                raise LibraryError(
                    f"compiling the GPU library's {name} failed ({compiler} exited with "
                    f"{result.returncode}): {result.stderr.strip()}"
                )
            objects.append(source.with_suffix(".o").read_bytes())
    return objects


def host_code(program: GpuProgram) -> str:
    """The C translation unit of `program`'s host plan: one static function per host function,
    one exported function per entry function, and the `dlc_metadata` string."""
    plan = program.plan
    functions = list(plan.functions.values())
    indices = {function.name: i for i, function in enumerate(functions)}
    constants = {name: i for i, name in enumerate(plan.constants)}
    kernels = sorted({step.kernel for f in functions for step in f.steps
                      if isinstance(step, Launch)})
    lines = [
        f"/* The host code of a dlc GPU library ({program.target}), generated by "
        "dlc.driver.gpu_library. */",
        '#include "dlc_gpu.h"',
        "",
        f"extern const char {KERNELS_SYMBOL}[];",
    ]
    for index in constants.values():
        symbol = CONSTANT_SYMBOL.format(index)
        lines += [f"extern const char {symbol}[];",
                  f"static dlc_buffer constant_{index}; /* on the device, once uploaded */"]
    lines += [f"static void *kernel_{k}; /* {name} */" for k, name in enumerate(kernels)]
    sizes = {index: plan.constants[name].nbytes for name, index in constants.items()}
    lines += _weight_function(sizes)
    lines += [f"static int host_{i}(const dlc_value *arguments);" for i in range(len(functions))]
    for i, function in enumerate(functions):
        lines += _FunctionWriter(i, function, indices, constants, kernels).lines()
    metadata = encode_metadata(list(plan.signatures.values()), program.target)
    lines += ["", f"DLC_EXPORT const char {METADATA_SYMBOL}[] = {_c_string(metadata)};"]
    for signature in plan.signatures.values():
        if signature.name not in indices:
            raise LibraryError(f"no host function for the entry function @{signature.name}")
        nbytes = [int(np.prod(a.shape, dtype=np.int64)) * np.dtype(a.dtype).itemsize
                  for a in signature.arguments]
        lines += _entry_function(signature.name, indices[signature.name], nbytes,
                                 len(signature.inputs))
    return "\n".join(lines) + "\n"


def _weight_function(sizes: Mapping[int, int]) -> list[str]:
    """`weight(i, &buffer)`: constant i on the device, uploaded at its first use."""
    if not sizes:
        return []
    lines = [
        "",
        "static int weight(int index, dlc_buffer *buffer) {",
        "    dlc_buffer *uploaded;",
        "    const char *data;",
        "    size_t nbytes;",
        "    switch (index) {",
    ]
    for index, nbytes in sizes.items():
        lines.append(f"    case {index}: uploaded = &constant_{index}; "
                     f"data = {CONSTANT_SYMBOL.format(index)}; nbytes = {nbytes}; break;")
    lines += [
        "    default: return dlc_gpu_fail(\"no constant %d\", index);",
        "    }",
        "    if (*uploaded == 0 && (dlc_gpu_alloc(nbytes, uploaded) != 0 ||",
        "                           dlc_gpu_write(*uploaded, data, nbytes) != 0))",
        "        return -1;",
        "    *buffer = *uploaded;",
        "    return 0;",
        "}",
    ]
    return lines


class _FunctionWriter:
    """One host function as C: slots are `s[k]` (the arguments copied in first); on a failure
    the buffers it allocated and has not freed are freed."""

    def __init__(self, index: int, function: HostFunction, functions: Mapping[str, int],
                 constants: Mapping[str, int], kernels: list[str]) -> None:
        self.index = index
        self.function = function
        self.functions = functions
        self.constants = constants
        self.kernels = {name: k for k, name in enumerate(kernels)}
        self.dtypes: dict[int, str] = {}
        self.allocated: list[int] = []

    def lines(self) -> list[str]:
        function = self.function
        slots = max([function.num_arguments, *(_result(s) + 1 for s in function.steps)], default=0)
        body = [line for step in function.steps for line in self._step(step)]
        lines = [
            "",
            f"/* @{function.name} */",
            f"static int host_{self.index}(const dlc_value *arguments) {{",
            f"    dlc_value s[{max(1, slots)}] = {{{{0}}}};",
            f"    for (int i = 0; i < {function.num_arguments}; i++)",
            "        s[i] = arguments[i];",
            *body,
            "    return 0;",
        ]
        if any("goto fail" in line for line in body):
            lines += ["fail:"]
            lines += [f"    if (s[{slot}].buffer != 0) dlc_gpu_free(s[{slot}].buffer);"
                      for slot in self.allocated]
            lines += ["    return -1;"]
        return [*lines, "}"]

    def _step(self, step: Step) -> list[str]:
        if isinstance(step, Alloc):
            self.allocated.append(step.result)
            return [f"    if (dlc_gpu_alloc({step.nbytes}, &s[{step.result}].buffer) != 0) "
                    "goto fail;"]
        if isinstance(step, Free):
            return [f"    dlc_gpu_free(s[{step.buffer}].buffer);",
                    f"    s[{step.buffer}].buffer = 0;"]
        if isinstance(step, Scalar):
            value = step.value
            integer = int(value) if np.isfinite(value) else 0
            return [f"    s[{step.result}].i = {integer}LL;",
                    f"    s[{step.result}].f = {_c_double(float(value))};"]
        if isinstance(step, Weight):
            if step.name not in self.constants:
                raise LibraryError(f"expected a constant '{step.name}' in the host plan, "
                                   "found none")
            return [f"    if (weight({self.constants[step.name]}, &s[{step.result}].buffer) != 0)"
                    " goto fail;"]
        if isinstance(step, Launch):
            return self._launch(step)
        if step.callee not in self.functions:
            raise LibraryError(f"expected a host function @{step.callee}, found none")
        values = ", ".join(f"s[{a}]" for a in step.args) or "{0}"
        return ["    {",
                f"        const dlc_value call[] = {{{values}}};",
                f"        if (host_{self.functions[step.callee]}(call) != 0) goto fail;",
                "    }"]

    def _launch(self, step: Launch) -> list[str]:
        lines = ["    {"]
        for position, argument in enumerate(step.args):
            slot = f"s[{argument.slot}]"
            if argument.dtype is None:
                lines.append(f"        dlc_buffer a{position} = {slot}.buffer;")
                continue
            c_type = C_TYPES.get(argument.dtype)
            if c_type is None:
                raise LibraryError(
                    f"kernel {step.kernel}: a scalar argument of type {argument.dtype} is not "
                    f"supported in a GPU library (expected one of {', '.join(C_TYPES)})"
                )
            field = "f" if argument.dtype.startswith("float") else "i"
            lines.append(f"        {c_type} a{position} = ({c_type}){slot}.{field};")
        count = len(step.args)
        names = [f"a{p}" for p in range(count)]
        lines += [
            f"        void *const values[] = {{{', '.join('&' + n for n in names) or '0'}}};",
            f"        const size_t sizes[] = {{{', '.join(f'sizeof {n}' for n in names) or '0'}}};",
            f"        static const size_t grid[3] = {{{', '.join(map(str, step.grid))}}};",
            f"        static const size_t block[3] = {{{', '.join(map(str, step.block))}}};",
            f"        if (dlc_gpu_launch(&kernel_{self.kernels[step.kernel]}, "
            f"{_c_string(step.kernel)}, grid, block, {count}, values, sizes) != 0) goto fail;",
            "    }",
        ]
        return lines


def _result(step: Step) -> int:
    """The slot a step writes (-1 if none)."""
    return step.result if isinstance(step, Alloc | Scalar | Weight) else -1


def _entry_function(name: str, host: int, nbytes: list[int], num_inputs: int) -> list[str]:
    """The exported entry: host arrays in, device buffers for the host function, copies."""
    count = len(nbytes)
    arguments = ", ".join(f"void *arg{i}" for i in range(count)) or "void"
    symbol = f"entry_{host}"
    return [
        "",
        f"/* @{name}: inputs then outputs, host pointers; 0 on success. */",
        f"DLC_EXPORT int {symbol}({arguments}) __asm__({_c_string(name)});",
        f"static int run_{host}(void *const *host) {{",
        f"    static const size_t nbytes[{max(1, count)}] = "
        f"{{{', '.join(map(str, nbytes)) or '0'}}};",
        f"    dlc_value device[{max(1, count)}] = {{{{0}}}};",
        "    int status = -1;",
        f"    if (dlc_gpu_open({KERNELS_SYMBOL}) != 0)",
        "        return -1;",
        f"    for (int i = 0; i < {count}; i++)",
        "        if (dlc_gpu_alloc(nbytes[i], &device[i].buffer) != 0) goto done;",
        f"    for (int i = 0; i < {num_inputs}; i++)",
        "        if (dlc_gpu_write(device[i].buffer, host[i], nbytes[i]) != 0) goto done;",
        f"    if (host_{host}(device) != 0) goto done;",
        f"    for (int i = {num_inputs}; i < {count}; i++)",
        "        if (dlc_gpu_read(device[i].buffer, host[i], nbytes[i]) != 0) goto done;",
        "    status = 0;",
        "done:",
        f"    for (int i = 0; i < {count}; i++)",
        "        if (device[i].buffer != 0) dlc_gpu_free(device[i].buffer);",
        "    return status;",
        "}",
        f"int {symbol}({arguments}) {{",
        f"    void *const host[{max(1, count)}] = "
        f"{{{', '.join(f'arg{i}' for i in range(count)) or '0'}}};",
        "    dlc_gpu_lock();",
        f"    int status = run_{host}(host);",
        "    dlc_gpu_unlock();",
        "    return status;",
        "}",
    ]


def _c_string(text: str) -> str:
    """`text` as a C string literal (JSON's escapes are C's for ASCII text)."""
    return json.dumps(text, ensure_ascii=True)


def _c_double(value: float) -> str:
    if np.isnan(value):
        return "(0.0 / 0.0)"
    if np.isinf(value):
        return "(1.0 / 0.0)" if value > 0 else "(-1.0 / 0.0)"
    return repr(float(value))
