"""The pass `convert-graph-to-tensor-expr`: graph ops → `tensor_expr.compute` (Relay → TE in TVM).

Counterpart: TVM's lowering of a fused Relay primitive function through each op's `FTVMCompute`
(TOPI). The definitions are in `rewrites/topi`, one per graph op.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from dlc.dialects.contracts import CONCAT_AXIS_ATTR, UNSIGNED_ATTR
from dlc.dialects.graph.ops import ConcatOp, ConstantOp, FusedOp
from dlc.dialects.graph.ops import YieldOp as GraphYieldOp
from dlc.rewrites.control_flow import convert_control_flow
from dlc.rewrites.topi import defined_op_types, lookup_definition
from dlc.rewrites.topi.elementwise import op_short_name
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    UnrankedTensorType,
    UnregisteredOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

GRAPH_PREFIX = "graph."


def op_name(op: Operation) -> str:
    """`op`'s name, also for an op parsed with --allow-unregistered-dialect."""
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name


def is_graph_op(op: Operation) -> bool:
    """Whether `op` belongs to the graph dialect (registered or not)."""
    return op_name(op).startswith(GRAPH_PREFIX)


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


def check_ranked(module: ModuleOp) -> None:
    """Fails, naming the op, on any tensor of unknown rank in `module` (a dynamic dim is a
    runtime extent: the graph ops that admit one have definitions over it)."""
    for op in module.walk():
        types = [v.type for v in op.results]
        if isinstance(op, func.FuncOp):
            types += [*op.function_type.inputs, *op.function_type.outputs]
        where = f" @{op.sym_name.data}" if isinstance(op, func.FuncOp) else ""
        for type in types:
            if isinstance(type, UnrankedTensorType):
                raise PassFailedException(
                    f"'{op_name(op)}' op{where} expected ranked tensors, found {type}")


def _missing_definition(op: Operation) -> PassFailedException:
    known = ", ".join(op_type.name for op_type in defined_op_types())
    return PassFailedException(
        f"'{op_name(op)}' op has no compute definition: expected one of the ops defined in "
        f"rewrites/topi ({known})"
    )


# ---------------------------------------------------------------------------------------------
# Fused groups → private functions
# ---------------------------------------------------------------------------------------------

_INDEXED = re.compile(r"_\d+$")


def group_base_name(fused: FusedOp) -> str:
    """The group's `name`, else `fused_` and the short names of its ops (`fused_conv2d_relu`)."""
    if (name := fused.name_value()) is not None:
        return name
    ops = [
        op_short_name(op_name(op))
        for op in fused.body.block.ops
        if is_graph_op(op) and not isinstance(op, GraphYieldOp | ConstantOp)
    ]
    return "_".join(["fused", *ops])


def unique_symbol(base: str, taken: set[str]) -> str:
    """`base` if it already ends with `_<n>` and is free, else the first free `base_<n>`."""
    if _INDEXED.search(base) and base not in taken:
        return base
    count = 0
    while f"{base}_{count}" in taken:
        count += 1
    return f"{base}_{count}"


def concat_of_arguments(block: Block) -> int | None:
    """The axis (in [0, rank)) of a body that is one `graph.concat` of all of its arguments,
    each once and in order, returned as its only result; None for any other body."""
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[0], ConcatOp):
        return None
    concat, terminator = ops
    if list(terminator.operands) != [concat.result] or list(concat.inputs) != list(block.args):
        return None
    return concat.normalized_axis()


def outline_fused_group(
    fused: FusedOp, module: ModuleOp, taken: set[str], after: dict[Operation, Operation]
) -> func.FuncOp:
    """Moves the body of `fused` into a new private function and calls it in its place.

    The function goes after the top-level op that holds `fused` (and after the functions
    already outlined from it, recorded in `after`, so that they keep program order);
    `graph.yield` becomes `func.return`; `taken` (the module's symbols) gets the new name.
    """
    name = unique_symbol(group_base_name(fused), taken)
    taken.add(name)
    input_types = [v.type for v in fused.inputs]
    output_types = [v.type for v in fused.outputs]
    region = fused.detach_region(fused.body)
    terminator = region.block.last_op
    assert isinstance(terminator, GraphYieldOp), "verified: the body ends with graph.yield"
    Rewriter.replace_op(terminator, func.ReturnOp(*terminator.values))
    function = func.FuncOp(name, (input_types, output_types), region, "private")
    function.location = fused.location
    if (axis := concat_of_arguments(region.block)) is not None:
        function.attributes[CONCAT_AXIS_ATTR] = IntegerAttr(axis, i64)
    anchor: Operation = fused
    while (parent := anchor.parent_op()) is not module:
        assert parent is not None, "fused is inside the module"
        anchor = parent
    Rewriter.insert_op(function, InsertPoint.after(after.get(anchor, anchor)))
    after[anchor] = function
    call = func.CallOp(name, list(fused.inputs), output_types)
    call.location = fused.location
    Rewriter.replace_op(fused, call)
    return function


