"""The signature metadata a compiled dlc module carries, and its JSON encoding.

`convert-loop-to-llvm` stores the signatures of a module's entry functions (destination-passing
style: inputs, then outputs) as a null-terminated JSON string in the global `dlc_metadata`, so
that a JIT engine or a shared library can be called from NumPy with nothing but ctypes. This
module is the one definition of that format; it imports neither xDSL nor llvmlite.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

METADATA_SYMBOL = "dlc_metadata"
"""The name of the global that holds the JSON metadata."""

VARIANTS_SYMBOL = "dlc_variants"
"""The name under which a library of several shapes gives its table of variants (JSON,
`runtime.variants`)."""

METADATA_VERSION = 1
"""The version of the JSON format; readers reject other versions."""


class MetadataError(ValueError):
    """The metadata of a compiled module is missing or malformed."""


@dataclass(frozen=True)
class ArgumentSpec:
    """One argument of an entry function: a contiguous buffer of a fixed shape and dtype.

    Attributes:
        name: the argument's name in the source IR (or `arg<i>`).
        shape: the shape; -1 for a dim whose size the call passes (`FunctionSignature.dim_args`).
        dtype: a NumPy dtype name (`float32`, `int64`, `bool`, ...).
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    batch: str = ""
    """The symbol of a dynamic batch (`"N"`) when the argument is one row of it
    (`dlc.batch_rows`): `shape` is the row's (leading dim 1), a call passes N rows, and the
    function runs once per row; empty for an argument passed whole."""
    sizes: tuple[object, ...] = ()
    """For an output whose runtime dims (-1) the function computes from its inputs' sizes: one
    expression per -1 dim, in order (`runtime.size_exprs`: the inputs' runtime sizes in
    `FunctionSignature.dim_args` order are its symbols); empty otherwise."""


@dataclass(frozen=True)
class FunctionSignature:
    """An entry function in destination-passing style: its last `num_outputs` arguments are
    the buffers it writes its results into; it returns nothing."""

    name: str
    arguments: tuple[ArgumentSpec, ...]
    num_outputs: int
    valid_extents: tuple[tuple[int, int, int], ...] = ()
    """(output, axis, count output) for each output padded to a static bound along `axis`, of
    which only the first `outputs[count]` entries (a 0-d int64) are valid (a NonZero's or a
    NonMaxSuppression's data-dependent size, `dlc.valid_extent`); indices count outputs from 0.
    The Python runtime returns such outputs trimmed and does not return the counts."""
    dim_args: tuple[tuple[int, int], ...] = ()
    """(argument, dim) for each dynamic dim (-1 in `shape`), in the order the native function
    takes their sizes (i64s after the pointers; `dlc.dim_args`)."""
    size_checks: tuple[tuple[str, object, object, str], ...] = ()
    """(kind, lhs, rhs, what) for each constraint the inputs' runtime sizes must meet
    (`dlc.size_checks`): `eq` lhs == rhs, `ge` lhs >= rhs, the sizes `runtime.size_exprs`
    expressions of the inputs' runtime sizes in `dim_args` order; `what` names the op that
    needs it. The runtime checks them before each call."""

    @property
    def count_outputs(self) -> frozenset[int]:
        """The outputs that hold the counts of `valid_extents` (not returned to callers)."""
        return frozenset(count for _, _, count in self.valid_extents)

    @property
    def inputs(self) -> tuple[ArgumentSpec, ...]:
        """The arguments the caller provides."""
        return self.arguments[: len(self.arguments) - self.num_outputs]

    @property
    def outputs(self) -> tuple[ArgumentSpec, ...]:
        """The arguments the function writes its results into."""
        return self.arguments[len(self.arguments) - self.num_outputs :]


DEVICE_KEY = "device"
"""The metadata key of a GPU library (`driver.gpu_library`): the target (`opencl`, `cuda`) its
device code is for. Its entry functions take host arrays like a CPU library's, but return an
`int` status (0: success; else `dlc_last_error()` returns the message); a CPU library's metadata
has no such key (its entry functions return nothing)."""


