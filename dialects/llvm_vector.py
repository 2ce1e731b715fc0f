"""`llvm.fcmp` and `llvm.select` on vectors, as MLIR's llvm dialect has them.

xDSL 0.75's `llvm.fcmp` verifies scalar float operands only (result `i1`) and its `llvm.select`
a scalar `i1` condition only, although LLVM IR (and xDSL's LLVM IR export through llvmlite,
which types a compare of vectors as a vector of `i1`) takes vectors for both. dlc's `llvm`
dialect is upstream's with these two ops widened (`llvm_dialect`), under the same names, so
that a vectorized compare stays one vector `fcmp` (LLVM does not always rebuild one from
lanes) and parses back from text. `llvm.icmp` already takes vectors upstream.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    I1,
    AnyFloatConstr,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


def _i1_like(type_: Attribute) -> Attribute:
    """`i1`, or a vector of `i1` of `type_`'s shape where `type_` is a vector."""
    return VectorType(i1, type_.get_shape()) if isinstance(type_, VectorType) else i1


@irdl_op_definition
class FCmpOp(llvm.FCmpOp):
    """Compares two floats, or two vectors of floats lane by lane.

    Semantics: LLVM's `fcmp` with the predicate (`o*` false where an operand is NaN, `u*`
    true there); the result is `i1`, or a vector of `i1` of the operands' shape.

    Example:
        %m = llvm.fcmp "olt" %a, %b : vector<8xf32>
    """

    T: ClassVar = VarConstraint("T", AnyFloatConstr | VectorType.constr(AnyFloatConstr))

    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(I1 | VectorType[I1])
    predicate = prop_def(IntegerAttr[i64])
    fastmathFlags = prop_def(llvm.FastMathAttr, default_value=llvm.FastMathAttr(None))

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        lhs: Operation | SSAValue,
        rhs: Operation | SSAValue,
        predicate: str | IntegerAttr[IntegerType],
        attributes: dict[str, Attribute] | None = None,
    ):
        if isinstance(predicate, str):
            predicate = IntegerAttr(llvm.FCmpPredicateFlag(predicate).to_int(), i64)
        IRDLOperation.__init__(
            self,
            operands=[lhs, rhs],
            result_types=[_i1_like(SSAValue.get(lhs).type)],
            attributes=attributes or {},
            properties={"predicate": predicate},
        )

    def verify_(self) -> None:
        if self.res.type != _i1_like(self.lhs.type):
            raise VerifyException(
                f"'{self.name}' op expected result type {_i1_like(self.lhs.type)} for operands "
                f"of type {self.lhs.type}, found {self.res.type}"
            )


@irdl_op_definition
class SelectOp(llvm.SelectOp):
    """Chooses `lhs` where `cond` is true, else `rhs`; with a vector of `i1` as `cond`, lane by
    lane between two vectors of its shape.

    Example:
        %r = llvm.select %m, %a, %b : vector<8xi1>, vector<8xf32>
    """

    T: ClassVar = VarConstraint("T", AnyAttr())

    cond = operand_def(I1 | VectorType[I1])
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)
    fastmathFlags = prop_def(llvm.FastMathAttr, default_value=llvm.FastMathAttr(None))

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = None  # parse and print: upstream's, made from its assembly format

    def verify_(self) -> None:
        cond_type = self.cond.type
        if not isinstance(cond_type, VectorType):
            return
        value_type = self.res.type
        if not isinstance(value_type, VectorType) or value_type.get_shape() != (
            cond_type.get_shape()
        ):
            raise VerifyException(
                f"'{self.name}' op expected values of shape {list(cond_type.get_shape())} for a "
                f"condition of type {cond_type}, found {value_type}"
            )


WIDENED_OPS: dict[type[Operation], type[Operation]] = {
    llvm.FCmpOp: FCmpOp,
    llvm.SelectOp: SelectOp,
}
"""Upstream llvm op -> dlc's widened op of the same name."""


def llvm_dialect() -> Dialect:
    """xDSL's `llvm` dialect with `llvm.fcmp` and `llvm.select` taking vectors."""
    upstream = llvm.LLVM
    operations = [WIDENED_OPS.get(op, op) for op in upstream.operations]
    return Dialect(
        upstream.name, operations, list(upstream.attributes), list(upstream._interfaces)
    )