def outline_fused_groups(module: ModuleOp) -> list[func.FuncOp]:
    """Outlines every `graph.fused` of `module` in program order; returns the new functions.

    A group nested in another is outlined from the outer group's new function.
    """
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    after: dict[Operation, Operation] = {}
    functions: list[func.FuncOp] = []
    while (fused := next((op for op in module.walk() if isinstance(op, FusedOp)), None)):
        functions.append(outline_fused_group(fused, module, taken, after))
    return functions


# ---------------------------------------------------------------------------------------------
# Graph ops → computes
# ---------------------------------------------------------------------------------------------


def lower_graph_op(op: Operation) -> None:
    """Replaces the graph op `op` by the ops its compute definition emits before it."""
    definition = lookup_definition(type(op))
    if definition is None:
        raise _missing_definition(op)
    replacement: SSAValue | Sequence[SSAValue] = definition(op, Builder(InsertPoint.before(op)))
    values = [replacement] if isinstance(replacement, SSAValue) else list(replacement)
    if len(values) != len(op.results):
        raise PassFailedException(
            f"'{op.name}' op expected its definition to give {len(op.results)} values, found "
            f"{len(values)}"
        )
    for old, new in zip(op.results, values, strict=True):
        if old.name_hint is not None:
            new.name_hint = old.name_hint
    Rewriter.replace_op(op, [], values)


def lower_graph_ops(module: ModuleOp) -> None:
    """Lowers every graph op of `module` in program order (operands before their users)."""
    for op in list(module.walk()):
        if is_graph_op(op):
            lower_graph_op(op)


# ---------------------------------------------------------------------------------------------
# Unsigned integers → signless ones
# ---------------------------------------------------------------------------------------------

def signless_type(attr: Attribute) -> Attribute:
    """`attr` with every unsigned integer type in it made signless (shaped types, function
    types, integer and dense attributes, arrays and dictionaries of them)."""
    if isinstance(attr, IntegerType):
        if attr.signedness.data != Signedness.UNSIGNED:
            return attr
        return IntegerType(attr.width.data)
    if isinstance(attr, TensorType):
        element = signless_type(attr.get_element_type())
        if element == attr.get_element_type():
            return attr
        return TensorType(element, attr.get_shape(), attr.encoding)
    if isinstance(attr, VectorType | MemRefType):
        element = signless_type(attr.get_element_type())
        if element == attr.get_element_type():
            return attr
        if isinstance(attr, VectorType):
            return VectorType(element, attr.get_shape(), attr.scalable_dims)
        return MemRefType(element, attr.get_shape(), attr.layout, attr.memory_space)
    if isinstance(attr, FunctionType):
        return FunctionType.from_lists(
            [signless_type(t) for t in attr.inputs], [signless_type(t) for t in attr.outputs]
        )
    if isinstance(attr, IntegerAttr) and isinstance(attr.type, IntegerType):
        new_type = signless_type(attr.type)
        if new_type == attr.type:
            return attr
        assert isinstance(new_type, IntegerType)
        value = new_type.normalized_value(attr.value.data, truncate_bits=True)
        return IntegerAttr(value, new_type)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        new_type = signless_type(attr.type)
        return attr if new_type == attr.type else DenseIntOrFPElementsAttr(new_type, attr.data)
    if isinstance(attr, ArrayAttr):
        return ArrayAttr([signless_type(a) for a in attr.data])
    if isinstance(attr, DictionaryAttr):
        return DictionaryAttr({k: signless_type(v) for k, v in attr.data.items()})
    return attr


def _is_unsigned_tensor(type: Attribute) -> bool:
    if not isinstance(type, TensorType):
        return False
    element = type.get_element_type()
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def _mark_unsigned(attrs: ArrayAttr[DictionaryAttr] | None, types: Sequence[Attribute]
                   ) -> ArrayAttr[DictionaryAttr] | None:
    if not any(_is_unsigned_tensor(t) for t in types):
        return attrs
    dicts = [dict(d.data) for d in attrs.data] if attrs is not None else [{} for _ in types]
    for entry, type in zip(dicts, types, strict=True):
        if _is_unsigned_tensor(type):
            entry[UNSIGNED_ATTR] = UnitAttr()
    return ArrayAttr([DictionaryAttr(d) for d in dicts])


