"""Shape-specializing executables: an ONNX model with dynamic dimensions, or with graph inputs
whose values decide shapes, compiled once per call signature and dispatched at run time.

`dlc.compile(model)` returns a `SpecializingExecutable` when the model's inputs are not fully
static and `input_shapes` does not fix them, or when the importer needs the value of a graph
input (a Reshape's shape, a Slice's starts, a Resize's sizes, a TopK's k, or the trip count of
a Loop with scan outputs, passed at run time or computed from inputs).
A call checks the inputs against the declared signature (dtype, rank, static dims, and the
`dim_param` symbols: two dims named `N` must agree), then looks up the specialization for the
input shapes and the bound inputs' values; a miss compiles one (`driver.build`, through the
on-disk cache, so a signature seen before in any process costs an import and a cache read).
The last `max_specializations` stay in memory.

This is specialization, as XLA and TorchDynamo do it, not kernels with symbolic extents: each
new signature pays a compile, and a library (`export`) is written for the shapes it was
compiled for, so `export` asks for `input_shapes`, or for the list of shapes of a library of
several (`dlc.compile(specialize=...)`, `driver.shape_variants`). A model with few distinct call
shapes (a fixed set of image sizes and batch sizes) runs at static speed; one with a new shape
every call is a poor fit.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import onnx
from dlc.driver.errors import CompileError
from dlc.frontends.onnx.binding import bind_inputs, declared_inputs, inputs_to_bind
from dlc.frontends.onnx.errors import NotConstantError
from dlc.runtime.executable import Executable, ExecutableError, run_by_name

Builder = Callable[[onnx.ModelProto, Mapping[str, Sequence[int]]], Executable]
"""Compiles a model for static input shapes (`driver.build.build` with the user's options)."""


class SpecializingExecutable:
    """An executable for a model with runtime shapes: `m(x, ...)`, `m.run({...})` as
    `Executable`, each call signature compiled on first use (see the module docstring)."""

    def __init__(self, model: onnx.ModelProto, build: Builder, *,
                 input_shapes: Mapping[str, Sequence[int]] | None = None,
                 bound: Sequence[str] = (), max_specializations: int = 8) -> None:
        self.model = model
        self._build = build
        given = {k: tuple(int(d) for d in v) for k, v in (input_shapes or {}).items()}
        self._declared = [replace(i, shape=given[i.name]) if i.name in given else i
                          for i in declared_inputs(model)]
        self._bound = list(bound)
        self._cache: OrderedDict[tuple[Any, ...], tuple[Executable, list[str]]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_specializations = max_specializations
        self.compiles = 0
        self.stats = None
        # (shape, dtype) of each input of the calls that passed `check_inputs`: the same
        # signature passes again, so a repeated call skips the per-dim checks.
        self._checked: set[tuple[tuple[tuple[int, ...], np.dtype], ...]] = set()

    # -- the signature -----------------------------------------------------------------------

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(i.name for i in self._declared)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.model.graph.output)

    @property
    def value_inputs(self) -> tuple[str, ...]:
        """The inputs whose values (not only shapes) select the specialization, as found so far."""
        return tuple(self._bound)

    def describe(self) -> str:
        return ", ".join(i.describe() for i in self._declared)

    def check_inputs(self, inputs: Sequence[object]) -> list[np.ndarray]:
        """The inputs as arrays after checking them against the declared signature: count,
        dtype, rank, static dims and `dim_param` symbols (ExecutableError naming the input, the
        dim and the constraint)."""
        if len(inputs) != len(self._declared):
            raise ExecutableError(f"expected {len(self._declared)} inputs ({self.describe()}), "
                                  f"found {len(inputs)}")
        if all(isinstance(value, np.ndarray) for value in inputs):
            signature = tuple((value.shape, value.dtype) for value in inputs)  # type: ignore[union-attr]
            if signature in self._checked:
                return [_contiguous(value) for value in inputs]  # type: ignore[arg-type]
        arrays: list[np.ndarray] = []
        symbols: dict[str, tuple[int, str, int]] = {}
        for index, (spec, value) in enumerate(zip(self._declared, inputs, strict=True)):
            array = np.asarray(value)
            if not isinstance(value, np.ndarray) and np.can_cast(array.dtype, spec.dtype,
                                                                 "same_kind"):
                array = array.astype(spec.dtype)
            what = f"input {index} ('{spec.name}')"
            if array.dtype != spec.dtype:
                raise ExecutableError(f"{what}: expected dtype {spec.dtype}, found {array.dtype}")
            if spec.shape is not None:
                if array.ndim != len(spec.shape):
                    raise ExecutableError(f"{what}: expected rank {len(spec.shape)} "
                                          f"({spec.describe()}), found shape {array.shape}")
                for axis, (want, got) in enumerate(zip(spec.shape, array.shape, strict=True)):
                    if isinstance(want, int) and want != got:
                        raise ExecutableError(f"{what}: dim {axis} must be {want}, found {got}")
                    if isinstance(want, str):
                        if want in symbols and symbols[want][2] != got:
                            first, name, size = symbols[want]
                            raise ExecutableError(
                                f"{what}: dim {axis} is '{want}' = {got}, but '{want}' = "
                                f"{size} from dim {first} of input '{name}'")
                        symbols.setdefault(want, (axis, spec.name, got))
            arrays.append(_contiguous(array))
        if len(self._checked) < 64 * self.max_specializations:
            self._checked.add(tuple((array.shape, array.dtype) for array in arrays))
        return arrays

    # -- calls -------------------------------------------------------------------------------

    def specialization(self, inputs: Sequence[object]) -> tuple[Executable, list[np.ndarray]]:
        """The compiled executable for these inputs' signature (compiling it on a miss) and the
        arrays to pass it (the inputs not bound into it)."""
        arrays = self.check_inputs(inputs)
        by_name = dict(zip(self.input_names, arrays, strict=True))
        with self._lock:
            key = self._key(by_name)
            hit = self._cache.get(key)
            if hit is None:
                hit = self._compile(by_name)
                key = self._key(by_name)  # compiling may have found more value inputs
                self._cache[key] = hit
                while len(self._cache) > self.max_specializations:
                    self._cache.popitem(last=False)
            self._cache.move_to_end(key)
        executable, passed = hit
        return executable, [by_name[n] for n in passed]

    def _key(self, by_name: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        shapes = tuple(by_name[n].shape for n in self.input_names)
        values = tuple((n, by_name[n].tobytes()) for n in self._bound)
        return shapes, values

    def _compile(self, by_name: Mapping[str, np.ndarray]) -> tuple[Executable, list[str]]:
        for _ in range(len(self.input_names) + 1):
            model = bind_inputs(self.model, {n: by_name[n] for n in self._bound})
            shapes = {i.name: by_name[i.name].shape for i in self._declared
                      if not i.is_static and i.name not in self._bound}
            try:
                executable = self._build(model, shapes)
            except CompileError as e:
                cause = getattr(e, "diagnostic", None)
                more = (inputs_to_bind(self.model, cause, self._bound)
                        if isinstance(cause, NotConstantError) else [])
                if not more:
                    raise
                self._bound.extend(more)
                continue
            self.compiles += 1
            self.stats = executable.stats
            return executable, [n for n in self.input_names if n not in self._bound]
        raise AssertionError("unreachable: every round binds at least one input")

    def __call__(self, *inputs: object) -> np.ndarray | tuple[np.ndarray, ...]:
        executable, arrays = self.specialization(inputs)
        return executable(*arrays)

    def run(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Runs on inputs given by name; returns the outputs by name."""
        return run_by_name(self, self.input_names, self.output_names, inputs)

    def export(self, path: object, **_: object) -> None:
        """A library is compiled for one shape: this refuses, saying which shapes to fix."""
        dynamic = [i for i in self._declared if not i.is_static]
        if dynamic:
            example = " ".join(
                f"--input-shape {i.name}="
                + ("x".join(str(d) if isinstance(d, int) else "1" for d in i.shape)
                   if i.shape is not None else "<d0>x<d1>x...")
                for i in dynamic)
            raise ExecutableError(
                f"cannot export {path}: the model has dynamic input shapes "
                f"({'; '.join(i.describe() for i in dynamic)}), and a library is compiled for "
                f"the shapes it holds: give them ({example}; input_shapes={{...}} from "
                "Python), or list several with --specialize (specialize=[...])")
        raise ExecutableError(
            f"cannot export {path}: the values of inputs {', '.join(self._bound)} decide "
            "shapes, and a library is compiled for one shape: make them constants "
            "(initializers) to export")



def _contiguous(array: np.ndarray) -> np.ndarray:
    """`array` C-contiguous, keeping its rank (`np.ascontiguousarray` makes a scalar 1-D, which
    would bind a rank-0 input, a Range's start or a Loop's trip count, as shape [1])."""
    return np.require(array, requirements="C")


def build_onnx(model: object, input_shapes: Mapping[str, Sequence[int]] | None,
               build: Builder, batched: Builder | None = None,
               polymorphic: Builder | None = None) -> Executable | SpecializingExecutable:
    """`build(model, input_shapes)`, or a `SpecializingExecutable` when the build stops on an
    ONNX model (a ModelProto or `.onnx` path) whose input shapes `input_shapes` leaves dynamic,
    or that needs the value of a graph input at import time. The model is read twice only in
    that case: a static model builds (and hits the model cache) as it always did.

    With `batched` (a build with a dynamic batch, `dlc.compile(dynamic_batch=True)`), that build
    comes first; a model it cannot import (not batch-polymorphic) goes on as without it.
    With `polymorphic` (a build with every named dim dynamic, `dlc.compile(dynamic_shapes=
    True)`), that build comes before it: a model it cannot import (an op not
    shape-polymorphic) or compile (a definition refusing a runtime extent) goes on as without
    it, and a model with no dynamic dim is built as it is."""
    from dlc.frontends.onnx import DynamicInputError, NotConstantError, OnnxImportError

    given = dict(input_shapes or {})
    if polymorphic is not None:
        try:
            executable = polymorphic(model, given)  # type: ignore[arg-type]
            if not _unsized_outputs(executable):
                return executable
        except CompileError as e:
            cause = getattr(e, "diagnostic", None)
            if isinstance(cause, OnnxImportError) and not isinstance(cause, DynamicInputError):
                raise  # the model itself is bad, whatever its shapes
    if batched is not None:
        try:
            return batched(model, given)  # type: ignore[arg-type]
        except CompileError as e:
            if not isinstance(getattr(e, "diagnostic", None), OnnxImportError):
                raise
    try:
        return build(model, given)  # type: ignore[arg-type] - a path or module builds as it is
    except CompileError as e:
        cause = getattr(e, "diagnostic", None)
        if not isinstance(cause, DynamicInputError | NotConstantError):
            raise
        proto = model if isinstance(model, onnx.ModelProto) else _read(model)
        bound = inputs_to_bind(proto, cause) if isinstance(cause, NotConstantError) else []
        if isinstance(cause, NotConstantError) and not bound:
            raise  # a value no graph input decides: binding cannot help
        return SpecializingExecutable(proto, _with_shapes(build, given), input_shapes=given,
                                      bound=bound)


def _unsized_outputs(executable: Executable) -> bool:
    """Whether an output of `executable` has a runtime dim its shape functions do not give (a
    size it computes otherwise: a ceil-mode window's, not affine): a caller could not allocate
    it, so a build with runtime shapes is not taken."""
    return any(any(d < 0 for d in spec.shape) and not spec.sizes and not spec.batch
               for spec in executable.signature.outputs)


def _with_shapes(build: Builder, given: Mapping[str, Sequence[int]]) -> Builder:
    def with_given(model: onnx.ModelProto, shapes: Mapping[str, Sequence[int]]) -> Executable:
        names = {i.name for i in model.graph.input}
        return build(model, {**{k: v for k, v in given.items() if k in names}, **shapes})

    return with_given


def read_onnx(model: object) -> onnx.ModelProto:
    """`model` (a ModelProto, or the path of a .onnx file) as a ModelProto; `CompileError`
    for anything else."""
    if isinstance(model, onnx.ModelProto):
        return model
    if not str(model).endswith(".onnx"):
        raise CompileError(f"expected an ONNX model to specialize, found {model!r}"[:200])
    return _read(model)


def _read(path: object) -> onnx.ModelProto:
    from dlc.frontends.onnx import OnnxImportError, load_model

    try:
        return load_model(path)  # type: ignore[arg-type]
    except (OnnxImportError, OSError) as e:
        raise CompileError(str(e)) from None
