"""The C interface of a model library: its header, its exported functions, and how they are made.

Counterpart: TVM's AOT interface (`tvmgen_<name>_run(struct tvmgen_<name>_inputs *, struct
tvmgen_<name>_outputs *)` and its `_workspace` variant, with the model's header). A library that
`CompiledModel.export` writes exports only functions named under a prefix (a C identifier, by
default the model's name), which `c_header` declares:

    int <prefix>_run(const struct <prefix>_inputs *, struct <prefix>_outputs *);
    int <prefix>_run_with_workspace(const struct <prefix>_inputs *, struct <prefix>_outputs *,
                                    void *workspace, size_t workspace_bytes);
    int <prefix>_run_batch(int64_t rows, const struct <prefix>_inputs *,   /* a dynamic */
                           struct <prefix>_outputs *);                      /* batch only */
    int <prefix>_set_num_threads(int);   int <prefix>_get_num_threads(void);
    const char *<prefix>_error_string(int);
    const void *<prefix>_dlc_symbol(const char *name);   /* for dlc.load */

A model over runtime shapes (`CInterface.runtime_shapes`: its entry takes sizes other than a
batch's rows) has, in place of `_run`, `_run_with_workspace` and `_run_batch`, a struct of
every tensor's dims and its shape functions and size checks written as C (TVM's shape
functions; the metadata's affine expressions, `runtime.size_exprs`):

    int <prefix>_output_shapes(struct <prefix>_shapes *);   /* inputs' dims in, outputs' out */
    int <prefix>_run_shaped(const struct <prefix>_shapes *, const struct <prefix>_inputs *,
                            struct <prefix>_outputs *);
    const char *<prefix>_last_error(void);   /* why <PREFIX>_ERROR_SHAPE, per thread */

A GPU library (`driver.gpu_library`, `CInterface.device` set) has the same header shape, its
tensor pointers host arrays, and returns `<PREFIX>_ERROR_DEVICE` when its device runtime fails;
in place of the workspace and thread functions (its memory is device memory it allocates
itself, its parallelism the kernels' grids) it declares

    const char *<prefix>_last_error(void);              /* the device runtime's message */
    int <prefix>_set_driver_library(const char *path);  /* before the first call */

Every library has one fixed data symbol, `dlc_prefix` (`PREFIX_SYMBOL`): the prefix as a C
string. That is how `dlc.load` (`runtime.library`) finds the rest without parsing ELF: it reads
`dlc_prefix`, then asks `<prefix>_dlc_symbol` for the library's internal symbols (the metadata
JSON `dlc_metadata`, the model description `dlc_model`, the entry function, kernels and
weights), which are all local to the library. One fixed name is the least a loader that knows
nothing of the model can start from; it is a few bytes of read-only data that no code
references, so two model libraries in one program do not interfere (`dlsym` on a library's
handle finds that library's own; the dynamic linker binds no reference to it).

The functions are C source (`c_wrapper_source`) compiled with the library by the C compiler
that links it; the linker's version script (`version_script`) keeps every other symbol local.
This module only writes text: it imports neither xDSL nor llvmlite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dlc.runtime.metadata import (
    BATCH_ENTRY_SUFFIX,
    METADATA_SYMBOL,
    MODEL_SYMBOL,
    WEIGHT_ALIGNMENT,
    WORKSPACE_ENTRY_SUFFIX,
    ArgumentSpec,
    FunctionSignature,
    MetadataError,
    ModelInfo,
)

PREFIX_SYMBOL = "dlc_prefix"
"""The one exported symbol not under the prefix: a null-terminated string holding the prefix."""

NUM_THREADS_SYMBOL = "dlc_num_threads"
"""The library-global thread count that parallel loops read (the llvm lowering's
`openmp.NUM_THREADS_SYMBOL`; 0: the compiled count)."""

WORKSPACE_ALIGNMENT = WEIGHT_ALIGNMENT
"""The alignment `<prefix>_run_with_workspace` requires of the caller's workspace."""

LAST_ERROR_SYMBOL = "dlc_last_error"
"""A GPU library's `const char *dlc_last_error(void)` (internal; `<prefix>_last_error`): the
message of its last failure in the calling thread."""

SET_DRIVER_SYMBOL = "dlc_set_driver_library"
"""A GPU library's `int dlc_set_driver_library(const char *path)` (internal;
`<prefix>_set_driver_library`): the driver library to open instead of the default; nonzero
once the device is open."""

ERROR_CODES: tuple[tuple[str, int, str], ...] = (
    ("OK", 0, "success"),
    ("ERROR_NULL_ARGUMENT", 1, "a struct pointer or a tensor pointer in it is NULL"),
    ("ERROR_OUT_OF_MEMORY", 2, "the workspace could not be allocated"),
    ("ERROR_WORKSPACE", 3, "the workspace is NULL, smaller than WORKSPACE_BYTES or not aligned "
                           "to WORKSPACE_ALIGNMENT"),
    ("ERROR_INVALID_ARGUMENT", 4, "an argument is out of range (a negative number of threads)"),
)
"""The return codes of a CPU library's C functions: (macro suffix, value, meaning)."""

SHAPED_ERROR_CODES: tuple[tuple[str, int, str], ...] = (
    *ERROR_CODES[:2], ERROR_CODES[4],
    ("ERROR_SHAPE", 6, "a shape in the shapes struct does not fit the model (a static dim "
                       "differs, a size check fails, an output's shape is not the one computed): "
                       "the last_error function says which"),
)
"""The return codes of a CPU library over runtime shapes (`CInterface.runtime_shapes`)."""

DEVICE_ERROR_CODES: tuple[tuple[str, int, str], ...] = (
    *ERROR_CODES[:2],
    ("ERROR_DEVICE", 5, "the device runtime failed (no driver or device, or a failed build, "
                        "allocation, copy or launch): the last_error function says why"),
)
"""The return codes of a GPU library's C functions (the same values where they mean the same)."""

