"""convert-loop-to-llvm and -t llvm: hand-written loop-level functions, lowered, JIT-compiled and
run on random inputs against NumPy; what the pass leaves behind; its diagnostics."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import llvmlite.binding as binding
import numpy as np
import pytest
from dlc.codegen.llvm import emit_llvm_ir
from dlc.dialects import make_context
from dlc.pipelines import applicable, module_level, named_pipeline, pass_level
from dlc.rewrites.convert_loop_to_llvm import ConvertLoopToLLVMPass
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

import dlc

RNG = np.random.default_rng(20261129)


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def lower(text: str) -> ModuleOp:
    """Parse `text`, run convert-loop-to-llvm, check that only llvm ops remain."""
    module = parse(text)
    ConvertLoopToLLVMPass().apply(make_context(), module)
    module.verify()
    leftovers = {
        op.name for op in module.walk() if op is not module and not op.name.startswith("llvm.")
    }
    assert not leftovers, f"ops left after convert-loop-to-llvm: {sorted(leftovers)}"
    return module


def compile_text(text: str, entry: str | None = None) -> dlc.Executable:
    lower(text)  # the no-leftover check
    return dlc.compile(parse(text), entry=entry)


# ------------------------------------------------------------------------------------------
# Hand-written loop-level kernels
# ------------------------------------------------------------------------------------------

MATMUL = """
func.func @matmul(%A: memref<{M}x{K}xf32>, %B: memref<{K}x{N}xf32>, %C: memref<{M}x{N}xf32>)
    attributes {{dlc.num_outputs = 1 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cM = arith.constant {M} : index
  %cN = arith.constant {N} : index
  %cK = arith.constant {K} : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %cM step %c1 axis "i" kind parallel {{
    loop.for %j = %c0 to %cN step %c1 axis "j" {{
      loop.block "init" reads() writes(%C : memref<{M}x{N}xf32>) spatial ["i", "j"] {{
        loop.store %zero, %C[%i, %j] : f32 -> memref<{M}x{N}xf32>
      }}
      loop.for %k = %c0 to %cK step %c1 axis "k" kind unrolled {{
        loop.block "update" reads(%A, %B : memref<{M}x{K}xf32>, memref<{K}x{N}xf32>)
            writes(%C : memref<{M}x{N}xf32>) spatial ["i", "j"] reduction ["k"] {{
          %a = loop.load %A[%i, %k] : memref<{M}x{K}xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<{K}x{N}xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<{M}x{N}xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<{M}x{N}xf32>
        }}
      }}
    }}
  }}
  func.return
}}
"""


def test_matmul_matches_numpy() -> None:
    M, N, K = 13, 17, 29
    f = compile_text(MATMUL.format(M=M, N=N, K=K))
    a = RNG.standard_normal((M, K), dtype=np.float32)
    b = RNG.standard_normal((K, N), dtype=np.float32)
    c = f(a, b)
    assert c.shape == (M, N) and c.dtype == np.float32
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


# Row reduction with a stack accumulator (loop.alloc local), and a vectorized inner loop with a
# vector.reduction: y[i] = sum_j x[i, j], m[i] = max_j x[i, j].
REDUCTION = """
func.func @row_sum_max(%X: memref<6x64xf32>, %S: memref<6xf32>, %M: memref<6xf32>)
    attributes {dlc.num_outputs = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.0e38 : f32
  loop.for %i = %c0 to %c6 step %c1 axis "i" {
    %acc = loop.alloc local : memref<1xf32>
    loop.store %zero, %acc[%c0] : f32 -> memref<1xf32>
    loop.for %j = %c0 to %c64 step %c16 axis "j" kind vectorized {
      %v = loop.load %X[%i, %j] : memref<6x64xf32> -> vector<16xf32>
      %s = loop.load %acc[%c0] : memref<1xf32> -> f32
      %t = vector.reduction <add>, %v, %s : vector<16xf32> into f32
      loop.store %t, %acc[%c0] : f32 -> memref<1xf32>
    }
    %sum = loop.load %acc[%c0] : memref<1xf32> -> f32
    loop.store %sum, %S[%i] : f32 -> memref<6xf32>
    loop.store %lowest, %M[%i] : f32 -> memref<6xf32>
    loop.for %j = %c0 to %c64 step %c1 axis "j2" {
      %x = loop.load %X[%i, %j] : memref<6x64xf32> -> f32
      %m = loop.load %M[%i] : memref<6xf32> -> f32
      %n = arith.maximumf %m, %x : f32
      loop.store %n, %M[%i] : f32 -> memref<6xf32>
    }
    loop.dealloc %acc : memref<1xf32>
  }
  func.return
}
"""


def test_reduction_matches_numpy() -> None:
    f = compile_text(REDUCTION)
    x = RNG.standard_normal((6, 64), dtype=np.float32)
    total, largest = f(x)
    np.testing.assert_allclose(total, x.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(largest, x.max(axis=1))


def elementwise_module(
    name: str, element: str, count: int, n: int, bodies: Sequence[str], inputs: int = 1
) -> str:
    """A function whose row k of the output is bodies[k] applied to %a (and %b) elementwise.

    Each body defines `%r{k}` from `%a` and `%b` (and `{k}`-suffixed temporaries).
    """
    args = ", ".join(f"%{v}: memref<{n}x{element}>" for v in "AB"[:inputs])
    loads = "\n".join(
        f"    %{v.lower()} = loop.load %{v}[%i] : memref<{n}x{element}> -> {element}"
        for v in "AB"[:inputs]
    )
    constants = "\n".join(f"  %c{k} = arith.constant {k} : index" for k in range(count))
    lines = []
    for k, body in enumerate(bodies):
        lines.append("    " + body.format(k=k).replace("\n", "\n    "))
        lines.append(
            f"    loop.store %r{k}, %Y[%c{k}, %i] : {element} -> memref<{count}x{n}x{element}>"
        )
    body_text = "\n".join(lines)
    return f"""
