"""The shared NumPy semantics of arith/math (dialects.arith_numpy) as both interpreters see them."""

from __future__ import annotations

import numpy as np
import pytest
from dlc.dialects import make_context
from dlc.dialects.loop.interpreter import LoopInterpreter, LoopInterpreterError
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

I1_OPS = """
func.func @f(%a: i1, %b: i1) -> (i1, i1, i32, i1, i1) {
  %add = arith.addi %a, %b : i1
  %max = arith.maxsi %a, %b : i1
  %ext = arith.extsi %a : i1 to i32
  %slt = arith.cmpi slt, %a, %b : i1
  %ult = arith.cmpi ult, %a, %b : i1
  func.return %add, %max, %ext, %slt, %ult : i1, i1, i32, i1, i1
}
"""

DIVISION = """
func.func @f(%a: i32, %b: i32) -> (i32, i32) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  func.return %q, %r : i32, i32
}
"""


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


@pytest.mark.parametrize(("a", "b"), [(True, True), (True, False), (False, True)])
def test_i1_is_signed_minus_one(a: bool, b: bool) -> None:
    add, max_, ext, slt, ult = LoopInterpreter(parse(I1_OPS)).call("f", [np.bool_(a), np.bool_(b)])
    assert bool(add) == (a != b)  # -1 + -1 = -2 keeps its low bit: 0
    assert bool(max_) == (a and b)  # true is -1, the smaller signed value
    assert int(ext) == (-1 if a else 0)
    assert bool(slt) == (a and not b)
    assert bool(ult) == (b and not a)


@pytest.mark.parametrize(("a", "b"), [(7, 2), (-7, 2), (7, -2), (-7, -2)])
def test_signed_division_rounds_toward_zero(a: int, b: int) -> None:
    quotient, remainder = LoopInterpreter(parse(DIVISION)).call("f", [np.int32(a), np.int32(b)])
    assert int(quotient) == int(a / b)
    assert int(remainder) == a - b * int(a / b)


def test_loop_interpreter_reports_division_by_zero() -> None:
    with pytest.raises(LoopInterpreterError, match="'arith.divsi' divides by zero"):
        LoopInterpreter(parse(DIVISION)).call("f", [np.int32(1), np.int32(0)])


UNSIGNED_INDEX = """
func.func @f(%i: index) -> (index, index) {
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %below = arith.subi %i, %c1 : index
  %min = arith.minui %below, %c9 : index
  %max = arith.maxui %below, %c9 : index
  func.return %min, %max : index, index
}
"""


def test_unsigned_min_and_max_of_a_negative_index() -> None:
    """`i - 1` at i = 0 read unsigned is 2**64 - 1 (a pad's clamp `minui(i - 1, 9)`), past
    what NumPy takes as an int64: the interpreter used to overflow."""
    minimum, maximum = LoopInterpreter(parse(UNSIGNED_INDEX)).call("f", [0])
    assert int(minimum) == 9
    assert int(maximum) % 2**64 == 2**64 - 1
    assert [int(v) for v in LoopInterpreter(parse(UNSIGNED_INDEX)).call("f", [5])] == [4, 9]