def encode_metadata(signatures: Sequence[FunctionSignature], device: str | None = None) -> str:
    """The JSON text for `signatures` (ASCII only, so its byte length is its length); `device`:
    the GPU target of a GPU library (`DEVICE_KEY`)."""
    document: dict[str, object] = {
        "version": METADATA_VERSION,
        "functions": [
            {
                "name": signature.name,
                "num_outputs": signature.num_outputs,
                "arguments": [
                    {"name": arg.name, "shape": list(arg.shape), "dtype": arg.dtype,
                     **({"batch": arg.batch} if arg.batch else {}),
                     **({"sizes": list(arg.sizes)} if arg.sizes else {})}
                    for arg in signature.arguments
                ],
                **({"valid_extents": [list(e) for e in signature.valid_extents]}
                   if signature.valid_extents else {}),
                **({"dim_args": [list(d) for d in signature.dim_args]}
                   if signature.dim_args else {}),
                **({"size_checks": [list(c) for c in signature.size_checks]}
                   if signature.size_checks else {}),
            }
            for signature in signatures
        ],
    }
    if device is not None:
        document[DEVICE_KEY] = device
    return json.dumps(document, separators=(",", ":"), ensure_ascii=True)


def metadata_device(text: str) -> str | None:
    """The GPU target of a library's metadata (`DEVICE_KEY`), None for a CPU library's."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise MetadataError(f"malformed dlc metadata: {e}") from None
    device = document.get(DEVICE_KEY) if isinstance(document, Mapping) else None
    if device is not None and not isinstance(device, str):
        raise MetadataError(f"malformed dlc metadata: expected a string device, found {device!r}")
    return device


def decode_metadata(text: str) -> dict[str, FunctionSignature]:
    """The signatures in the JSON text `text`, by function name."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise MetadataError(f"malformed dlc metadata: {e}") from None
    if not isinstance(document, Mapping) or document.get("version") != METADATA_VERSION:
        found = document.get("version") if isinstance(document, Mapping) else type(document)
        raise MetadataError(
            f"expected dlc metadata version {METADATA_VERSION}, found {found!r}"
        )
    signatures: dict[str, FunctionSignature] = {}
    try:
        for entry in document["functions"]:
            arguments = tuple(
                ArgumentSpec(str(arg["name"]), tuple(int(d) for d in arg["shape"]), arg["dtype"],
                             str(arg.get("batch", "")), tuple(arg.get("sizes", ())))
                for arg in entry["arguments"]
            )
            extents = tuple(
                (int(output), int(axis), int(count))
                for output, axis, count in entry.get("valid_extents", ())
            )
            dims = tuple((int(argument), int(dim)) for argument, dim in entry.get("dim_args", ()))
            checks = tuple((str(kind), lhs, rhs, str(what))
                           for kind, lhs, rhs, what in entry.get("size_checks", ()))
            signature = FunctionSignature(
                entry["name"], arguments, int(entry["num_outputs"]), extents, dims, checks
            )
            signatures[signature.name] = signature
    except (KeyError, TypeError, ValueError) as e:
        raise MetadataError(f"malformed dlc metadata: {type(e).__name__}: {e}") from None
    return signatures


# ---------------------------------------------------------------------------------------------
# Whole models (AOT)
# ---------------------------------------------------------------------------------------------

WEIGHT_ALIGNMENT = 64
"""Byte alignment of every weight buffer, in process and in a shared library."""

MODEL_SYMBOL = "dlc_model"
"""The name of the global that holds a compiled model's JSON description (`ModelInfo`)."""

BATCH_BLOCK_SUFFIX = "__rows"
"""The name of an entry `<entry>__rows<k>` is that of `<entry>` compiled for `k` batch rows at
once (`graph-batch-rows`' blocks): a call's batch loop runs the largest for each whole block of
rows and the others and `<entry>` (one row) for the rows left; the runtimes do not offer it as
an entry of its own."""

def is_block_entry(name: str, entries: Collection[str]) -> bool:
    """Whether `name` is `<entry>__rows<k>`, the block entry of another of `entries` (called
    by that entry's batch loop, not offered as an entry)."""
    base, _, rows = name.rpartition(BATCH_BLOCK_SUFFIX)
    return base in entries and rows.isdigit()


BATCH_ENTRY_SUFFIX = "__batch"
"""`<entry>__batch(i64 n, ptr...)`: `<entry>` run on a batch of n rows (`dlc.batch_entry`)."""

WORKSPACE_ENTRY_SUFFIX = "_with_workspace"
"""The suffix of an entry function's twin that takes the planned workspace as one more, last
argument (`void main_with_workspace(inputs..., outputs..., uint8_t *workspace)`, the workspace
`ModelInfo.workspace_bytes` long and 64-byte aligned), present in a compiled model whose entry
has a workspace; the entry itself allocates the workspace and calls it."""

ARGUMENT_KINDS = ("input", "output", "workspace", "weight")
"""Where a kernel call's argument lives: an entry input or output (by index), the workspace (at
a byte offset), or a weight (a global symbol)."""