func.func @{name}({args}, %Y: memref<{count}x{n}x{element}>)
    attributes {{dlc.num_outputs = 1 : i64}} {{
{constants}
  %lb = arith.constant 0 : index
  %step = arith.constant 1 : index
  %n = arith.constant {n} : index
  loop.for %i = %lb to %n step %step axis "i" {{
{loads}
{body_text}
  }}
  func.return
}}
"""


FLOAT_CASES: list[tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]] = [
    ("%r{k} = arith.addf %a, %b : f32", lambda a, b: a + b),
    ("%r{k} = arith.subf %a, %b : f32", lambda a, b: a - b),
    ("%r{k} = arith.mulf %a, %b : f32", lambda a, b: a * b),
    ("%r{k} = arith.divf %a, %b : f32", lambda a, b: a / b),
    ("%r{k} = arith.negf %a : f32", lambda a, b: -a),
    ("%r{k} = arith.maximumf %a, %b : f32", np.maximum),
    ("%r{k} = arith.minnumf %a, %b : f32", np.minimum),
    ("%c{k}c = arith.cmpf ogt, %a, %b : f32\n%r{k} = arith.select %c{k}c, %a, %b : f32",
     lambda a, b: np.where(a > b, a, b)),
    ("%r{k} = math.exp %a : f32", lambda a, b: np.exp(a)),
    ("%r{k} = math.tanh %a : f32", lambda a, b: np.tanh(a)),
    ("%r{k} = math.erf %a : f32", lambda a, b: np.vectorize(math.erf)(a)),
    ("%r{k} = math.absf %a : f32", lambda a, b: np.abs(a)),
    ("%t{k} = math.absf %a : f32\n%r{k} = math.sqrt %t{k} : f32", lambda a, b: np.sqrt(np.abs(a))),
    ("%t{k} = math.absf %a : f32\n%r{k} = math.log %t{k} : f32", lambda a, b: np.log(np.abs(a))),
    ("%t{k} = math.absf %a : f32\n%r{k} = math.rsqrt %t{k} : f32",
     lambda a, b: 1 / np.sqrt(np.abs(a))),
    ("%t{k} = math.absf %a : f32\n%r{k} = math.powf %t{k}, %b : f32",
     lambda a, b: np.abs(a) ** b),
    ("%r{k} = math.fma %a, %b, %a : f32", lambda a, b: a * b + a),
    ("%r{k} = math.floor %a : f32", lambda a, b: np.floor(a)),
    ("%r{k} = math.cbrt %a : f32", lambda a, b: np.cbrt(a)),
    ("%r{k} = math.sin %a : f32", lambda a, b: np.sin(a)),
    ("%r{k} = math.copysign %a, %b : f32", np.copysign),
    ("%i{k} = arith.fptosi %a : f32 to i32\n%r{k} = arith.sitofp %i{k} : i32 to f32",
     lambda a, b: np.trunc(a)),
]


def test_scalar_float_ops_match_numpy() -> None:
    n = 96
    text = elementwise_module(
        "floats", "f32", len(FLOAT_CASES), n, [body for body, _ in FLOAT_CASES], inputs=2
    )
    f = compile_text(text)
    a = (RNG.standard_normal(n) * 3).astype(np.float32)
    b = (RNG.standard_normal(n) + 0.1).astype(np.float32)
    y = f(a, b)
    with np.errstate(all="ignore"):
        for k, (body, reference) in enumerate(FLOAT_CASES):
            np.testing.assert_allclose(
                y[k], reference(a, b).astype(np.float32), rtol=2e-6, atol=1e-6, err_msg=body
            )


INT_CASES: list[tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]] = [
    ("%r{k} = arith.addi %a, %b : i32", lambda a, b: a + b),
    ("%r{k} = arith.subi %a, %b : i32", lambda a, b: a - b),
    ("%r{k} = arith.muli %a, %b : i32", lambda a, b: a * b),
    ("%r{k} = arith.divsi %a, %b : i32", lambda a, b: np.trunc(a / b).astype(np.int64)),
    ("%r{k} = arith.remsi %a, %b : i32", lambda a, b: np.fmod(a, b)),
    ("%r{k} = arith.floordivsi %a, %b : i32", lambda a, b: a // b),
    ("%r{k} = arith.ceildivsi %a, %b : i32", lambda a, b: -(-a // b)),
    ("%r{k} = arith.divui %a, %b : i32", lambda a, b: _u32(a) // _u32(b)),
    ("%r{k} = arith.remui %a, %b : i32", lambda a, b: _u32(a) % _u32(b)),
    ("%r{k} = arith.ceildivui %a, %b : i32", lambda a, b: -(-_u32(a) // _u32(b))),
    ("%r{k} = arith.minsi %a, %b : i32", np.minimum),
    ("%r{k} = arith.maxui %a, %b : i32", lambda a, b: np.maximum(_u32(a), _u32(b))),
    ("%r{k} = arith.andi %a, %b : i32", np.bitwise_and),
    ("%r{k} = arith.ori %a, %b : i32", np.bitwise_or),
    ("%r{k} = arith.xori %a, %b : i32", np.bitwise_xor),
    ("%s{k} = arith.constant 3 : i32\n%r{k} = arith.shli %a, %s{k} : i32", lambda a, b: a << 3),
    ("%s{k} = arith.constant 3 : i32\n%r{k} = arith.shrsi %a, %s{k} : i32", lambda a, b: a >> 3),
    ("%s{k} = arith.constant 3 : i32\n%r{k} = arith.shrui %a, %s{k} : i32",
     lambda a, b: _u32(a) >> 3),
    ("%r{k} = math.absi %a : i32", np.abs),
    ("%r{k} = math.ctpop %a : i32",
     lambda a, b: np.array([bin(int(x)).count("1") for x in _u32(a)])),
    ("%x{k} = arith.index_cast %a : i32 to index\n%r{k} = arith.index_cast %x{k} : index to i32",
     lambda a, b: a),
    ("%x{k} = arith.extsi %a : i32 to i64\n%r{k} = arith.trunci %x{k} : i64 to i32",
     lambda a, b: a),
    ("%x{k} = arith.trunci %a : i32 to i8\n%r{k} = arith.extui %x{k} : i8 to i32",
     lambda a, b: _u32(a) & 0xFF),
    ("%f{k} = arith.uitofp %a : i32 to f64\n%r{k} = arith.fptosi %f{k} : f64 to i32",
     lambda a, b: np.clip(_u32(a), None, 2**31 - 1)),
    ("%c{k}c = arith.cmpi ult, %a, %b : i32\n%r{k} = arith.select %c{k}c, %a, %b : i32",
     lambda a, b: np.where(_u32(a) < _u32(b), a, b)),
]


def _u32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64) & 0xFFFFFFFF


def test_integer_ops_match_python() -> None:
    n = 64
    text = elementwise_module(
        "ints", "i32", len(INT_CASES), n, [body for body, _ in INT_CASES], inputs=2
    )
    f = compile_text(text)
    a = RNG.integers(-1000, 1000, n, dtype=np.int32)
    b = RNG.integers(1, 50, n, dtype=np.int32) * RNG.choice([-1, 1], n).astype(np.int32)
    y = f(a, b)
    for k, (body, reference) in enumerate(INT_CASES):
        expected = (np.asarray(reference(a.astype(np.int64), b.astype(np.int64))) + 2**31) % 2**32
        np.testing.assert_array_equal(y[k].astype(np.int64), expected - 2**31, err_msg=body)


VECTOR_ELEMENTWISE = """
func.func @gelu_like(%X: memref<4x48xf32>, %Y: memref<4x48xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %half = arith.constant dense<0.5> : vector<16xf32>
  %s = arith.constant 0.70710677 : f32
  %scale = vector.broadcast %s : f32 to vector<16xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c48 step %c16 axis "j" kind vectorized {
      %x = loop.load %X[%i, %j] : memref<4x48xf32> -> vector<16xf32>
      %xs = arith.mulf %x, %scale : vector<16xf32>
      %e = math.erf %xs : vector<16xf32>
      %t = math.tanh %x : vector<16xf32>
      %u = arith.addf %e, %t : vector<16xf32>
      %y = vector.fma %u, %half, %x : vector<16xf32>
      loop.store %y, %Y[%i, %j] : vector<16xf32> -> memref<4x48xf32>
    }
  }
  func.return
}
"""


def test_vector_loads_stores_and_math_match_numpy() -> None:
    f = compile_text(VECTOR_ELEMENTWISE)
    x = RNG.standard_normal((4, 48), dtype=np.float32)
    erf = np.vectorize(math.erf)
    expected = (erf(x * np.float32(0.70710677)) + np.tanh(x)) * 0.5 + x
    np.testing.assert_allclose(f(x), expected, rtol=1e-5, atol=1e-6)


MEMREF_OPS = """
"memref.global"() <{sym_name = "bias", sym_visibility = "private", type = memref<2x4xf32>,
    initial_value = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>,
    constant}> : () -> ()
