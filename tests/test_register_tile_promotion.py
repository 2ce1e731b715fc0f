"""A serial kernel's register tile stays in registers through LLVM's optimizer.

The default schedule accumulates a conv's or GEMM's output tile in a `loop.alloc local` buffer
(an `alloca`) and relies on LLVM to keep it in registers over the reduction loop (LICM's
promotion). Each unrolled reduction step adds a load and a store per tile vector, and past LLVM's
default of 100 uses capture tracking gives up and calls the alloca captured: it may then alias
the input pointers, the stores stay in the loop, and a one-thread build ran 1.8-3x slower than
the same nest outlined into a parallel body. `driver.jit` raises the limit
(`CAPTURE_TRACKING_MAX_USES`); this test reads the optimized IR of a one-thread conv kernel for
an explicit AVX-512 target (the host does not matter: nothing runs).
"""

from __future__ import annotations

import re

import pytest
from dlc.dialects import make_context
from dlc.dialects.contracts import TARGET_ATTR
from dlc.driver.emit import emit_device_code
from dlc.driver.jit import parse_and_optimize, target_machine
from dlc.target import parse_target
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.parser import Parser

AVX512 = "llvm -mcpu=skylake-avx512"


def conv_text(c: int, o: int, size: int, dilation: int) -> str:
    x_t, w_t = f"tensor<1x{c}x{size}x{size}xf32>", f"tensor<{o}x{c}x3x3xf32>"
    y_t = f"tensor<1x{o}x{size}x{size}xf32>"
    pad = dilation
    return f"""
func.func @conv(%x: {x_t}, %w: {w_t}, %b: tensor<{o}xf32>) -> {y_t} {{
  %y = graph.conv2d %x, %w, %b {{padding = array<i64: {pad}, {pad}, {pad}, {pad}>,
      dilations = array<i64: {dilation}, {dilation}>}} : ({x_t}, {w_t}, tensor<{o}xf32>) -> {y_t}
  func.return %y : {y_t}
}}
"""


def tile_stores(function_ir: str) -> tuple[int, int]:
    """(vectors in the function's float allocas, stores into them) of one optimized LLVM
    function: a store counts when its address is an alloca or a pointer offset from one."""
    derived: set[str] = set()
    vectors = 0
    for line in function_ir.splitlines():
        alloca = re.match(r"\s*(%\S+) = alloca \[(\d+) x float\]", line)
        if alloca:
            derived.add(alloca.group(1))
            vectors += int(alloca.group(2)) // 16
            continue
        gep = re.match(r"\s*(%\S+) = getelementptr .*?, ptr (%[^,\s]+)", line)
        if gep and gep.group(2) in derived:
            derived.add(gep.group(1))
    stores = sum(
        1 for line in function_ir.splitlines()
        if (store := re.match(r"\s*store <16 x float> \S+, ptr (%[^,\s]+)", line))
        and store.group(1) in derived
    )
    return vectors, stores


@pytest.mark.parametrize("dilation", [1, 2])
def test_one_thread_conv_keeps_its_tile_in_registers(dilation: int) -> None:
    module: ModuleOp = Parser(make_context(), conv_text(64, 64, 28, dilation)).parse_module()
    module.attributes[TARGET_ATTR] = StringAttr(f"{AVX512} -num-cores=1")
    text = emit_device_code(module, "llvm", "llvm")
    optimized = str(parse_and_optimize(text, target_machine(parse_target(AVX512)), 3))
    bodies = re.findall(r"(define [^\n]*\n.*?\n}\n)", optimized, re.S)
    kernels = [(body, *tile_stores(body)) for body in bodies if "alloca [" in body]
    assert kernels, "expected a kernel with a register tile (an alloca of floats)"
    for body, vectors, stores in kernels:
        assert vectors > 0
        name = body.split("(")[0]
        # Promoted: the tile is written once after the reduction loop (for the epilogue's
        # reads), not after every unrolled step (a multiple of the vectors).
        assert stores <= vectors, (
            f"{name}: {stores} vector stores into a {vectors}-vector register tile; the "
            "reduction loop stores its accumulators to the stack"
        )