@dataclass(frozen=True)
class KernelArgument:
    """One buffer a kernel call passes: its kind (`ARGUMENT_KINDS`), where it is (`index` of an
    input/output, byte `offset` in the workspace, `symbol` of a weight), its shape and dtype."""

    kind: str
    shape: tuple[int, ...]
    dtype: str
    index: int = 0
    offset: int = 0
    symbol: str = ""


@dataclass(frozen=True)
class KernelCall:
    """One call of a kernel by the entry function, in program order.

    Attributes:
        kernel: the kernel's name in the IR (`fused_conv2d_relu_1`), for people.
        nodes: the ONNX nodes (or graph ops) the call computes, for profiles.
        arguments: the buffers it is called on; empty if some argument is not a plain buffer
            (the call cannot be replayed on its own).
        symbol: the kernel function's linker symbol (the name of its compiled code).
    """

    kernel: str
    nodes: tuple[str, ...]
    arguments: tuple[KernelArgument, ...]
    symbol: str


@dataclass(frozen=True)
class ModelInfo:
    """What the runtime knows about a compiled model beyond the entry's signature.

    Attributes:
        entry: the entry function.
        input_names: the model's input names (ONNX names where known), in order.
        output_names: the model's output names, in order.
        workspace_bytes: the planned workspace (`loop-plan-memory`'s peak).
        weight_bytes: the bytes of constant data (weights) the model reads.
        calls: the kernel calls of the entry function, in order.
        kernel_buffer_bytes: the most bytes one called kernel allocates itself, beyond the
            workspace (its own `loop.alloc` buffers: packed panels, padded copies, tiles).
    """

    entry: str
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    workspace_bytes: int = 0
    weight_bytes: int = 0
    calls: tuple[KernelCall, ...] = ()
    kernel_buffer_bytes: int = 0

    @property
    def memory_bytes(self) -> int:
        """The most memory one call of the model allocates: its workspace and the largest
        kernel's own buffers (the inputs, outputs and weights are not counted)."""
        return self.workspace_bytes + self.kernel_buffer_bytes

    @property
    def kernels(self) -> tuple[str, ...]:
        """The symbols of the distinct kernels called, in order of first call."""
        return tuple(dict.fromkeys(call.symbol for call in self.calls))


def format_bytes(nbytes: int) -> str:
    """`nbytes` for a person: 512 B, 3.9 MiB, 12.0 TiB."""
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def encode_model_info(info: ModelInfo) -> str:
    """The JSON text of `info` (ASCII only)."""
    document = {
        "version": METADATA_VERSION,
        "entry": info.entry,
        "inputs": list(info.input_names),
        "outputs": list(info.output_names),
        "workspace_bytes": info.workspace_bytes,
        "weight_bytes": info.weight_bytes,
        "kernel_buffer_bytes": info.kernel_buffer_bytes,
        "calls": [
            {
                "kernel": call.kernel,
                "symbol": call.symbol,
                "nodes": list(call.nodes),
                "arguments": [
                    {"kind": a.kind, "shape": list(a.shape), "dtype": a.dtype, "index": a.index,
                     "offset": a.offset, "symbol": a.symbol}
                    for a in call.arguments
                ],
            }
            for call in info.calls
        ],
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=True)


def decode_model_info(text: str) -> ModelInfo:
    """The `ModelInfo` in the JSON text `text`."""
    try:
        document = json.loads(text)
        if document.get("version") != METADATA_VERSION:
            raise MetadataError(
                f"expected dlc model info version {METADATA_VERSION}, found "
                f"{document.get('version')!r}"
            )
        calls = tuple(
            KernelCall(
                str(call["kernel"]),
                tuple(str(node) for node in call["nodes"]),
                tuple(
                    KernelArgument(
                        str(a["kind"]), tuple(int(d) for d in a["shape"]), str(a["dtype"]),
                        int(a["index"]), int(a["offset"]), str(a["symbol"]),
                    )
                    for a in call["arguments"]
                ),
                str(call["symbol"]),
            )
            for call in document["calls"]
        )
        return ModelInfo(
            str(document["entry"]),
            tuple(str(name) for name in document["inputs"]),
            tuple(str(name) for name in document["outputs"]),
            int(document["workspace_bytes"]),
            int(document["weight_bytes"]),
            calls,
            int(document.get("kernel_buffer_bytes", 0)),  # absent before it was recorded
        )
    except (json.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError) as e:
        raise MetadataError(f"malformed dlc model info: {type(e).__name__}: {e}") from None