func.func @memref_ops(%X: memref<2x4xf32>, %Y: memref<2x4xf32>)
    attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %heap = memref.alloc() : memref<2x4xf32>
  "memref.copy"(%X, %heap) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  %flat = memref.collapse_shape %heap [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %bias = memref.get_global @bias : memref<2x4xf32>
  %bflat = memref.collapse_shape %bias [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %tmp = memref.alloca() : memref<8xf32>
  %yflat = memref.collapse_shape %Y [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %flat[%i] : memref<8xf32>
    %b = memref.load %bflat[%i] : memref<8xf32>
    %s = arith.addf %x, %b : f32
    memref.store %s, %tmp[%i] : memref<8xf32>
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %s, %zero : f32
    %r = scf.if %pos -> (f32) {
      scf.yield %s : f32
    } else {
      %n = arith.negf %s : f32
      scf.yield %n : f32
    }
    memref.store %r, %yflat[%i] : memref<8xf32>
  }
  memref.dealloc %heap : memref<2x4xf32>
  func.return
}
"""


def test_memref_ops_and_scf_match_numpy() -> None:
    f = compile_text(MEMREF_OPS)
    x = RNG.standard_normal((2, 4), dtype=np.float32) * 8
    bias = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(f(x), np.abs(x + bias), rtol=1e-6)


def test_strided_subview_addressing() -> None:
    text = """
func.func @column(%X: memref<4x5xf32>, %Y: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %col = memref.subview %X[0, 2] [4, 1] [1, 1]
      : memref<4x5xf32> to memref<4xf32, strided<[5], offset: 2>>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    %v = memref.load %col[%i] : memref<4xf32, strided<[5], offset: 2>>
    loop.store %v, %Y[%i] : f32 -> memref<4xf32>
  }
  func.return
}
"""
    f = compile_text(text)
    x = RNG.standard_normal((4, 5), dtype=np.float32)
    np.testing.assert_array_equal(f(x), x[:, 2])


# ------------------------------------------------------------------------------------------
# What the pass rejects
# ------------------------------------------------------------------------------------------


def test_higher_level_ops_are_rejected_before_any_rewrite() -> None:
    text = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""
    module = parse(text)
    before = str(module)
    with pytest.raises(PassFailedException, match=r"'graph.relu' op expected loop-level IR"):
        ConvertLoopToLLVMPass().apply(make_context(), module)
    assert str(module) == before


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            'loop.for %t = %c0 to %c4 step %c1 axis "x" kind bound thread "blockIdx.x" {\n'
            "  loop.store %z, %A[%t] : f32 -> memref<4xf32>\n}",
            r"'loop.for' op expected a CPU loop kind .* found kind bound to 'blockIdx.x'",
        ),
        (
            "%s = loop.alloc shared : memref<4xf32>\nloop.store %z, %s[%c0] : f32 -> memref<4xf32>",
            r"'loop.alloc' op expected scope global or local on the CPU, found 'shared'",
        ),
        (
            "loop.dealloc %A : memref<4xf32>",
            r"'loop.dealloc' op expected a buffer made by loop.alloc, found a block argument",
        ),
    ],
)
def test_pass_failures_name_the_op(body: str, message: str) -> None:
    text = f"""