def signless_types(module: ModuleOp) -> None:
    """Makes every unsigned integer type in `module` signless, in place (arith computes on
    signless integers; the computes already chose the unsigned ops). The arguments and
    results of public functions that were unsigned get `dlc.unsigned`."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or function.sym_visibility == StringAttr(
            "private"
        ):
            continue
        function_type = function.function_type
        arg_attrs = _mark_unsigned(function.arg_attrs, function_type.inputs.data)
        if arg_attrs is not function.arg_attrs:
            function.arg_attrs = arg_attrs
        res_attrs = _mark_unsigned(function.res_attrs, function_type.outputs.data)
        if res_attrs is not function.res_attrs:
            function.res_attrs = res_attrs
    for op in module.walk():
        for name, value in list(op.properties.items()):
            op.properties[name] = signless_type(value)
        for name, value in list(op.attributes.items()):
            op.attributes[name] = signless_type(value)
        for result in op.results:
            if (new_type := signless_type(result.type)) != result.type:
                Rewriter.replace_value_with_new_type(result, new_type)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    if (new_type := signless_type(arg.type)) != arg.type:
                        Rewriter.replace_value_with_new_type(arg, new_type)


# ---------------------------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvertGraphToTensorExprPass(ModulePass):
    """Defines every graph op as `tensor_expr.compute`s (TOPI) and outlines fused groups.

    *Input invariant*: `func.func`s over ranked tensors (a dynamic dim: a runtime batch of
    rows, or a runtime extent of a shape-polymorphic op, `GraphOp.DYNAMIC_DIMS`) whose bodies
    hold graph
    ops (possibly grouped in `graph.fused`), `func.call` and `func.return`. Every graph op must
    have a compute definition in `rewrites/topi`; `graph.if` and `graph.loop` may hold any of
    these in their regions.

    *Output IR*: first, each region of a `graph.if` / `graph.loop` becomes a private function
    (`@<fn>_then_<n>`, `@<fn>_else_<n>`, `@<fn>_body_<n>`) of its captures and block
    arguments, lowered below like any function, and the op becomes `scf.if` / `scf.while` on
    tensors around calls of them, with `tensor.extract` of the conditions and trip count,
    `tensor.from_elements` of the iteration number and `tensor.insert_slice` of scan rows
    (rewrites/control_flow.py, whose docstring shows the IR). Then each `graph.fused` becomes
    a private `func.func` named after the group
    (`@fused_conv2d_relu_0`: the group's `name`, else `fused_` and its ops, made unique with a
    `_<n>` suffix), placed after its caller and called with `func.call`. Each graph op becomes
    one or more `tensor_expr.compute`s named after the op ("conv2d", "relu"; the helpers of an
    op get their own names: "pad", "bias_add", "softmax_max", ...) with a `tag` for schedule
    rules ("injective", "pad", "conv2d_nchw", "depthwise_conv2d_nchw", "matmul", "pool_max",
    "pool_avg", "reduce_sum", "softmax_*", ...), the graph op's location and, when the location
    names an ONNX node, an `onnx_node` attribute. A padded conv2d reads a separate "pad" compute
    (tag "pad") so that schedules can materialise or inline it. `graph.constant` becomes
    `arith.constant` with the same elements attribute (bytes kept as they are).

    Unsigned integers (ONNX's uint8 ... uint64) become signless, as `arith` computes on
    signless integers only: the computes on them use the unsigned ops (`divui`, `maxui`,
    `minui`, `cmpi ult`..., `uitofp`, `extui`, `fptoui`, combiners `maxui`/`minui`), then every
    type in the module is made signless; an argument or result of a public function that was
    unsigned carries the unit attribute `dlc.unsigned`, so that the runtime still takes and
    returns NumPy `uint<N>` arrays.

    *Invariants*: no graph op remains; function signatures are unchanged but for unsigned
    element types (made signless); every read is in bounds (padding clamps its indices and
    selects the pad value); the result of each function is the graph interpreter's (checked by
    tests/test_topi.py with the tensor_expr interpreter).

    A compute whose result has a dynamic dim takes its size (`sizes`) from its definition
    where the op computes it (a window's `(H + pads - extent) / stride + 1`, a pad's `H +
    pads`, a repeat's `H * k`: `arith` on `index`), else from the first operand of its graph op
    dynamic in that dim (an elementwise or batch-polymorphic op's result has its operands'
    sizes): that operand's own size operand when a compute made it, else one `tensor.dim` of
    it shared by the computes that read it (`topi.common.dim_size`). Reads that may leave a
    tensor of runtime size compare with that size.

    Fails, naming the op, on a graph op without a definition, on a tensor of unknown rank, on
    a result with a dynamic dim no operand has, on a runtime extent a definition cannot take
    (a resize whose taps depend on the length), and on element types the definitions do not
    compute with (signed `si` integers, index).

    No options.
    """

    name: ClassVar[str] = "convert-graph-to-tensor-expr"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_ranked(op)
        convert_control_flow(op)
        outline_fused_groups(op)
        lower_graph_ops(op)
        for leftover in op.walk():
            if is_graph_op(leftover):
                raise _missing_definition(leftover)
        signless_types(op)
