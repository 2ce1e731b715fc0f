"""The signature metadata a compiled dlc module carries, and its JSON encoding.

`convert-loop-to-llvm` stores the signatures of a module's entry functions (destination-passing
style: inputs, then outputs) as a null-terminated JSON string in the global `dlc_metadata`, so
that a JIT engine or a shared library can be called from NumPy with nothing but ctypes. This
module is the one definition of that format; it imports neither xDSL nor llvmlite.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

METADATA_SYMBOL = "dlc_metadata"
"""The name of the global that holds the JSON metadata."""

METADATA_VERSION = 1
"""The version of the JSON format; readers reject other versions."""


class MetadataError(ValueError):
    """The metadata of a compiled module is missing or malformed."""


@dataclass(frozen=True)
class ArgumentSpec:
    """One argument of an entry function: a contiguous buffer of a fixed shape and dtype.

    Attributes:
        name: the argument's name in the source IR (or `arg<i>`).
        shape: the static shape.
        dtype: a NumPy dtype name (`float32`, `int64`, `bool`, ...).
    """

    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class FunctionSignature:
    """An entry function in destination-passing style: its last `num_outputs` arguments are
    the buffers it writes its results into; it returns nothing."""

    name: str
    arguments: tuple[ArgumentSpec, ...]
    num_outputs: int

    @property
    def inputs(self) -> tuple[ArgumentSpec, ...]:
        """The arguments the caller provides."""
        return self.arguments[: len(self.arguments) - self.num_outputs]

    @property
    def outputs(self) -> tuple[ArgumentSpec, ...]:
        """The arguments the function writes its results into."""
        return self.arguments[len(self.arguments) - self.num_outputs :]


def encode_metadata(signatures: Sequence[FunctionSignature]) -> str:
    """The JSON text for `signatures` (ASCII only, so its byte length is its length)."""
    document = {
        "version": METADATA_VERSION,
        "functions": [
            {
                "name": signature.name,
                "num_outputs": signature.num_outputs,
                "arguments": [
                    {"name": arg.name, "shape": list(arg.shape), "dtype": arg.dtype}
                    for arg in signature.arguments
                ],
            }
            for signature in signatures
        ],
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=True)


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
                ArgumentSpec(str(arg["name"]), tuple(int(d) for d in arg["shape"]), arg["dtype"])
                for arg in entry["arguments"]
            )
            signature = FunctionSignature(entry["name"], arguments, int(entry["num_outputs"]))
            signatures[signature.name] = signature
    except (KeyError, TypeError, ValueError) as e:
        raise MetadataError(f"malformed dlc metadata: {type(e).__name__}: {e}") from None
    return signatures