func.func @f(%A: memref<4xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  {body}
  func.return
}}
"""
    with pytest.raises(PassFailedException, match=message):
        ConvertLoopToLLVMPass().apply(make_context(), parse(text))


def test_entry_function_must_return_nothing() -> None:
    text = """
func.func @f(%A: memref<4xf32>) -> f32 attributes {dlc.num_outputs = 1 : i64} {
  %z = arith.constant 0.0 : f32
  func.return %z : f32
}
"""
    with pytest.raises(PassFailedException, match=r"@f to return nothing .* found 1 results"):
        ConvertLoopToLLVMPass().apply(make_context(), parse(text))


def test_large_local_buffers_go_to_the_heap() -> None:
    text = """
func.func @f(%A: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 1.0 : f32
  %t = loop.alloc local : memref<64xf32>
  loop.store %z, %t[%c0] : f32 -> memref<64xf32>
  %v = loop.load %t[%c0] : memref<64xf32> -> f32
  loop.store %v, %A[%c0] : f32 -> memref<4xf32>
  func.return
}
"""
    stack = lower(text)
    assert "llvm.alloca" in str(stack) and "dlc_buffer_take" not in str(stack)
    module = parse(text)
    ConvertLoopToLLVMPass(max_stack_bytes=128).apply(make_context(), module)
    assert "llvm.alloca" not in str(module)
    assert str(module).count("llvm.call @dlc_buffer_take") == 1
    assert str(module).count("llvm.call @dlc_buffer_release") == 1


# ------------------------------------------------------------------------------------------
# -t llvm
# ------------------------------------------------------------------------------------------


def test_llvm_ir_parses_verifies_and_targets_the_lowered_for_cpu() -> None:
    """`-t llvm` prints the target `convert-loop-to-llvm` lowered for (never the host's)."""
    lowered = parse(VECTOR_ELEMENTWISE)
    ConvertLoopToLLVMPass(target="llvm -mcpu=skylake-avx512 -mattr=-avx512fp16").apply(
        make_context(), lowered)
    text = emit_llvm_ir(lowered)
    module = binding.parse_assembly(text)
    module.verify()
    assert module.triple == "x86_64-unknown-linux-gnu"
    assert '"target-cpu"="skylake-avx512"' in text
    assert '"target-features"="-avx512fp16"' in text
    assert '"prefer-vector-width"="512"' in text
    assert "<16 x float>" in text
    function = module.get_function("gelu_like")
    assert "noalias" in str(function)


# ------------------------------------------------------------------------------------------
# Which pipeline passes dlc.compile runs
# ------------------------------------------------------------------------------------------


def test_loop_level_modules_skip_the_higher_level_passes() -> None:
    cpu = named_pipeline("cpu")
    module = parse(MATMUL.format(M=2, N=2, K=2))
    assert module_level(module) == "loop"
    kept = applicable(module, cpu)
    assert kept[-1].name == "convert-loop-to-llvm"
    assert [p for p in kept if pass_level(p.name) in ("graph", "tensor_expr")] == []
    assert len(kept) < len(cpu)
    assert pass_level("convert-graph-to-tensor-expr") == "graph"
    assert pass_level("tensor-expr-inline") == "tensor_expr"
    assert pass_level("cse") is None
    graph = parse("""
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
""")
    assert module_level(graph) == "graph"
    assert applicable(graph, cpu) == cpu


VECTOR_OPS = """
func.func @vector_ops(%I: memref<2x8xi32>, %H: memref<2x8xf16>, %Y: memref<2x8xi32>,
                      %G: memref<2x8xf16>, %R: memref<2x4xf32>)
    attributes {dlc.num_outputs = 3 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %three = arith.constant dense<3> : vector<8xi32>
  %true = arith.constant true
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    %v = loop.load %I[%i, %c0] : memref<2x8xi32> -> vector<8xi32>
    %m = arith.muli %v, %three : vector<8xi32>
    %s = arith.maxsi %m, %v : vector<8xi32>
    %w = arith.select %true, %s, %v : vector<8xi32>
    %lane = vector.extract %w[5] : i32 from vector<8xi32>
    %neg = arith.subi %lane, %lane : i32
    %z = vector.insert %neg, %w [2] : i32 into vector<8xi32>
    loop.store %z, %Y[%i, %c0] : vector<8xi32> -> memref<2x8xi32>
    %h = loop.load %H[%i, %c0] : memref<2x8xf16> -> vector<8xf16>
    %f = arith.extf %h : vector<8xf16> to vector<8xf32>
    %e = math.erf %f : vector<8xf32>
    %back = arith.truncf %e : vector<8xf32> to vector<8xf16>
    loop.store %back, %G[%i, %c0] : vector<8xf16> -> memref<2x8xf16>
    %sum = vector.reduction <add>, %v : vector<8xi32> into i32
    %big = vector.reduction <maxsi>, %v, %lane : vector<8xi32> into i32
    %fmax = vector.reduction <maximumf>, %f : vector<8xf32> into f32
    %fsum = vector.reduction <add>, %f : vector<8xf32> into f32
    %sumf = arith.sitofp %sum : i32 to f32
    %bigf = arith.sitofp %big : i32 to f32
    loop.store %sumf, %R[%i, %c0] : f32 -> memref<2x4xf32>
    loop.store %bigf, %R[%i, %c1] : f32 -> memref<2x4xf32>
    loop.store %fmax, %R[%i, %c2] : f32 -> memref<2x4xf32>
    loop.store %fsum, %R[%i, %c3] : f32 -> memref<2x4xf32>
  }
  func.return
}
"""


def test_vector_integer_half_and_reduction_ops_match_numpy() -> None:
    f = compile_text(VECTOR_OPS)
    ints = RNG.integers(-100, 100, (2, 8), dtype=np.int32)
    halves = RNG.standard_normal((2, 8)).astype(np.float16)
    y, g, r = f(ints, halves)
    expected = np.maximum(ints * 3, ints)
    expected[:, 2] = 0
    np.testing.assert_array_equal(y, expected)
    erf = np.vectorize(math.erf)
    np.testing.assert_array_equal(g, erf(halves.astype(np.float32)).astype(np.float16))
    lane = np.maximum(ints * 3, ints)[:, 5]
    np.testing.assert_array_equal(r[:, 0], ints.sum(axis=1))
    np.testing.assert_array_equal(r[:, 1], np.maximum(ints.max(axis=1), lane))
    np.testing.assert_array_equal(r[:, 2], halves.astype(np.float32).max(axis=1))
    np.testing.assert_allclose(r[:, 3], halves.astype(np.float32).sum(axis=1), rtol=1e-6)


CALLS = """
func.func private @axpy(%a: f32, %X: memref<16xf32>, %Y: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    %x = loop.load %X[%i] : memref<16xf32> -> f32
    %y = loop.load %Y[%i] : memref<16xf32> -> f32
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %p, %y : f32
    loop.store %s, %Y[%i] : f32 -> memref<16xf32>
  }
  func.return
}
func.func @twice(%X: memref<16xf32>, %Y: memref<16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.store %zero, %Y[%i] : f32 -> memref<16xf32>
  }
  func.call @axpy(%two, %X, %Y, %c16) : (f32, memref<16xf32>, memref<16xf32>, index) -> ()
  func.call @axpy(%two, %X, %Y, %c16) : (f32, memref<16xf32>, memref<16xf32>, index) -> ()
  func.return
}
"""


def test_calls_between_functions_pass_pointers() -> None:
    module = lower(CALLS)
    helper = next(op for op in module.ops if getattr(op, "sym_name", None) is not None
                  and op.sym_name.data == "axpy")
    assert helper.linkage.linkage.data == "internal"
    f = compile_text(CALLS)
    x = RNG.standard_normal(16, dtype=np.float32)
    np.testing.assert_allclose(f(x), 4 * x, rtol=1e-6)


def test_dense_globals_are_emitted_as_exact_bytes() -> None:
    import ctypes

    from dlc.driver.jit import compile_llvm_ir
    from xdsl.dialects import llvm
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32

    values = RNG.standard_normal(4096).astype(np.float32)
    values[:4] = [0.0, -0.0, np.inf, np.nan]
    dense = DenseIntOrFPElementsAttr.from_list(TensorType(f32, [values.size]), values.tolist())
    weights = llvm.GlobalOp(
        llvm.LLVMArrayType(values.size, f32), "w", "external", constant=True, value=dense,
        alignment=64,
    )
    text = emit_llvm_ir(ModuleOp([weights]))
    assert weights.value is dense  # the module is left as it was
    jit = compile_llvm_ir(text)
    address = jit.global_address("w")
    assert address % 64 == 0
    stored = np.frombuffer((ctypes.c_char * values.nbytes).from_address(address), np.float32)
    assert stored.tobytes() == values.tobytes()


HALF = """
func.func @to_half(%X: memref<{n}xf64>, %V: memref<{n}xf16>, %S: memref<{n}xf16>)
    attributes {{dlc.num_outputs = 2 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  loop.for %i = %c0 to %cn step %c1 axis "i" kind vectorized {{
    %x = loop.load %X[%i] : memref<{n}xf64> -> f64
    %h = arith.truncf %x : f64 to f16
    loop.store %h, %V[%i] : f16 -> memref<{n}xf16>
  }}
  loop.for %j = %c0 to %cn step %c1 axis "j" {{
    %x = loop.load %X[%j] : memref<{n}xf64> -> f64
    %h = arith.truncf %x : f64 to f16
    loop.store %h, %S[%j] : f16 -> memref<{n}xf16>
  }}
  func.return
}}
"""


def test_double_to_half_rounds_once() -> None:
    """f64 -> f16 needs no `__truncdfhf2`: it goes through f32 rounded to odd and rounds like
    NumPy (once, to nearest even), also just off the halfway points where rounding to f32 and
    then to f16 would round twice."""
    halves = RNG.standard_normal(24).astype(np.float16).astype(np.float64)
    ulp = np.spacing(halves.astype(np.float16)).astype(np.float64)
    tricky = np.concatenate([
        halves + ulp / 2 * (1 + 2.0**-30), halves + ulp / 2 * (1 - 2.0**-30), halves + ulp / 2,
        [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 1e6, -1e6, 2.0**-25,
         2.0**-24 * 1.5, 6e-8, 1e-300],
    ])
    n = len(tricky)
    f = compile_text(HALF.format(n=n))
    vector, scalar = f(tricky)
    with np.errstate(over="ignore"):
        want = tricky.astype(np.float16)
    for got in (vector, scalar):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)],
                                      want.view(np.uint16)[~np.isnan(want)])
        assert np.isnan(got[np.isnan(want)]).all()