C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic "
    "_Imaginary _Noreturn _Static_assert _Thread_local bool true false alignas alignof "
    "static_assert thread_local nullptr constexpr typeof typeof_unqual".split()
)
"""C's keywords (C11 and C23): not usable as a prefix or a member name."""

C_TYPES = {
    "float32": "float", "float64": "double", "float16": "uint16_t",
    "bfloat16": "uint16_t",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "bool": "uint8_t",
}
"""The C element type of each NumPy dtype an entry argument can have (float16 and bfloat16:
their bits; bool: one byte, 0 or 1)."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SYMBOL = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]*\Z")


class CApiError(ValueError):
    """A C prefix that is not a C identifier, or a model the C interface cannot describe."""


def check_c_prefix(prefix: str) -> str:
    """`prefix` if it is a C identifier that is not a keyword (else `CApiError`)."""
    if not _IDENTIFIER.match(prefix) or prefix in C_KEYWORDS:
        raise CApiError(
            f"expected a C identifier as the C prefix (letters, digits and '_', not starting "
            f"with a digit, not a C keyword), found '{prefix}'"
        )
    return prefix


def check_export_request(
    api: CInterface | None, c_prefix: str | None, c_header: str | Path | None, module: str
) -> None:
    """Refuses (`CApiError`, before anything is written) a C prefix or header asked of a
    `module` ("module", "GPU program") that has no C interface (`api` None: not exactly one
    entry function), and a header in a directory that does not exist."""
    if api is None and (c_prefix is not None or c_header is not None):
        raise CApiError(
            f"this {module} has no C interface (it needs exactly one entry function): export "
            "it without a C prefix or header"
        )
    if c_header is not None and not Path(c_header).parent.is_dir():
        raise CApiError(f"cannot write the header {c_header}: no such directory "
                        f"{Path(c_header).parent}")


def c_identifier(name: str, fallback: str = "model") -> str:
    """`name` made a C identifier: every other character becomes '_', a leading digit gets
    `fallback` and '_' before it, a keyword or an empty name becomes `fallback`."""
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not text.strip("_"):
        return fallback
    if text[0].isdigit():
        text = f"{fallback}_{text}"
    return text if text not in C_KEYWORDS else f"{text}_"


def default_c_prefix(model_name: str) -> str:
    """The prefix for a model called `model_name` (its file's stem): a C identifier."""
    return c_identifier(model_name)


@dataclass(frozen=True)
class CTensor:
    """One input or output as C sees it: its struct member and macro names, element type."""

    spec: ArgumentSpec
    name: str
    member: str
    macro: str

    @property
    def c_type(self) -> str:
        return C_TYPES[self.spec.dtype]

    @property
    def size(self) -> int:
        return math.prod(self.spec.shape)


def _tensors(specs: Sequence[ArgumentSpec], names: Sequence[str], role: str) -> list[CTensor]:
    tensors: list[CTensor] = []
    taken: set[str] = set()
    for index, (spec, name) in enumerate(zip(specs, names, strict=True)):
        if spec.dtype not in C_TYPES:
            raise CApiError(
                f"{role} {index} ('{name}') has element type {spec.dtype}, which the C "
                "interface has no type for"
            )
        member = c_identifier(name, role)
        while member.lower() in taken:  # macros are upper case: unique ignoring case
            member += f"_{index}"
        taken.add(member.lower())
        if spec.batch and spec.shape[:1] == (-1,):  # runtime rows: described by one row
            spec = replace(spec, shape=(1, *spec.shape[1:]))
        tensors.append(CTensor(spec, name, member, f"{role.upper()}_{member.upper()}"))
    return tensors


@dataclass(frozen=True)
class CInterface:
    """The C interface of one model library: what the header declares and the wrapper defines.

    Attributes:
        prefix: the C identifier every exported function starts with.
        signature: the entry function (destination-passing style).
        info: the model's description (names, workspace).
        internal_symbols: the library's own symbols that `<prefix>_dlc_symbol` returns
            (entry, kernels, weights, metadata), all local to the library.
        device: the GPU target of a GPU library (`opencl`, `cuda`), whose entry takes host
            arrays and returns a status (`runtime.metadata.DEVICE_KEY`); None for a CPU one.
    """

    prefix: str
    signature: FunctionSignature
    info: ModelInfo
    internal_symbols: tuple[str, ...] = ()
    device: str | None = None
    linked_names: tuple[tuple[str, str], ...] = ()
    """(name, symbol) for each internal symbol linked under another name (a variant of a
    library of several shapes, `driver.shape_variants`); `<prefix>_dlc_symbol` takes the name."""
    variant_of: str = ""
    """The prefix of the library of several shapes whose variant this is ("" for a library of
    one model): such a library defines `dlc_prefix` once, for all its variants."""

    def __post_init__(self) -> None:
        check_c_prefix(self.prefix)
        clashes = sorted(set(self.exported_functions) & set(self.internal_symbols))
        if clashes:
            raise CApiError(
                f"the C prefix '{self.prefix}' makes {', '.join(clashes)}, which the model "
                "already uses as a symbol: choose another prefix"
            )

    @property
    def inputs(self) -> list[CTensor]:
        return _tensors(self.signature.inputs, self.info.input_names, "input")

    @property
    def outputs(self) -> list[CTensor]:
        return _tensors(self.signature.outputs, self.info.output_names, "output")

    @property
    def macro(self) -> str:
        return self.prefix.upper()

    @property
    def error_codes(self) -> tuple[tuple[str, int, str], ...]:
        if self.device is not None:
            return DEVICE_ERROR_CODES
        return SHAPED_ERROR_CODES if self.runtime_shapes else ERROR_CODES

    @property
    def runtime_shapes(self) -> bool:
        """Whether the entry takes runtime sizes other than a dynamic batch's rows (a model
        compiled over runtime shapes, `dynamic_shapes=True`): its library is called through
        `<prefix>_output_shapes` and `<prefix>_run_shaped` with a `struct <prefix>_shapes`."""
        return bool(self.signature.dim_args) and not any(
            a.batch for a in self.signature.arguments)

    @property
    def shape_members(self) -> list[tuple[CTensor, str]]:
        """Each tensor (inputs, then outputs) with its array's name in `struct
        <prefix>_shapes` (`input_<member>`, `output_<member>`: unique across both)."""
        return [(t, t.macro.lower()) for t in (*self.inputs, *self.outputs)]

    @property
    def batch(self) -> str:
        """The symbol of the entry's dynamic batch (`ArgumentSpec.batch`) on a CPU library,
        whose `<prefix>_run_batch` runs a batch of rows; "" otherwise."""
        if self.device is not None:
            return ""
        return next((a.batch for a in self.signature.arguments if a.batch), "")

    @property
    def exported_functions(self) -> tuple[str, ...]:
        p = self.prefix
        if self.device is not None:
            return (f"{p}_run", f"{p}_last_error", f"{p}_set_driver_library",
                    f"{p}_error_string", f"{p}_dlc_symbol")
        if self.runtime_shapes:
            return (f"{p}_output_shapes", f"{p}_run_shaped", f"{p}_last_error",
                    f"{p}_set_num_threads", f"{p}_get_num_threads", f"{p}_error_string",
                    f"{p}_dlc_symbol")
        batch = (f"{p}_run_batch",) if self.batch else ()
        return (f"{p}_run", *batch, f"{p}_run_with_workspace", f"{p}_set_num_threads",
                f"{p}_get_num_threads", f"{p}_error_string", f"{p}_dlc_symbol")

    @property
    def exported_symbols(self) -> tuple[str, ...]:
        """Every symbol the library exports (the version script's global list)."""
        if self.variant_of:
            return self.exported_functions
        return (*self.exported_functions, PREFIX_SYMBOL)

    def linked(self, name: str) -> str:
        """The symbol the internal symbol `name` is linked under."""
        return dict(self.linked_names).get(name, name)

    @property
    def workspace_bytes(self) -> int:
        return self.info.workspace_bytes


def c_interface(
    prefix: str, signature: FunctionSignature, info: ModelInfo,
    internal_symbols: Sequence[str] = (), device: str | None = None,
) -> CInterface:
    """The C interface of a model with the entry `signature` and description `info` (of a
    GPU library for `device`)."""
    if info.entry != signature.name:
        raise CApiError(
            f"the model description is of @{info.entry}, the signature of @{signature.name}"
        )
    batched = any(a.batch for a in signature.arguments)
    for argument, dim in signature.dim_args if batched or device is not None else ():
        if dim != 0 or not signature.arguments[argument].batch:
            where = "a GPU library" if device is not None else "a model with a dynamic batch"
            raise CApiError(
                f"@{signature.name} has a runtime size for dim {dim} of argument {argument} "
                f"('{signature.arguments[argument].name}'): the C interface of {where} takes "
                "the runtime rows of its batch only (a library of several shapes, "
                "`--specialize` / `dlc.compile(specialize=...)`, exports)")
    if not batched:
        _check_shape_functions(signature)
    return CInterface(prefix, signature, info, tuple(internal_symbols), device)


def _check_shape_functions(signature: FunctionSignature) -> None:
    """A model over runtime shapes exports when each output's runtime dims have a shape
    function (`ArgumentSpec.sizes`) whose divisions are by nonzero constants (`CApiError`
    otherwise: the caller could not size the outputs)."""
    first = len(signature.inputs)
    for index, spec in enumerate(signature.outputs):
        if -1 in spec.shape and not spec.sizes:
            raise CApiError(
                f"output {index} ('{spec.name}') of @{signature.name} has runtime dims "
                f"{list(spec.shape)} that no shape function computes from the inputs' sizes: "
                "the C interface could not size it (a library of several shapes, "
                "`--specialize`, exports)")
    exprs = [e for spec in signature.outputs for e in spec.sizes]
    exprs += [e for _, lhs, rhs, _ in signature.size_checks for e in (lhs, rhs)]
    for expr in exprs:
        try:
            _c_size_expr(expr, sum(1 for a, _ in signature.dim_args if a < first))
        except CApiError as e:
            raise CApiError(f"@{signature.name}: {e}") from None


# ---------------------------------------------------------------------------------------------
# The header
# ---------------------------------------------------------------------------------------------


def _shape_text(spec: ArgumentSpec) -> str:
    return "[" + ", ".join(str(d) for d in spec.shape) + "]"


def c_header(api: CInterface, library_name: str) -> str:
    """The header declaring `api` (for a library file named `library_name`)."""
    p, m = api.prefix, api.macro
    lines = [
        f"/* {p}.h: the C interface of the dlc model library {library_name}.",
        " * Generated by dlc (dlc compile --c-header); do not edit.",
        " *",
        *(_device_notes(api, library_name) if api.device is not None
          else _cpu_notes(api, library_name)),
        " *",
        " * Trust: loading this library (dlopen, or linking a program with it) runs its code,",
        " * constructors included. A model library from an untrusted source is code from an",
        " * untrusted source.",
        " */",
        f"#ifndef {m}_H_",
        f"#define {m}_H_",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "/* Return codes */",
    ]
    for suffix, value, meaning in api.error_codes:
        lines.append(f"#define {m}_{suffix} {value} /* {meaning} */")
    lines += [
        "",
        f"#define {m}_NUM_INPUTS {len(api.signature.inputs)}",
        f"#define {m}_NUM_OUTPUTS {len(api.signature.outputs)}",
    ]
    if api.device is not None:
        lines.append(f'#define {m}_DEVICE "{api.device}"')
    elif not api.runtime_shapes:
        lines += [
            f"#define {m}_WORKSPACE_BYTES {api.workspace_bytes}",
            f"#define {m}_WORKSPACE_ALIGNMENT {WORKSPACE_ALIGNMENT}",
            f"#define {m}_KERNEL_BUFFER_BYTES {api.info.kernel_buffer_bytes}",
        ]
    lines += [
        "",
        "/* Per tensor: NDIM, SHAPE (an initializer), SIZE (elements), BYTES, DTYPE (NumPy's",
        " * name of its element type). */" if not api.runtime_shapes else
        " * name of its element type); a tensor with runtime sizes (-1 in SHAPE) has ITEM_BYTES\n"
        " * in place of SIZE and BYTES. */",
    ]
    for role, tensors in (("input", api.inputs), ("output", api.outputs)):
        for index, tensor in enumerate(tensors):
            spec = tensor.spec
            name = f"{m}_{tensor.macro}"
            shape = ", ".join(str(d) for d in spec.shape) or "1"
            itemsize = _itemsize(spec.dtype)
            sized = [f"#define {name}_SIZE {tensor.size}",
                     f"#define {name}_BYTES {tensor.size * itemsize}"]
            lines += [
                f'/* {role} {index}: "{_comment_text(tensor.name)}", {spec.dtype} '
                f"{_shape_text(spec)} */",
                f"#define {name}_NDIM {len(spec.shape)}",
                f"#define {name}_SHAPE {{{shape}}}",
                *(sized if -1 not in spec.shape or spec.batch else
                  [f"#define {name}_ITEM_BYTES {itemsize}"]),
                f'#define {name}_DTYPE "{spec.dtype}"',
            ]
    for role, qualifier, tensors in (("inputs", "const ", api.inputs),
                                     ("outputs", "", api.outputs)):
        lines += ["", f"struct {p}_{role} {{"]
        for tensor in tensors:
            rows = f", one row of {tensor.spec.batch}" if tensor.spec.batch else ""
            lines.append(f"  {qualifier}{tensor.c_type} *{tensor.member}; "
                         f'/* "{_comment_text(tensor.name)}" {tensor.spec.dtype}'
                         f"{_shape_text(tensor.spec)}{rows} */")
        lines.append("};")
    if api.runtime_shapes:
        lines += ["", f"struct {p}_shapes {{"]
        for tensor, member in api.shape_members:
            lines.append(f"  int64_t {member}[{max(len(tensor.spec.shape), 1)}]; "
                         f'/* "{_comment_text(tensor.name)}" {_shape_text(tensor.spec)} */')
        lines.append("};")
    lines += [""]
    if api.device is not None:
        lines += [
            "/* Runs the model on the host arrays `inputs`, writing the host arrays `outputs`",
            "   (copies in, launches, copies back). */",
            f"int {p}_run(const struct {p}_inputs *inputs, struct {p}_outputs *outputs);",
            "",
            f"/* Why the last call that returned {m}_ERROR_DEVICE in this thread failed (the",
            "   device runtime's message; empty if none). */",
            f"const char *{p}_last_error(void);",
            "",
            "/* The driver library to dlopen instead of the default (libOpenCL.so.1,",
            f"   libcuda.so.1), before the first {p}_run; {m}_ERROR_DEVICE once the device",
            "   is open. */",
            f"int {p}_set_driver_library(const char *path);",
        ]
    elif api.runtime_shapes:
        lines += [
            "/* Reads the inputs' shapes in `shapes`, checks them against the model (its static",
            "   dims, the size constraints its ops need) and writes the outputs' shapes; returns",
            f"   {m}_OK, or {m}_ERROR_SHAPE ({p}_last_error() names the input, dim and",
            "   constraint). */",
            f"int {p}_output_shapes(struct {p}_shapes *shapes);",
            "",
            "/* Runs the model on `inputs` of the shapes in `shapes`, writing `outputs`, whose",
            f"   shapes there must be the ones {p}_output_shapes computes ({m}_ERROR_SHAPE",
            "   otherwise, nothing written). */",
            f"int {p}_run_shaped(const struct {p}_shapes *shapes, const struct {p}_inputs "
            "*inputs,",
            f"    struct {p}_outputs *outputs);",
            "",
            f"/* Why the last call that returned {m}_ERROR_SHAPE in this thread failed. */",
            f"const char *{p}_last_error(void);",
            "",
            *_thread_declarations(api),
        ]
    else:
        lines += [
            "/* Runs the model on `inputs`, writing `outputs`; allocates the workspace. */",
            f"int {p}_run(const struct {p}_inputs *inputs, struct {p}_outputs *outputs);",
            "",
            *([
                f"/* A batch of `rows` rows ('{api.batch}', the model's dynamic batch): the "
                "members marked",
                "   \"one row\" point at `rows` consecutive rows of the shape shown; runs the "
                "model on",
                f"   each ({m}_ERROR_INVALID_ARGUMENT for a negative count). */",
                f"int {p}_run_batch(int64_t rows, const struct {p}_inputs *inputs, "
                f"struct {p}_outputs *outputs);",
                "",
            ] if api.batch else []),
            "/* Runs the model in the caller's workspace (see Memory above). */",
            f"int {p}_run_with_workspace(const struct {p}_inputs *inputs, struct {p}_outputs "
            "*outputs,",
            "    void *workspace, size_t workspace_bytes);",
            "",
            *_thread_declarations(api),
        ]
    lines += [
        "",
        "/* A static English description of a return code. */",
        f"const char *{p}_error_string(int code);",
        "",
        "/* For dlc.load (Python): the address of one of the library's internal symbols",
        (f'   ("{METADATA_SYMBOL}", the entry, the kernels\' source, weights, the device '
         "runtime's functions),\n   or NULL. */" if api.device is not None else
         f'   ("{METADATA_SYMBOL}", "{MODEL_SYMBOL}", the entry, kernels, weights), or NULL. */'),
        f"const void *{p}_dlc_symbol(const char *name);",
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        "",
        f"#endif /* {m}_H_ */",
        "",
    ]
    return "\n".join(lines)


def _thread_declarations(api: CInterface) -> list[str]:
    """A CPU library's `_set_num_threads` and `_get_num_threads`, declared."""
    p, m = api.prefix, api.macro
    return [
        "/* The OpenMP team size of later parallel loops (0: the compiled count); returns",
        f"   {m}_OK, or {m}_ERROR_INVALID_ARGUMENT for a negative count. */",
        f"int {p}_set_num_threads(int num_threads);",
        "",
        f"/* The count {p}_set_num_threads set last (0: none). */",
        f"int {p}_get_num_threads(void);",
    ]


def _cpu_notes(api: CInterface, library_name: str) -> list[str]:
    """The header's notes on building with, calling, memory and threads of a CPU library."""
    p, m = api.prefix, api.macro
    build = [
        f" * Build: cc app.c path/to/{library_name} -Wl,-rpath,'$ORIGIN' (the library needs",
        " * libm, and pthreads when it has parallel loops: both are linked into it).",
        " *",
    ]
    if api.runtime_shapes:
        return build + _shaped_notes(api) + _thread_notes(api) + [
            f" * Thread safety: {p}_output_shapes and {p}_run_shaped may be called from several",
            " * threads at once: each call allocates its own buffers, the weights are read-only,",
            f" * and the library keeps no other state ({p}_last_error's message is per thread).",
            f" * {p}_set_num_threads may be called at any time from any thread (an atomic store);",
            " * while one call's parallel loop runs on the pool, a concurrent call's loops run",
            " * on its own thread.",
        ]
    return build + [
        f" * Calling: fill a struct {p}_inputs with one pointer per input and a struct",
        f" * {p}_outputs with one per output; each points to a C-contiguous (row-major) buffer",
        " * of the shape and element type given below, aligned at least to its element type",
        f" * (64 bytes is best). Outputs must not overlap the inputs or each other. {p}_run",
        f" * returns {m}_OK (0) or one of the error codes below, and writes the outputs only",
        f" * when it returns {m}_OK.",
        " *",
        f" * Memory: {p}_run allocates the workspace ({m}_WORKSPACE_BYTES bytes) for the",
        f" * call and frees it. {p}_run_with_workspace uses the caller's instead: at least",
        f" * {m}_WORKSPACE_BYTES bytes at a multiple of {m}_WORKSPACE_ALIGNMENT (NULL is",
        f" * accepted when {m}_WORKSPACE_BYTES is 0). Kernels may still allocate their own",
        f" * scratch buffers (at most {m}_KERNEL_BUFFER_BYTES bytes per kernel) on the heap.",
        *([f" * {p}_run_batch may copy the rows left after its whole blocks into a heap",
           " * block (freed before it returns; without memory it runs them one at a time)."]
          if api.batch else []),
        *_thread_notes(api),
        f" * Thread safety: {p}_run may be called from several threads at once: each call",
        " * has its own workspace, the weights are read-only, and the library keeps no other",
        f" * state. So may {p}_run_with_workspace, given a workspace (and outputs) of its own",
        f" * per concurrent call. {p}_set_num_threads may be called at any time from any thread",
        " * (an atomic store); while one call's parallel loop runs on the pool, a concurrent",
        " * call's loops run on its own thread.",
    ]


def _shaped_notes(api: CInterface) -> list[str]:
    """The header's notes on calling a CPU library over runtime shapes, and its memory."""
    p, m = api.prefix, api.macro
    return [
        " * Shapes: the model runs any input sizes its ops admit (-1 in a SHAPE below: a size",
        f" * given at run time). Fill the inputs' arrays of a struct {p}_shapes, call",
        f" * {p}_output_shapes to check them and compute the outputs' shapes, allocate the",
        f" * outputs, then call {p}_run_shaped with the same shapes. It returns {m}_OK (0)",
        " * or one of the error codes below, and writes the outputs only when it returns",
        f" * {m}_OK.",
        " *",
        f" * Calling: fill a struct {p}_inputs with one pointer per input and a struct",
        f" * {p}_outputs with one per output; each points to a C-contiguous (row-major) buffer",
        " * of its shape in the shapes struct and the element type given below, aligned at",
        " * least to its element type (64 bytes is best). Outputs must not overlap the inputs",
        " * or each other.",
        " *",
        " * Memory: the intermediate tensors' sizes depend on the call's shapes: each call",
        " * allocates them on the heap and frees them before it returns.",
    ]


def _thread_notes(api: CInterface) -> list[str]:
    """The header's notes on a CPU library's threads and thread safety."""
    p = api.prefix
    return [
        " *",
        " * Threads: parallel loops run on the library's own thread pool (the calling thread",
        " * and pool threads started on first use, which take chunks of each loop; the caller",
        " * never waits for a pool thread that has not started). "
        f"{p}_set_num_threads(n)",
        " * sets how many threads the parallel loops that start after it use; 0 (the initial",
        " * value) keeps the count the library was compiled with (dlc compile --threads; its",
        " * 0 is DLC_NUM_THREADS, else OMP_NUM_THREADS, else all cores). A library compiled",
        " * with --threads 1 has no parallel loops.",
        " *",
    ]


def _device_notes(api: CInterface, library_name: str) -> list[str]:
    """The header's notes on building with, calling, memory and threads of a GPU library."""
    p, m = api.prefix, api.macro
    driver = "libcuda.so.1" if api.device == "cuda" else "libOpenCL.so.1"
    context = "CUDA primary context" if api.device == "cuda" else "OpenCL context"
    return [
        f" * A GPU library ({api.device}): the kernels' device code and the host code that",
        " * launches them.",
        " *",
        f" * Build: cc app.c path/to/{library_name} -Wl,-rpath,'$ORIGIN' (no GPU SDK needed:",
        f" * the library opens the driver library, {driver}, with dlopen at the first call;",
        f" * {p}_set_driver_library names another one first).",
        " *",
        f" * Calling: fill a struct {p}_inputs with one pointer per input and a struct",
        f" * {p}_outputs with one per output; each points to a C-contiguous (row-major) HOST",
        " * array of the shape and element type given below. There is no device-pointer",
        f" * variant: the library's buffers live in its own {context}.",
        f" * {p}_run copies the inputs to the device, launches the kernels, copies",
        f" * the outputs back and returns {m}_OK (0); else an error code below, and for",
        f" * {m}_ERROR_DEVICE (no driver or device, a failed build, allocation, copy or",
        f" * launch) {p}_last_error() says why. The outputs are written only on {m}_OK.",
        " *",
        " * Memory: each call allocates device buffers for the inputs, outputs and",
        " * intermediates and frees them; each weight is uploaded at its first use and kept on",
        f" * the device. So there is no {p}_run_with_workspace (the workspace is device memory",
        f" * the library allocates itself) and no {p}_set_num_threads (the parallelism is the",
        " * kernels' grids).",
        " *",
        f" * Thread safety: {p}_run may be called from several threads; calls into one",
        f" * library are serialised by a lock. {p}_last_error is per thread.",
    ]


def _itemsize(dtype: str) -> int:
    if dtype == "bool":
        return 1
    digits = re.search(r"\d+$", dtype)
    assert digits is not None, "a sized dtype"
    return int(digits.group()) // 8


def _comment_text(name: str) -> str:
    """`name` safe inside a C comment and a string literal."""
    return re.sub(r"[^ -~]|\*/|\\|\"", "?", name)


# ---------------------------------------------------------------------------------------------
# The definitions
# ---------------------------------------------------------------------------------------------


def c_wrapper_source(api: CInterface, header_name: str) -> str:
    """C source defining the functions `c_header` declares, over the library's internal
    entry function (a CPU library's: and its workspace twin; a GPU library's: and its device
    runtime's error and driver functions), compiled into the library."""
    p, m = api.prefix, api.macro
    lines = [
        f"/* The C interface of a dlc model library ({header_name}); generated by dlc. */",
        f'#include "{header_name}"',
        "",
        *(["#include <stdarg.h>", "#include <stdio.h>"] if api.runtime_shapes else []),
        "#include <stdlib.h>",
        "#include <string.h>",
        "",
        *([] if api.variant_of else [f'const char {PREFIX_SYMBOL}[] = "{p}";', ""]),
        "/* The library's own symbols (local to it, by the linker's version script). */",
    ]
    members = [f"inputs->{t.member}" for t in api.inputs]
    members += [f"outputs->{t.member}" for t in api.outputs]
    if api.device is not None:
        lines += _device_functions(api, members)
    elif api.runtime_shapes:
        lines += _shaped_functions(api, members)
    else:
        lines += _cpu_functions(api, members)
    lines += [
        f"const char *{p}_error_string(int code) {{",
        "  switch (code) {",
    ]
    for suffix, _, meaning in api.error_codes:
        lines.append(f'  case {m}_{suffix}: return "{meaning}";')
    lines += ['  default: return "unknown error code";', "  }", "}", ""]
    extra = (LAST_ERROR_SYMBOL, SET_DRIVER_SYMBOL) if api.device else (NUM_THREADS_SYMBOL,)
    symbols = [s for s in dict.fromkeys([*api.internal_symbols, *extra]) if _SYMBOL.match(s)]
    for index, symbol in enumerate(symbols):
        lines.append(f'extern const char dlc_symbol_{index}_[] __asm__("{api.linked(symbol)}");')
    lines += [
        "",
        "static const struct { const char *name; const void *address; } dlc_symbols_[] = {",
    ]
    for index, symbol in enumerate(symbols):
        lines.append(f'  {{"{symbol}", dlc_symbol_{index}_}},')
    lines += [
        "  {NULL, NULL},",
        "};",
        "",
        f"const void *{p}_dlc_symbol(const char *name) {{",
        "  if (name == NULL) return NULL;",
        "  for (size_t i = 0; dlc_symbols_[i].name != NULL; ++i)",
        "    if (strcmp(dlc_symbols_[i].name, name) == 0) return dlc_symbols_[i].address;",
        "  return NULL;",
        "}",
        "",
    ]
    return "\n".join(lines)


def _device_functions(api: CInterface, members: Sequence[str]) -> list[str]:
    """A GPU library's `_run`, `_last_error` and `_set_driver_library`, over its entry (which
    returns nonzero on a failure) and its device runtime."""
    p, m = api.prefix, api.macro
    arity = len(api.signature.arguments)
    lines = [
        f"extern int dlc_entry_({', '.join(['void *'] * arity) or 'void'})"
        f' __asm__("{api.linked(api.signature.name)}");',
        f'extern const char *dlc_last_error_(void) __asm__("{LAST_ERROR_SYMBOL}");',
        f'extern int dlc_set_driver_library_(const char *) __asm__("{SET_DRIVER_SYMBOL}");',
        "",
        f"int {p}_run(const struct {p}_inputs *inputs, struct {p}_outputs *outputs) {{",
        f"  if (inputs == NULL || outputs == NULL) return {m}_ERROR_NULL_ARGUMENT;",
    ]
    for member in members:
        lines.append(f"  if ({member} == NULL) return {m}_ERROR_NULL_ARGUMENT;")
    arguments = ", ".join(f"(void *){member}" for member in members)
    lines += [
        f"  return dlc_entry_({arguments}) == 0 ? {m}_OK : {m}_ERROR_DEVICE;",
        "}",
        "",
        f"const char *{p}_last_error(void) {{ return dlc_last_error_(); }}",
        "",
        f"int {p}_set_driver_library(const char *path) {{",
        f"  if (path == NULL) return {m}_ERROR_NULL_ARGUMENT;",
        f"  return dlc_set_driver_library_(path) == 0 ? {m}_OK : {m}_ERROR_DEVICE;",
        "}",
        "",
    ]
    return lines


def _cpu_functions(api: CInterface, members: Sequence[str]) -> list[str]:
    """A CPU library's `_run`, `_run_with_workspace` and thread functions, over its entry
    (and its workspace twin) and the library-global thread count."""
    p, m = api.prefix, api.macro
    entry = api.signature.name
    arity = len(api.signature.arguments)
    sizes = len(api.signature.dim_args)  # runtime rows: the batch's size for each, after them
    pointers = ["void *"] * arity + ["int64_t"] * sizes
    lines = [
        f"extern void dlc_entry_({', '.join(pointers) or 'void'})"
        f' __asm__("{api.linked(entry)}");',
    ]
    if api.workspace_bytes:
        lines.append(
            f"extern void dlc_entry_with_workspace_({', '.join([*pointers, 'void *'])})"
            f' __asm__("{api.linked(entry + WORKSPACE_ENTRY_SUFFIX)}");'
        )
    lines += [
        f"__attribute__((weak)) int dlc_num_threads_ __asm__(\"{NUM_THREADS_SYMBOL}\") = 0;",
        "",
        f"int {p}_run_with_workspace(const struct {p}_inputs *inputs, struct {p}_outputs "
        "*outputs,",
        "    void *workspace, size_t workspace_bytes) {",
        f"  if (inputs == NULL || outputs == NULL) return {m}_ERROR_NULL_ARGUMENT;",
    ]
    for member in members:
        lines.append(f"  if ({member} == NULL) return {m}_ERROR_NULL_ARGUMENT;")
    arguments = [f"(void *){member}" for member in members]
    one_row = arguments + ["1"] * sizes  # `_run` and `_run_with_workspace`: one row
    if api.workspace_bytes:
        lines += [
            f"  if (workspace == NULL || workspace_bytes < {m}_WORKSPACE_BYTES ||",
            f"      (uintptr_t)workspace % {m}_WORKSPACE_ALIGNMENT != 0)",
            f"    return {m}_ERROR_WORKSPACE;",
            f"  dlc_entry_with_workspace_({', '.join([*one_row, 'workspace'])});",
        ]
    else:
        lines += [
            "  (void)workspace;",
            "  (void)workspace_bytes;",
            f"  dlc_entry_({', '.join(one_row)});",
        ]
    lines += [f"  return {m}_OK;", "}", ""]
    if api.batch:
        call = (f"  dlc_entry_({', '.join([*arguments, *['rows'] * sizes])});" if sizes
                else f"  dlc_batch_entry_(rows, {', '.join(arguments)});")
        lines += [] if sizes else [
            f"extern void dlc_batch_entry_(int64_t, {', '.join(['void *'] * arity)})"
            f' __asm__("{api.linked(entry + BATCH_ENTRY_SUFFIX)}");',
        ]
        lines += [
            "",
            f"int {p}_run_batch(int64_t rows, const struct {p}_inputs *inputs, "
            f"struct {p}_outputs *outputs) {{",
            f"  if (inputs == NULL || outputs == NULL) return {m}_ERROR_NULL_ARGUMENT;",
            *(f"  if ({member} == NULL) return {m}_ERROR_NULL_ARGUMENT;" for member in members),
            f"  if (rows < 0) return {m}_ERROR_INVALID_ARGUMENT;",
            call,
            f"  return {m}_OK;",
            "}",
            "",
        ]
    lines += [f"int {p}_run(const struct {p}_inputs *inputs, struct {p}_outputs *outputs) {{"]
    if api.workspace_bytes:
        rounded = -(-api.workspace_bytes // WORKSPACE_ALIGNMENT) * WORKSPACE_ALIGNMENT
        lines += [
            f"  if (inputs == NULL || outputs == NULL) return {m}_ERROR_NULL_ARGUMENT;",
            f"  void *workspace = aligned_alloc({m}_WORKSPACE_ALIGNMENT, {rounded});",
            f"  if (workspace == NULL) return {m}_ERROR_OUT_OF_MEMORY;",
            f"  int code = {p}_run_with_workspace(inputs, outputs, workspace, {rounded});",
            "  free(workspace);",
            "  return code;",
        ]
    else:
        lines.append(f"  return {p}_run_with_workspace(inputs, outputs, NULL, 0);")
    return [*lines, "}", "", *_thread_functions(api)]


def _thread_functions(api: CInterface) -> list[str]:
    """A CPU library's `_set_num_threads` and `_get_num_threads` over the library-global
    thread count (declared before them)."""
    p, m = api.prefix, api.macro
    return [
        f"int {p}_set_num_threads(int num_threads) {{",
        f"  if (num_threads < 0) return {m}_ERROR_INVALID_ARGUMENT;",
        "  __atomic_store_n(&dlc_num_threads_, num_threads, __ATOMIC_RELAXED);",
        f"  return {m}_OK;",
        "}",
        "",
        f"int {p}_get_num_threads(void) {{",
        "  return __atomic_load_n(&dlc_num_threads_, __ATOMIC_RELAXED);",
        "}",
        "",
    ]


_C_DIVISIONS = {"floordiv": "dlc_floordiv_", "ceildiv": "dlc_ceildiv_", "mod": "dlc_mod_"}


def _c_size_expr(expr: object, num_symbols: int) -> str:
    """The C expression (int64_t) of the size expression `expr` (`runtime.size_exprs`) over
    the symbols `s0`...; `CApiError` for one that is not of that form, or divides by
    anything but a positive constant."""
    if isinstance(expr, int) and not isinstance(expr, bool):
        return f"INT64_C({expr})" if expr >= 0 else f"(-INT64_C({-expr}))"
    if isinstance(expr, dict) and set(expr) == {"s"} and isinstance(expr["s"], int) \
            and 0 <= expr["s"] < num_symbols:
        return f"s{expr['s']}"
    if isinstance(expr, list) and len(expr) == 3 and expr[0] in ("add", "mul", *_C_DIVISIONS):
        lhs = _c_size_expr(expr[1], num_symbols)
        if expr[0] in _C_DIVISIONS:
            if not (isinstance(expr[2], int) and not isinstance(expr[2], bool) and expr[2] > 0):
                raise CApiError(f"a size expression divides by {expr[2]!r}, not a positive "
                                "constant: the C interface cannot compute it")
            return f"{_C_DIVISIONS[expr[0]]}({lhs}, INT64_C({expr[2]}))"
        operator = "+" if expr[0] == "add" else "*"
        return f"({lhs} {operator} {_c_size_expr(expr[2], num_symbols)})"
    raise CApiError(f"expected a size expression over {num_symbols} sizes, found "
                    f"{expr!r}"[:200])


def _shaped_functions(api: CInterface, members: Sequence[str]) -> list[str]:
    """A CPU library's `_output_shapes`, `_run_shaped`, `_last_error` and thread functions over
    an entry that takes runtime sizes (`CInterface.runtime_shapes`): the shape functions and
    size checks of its metadata in C."""
    p, m = api.prefix, api.macro
    signature = api.signature
    arity = len(signature.arguments)
    first = len(signature.inputs)
    shape_of = dict(enumerate(member for _, member in api.shape_members))
    tensors = [t for t, _ in api.shape_members]
    symbols = [(a, d) for a, d in signature.dim_args if a < first]
    pointers = ["void *"] * arity + ["int64_t"] * len(signature.dim_args)
    lines = [
        f"extern void dlc_entry_({', '.join(pointers)}) "
        f'__asm__("{api.linked(signature.name)}");',
        f"__attribute__((weak)) int dlc_num_threads_ __asm__(\"{NUM_THREADS_SYMBOL}\") = 0;",
        "",
        "static _Thread_local char dlc_message_[512];",
        "",
        "static int dlc_shape_error_(const char *format, ...) {",
        "  va_list arguments;",
        "  va_start(arguments, format);",
        "  vsnprintf(dlc_message_, sizeof dlc_message_, format, arguments);",
        "  va_end(arguments);",
        f"  return {m}_ERROR_SHAPE;",
        "}",
        "",
        "static inline int64_t dlc_floordiv_(int64_t a, int64_t b) {",
        "  return a / b - (a % b != 0 && (a < 0) != (b < 0));",
        "}",
        "static inline int64_t dlc_ceildiv_(int64_t a, int64_t b) {",
        "  return -dlc_floordiv_(-a, b);",
        "}",
        "static inline int64_t dlc_mod_(int64_t a, int64_t b) {",
        "  return a - dlc_floordiv_(a, b) * b;",
        "}",
        "",
        f"const char *{p}_last_error(void) {{ return dlc_message_; }}",
        "",
        f"int {p}_output_shapes(struct {p}_shapes *shapes) {{",
        f"  if (shapes == NULL) return {m}_ERROR_NULL_ARGUMENT;",
    ]
    for index, tensor in enumerate(tensors[:first]):
        what = f"input {index} ('{_comment_text(tensor.name)}')"
        for dim, size in enumerate(tensor.spec.shape):
            value = f"shapes->{shape_of[index]}[{dim}]"
            if size >= 0:
                lines += [f"  if ({value} != {size})",
                          f'    return dlc_shape_error_("{what} dim {dim}: expected {size}, '
                          f'found %lld", (long long){value});']
            else:
                lines += [f"  if ({value} < 0)",
                          f'    return dlc_shape_error_("{what} dim {dim}: expected a size, '
                          f'found %lld", (long long){value});']
    for k, (a, d) in enumerate(symbols):
        lines.append(f"  const int64_t s{k} = shapes->{shape_of[a]}[{d}];")
    lines += [f"  (void)s{k};" for k in range(len(symbols))]
    for kind, lhs, rhs, what in signature.size_checks:
        a, b = _c_size_expr(lhs, len(symbols)), _c_size_expr(rhs, len(symbols))
        relation = "!=" if kind == "eq" else "<"
        lines += [f"  if ({a} {relation} {b})",
                  '    return dlc_shape_error_("inputs break a size constraint of the model: '
                  f'%s, found %lld {relation} %lld", "{_comment_text(what)}", '
                  f"(long long)({a}), (long long)({b}));"]
    for index, tensor in enumerate(tensors[first:], start=first):
        computed = iter(tensor.spec.sizes)
        what = f"output {index - first} ('{_comment_text(tensor.name)}')"
        for dim, size in enumerate(tensor.spec.shape):
            value = _c_size_expr(next(computed), len(symbols)) if size < 0 else str(size)
            lines.append(f"  shapes->{shape_of[index]}[{dim}] = {value};")
            if size < 0:
                lines += [f"  if (shapes->{shape_of[index]}[{dim}] < 0)",
                          f'    return dlc_shape_error_("{what} would have %lld in dim {dim}: '
                          f'the inputs are too small", (long long)shapes->{shape_of[index]}'
                          f"[{dim}]);"]
    lines += [f"  return {m}_OK;", "}", ""]
    lines += [
        f"int {p}_run_shaped(const struct {p}_shapes *shapes, const struct {p}_inputs *inputs,",
        f"    struct {p}_outputs *outputs) {{",
        f"  if (shapes == NULL || inputs == NULL || outputs == NULL) "
        f"return {m}_ERROR_NULL_ARGUMENT;",
        *(f"  if ({member} == NULL) return {m}_ERROR_NULL_ARGUMENT;" for member in members),
        f"  struct {p}_shapes computed = *shapes;",
        f"  int code = {p}_output_shapes(&computed);",
        f"  if (code != {m}_OK) return code;",
    ]
    for index, tensor in enumerate(tensors[first:], start=first):
        member = shape_of[index]
        lines += [
            f"  for (int d = 0; d < {len(tensor.spec.shape)}; ++d)",
            f"    if (shapes->{member}[d] != computed.{member}[d])",
            f'      return dlc_shape_error_("output {index - first} '
            f"('{_comment_text(tensor.name)}') dim %d: expected %lld (computed from the "
            'inputs\' shapes), found %lld", d,',
            f"          (long long)computed.{member}[d], (long long)shapes->{member}[d]);",
        ]
    sizes = [f"computed.{shape_of[a]}[{d}]" for a, d in signature.dim_args]
    arguments = [f"(void *){member}" for member in members]
    lines += [
        f"  dlc_entry_({', '.join([*arguments, *sizes])});",
        f"  return {m}_OK;",
        "}",
        "",
        *_thread_functions(api),
    ]
    return lines


def version_script(api: CInterface) -> str:
    """The linker version script that exports `api.exported_symbols` and nothing else."""
    names = "".join(f"    {name};\n" for name in api.exported_symbols)
    return "{\n  global:\n" + names + "  local:\n    *;\n};\n"


def read_prefix(text: str) -> str:
    """The prefix a library's `dlc_prefix` holds, checked (`MetadataError` if it is no
    identifier)."""
    if not _IDENTIFIER.match(text):
        raise MetadataError(f"expected a C identifier in @{PREFIX_SYMBOL}, found {text!r}")
    return text