BOOLS = """
func.func @bools(%X: memref<{n}xf32>, %Y: memref<{n}xf32>, %M: memref<{n}xi1>,
                 %B: memref<{n}xi1>, %C: memref<{n}xi32>)
    attributes {{dlc.num_outputs = 2 : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  loop.for %i = %c0 to %cn step %c1 axis "i" kind vectorized {{
    %x = loop.load %X[%i] : memref<{n}xf32> -> f32
    %y = loop.load %Y[%i] : memref<{n}xf32> -> f32
    %m = loop.load %M[%i] : memref<{n}xi1> -> i1
    %lt = arith.cmpf olt, %x, %y : f32
    %b = arith.andi %lt, %m : i1
    loop.store %b, %B[%i] : i1 -> memref<{n}xi1>
    %c = arith.extui %lt : i1 to i32
    loop.store %c, %C[%i] : i32 -> memref<{n}xi32>
  }}
  func.return
}}
"""


def test_bool_buffers_hold_a_byte_per_element_in_vector_code() -> None:
    """Vectorized compares give vectors of i1, and i1 buffers are NumPy bools (a byte each,
    true is 1) in vector loads and stores, with a scalar tail."""
    n = 37
    f = compile_text(BOOLS.format(n=n))
    x, y = RNG.standard_normal((2, n), dtype=np.float32)
    x[3] = np.nan
    m = RNG.integers(0, 2, n).astype(np.bool_)
    b, c = f(x, y, m)
    assert b.dtype == np.bool_
    np.testing.assert_array_equal(b.view(np.uint8), ((x < y) & m).view(np.uint8))
    np.testing.assert_array_equal(c, (x < y).astype(np.int32))


def test_vectorized_select_lowers_to_verified_llvm_and_matches_numpy() -> None:
    """A compare + where runs in a vectorized loop: the vector `arith.select` becomes one
    `llvm.select` on a vector condition (dlc's, `dialects.llvm_vector`), so the whole `cpu`
    pipeline output verifies, and the compiled code picks the right lanes (f32 and i32)."""
    from xdsl.passes import PassPipeline

    for element, dtype in (("f32", np.float32), ("i32", np.int32)):
        t = f"tensor<67x{element}>"
        text = f"""
func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %m = graph.compare %a, %b {{predicate = "lt"}} : ({t}, {t}) -> tensor<67xi1>
  %w = graph.where %m, %a, %b : (tensor<67xi1>, {t}, {t}) -> {t}
  func.return %w : {t}
}}"""
        ctx = make_context()
        module = Parser(ctx, text).parse_module()
        PassPipeline(named_pipeline("cpu")).apply(ctx, module)
        module.verify()
        assert "xi1>, vector<" in str(module)  # llvm.select on a vector condition
        rng = np.random.default_rng(3)
        a = (rng.standard_normal(67) * 100).astype(dtype)
        b = (rng.standard_normal(67) * 100).astype(dtype)
        result = dlc.compile(Parser(make_context(), text).parse_module(), cache=False)(a, b)
        np.testing.assert_array_equal(result, np.where(a < b, a, b))


UNROLL_PROBE = """
declare void @touch(i64)

define void @f() {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  call void @touch(i64 %i)
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, 8
  br i1 %done, label %exit, label %loop{metadata}
exit:
  ret void
}
{extra}
"""


@pytest.mark.parametrize(("forced", "calls"), [(False, 1), (True, 8)])
def test_llvm_unrolls_only_the_loops_the_schedule_asks_for(forced: bool, calls: int) -> None:
    """LLVM's own unroller is off (`driver.jit.LLVM_HEURISTIC_UNROLLING`): an 8-trip loop stays
    a loop at O3, and one whose back edge carries `llvm.loop.unroll.full` (the `unroll`
    primitive) is still unrolled completely."""
    from dlc.driver.jit import parse_and_optimize, target_machine
    from dlc.target import DEFAULT_CPU_TARGET

    text = UNROLL_PROBE.replace("{metadata}", ", !llvm.loop !0" if forced else "").replace(
        "{extra}", '!0 = distinct !{!0, !1}\n!1 = !{!"llvm.loop.unroll.full"}' if forced else "")
    optimized = str(parse_and_optimize(text, target_machine(DEFAULT_CPU_TARGET, 3), 3))
    assert optimized.count("call void @touch") == calls, optimized


FCMP_PREDICATES = {
    "false": lambda x, y: np.zeros_like(x, dtype=np.bool_),
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less,
    "ole": np.less_equal, "one": np.not_equal,
    "ord": lambda x, y: np.ones_like(x, dtype=np.bool_),
    "ueq": np.equal, "ugt": np.greater, "uge": np.greater_equal, "ult": np.less,
    "ule": np.less_equal, "une": np.not_equal,
    "uno": lambda x, y: np.zeros_like(x, dtype=np.bool_),
    "true": lambda x, y: np.ones_like(x, dtype=np.bool_),
}
"""arith.cmpf predicate -> its meaning on ordered operands (o*: false where either is NaN,
u*: true there; `false`, `true` ignore NaN)."""


def _fcmp_reference(predicate: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ordered = FCMP_PREDICATES[predicate](x, y)
    unordered = np.isnan(x) | np.isnan(y)
    if predicate in ("false", "true"):
        return ordered
    if predicate[0] == "u":
        return ordered | unordered
    return ordered & ~unordered


def test_vector_compares_match_numpy_for_every_predicate_and_nan() -> None:
    """Every `arith.cmpf` predicate in a vectorized loop (one vector `fcmp` each, and a scalar
    tail) on f32 and f64 operands with NaN on either side, equal values and infinities; and
    vector `cmpi` + `select` on i32 (signed and unsigned), all against NumPy."""
    n = 37
    names = list(FCMP_PREDICATES)
    for element, dtype in (("f32", np.float32), ("f64", np.float64)):
        m = f"memref<{n}x{element}>"
        b = f"memref<{n}xi1>"
        body = "\n".join(
            f"    %c_{p} = arith.cmpf {p}, %x, %y : {element}\n"
            f"    loop.store %c_{p}, %O_{p}[%i] : i1 -> {b}"
            for p in names
        )
        text = f"""
func.func @compares(%X: {m}, %Y: {m}, {", ".join(f"%O_{p}: {b}" for p in names)}, %S: {m})
    attributes {{dlc.num_outputs = {len(names) + 1} : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  loop.for %i = %c0 to %cn step %c1 axis "i" kind vectorized {{
    %x = loop.load %X[%i] : {m} -> {element}
    %y = loop.load %Y[%i] : {m} -> {element}
{body}
    %s = arith.select %c_ult, %x, %y : {element}
    loop.store %s, %S[%i] : {element} -> {m}
  }}
  func.return
}}"""
        module = lower(text)
        fcmps = [op for op in module.walk() if op.name == "llvm.fcmp"]
        assert any(str(op.lhs.type).startswith("vector<") for op in fcmps)
        assert "llvm.extractelement" not in str(module)
        x = RNG.standard_normal(n).astype(dtype)
        y = RNG.standard_normal(n).astype(dtype)
        y[:6] = x[:6]
        x[6], y[7], x[8], y[8] = np.nan, np.nan, np.nan, np.nan
        x[9], y[9], x[10], y[11] = np.inf, np.inf, -np.inf, np.nan
        x[30], y[31], y[32] = np.nan, np.nan, x[32]  # in the scalar tail as well
        *flags, selected = compile_text(text)(x, y)
        for predicate, got in zip(names, flags, strict=True):
            np.testing.assert_array_equal(got, _fcmp_reference(predicate, x, y), predicate)
        np.testing.assert_array_equal(selected, np.where(_fcmp_reference("ult", x, y), x, y))

    m = f"memref<{n}xi32>"
    predicates = {"slt": np.less, "ugt": np.greater, "eq": np.equal, "sge": np.greater_equal}
    body = "\n".join(
        f"    %c_{p} = arith.cmpi {p}, %x, %y : i32\n"
        f"    %s_{p} = arith.select %c_{p}, %x, %y : i32\n"
        f"    loop.store %s_{p}, %O_{p}[%i] : i32 -> {m}"
        for p in predicates
    )
    text = f"""
func.func @int_compares(%X: {m}, %Y: {m}, {", ".join(f"%O_{p}: {m}" for p in predicates)})
    attributes {{dlc.num_outputs = {len(predicates)} : i64}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {n} : index
  loop.for %i = %c0 to %cn step %c1 axis "i" kind vectorized {{
    %x = loop.load %X[%i] : {m} -> i32
    %y = loop.load %Y[%i] : {m} -> i32
{body}
  }}
  func.return
}}"""
    x = RNG.integers(-5, 5, n, dtype=np.int32)
    y = RNG.integers(-5, 5, n, dtype=np.int32)
    results = compile_text(text)(x, y)
    for (predicate, compare), got in zip(predicates.items(), results, strict=True):
        unsigned = predicate[0] == "u"
        a, b = (x.view(np.uint32), y.view(np.uint32)) if unsigned else (x, y)
        np.testing.assert_array_equal(got, np.where(compare(a, b), x, y), predicate)


@pytest.mark.parametrize("kind", ["vectorized", "serial"])
def test_max_and_min_without_signed_zeros_keep_nan_from_either_side(kind: str) -> None:
    """`maximumf`/`minimumf` marked `nsz` (partial-sum combiners) lower to a NaN test, a blend
    and a compare and select: equal to NumPy's NaN-propagating maximum and minimum wherever
    either operand is NaN or infinite (a zero result may carry either sign: equal values)."""
    n = 64
    bodies = ["%r{k} = arith.maximumf %a, %b fastmath<nsz> : f32",
              "%r{k} = arith.minimumf %a, %b fastmath<nsz> : f32"]
    text = elementwise_module("minmax", "f32", 2, n, bodies, inputs=2)
    text = text.replace('axis "i" {', f'axis "i" kind {kind} {{')
    a = RNG.standard_normal(n).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    a[[1, 7, 20]] = np.nan
    b[[2, 7, 33]] = np.nan
    a[[3, 40]], b[[4, 40]] = np.inf, -np.inf
    a[5], b[5] = -0.0, 0.0
    y = compile_text(text)(a, b)
    np.testing.assert_array_equal(y[0], np.maximum(a, b))
    np.testing.assert_array_equal(y[1], np.minimum(a, b))


# ------------------------------------------------------------------------------------------
# Vector fptosi on x86: cvttps2dq with the saturating conversion's fixes
# ------------------------------------------------------------------------------------------

TRUNCATE_LANES = """
func.func @truncate_lanes(%x: memref<16xf32>, %y: memref<8xf32>, %z: memref<4xf32>,
    %s: memref<1xf32>, %a: memref<16xi32>, %b: memref<8xi32>, %c: memref<4xi32>,
    %d: memref<1xi32>) attributes {dlc.num_outputs = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" kind vectorized {
    loop.block "x" reads(%x : memref<16xf32>) writes(%a : memref<16xi32>) spatial ["i"] {
      %v = loop.load %x[%i] : memref<16xf32> -> f32
      %t = arith.fptosi %v : f32 to i32
      loop.store %t, %a[%i] : i32 -> memref<16xi32>
    }
  }
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind vectorized {
    loop.block "y" reads(%y : memref<8xf32>) writes(%b : memref<8xi32>) spatial ["i"] {
      %v = loop.load %y[%i] : memref<8xf32> -> f32
      %t = arith.fptosi %v : f32 to i32
      loop.store %t, %b[%i] : i32 -> memref<8xi32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind vectorized {
    loop.block "z" reads(%z : memref<4xf32>) writes(%c : memref<4xi32>) spatial ["i"] {
      %v = loop.load %z[%i] : memref<4xf32> -> f32
      %t = arith.fptosi %v : f32 to i32
      loop.store %t, %c[%i] : i32 -> memref<4xi32>
    }
  }
  loop.block "s" reads(%s : memref<1xf32>) writes(%d : memref<1xi32>) {
    %v = loop.load %s[%c0] : memref<1xf32> -> f32
    %t = arith.fptosi %v : f32 to i32
    loop.store %t, %d[%c0] : i32 -> memref<1xi32>
  }
  func.return
}
"""


@pytest.mark.parametrize(("target", "feature"), [
    ("llvm -mcpu=skylake-avx512", "avx512f"),  # 16 lanes, the mask form
    ("llvm -mcpu=znver3", "avx2"),             # 8 lanes
    ("llvm -mcpu=x86-64", "sse2"),             # 4 lanes
])
def test_vector_fptosi_saturates_like_the_scalar_conversion(target: str, feature: str) -> None:
    """Vectorized f32 -> i32 conversions (16, 8 and 4 lanes, and a scalar) truncate toward
    zero, saturate out of range (both signs, infinities) and give 0 for NaN, on every x86
    vector width: `saturated_truncation`'s fixes of `cvttps2dq`."""
    if binding.get_process_triple().split("-")[0] != "x86_64" or not (
            binding.get_host_cpu_features().get(feature, False)):
        pytest.skip(f"the host cannot run {target!r} code")
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 2.0**31, -(2.0**31), 2.1e9, -2.2e9,
                        2147483520.0, -2147483520.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 3e38,
                        -3e38, 1e-40, -0.0, 123456.7, -7.9, 16777217.0, -1.0], np.float32)
    inputs = [special[:16], special[8:16], special[16:20], special[20:21]]
    executable = dlc.compile(parse(TRUNCATE_LANES), target=target, cache=False)
    outputs = executable(*inputs)
    for x, got in zip(inputs, outputs, strict=True):
        with np.errstate(invalid="ignore"):
            expected = np.where(np.isnan(x), 0, np.clip(np.trunc(x.astype(np.float64)),
                                                        -(2.0**31), 2.0**31 - 1))
        np.testing.assert_array_equal(got, expected.astype(np.int32))
