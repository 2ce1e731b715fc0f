"""A dynamic leading (batch) dim end to end: the ONNX importer's `dynamic_batch` keeps a shared
leading `dim_param` as `?` named in `dlc.dim_symbols`, graph shape inference carries it, and the
graph interpreter runs one module for every batch size; checked against ONNX's reference
evaluator."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from dlc.dialects.contracts import DIM_SYMBOLS_ATTR
from dlc.dialects.dim_symbols import argument_symbols, bind_symbols, verify_dim_symbols
from dlc.dialects.graph.interpreter import InterpreterError, run_module
from dlc.frontends.onnx.errors import DynamicInputError
from dlc.frontends.onnx.importer import import_onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, TensorType, f32
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import VerifyException

from tests.onnx.models import model, tensor

RNG = np.random.default_rng(0)


def cnn(batch: int | str = "N") -> onnx.ModelProto:
    """x[N,3,8,8] -> Conv 3x3 (pad 1, bias) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm (transB)
    -> Softmax over the classes."""
    rng = np.random.default_rng(3)
    weights = {
        "w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(8).astype(np.float32),
        "g": rng.standard_normal((10, 8 * 4 * 4)).astype(np.float32),
        "gc": rng.standard_normal(10).astype(np.float32),
        "shape": np.array([0, 8, 16], np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["q"]),
        helper.make_node("Flatten", ["q"], ["f"]),
        helper.make_node("Gemm", ["f", "g", "gc"], ["y"], transB=1),
        helper.make_node("Softmax", ["y"], ["s"], axis=1),
    ]
    return model(nodes, [tensor("x", [batch, 3, 8, 8])], [tensor("s", [batch, 10])], weights,
                 opset=17)


def assert_matches_reference(run, proto: onnx.ModelProto, inputs: list[np.ndarray],  # noqa: ANN001 - an executable
                             tolerance: float = 1e-5) -> None:
    """`run(x)` gives what ONNX's reference evaluator does for each of `inputs` (the model's
    one input)."""
    name = proto.graph.input[0].name
    for x in inputs:
        (want,) = ReferenceEvaluator(proto).run(None, {name: x})
        np.testing.assert_allclose(run(x), want, rtol=tolerance, atol=tolerance)


def main_of(module: object) -> FuncOp:
    return next(op for op in module.walk() if isinstance(op, FuncOp))  # type: ignore[attr-defined]


def test_the_importer_keeps_the_batch_symbolic_and_names_it() -> None:
    func = main_of(import_onnx(cnn(), dynamic_batch=True))
    arg, result = func.function_type.inputs.data[0], func.function_type.outputs.data[0]
    assert isinstance(arg, TensorType) and arg.get_shape()[1:] == (3, 8, 8)
    assert arg.get_shape()[0] < 0
    assert isinstance(result, TensorType) and result.get_shape()[1:] == (10,)
    assert result.get_shape()[0] < 0
    assert argument_symbols(func) == [("N", "", "", "")]
    assert func.res_attrs is not None
    assert func.res_attrs.data[0].data[DIM_SYMBOLS_ATTR] == ArrayAttr(
        [StringAttr("N"), StringAttr("")])


def test_without_the_option_a_dynamic_batch_still_needs_a_shape() -> None:
    with pytest.raises(DynamicInputError, match="dynamic dimension 0 \\('N'\\)"):
        import_onnx(cnn())
    func = main_of(import_onnx(cnn(), {"x": (2, 3, 8, 8)}, dynamic_batch=True))
    assert func.function_type.inputs.data[0] == TensorType(f32, [2, 3, 8, 8])


@pytest.mark.parametrize("n", [1, 3, 8])
def test_one_module_runs_every_batch_size(n: int) -> None:
    module = import_onnx(cnn(), dynamic_batch=True)
    x = RNG.standard_normal((n, 3, 8, 8)).astype(np.float32)
    (got,) = run_module(module, [x])
    (want,) = ReferenceEvaluator(cnn()).run(None, {"x": x})
    assert got.shape == (n, 10)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_node_that_is_not_batch_polymorphic_is_refused() -> None:
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)]
    proto = model(nodes, [tensor("x", ["N", 3])], [tensor("y", [3])],
                  {"axes": np.array([0], np.int64)}, opset=17)
    with pytest.raises(DynamicInputError, match="ReduceSum.*reads 'x'.*not batch-polymorphic"):
        import_onnx(proto, dynamic_batch=True)


def test_a_reshape_of_the_batch_is_refused() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"])]
    proto = model(nodes, [tensor("x", ["N", 4])], [tensor("y", [2, -1])],
                  {"shape": np.array([2, -1], np.int64)}, opset=17)
    with pytest.raises(Exception, match="to keep the dynamic leading dim"):
        import_onnx(proto, dynamic_batch=True)


def test_a_node_moving_the_batch_off_the_leading_dim_is_refused() -> None:
    """An Unsqueeze at axis 0 of a batched value would put the batch second (a graph.reshape
    the shape-polymorphic verifier takes, `?x4` to `1x?x4`): the batch importer refuses it,
    naming the node, so that the compile falls back to shapes per call."""
    nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="front")]
    proto = model(nodes, [tensor("x", ["N", 4])], [tensor("y", None)],
                  {"axes": np.array([0], np.int64)}, opset=17)
    with pytest.raises(DynamicInputError, match=r"'front'.*reads 'x'.*not batch-polymorphic "
                                                r"\(its result's batch would not be its "
                                                r"leading dim\)"):
        import_onnx(proto, dynamic_batch=True)


def test_the_shape_of_the_batch_is_not_a_constant() -> None:
    nodes = [helper.make_node("Shape", ["x"], ["y"])]
    proto = model(nodes, [tensor("x", ["N", 4])], [tensor("y", [2], onnx.TensorProto.INT64)],
                  {}, opset=17)
    with pytest.raises(Exception, match="dynamic batch"):
        import_onnx(proto, dynamic_batch=True)


def test_inputs_share_one_batch_symbol() -> None:
    nodes = [helper.make_node("Add", ["x", "z"], ["y"])]
    proto = model(nodes, [tensor("x", ["N", 4]), tensor("z", ["M", 4])], [tensor("y", ["N", 4])],
                  {}, opset=17)
    with pytest.raises(DynamicInputError, match="leading dim 'M'.*is 'N'"):
        import_onnx(proto, dynamic_batch=True)
    proto = model(nodes, [tensor("x", ["N", 4]), tensor("z", ["N", 4])], [tensor("y", ["N", 4])],
                  {}, opset=17)
    module = import_onnx(proto, dynamic_batch=True)
    a, b = np.ones((3, 4), np.float32), np.ones((2, 4), np.float32)
    with pytest.raises(InterpreterError, match=r"input #1 dim 0 \('N'\) is 2, but input #0 dim 0 "
                                               r"is 3"):
        run_module(module, [a, b])
    np.testing.assert_array_equal(run_module(module, [a, a])[0], a + a)


def test_bind_symbols() -> None:
    assert bind_symbols([("N", ""), ("N", "", "")], [(4, 3), (4, 1, 2)]) == {"N": 4}
    with pytest.raises(ValueError, match=r"input #1 dim 0 \('N'\) is 5"):
        bind_symbols([("N", ""), ("N",)], [(4, 3), (5,)])


def _func(arg: TensorType, symbols: list[str] | None) -> FuncOp:
    attrs = {} if symbols is None else {
        DIM_SYMBOLS_ATTR: ArrayAttr([StringAttr(s) for s in symbols])}
    func = FuncOp("f", ([arg], []))
    func.arg_attrs = ArrayAttr([DictionaryAttr(attrs)])
    return func


@pytest.mark.parametrize(("shape", "symbols", "message"), [
    ([-1, 3], None, "expected a symbol for dynamic dim 0"),
    ([-1, 3], ["N"], "expected 2 dim symbols, found 1"),
    ([-1, 3], ["N", "C"], "expected no symbol for static dim 1, found 'C'"),
    ([2, 3], ["", ""], None),
    ([-1, 3], ["N", ""], None),
])
def test_verify_dim_symbols(shape: list[int], symbols: list[str] | None,
                            message: str | None) -> None:
    func = _func(TensorType(f32, shape), symbols)
    if message is None:
        verify_dim_symbols(func)
        return
    with pytest.raises(VerifyException, match=f"@f argument #0 .*: {message}"):
        verify_dim_symbols(func)


# ---------------------------------------------------------------------------------------------
# Compiled: one compile, every batch size
# ---------------------------------------------------------------------------------------------


def two_inputs(batch: str = "N", other: str = "N", reduce_batch: bool = False
               ) -> onnx.ModelProto:
    """x[N,3,4,4] -> Conv 1x1 -> Relu -> GlobalAveragePool -> Flatten, plus z[N, 4]; with
    `reduce_batch` also a ReduceSum over the batch (not batch-polymorphic)."""
    w = np.random.default_rng(5).standard_normal((4, 3, 1, 1)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Add", ["f", "z"], ["y"]),
    ]
    outputs = [tensor("y", [batch, 4])]
    weights: dict[str, np.ndarray] = {"w": w}
    if reduce_batch:
        nodes.append(helper.make_node("ReduceSum", ["y", "axes"], ["t"], keepdims=0))
        outputs.append(tensor("t", [4]))
        weights["axes"] = np.array([0], np.int64)
    return model(nodes, [tensor("x", [batch, 3, 4, 4]), tensor("z", [other, 4])], outputs,
                 weights, opset=17)


def compile_counting(proto: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch
                     ) -> tuple[object, list[int]]:
    import dlc.driver.build as build

    import dlc

    compiles: list[int] = []
    original = build._compile_source

    def counted(*args: object, **kwargs: object) -> object:
        compiles.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_compile_source", counted)
    executable = dlc.compile(proto, cache=False, jobs=1, threads=1, dynamic_batch=True)
    return executable, compiles


def test_one_compile_runs_batch_1_3_and_8(monkeypatch: pytest.MonkeyPatch) -> None:
    from dlc.runtime.executable import Executable

    executable, compiles = compile_counting(cnn(), monkeypatch)
    assert isinstance(executable, Executable) and executable.batch_symbol == "N"
    assert executable._batch_entry is not None  # the native batch loop is exported
    for n in (1, 3, 8, 3, 7):
        x = RNG.standard_normal((n, 3, 8, 8)).astype(np.float32)
        got = executable(x)
        (want,) = ReferenceEvaluator(cnn()).run(None, {"x": x})
        assert isinstance(got, np.ndarray) and got.shape == (n, 10)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(compiles) == 1


def dense(batch: int | str = "N") -> onnx.ModelProto:
    """x[N, 96] -> MatMul [96, 256] -> Add -> Relu -> MatMul [256, 32]: at one row it reads
    its weights more than it computes."""
    rng = np.random.default_rng(7)
    weights = {
        "w1": rng.standard_normal((96, 256)).astype(np.float32),
        "b1": rng.standard_normal(256).astype(np.float32),
        "w2": rng.standard_normal((256, 32)).astype(np.float32),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y"]),
    ]
    return model(nodes, [tensor("x", [batch, 96])], [tensor("y", [batch, 32])], weights,
                 opset=17)


Plan = list[list[tuple[int, str]]]
"""Tail plans as (rows, how) lists: how is "" (whole), "padded" or "shifted"."""


def _tail_plans(proto: onnx.ModelProto, cache_bytes: int) -> tuple[Plan, Plan]:
    """The calls of each tail (0 rows to a block's less one) in the `cpu` pipeline's batch
    entry, with no whole block before it and after whole blocks (`batch_plans`, from the
    entries' cost estimates and constants with an L2 of `cache_bytes`, the blocks chosen for
    the same L2)."""
    from dlc.dialects import make_context
    from dlc.pipelines import named_pipeline, with_options
    from dlc.rewrites.llvm_lowering.batch import batch_plans, entry_constants, entry_cost

    module = import_onnx(proto, dynamic_batch=True)
    target = f"llvm -mcpu=skylake-avx512 -num-cores=1 -l2-bytes={cache_bytes}"
    for step in with_options(named_pipeline("cpu"), target=target):
        if step.name == "convert-loop-to-llvm":
            break
        step.apply(make_context(), module)
    entries = {int(f.sym_name.data.partition("__rows")[2] or 1): f
               for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data.startswith("main")}
    plans = batch_plans(
        {rows: entry_cost(module, f, 16, cache_bytes) for rows, f in entries.items()},
        {rows: entry_constants(module, f) for rows, f in entries.items()},
        cache_bytes, 96 * 4 + 32 * 4)
    return tuple(  # type: ignore[return-value]
        [[(call.rows, "padded" if call.padded else "shifted" if call.shifted else "")
          for call in calls] for calls in table] for table in plans)


def test_which_tails_run_as_blocks() -> None:
    """A model that reads its weights more than it computes (dense, weights beyond the L2)
    gets blocks of 2, 3, 4, 6, 8, 10, 12, 14 and 16 rows, whole blocks of 16, and runs any tail
    as one call that reads the weights once: a smaller batch through the block that fits it,
    padded;
    a tail after whole blocks through an entry that reads the weights the block of 16 read
    (one packed copy: loop-fold-constant-nests), on the batch's last rows (shifted).
    With its weights in the L2, and for a conv net over 8x8 planes, tails run as rows (the
    conv net, with no L2 to keep its weights, gets small blocks and runs tails through them)."""
    from dlc.rewrites.llvm_lowering.batch import TailCall, tail_plans

    alone, after = _tail_plans(dense(), SMALL_L2)
    sizes = [1, 2, 3, 4, 6, 8, 10, 12, 14, 16]  # 16 runs the whole blocks
    assert len(alone) == len(after) == 16
    for left in range(1, 16):
        fits = min(size for size in sizes if size >= left)
        assert alone[left] == [(fits, "" if fits == left else "padded")], left
        assert len(after[left]) == 1 and after[left][0][0] >= left, left
        assert after[left][0][1] == ("" if after[left][0][0] == left else "shifted"), left
    rows = [[(1, "")] * r for r in range(8)]
    assert _tail_plans(dense(), 2 << 20) == (rows, rows)  # blocks of 8 only
    assert _tail_plans(cnn(), SMALL_L2) == (rows, rows)
    alone, after = _tail_plans(cnn(), 0)  # nothing cached: its 1-row calls read weights
    assert alone == after and all(any(rows > 1 for rows, _ in plan) for plan in alone[2:])
    # The cheapest plan: 5 rows as 4 + 1 when padding 8 costs more, else as a padded 8.
    assert tail_plans({1: 1.0, 4: 2.5, 8: 4.0}, 8)[5] == (TailCall(4), TailCall(1))
    assert tail_plans({1: 1.0, 4: 2.5, 8: 3.0}, 8)[5] == (TailCall(8, padded=True),)
    assert tail_plans({1: 1.0, 4: 2.5, 8: 3.0}, 8, shifted=True)[5] == (
        TailCall(8, shifted=True),)
    # Costs proportional to the rows: the largest whole entries first, never padding.
    assert tail_plans({1: 1.0, 2: 2.0, 4: 4.0, 8: 8.0}, 8)[7] == (
        TailCall(4), TailCall(2), TailCall(1))
    assert tail_plans({1: 1.0, 2: 2.0, 4: 4.0, 8: 8.0}, 8, shifted=True)[3] == (
        TailCall(2), TailCall(1))


def test_the_driver_plans_a_batch_from_the_kernels_it_compiles_apart() -> None:
    """The driver compiles each kernel in a unit of its own, so the entry unit that
    `convert-loop-to-llvm` builds the batch loop in holds only the kernels' declarations; the
    entries' costs are taken before (`dlc.batch_cost`), from the kernels' bodies. From the
    declarations alone a conv net whose weights do not stay in the (here empty) L2 would look
    weight-bound, as if a block of 8 rows cost what a row does (ResNet-18 on 64x64 images ran
    3 rows as a padded block of 8, 7.9 ms, rather than a block of 2 and a row, 3.9)."""
    from dlc.dialects import make_context
    from dlc.dialects.contracts import BATCH_COST_ATTR
    from dlc.driver.cache import CompileOptions
    from dlc.driver.compiler import split_kernel, standalone_kernels, whole_module_passes
    from dlc.rewrites.llvm_lowering.batch import batch_costs, batched_entries, entry_cost

    module = import_onnx(cnn(), dynamic_batch=True)
    options = CompileOptions(target="llvm -mcpu=skylake-avx512 -num-cores=1 -l2-bytes=0",
                             threads=1)
    whole_module_passes(module, options, make_context())
    entries = batched_entries(module)
    assert {f.sym_name.data for f in entries} >= {"main", "main__rows8"}
    assert all(BATCH_COST_ATTR in f.attributes for f in entries)
    with_kernels = {f.sym_name.data: entry_cost(module, f, 16, 0) for f in entries}
    for kernel in standalone_kernels(module):
        split_kernel(kernel)
    declared = {f.sym_name.data: entry_cost(module, f, 16, 0) for f in entries}
    assert declared["main__rows8"] < 3 * declared["main"]  # what the declarations tell
    assert with_kernels["main__rows8"] > 6 * with_kernels["main"]
    assert batch_costs(module, 16, 0) == with_kernels


def test_a_calls_parallel_loops_add_to_its_cost() -> None:
    """An entry costs each parallel loop of its kernels `PARALLEL_REGION_COST` more (waking
    the threads and joining them), so that a plan weighs a row call's fixed costs against a
    block's: the same kernel with its loop serial costs that much less."""
    from dlc.dialects import make_context
    from dlc.rewrites.batch_cost import PARALLEL_REGION_COST
    from dlc.rewrites.llvm_lowering.batch import entry_cost
    from xdsl.parser import Parser

    def cost(kind: str) -> float:
        buffers = "%x: memref<64xf32>, %y: memref<64xf32>"
        text = f"""
        func.func @main({buffers}) attributes {{dlc.num_outputs = 1 : i64}} {{
          func.call @double(%x, %y) : (memref<64xf32>, memref<64xf32>) -> ()
          func.return
        }}
        func.func private @double({buffers}) {{
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c64 = arith.constant 64 : index
          loop.for %i = %c0 to %c64 step %c1 axis "i" kind {kind} {{
            loop.block "double" reads(%x : memref<64xf32>) writes(%y : memref<64xf32>)
                spatial ["i"] {{
              %v = loop.load %x[%i] : memref<64xf32> -> f32
              %d = arith.addf %v, %v : f32
              loop.store %d, %y[%i] : f32 -> memref<64xf32>
            }}
          }}
          func.return
        }}"""
        module = Parser(make_context(), text).parse_module()
        entry = next(f for f in module.ops if isinstance(f, FuncOp) and f.sym_name.data == "main")
        return entry_cost(module, entry, 16)

    assert cost("parallel") - cost("serial") == PARALLEL_REGION_COST


SMALL_L2 = 64 * 1024
"""An L2 smaller than `dense`'s weights, so that its entries are weight-bound."""


@pytest.mark.parametrize("threads", [1, 2])
def test_a_padded_tail_computes_its_rows(tmp_path: object, threads: int) -> None:
    """Every batch size of a model whose tails run as blocks of 2 and 4 and as padded blocks
    of 4 and 8 (the rows copied into the block, the last one repeated; this host's CPU with a
    64 KiB L2, so that the weights do not stay in it: `test_which_tails_run_as_blocks`) gives
    each row what the reference does, into a caller's output too, and so does its exported
    library."""
    import dataclasses

    from dlc.runtime.executable import Executable
    from dlc.target.host_cpu import host

    import dlc

    target = str(dataclasses.replace(host(threads), l2_bytes=SMALL_L2))
    executable = dlc.compile(dense(), cache=False, jobs=1, threads=threads, dynamic_batch=True,
                             target=target)
    assert isinstance(executable, Executable)
    library = dlc.load(executable.export(f"{tmp_path}/dense.so"))
    assert_matches_reference(library, dense(), [
        RNG.standard_normal((n, 96)).astype(np.float32) for n in (3, 13)], 1e-4)
    assert_matches_reference(executable, dense(), [
        RNG.standard_normal((n, 96)).astype(np.float32) for n in range(1, 20)], 1e-4)
    out = np.full((5, 32), np.nan, np.float32)
    x = RNG.standard_normal((5, 96)).astype(np.float32)
    executable(x, out=(out,))
    np.testing.assert_allclose(out, ReferenceEvaluator(dense()).run(None, {"x": x})[0],
                               rtol=1e-4, atol=1e-4)


def tokens(batch: int | str = "N") -> onnx.ModelProto:
    """ids[N, 6] -> an embedding Gather, a mask (Equal, Unsqueeze, Where), LayerNormalization,
    MatMul, Sigmoid, ReduceMean over the tokens, Greater/Where, Pad, ArgMax, Cast, Concat: the
    ops of a text encoder's head, each over other axes than the batch."""
    rng = np.random.default_rng(11)
    weights = {
        "E": rng.standard_normal((20, 16)).astype(np.float32),
        "scale": rng.standard_normal(16).astype(np.float32),
        "bias": rng.standard_normal(16).astype(np.float32),
        "W": rng.standard_normal((16, 16)).astype(np.float32),
        "zero": np.array(0.0, np.float32), "tenth": np.array(0.1, np.float32),
        "masked_value": np.array(-5.0, np.float32), "zero_id": np.array(0, np.int64),
        "pads": np.array([0, 1, 0, 2], np.int64), "axis2": np.array([2], np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["E", "ids"], ["emb"], axis=0),
        helper.make_node("Equal", ["ids", "zero_id"], ["is_zero"]),
        helper.make_node("Unsqueeze", ["is_zero", "axis2"], ["is_zero3"]),
        helper.make_node("Where", ["is_zero3", "masked_value", "emb"], ["masked"]),
        helper.make_node("LayerNormalization", ["masked", "scale", "bias"], ["ln"], axis=-1),
        helper.make_node("MatMul", ["ln", "W"], ["h"]),
        helper.make_node("Sigmoid", ["h"], ["s"]),
        helper.make_node("ReduceMean", ["s"], ["m"], axes=[1], keepdims=0),
        helper.make_node("Greater", ["m", "zero"], ["positive"]),
        helper.make_node("Mul", ["m", "tenth"], ["small"]),
        helper.make_node("Where", ["positive", "m", "small"], ["selected"]),
        helper.make_node("Pad", ["selected", "pads"], ["padded"]),
        helper.make_node("ArgMax", ["padded"], ["index"], axis=1, keepdims=1),
        helper.make_node("Cast", ["index"], ["index_f"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Concat", ["padded", "index_f"], ["y"], axis=1),
    ]
    return model(nodes, [tensor("ids", [batch, 6], onnx.TensorProto.INT64)],
                 [tensor("y", [batch, 20])], weights, opset=17)


def upsampler(batch: int | str = "N", reduce_axis: int = 3) -> onnx.ModelProto:
    """x[N, 2, 4, 4] -> ConvTranspose (stride 2) -> InstanceNormalization -> ReduceMax over
    `reduce_axis` (over axis 0, the batch, it is not batch-polymorphic)."""
    rng = np.random.default_rng(12)
    weights = {
        "w": rng.standard_normal((2, 3, 3, 3)).astype(np.float32),
        "b": rng.standard_normal(3).astype(np.float32),
        "s": rng.standard_normal(3).astype(np.float32),
        "t": rng.standard_normal(3).astype(np.float32),
    }
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["c"], strides=[2, 2]),
        helper.make_node("InstanceNormalization", ["c", "s", "t"], ["n"]),
        helper.make_node("ReduceMax", ["n"], ["y"], axes=[reduce_axis], keepdims=1),
    ]
    shape: list[int | str] = [batch, 3, 9, 9]
    shape[reduce_axis] = 1
    return model(nodes, [tensor("x", [batch, 2, 4, 4])], [tensor("y", shape)], weights,
                 opset=17)


def resizer(batch: int | str = "N") -> onnx.ModelProto:
    """x[N, 2, 4, 4] -> Resize nearest x2 (a detector's upsample) -> Resize linear x1.5 (the
    batch's scale 1: each row resized on its own) -> Resize linear to sizes [N, 2, 10, 10] made
    as torchvision's `F.interpolate(x, size=...)` exports them (Shape, Slice of [N, C], Concat
    with the static size)."""
    weights = {"up": np.array([1, 1, 2, 2], np.float32),
               "third": np.array([1, 1, 1.5, 1.5], np.float32),
               "start": np.array([0], np.int64), "end": np.array([2], np.int64),
               "size": np.array([10, 10], np.int64)}
    nodes = [
        helper.make_node("Resize", ["x", "", "up"], ["u"], mode="nearest"),
        helper.make_node("Resize", ["u", "", "third"], ["t"], mode="linear"),
        helper.make_node("Shape", ["t"], ["shape"]),
        helper.make_node("Slice", ["shape", "start", "end"], ["rows"]),
        helper.make_node("Concat", ["rows", "size"], ["sizes"], axis=0),
        helper.make_node("Resize", ["t", "", "", "sizes"], ["y"], mode="linear"),
    ]
    return model(nodes, [tensor("x", [batch, 2, 4, 4])], [tensor("y", [batch, 2, 10, 10])],
                 weights, opset=17)


@pytest.mark.parametrize("build", [tokens, upsampler, resizer])
def test_selection_reduction_and_transposed_convs_keep_the_batch(
        monkeypatch: pytest.MonkeyPatch, build) -> None:  # noqa: ANN001 - a model builder
    """Gathers, masks, layer norms, reductions and argmaxes over other axes than the batch,
    pads of other axes, casts, transposed convs and resizes compile once for every batch
    size."""
    from dlc.runtime.executable import Executable

    proto = build()
    executable, compiles = compile_counting(proto, monkeypatch)
    assert isinstance(executable, Executable) and executable.batch_symbol == "N"
    if build is tokens:
        inputs = [RNG.integers(0, 20, (n, 6)).astype(np.int64) for n in (1, 3, 9)]
    else:
        inputs = [RNG.standard_normal((n, 2, 4, 4)).astype(np.float32) for n in (1, 3, 9)]
    assert_matches_reference(executable, proto, inputs)
    module = import_onnx(proto, dynamic_batch=True)
    assert_matches_reference(lambda x: run_module(module, [x])[0], proto, inputs)
    assert len(compiles) == 1


def test_a_reduction_over_the_batch_falls_back_to_shapes_per_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ReduceMax is batch-polymorphic over other axes; over axis 0 its conversion fails on the
    batched value, which is a DynamicInputError naming the node, and `dlc.compile` falls back
    to specialization."""
    from dlc.driver.specialize import SpecializingExecutable

    proto = upsampler(reduce_axis=0)
    with pytest.raises(DynamicInputError, match=r"ReduceMax.*reads 'n'.*not batch-polymorphic "
                                                r"\(.*reduced axis.*axis 0\)"):
        import_onnx(proto, dynamic_batch=True)
    executable, _ = compile_counting(proto, monkeypatch)
    assert isinstance(executable, SpecializingExecutable)
    assert_matches_reference(executable, proto,
                             [RNG.standard_normal((3, 2, 4, 4)).astype(np.float32)])


def viewer(batch: int | str = "N", mix: bool = False) -> onnx.ModelProto:
    """x[N, 4, 6] viewed as `x.view(x.size(0), 2, 12)` the way exporters write it (Shape,
    Gather 0, Unsqueeze, Concat, Reshape), then a MatMul divided by `x.size(2)` (Shape, Gather
    2, Cast: a static dim). With `mix`, the view is `x.view(x.size(0) * 2, 12)`: the batch
    multiplied, mixed with another axis."""
    rng = np.random.default_rng(3)
    weights = {
        "W": rng.standard_normal((12, 5)).astype(np.float32), "zero": np.array(0, np.int64),
        "two": np.array(2, np.int64), "axis0": np.array([0], np.int64),
        "rest": np.array([12] if mix else [2, 12], np.int64),
    }
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        *([helper.make_node("Mul", ["n", "two"], ["n2"])] if mix else []),
        helper.make_node("Unsqueeze", ["n2" if mix else "n", "axis0"], ["n1"]),
        helper.make_node("Concat", ["n1", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"]),
        helper.make_node("Gather", ["shape", "two"], ["d"], axis=0),
        helper.make_node("Cast", ["d"], ["df"], to=onnx.TensorProto.FLOAT),
        helper.make_node("MatMul", ["r", "W"], ["m"]),
        helper.make_node("Div", ["m", "df"], ["y"]),
    ]
    out: list[int | str] = ["M", 5] if mix else [batch, 2, 5]
    return model(nodes, [tensor("x", [batch, 4, 6])], [tensor("y", out)], weights, opset=17)


def test_a_view_of_the_batch_by_its_shape_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Shape` of a batched value folds at import time with the batch as a symbol: moved by
    Gather, Unsqueeze and Concat into a Reshape's leading dim it keeps the batch (one compile),
    and a static dim gathered from it is a constant."""
    from dlc.runtime.executable import Executable

    module = import_onnx(viewer(), dynamic_batch=True)
    text = str(module)
    assert "graph.reshape %x {shape = array<i64: -1, 2, 12>}" in text
    assert "graph.constant dense<6.000000e+00> : tensor<f32>" in text
    executable, compiles = compile_counting(viewer(), monkeypatch)
    assert isinstance(executable, Executable)
    assert_matches_reference(executable, viewer(), [
        RNG.standard_normal((n, 4, 6)).astype(np.float32) for n in (1, 3, 9)])
    assert len(compiles) == 1


def attention(batch: int | str = "N") -> onnx.ModelProto:
    """Self-attention over x[N, 4, 8] with 2 heads as exporters write it: one projection split
    into q, k and v (Split along the features), views to [N, 4, 2, 4] through Shape, heads
    transposed, `q @ k^T` and `p @ v` (both operands batched), a masked softmax, the heads
    merged back."""
    rng = np.random.default_rng(5)
    weights = {"W": rng.standard_normal((8, 24)).astype(np.float32),
               "thirds": np.array([8, 8, 8], np.int64)}
    weights.update({
        "zero": np.array(0, np.int64), "axis0": np.array([0], np.int64),
        "heads": np.array([4, 2, 4], np.int64), "merged": np.array([4, 8], np.int64),
        "scale": np.array(0.5, np.float32),
        "mask": np.triu(np.full((4, 4), -1e4, np.float32), 1),
    })
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"]),
        helper.make_node("Concat", ["n1", "heads"], ["split"], axis=0),
        helper.make_node("Concat", ["n1", "merged"], ["join"], axis=0),
        helper.make_node("MatMul", ["x", "W"], ["qkv"]),
        helper.make_node("Split", ["qkv", "thirds"], ["q0", "k0", "v0"], axis=-1),
    ]
    for name in "qkv":
        nodes += [
            helper.make_node("Reshape", [f"{name}0", "split"], [f"{name}1"]),
            helper.make_node("Transpose", [f"{name}1"], [name],
                             perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("MatMul", ["q", "k"], ["scores0"]),
        helper.make_node("Mul", ["scores0", "scale"], ["scores1"]),
        helper.make_node("Add", ["scores1", "mask"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o0"]),
        helper.make_node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "join"], ["y"]),
    ]
    return model(nodes, [tensor("x", [batch, 4, 8])], [tensor("y", [batch, 4, 8])], weights,
                 opset=17)


def test_attention_keeps_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Views through Shape and matmuls of two batched operands: one compile."""
    from dlc.runtime.executable import Executable

    executable, compiles = compile_counting(attention(), monkeypatch)
    assert isinstance(executable, Executable)
    assert_matches_reference(executable, attention(), [
        RNG.standard_normal((n, 4, 8)).astype(np.float32) for n in (1, 3, 9)])
    assert len(compiles) == 1


def embeddings(batch: int | str = "N") -> onnx.ModelProto:
    """BERT's embeddings as Hugging Face exports them without token types and positions given:
    word embeddings of ids[N, 6], token types `zeros(ids.shape)` (ConstantOfShape of the ids'
    shape), positions `arange(6)[None].expand(N, -1)` (Expand to Shape(ids), through the
    Reshape, Equal and Where that PyTorch's exporter writes for the -1), an additive
    mask `(1 - (ids != 0)[:, None, :].expand(N, 2, 6)) * -1e4` (Expand along a middle axis of
    a batched value), and the sum through a MatMul."""
    rng = np.random.default_rng(9)
    weights = {
        "words": rng.standard_normal((11, 8)).astype(np.float32),
        "types": rng.standard_normal((2, 8)).astype(np.float32),
        "positions": rng.standard_normal((6, 8)).astype(np.float32),
        "arange": np.arange(6, dtype=np.int64).reshape(1, 6),
        "W": rng.standard_normal((8, 6)).astype(np.float32),
        "zero": np.array(0, np.int64), "axis1": np.array([1], np.int64),
        "two": np.array([2, 6], np.int64), "axis0": np.array([0], np.int64),
        "big": np.array(-1e4, np.float32), "flat": np.array([-1], np.int64),
        "minus": np.array(-1, np.int64),
    }
    nodes = [
        helper.make_node("Shape", ["ids"], ["shape"]),
        helper.make_node("ConstantOfShape", ["shape"], ["type_ids"],
                         value=helper.make_tensor("v", onnx.TensorProto.INT64, [1], [0])),
        helper.make_node("Reshape", ["shape", "flat"], ["target0"]),
        helper.make_node("Shape", ["target0"], ["target_rank"]),
        helper.make_node("ConstantOfShape", ["target_rank"], ["ones"],
                         value=helper.make_tensor("o", onnx.TensorProto.INT64, [1], [1])),
        helper.make_node("Mul", ["ones", "minus"], ["minus_ones"]),
        helper.make_node("Equal", ["target0", "minus_ones"], ["is_minus"]),
        helper.make_node("Where", ["is_minus", "ones", "target0"], ["target"]),
        helper.make_node("Expand", ["arange", "target"], ["position_ids"]),
        helper.make_node("Gather", ["words", "ids"], ["w"], axis=0),
        helper.make_node("Gather", ["types", "type_ids"], ["t"], axis=0),
        helper.make_node("Gather", ["positions", "position_ids"], ["p"], axis=0),
        helper.make_node("Add", ["w", "t"], ["wt"]),
        helper.make_node("Add", ["wt", "p"], ["e"]),
        helper.make_node("MatMul", ["e", "W"], ["scores"]),
        helper.make_node("Equal", ["ids", "zero"], ["pad"]),
        helper.make_node("Cast", ["pad"], ["padf"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["padf", "axis1"], ["pad3"]),
        helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axis0"], ["n1"]),
        helper.make_node("Concat", ["n1", "two"], ["mask_shape"], axis=0),
        helper.make_node("Expand", ["pad3", "mask_shape"], ["mask"]),
        helper.make_node("Mul", ["mask", "big"], ["bias"]),
        helper.make_node("ReduceSum", ["bias", "axis1"], ["bias1"], keepdims=1),
        helper.make_node("Add", ["scores", "bias1"], ["y"]),
    ]
    ids = helper.make_tensor_value_info("ids", onnx.TensorProto.INT64, [batch, 6])
    return model(nodes, [ids], [tensor("y", [batch, 6, 6])], weights, opset=17)


def test_expand_and_constant_of_shape_to_the_batch_keep_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Expand and ConstantOfShape to the shape of a batched value (the batch's size first, a
    symbol at import time) become broadcasts to the batch (graph.broadcast_to with a leading
    -1, sized by the batched input), so the model compiles once and matches ONNX's reference
    at every batch size; graph-batch-rows makes them static broadcasts to the rows."""
    from dlc.dialects import make_context
    from dlc.pipelines import parse_pipeline
    from dlc.runtime.executable import Executable

    module = import_onnx(embeddings(), dynamic_batch=True)
    text = str(module)
    assert "graph.broadcast_to %0, %ids {shape = array<i64: -1, 6>}" in text
    assert ": (tensor<1x6xi64>, tensor<?x6xi64>) -> tensor<?x6xi64>" in text
    assert "{shape = array<i64: -1, 2, 6>} : (tensor<?x1x6xf32>) -> tensor<?x2x6xf32>" in text
    rows = parse_pipeline("graph-batch-rows")
    for p in rows:
        p.apply(make_context(), module)
    assert "%position_ids = graph.broadcast_to %arange {shape = array<i64: 1, 6>} : " \
        "(tensor<1x6xi64>) -> tensor<1x6xi64>" in str(module)
    executable, compiles = compile_counting(embeddings(), monkeypatch)
    assert isinstance(executable, Executable)
    ids = [RNG.integers(0, 11, (n, 6)).astype(np.int64) for n in (1, 3, 9)]
    for x in ids:
        x[:, -1] = 0  # padding, masked
    assert_matches_reference(executable, embeddings(), ids, tolerance=1e-4)
    assert len(compiles) == 1


def test_an_expand_that_moves_the_batch_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """An Expand whose operand's leading dim would have to equal the batch (a [2, 6] table to
    [N, 6]: valid only at N = 2): a DynamicInputError naming the node, and shapes per call."""
    from dlc.driver.specialize import SpecializingExecutable

    proto = embeddings()
    table = next(t for t in proto.graph.initializer if t.name == "arange")
    table.CopyFrom(numpy_helper.from_array(np.arange(12, dtype=np.int64).reshape(2, 6) % 6,
                                           "arange"))
    with pytest.raises(DynamicInputError, match=r"Expand.*expected tensor<2x6xi64> to broadcast "
                                                r"to the dynamic batch"):
        import_onnx(proto, dynamic_batch=True)
    executable, _ = compile_counting(proto, monkeypatch)
    assert isinstance(executable, SpecializingExecutable)
    assert_matches_reference(executable, proto, [RNG.integers(1, 11, (2, 6)).astype(np.int64)],
                             tolerance=1e-4)


def test_arithmetic_on_the_batch_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch's size multiplied (`x.view(x.size(0) * 2, 12)` mixes rows): a
    DynamicInputError naming the node, and shapes per call."""
    from dlc.driver.specialize import SpecializingExecutable

    with pytest.raises(DynamicInputError, match=r"'n2' \(Mul.*computes with 'n'.*dynamic "
                                                r"batch 'N'"):
        import_onnx(viewer(mix=True), dynamic_batch=True)
    executable, _ = compile_counting(viewer(mix=True), monkeypatch)
    assert isinstance(executable, SpecializingExecutable)
    assert_matches_reference(executable, viewer(mix=True),
                             [RNG.standard_normal((3, 4, 6)).astype(np.float32)])


def test_fold_symbolic_moves_the_batch() -> None:
    from dlc.frontends.onnx.batch_shape import (
        BATCH,
        fold_symbolic,
        has_batch,
        reshape_target,
        symbolic_shape,
    )

    shape = symbolic_shape((-1, 3, 8))
    assert has_batch(shape) and list(shape) == [BATCH, 3, 8]
    assert symbolic_shape((-1, 3, 8), 1).dtype == np.int64  # the batch sliced off
    assert fold_symbolic("Gather", [shape, np.array(2)], {}).tolist() == 8  # type: ignore[union-attr]
    sliced = fold_symbolic("Slice", [shape, np.array([0]), np.array([2])], {})
    assert sliced is not None and list(sliced) == [BATCH, 3]
    joined = fold_symbolic("Concat", [sliced, np.array([4], np.int64)], {"axis": 0})
    assert joined is not None and list(joined) == [BATCH, 3, 4]
    assert reshape_target(joined).tolist() == [-1, 3, 4]  # type: ignore[union-attr]
    assert reshape_target(np.array([3, BATCH], dtype=object)) is None  # the batch moved
    # a size cast to float stays that size (a grid's `torch.arange(ny)` of it); not to bool
    as_float = fold_symbolic("Cast", [shape], {"to": onnx.TensorProto.FLOAT})
    assert as_float is not None and list(as_float) == [BATCH, 3, 8]
    assert fold_symbolic("Cast", [shape], {"to": onnx.TensorProto.BOOL}) is None
    with pytest.raises(TypeError):
        np.array([BATCH], dtype=object) * 2
    # PyTorch's `x.expand(n, -1)`: the target reshaped flat, compared with -1, -1s made 1.
    flat = fold_symbolic("Reshape", [joined.reshape(1, 3), np.array([-1])], {})  # type: ignore[union-attr]
    assert flat is not None and list(flat) == [BATCH, 3, 4]
    assert fold_symbolic("Shape", [flat], {}).tolist() == [3]  # type: ignore[union-attr]
    minus = np.array([-1, -1, 4], np.int64)
    assert fold_symbolic("Equal", [flat, minus], {}).tolist() == [False, False, True]  # type: ignore[union-attr]
    assert fold_symbolic("Equal", [flat, np.array([2, 3, 4])], {}) is None  # BATCH == 2: unknown
    chosen = fold_symbolic("Where", [np.array([False, True, False]), np.ones(3, np.int64), flat],
                           {})
    assert chosen is not None and list(chosen) == [BATCH, 1, 4]


def test_inputs_must_agree_on_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    from dlc.runtime.executable import Executable, ExecutableError

    proto = two_inputs()
    executable, compiles = compile_counting(proto, monkeypatch)
    assert isinstance(executable, Executable)
    x = RNG.standard_normal((5, 3, 4, 4)).astype(np.float32)
    z = RNG.standard_normal((5, 4)).astype(np.float32)
    (want,) = ReferenceEvaluator(proto).run(None, {"x": x, "z": z})
    np.testing.assert_allclose(executable(x, z), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ExecutableError, match=r"input 1 \('z'\) of @main: dim 0 is 'N' = 2, but "
                                              r"'N' = 5 from dim 0 of input 'x'"):
        executable(x, z[:2])
    with pytest.raises(ExecutableError, match=r"input 0 \('x'\) of @main: expected shape "
                                              r"Nx3x4x4 \('N' = 5\), found \(5, 3, 4, 5\)"):
        executable(np.zeros((5, 3, 4, 5), np.float32), z)
    out = np.empty((5, 4), np.float32)
    executable(x, z, out=(out,))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert len(compiles) == 1


def test_a_model_that_mixes_rows_falls_back_to_specialization(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dlc.driver.specialize import SpecializingExecutable

    proto = two_inputs(reduce_batch=True)
    executable, _ = compile_counting(proto, monkeypatch)
    assert isinstance(executable, SpecializingExecutable)
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    z = RNG.standard_normal((2, 4)).astype(np.float32)
    got = executable(x, z)
    want = ReferenceEvaluator(proto).run(None, {"x": x, "z": z})
    for value, expected in zip(got, want, strict=True):  # type: ignore[arg-type]
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)


def test_an_exported_library_runs_blocks_and_rows(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: object) -> None:
    from dlc.runtime.executable import Executable

    import dlc

    executable, _ = compile_counting(cnn(), monkeypatch)
    assert isinstance(executable, Executable)
    assert sorted(executable.signatures) == ["main", "main__rows8"]
    library = dlc.load(executable.export(f"{tmp_path}/model.so"))
    assert library.name == "main" and library.batch_symbol == "N"
    assert library._batch_entry is not None
    # a block and 7 rows; a block and 3 rows; rows only
    assert_matches_reference(library, cnn(), [
        RNG.standard_normal((n, 3, 8, 8)).astype(np.float32) for n in (15, 11, 2)])


def test_the_metadata_carries_the_batch() -> None:
    from dlc.runtime.metadata import (
        ArgumentSpec,
        FunctionSignature,
        decode_metadata,
        encode_metadata,
    )

    signature = FunctionSignature("main", (ArgumentSpec("x", (1, 3), "float32", "N"),
                                           ArgumentSpec("w", (3,), "float32"),
                                           ArgumentSpec("y", (1, 3), "float32", "N")), 1)
    text = encode_metadata([signature])
    assert text.count('"batch":"N"') == 2
    assert decode_metadata(text) == {"main": signature}


# ---------------------------------------------------------------------------------------------
# graph-batch-rows: the row function computes each row of the batched function
# ---------------------------------------------------------------------------------------------

_STEPS = ("relu", "bias", "conv", "pool", "transpose", "softmax", "self_add")


def _batched_module(steps: list[str], channels: int, size: int, seed: int
                    ) -> tuple[object, tuple[int, ...]]:
    """A function over x: tensor<?xCxSxS> applying `steps` (batch-polymorphic graph ops), then
    a flatten and a matmul; the module and the row shape of x."""
    from dlc.dialects.contracts import ONNX_NAME_ATTR
    from dlc.dialects.dim_symbols import symbols_attr
    from dlc.dialects.graph.ops import (
        AddOp,
        Conv2DOp,
        FlattenOp,
        MatmulOp,
        MaxPool2DOp,
        ReluOp,
        SoftmaxOp,
        TransposeOp,
    )
    from dlc.dialects.graph.utils import build_constant
    from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
    from xdsl.dialects.func import ReturnOp
    from xdsl.ir import Block, Region

    rng = np.random.default_rng(seed)
    row = (channels, size, size)
    block = Block(arg_types=[TensorType(f32, [DYNAMIC_INDEX, *row])])
    value = block.args[0]

    def add(op: object) -> object:
        block.add_op(op)  # type: ignore[arg-type]
        return op.results[0]  # type: ignore[attr-defined]

    def constant(shape: tuple[int, ...]) -> object:
        return add(build_constant(rng.standard_normal(shape).astype(np.float32)))

    layout_nchw = True
    for step in steps:
        shape = value.type.get_shape()  # type: ignore[attr-defined]
        if step == "relu":
            value = add(ReluOp(value))
        elif step == "self_add":
            value = add(AddOp(value, value))
        elif step == "bias":
            value = add(AddOp(value, constant(shape[1:2] + (1,) * (len(shape) - 2))))
        elif step == "conv" and layout_nchw:
            value = add(Conv2DOp(value, constant((shape[1], shape[1], 3, 3)),
                                 padding=(1, 1, 1, 1)))
        elif step == "pool" and layout_nchw and shape[2] % 2 == 0 and shape[2] > 1:
            value = add(MaxPool2DOp(value, kernel=(2, 2), strides=(2, 2)))
        elif step == "transpose":
            value = add(TransposeOp(value, [0, 2, 3, 1] if layout_nchw else [0, 3, 1, 2]))
            layout_nchw = not layout_nchw
        elif step == "softmax":
            value = add(SoftmaxOp(value, axis=1))
    value = add(FlattenOp(value))
    features = value.type.get_shape()[1]  # type: ignore[attr-defined]
    value = add(MatmulOp(value, constant((features, 5))))
    block.add_op(ReturnOp(value))  # type: ignore[arg-type]
    function = FuncOp("main", ([block.args[0].type], [value.type]),  # type: ignore[attr-defined]
                      Region(block))
    function.arg_attrs = ArrayAttr([DictionaryAttr({
        ONNX_NAME_ATTR: StringAttr("x"), DIM_SYMBOLS_ATTR: symbols_attr(["N", "", "", ""])})])
    function.res_attrs = ArrayAttr([DictionaryAttr({
        DIM_SYMBOLS_ATTR: symbols_attr(["N", ""])})])
    module = ModuleOp([function])
    module.verify()
    return module, row


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(st.sampled_from(_STEPS), max_size=5),
       channels=st.integers(1, 4), size=st.sampled_from([1, 2, 4]), rows=st.integers(1, 6),
       seed=st.integers(0, 2**16))
def test_batch_rows_computes_each_row(steps: list[str], channels: int, size: int, rows: int,
                                      seed: int) -> None:
    from dlc.dialects import make_context
    from dlc.rewrites.graph_batch_rows import GraphBatchRowsPass

    module, row = _batched_module(steps, channels, size, seed)
    x = np.random.default_rng(seed).standard_normal((rows, *row)).astype(np.float32)
    (want,) = run_module(module, [x])  # the batched function, all rows at once
    batched = module.clone()  # type: ignore[attr-defined]
    GraphBatchRowsPass(block=3).apply(make_context(), batched)
    batched.verify()
    functions = {f.sym_name.data: f for f in batched.ops if isinstance(f, FuncOp)}
    assert set(functions) == {"main", "main__rows3"}
    assert argument_symbols(functions["main"]) == [("", "", "", "")]
    got = np.concatenate([run_module(batched, [x[i:i + 1]], "main")[0] for i in range(rows)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    if rows >= 3:
        (block,) = run_module(batched, [x[:3]], "main__rows3")
        np.testing.assert_allclose(block, want[:3], rtol=1e-4, atol=1e-4)


def test_the_c_interface_runs_a_batch(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    import ctypes

    executable, _ = compile_counting(cnn(), monkeypatch)
    path = executable.export(f"{tmp_path}/model.so", c_prefix="cnn")  # type: ignore[attr-defined]
    library = ctypes.CDLL(str(path))

    class Pointers(ctypes.Structure):
        _fields_ = [("p", ctypes.c_void_p)]

    run_batch = library.cnn_run_batch
    run_batch.argtypes = [ctypes.c_int64, ctypes.POINTER(Pointers), ctypes.POINTER(Pointers)]
    run_batch.restype = ctypes.c_int
    n = 10
    x = RNG.standard_normal((n, 3, 8, 8)).astype(np.float32)
    out = np.zeros((n, 10), np.float32)
    status = run_batch(n, Pointers(x.ctypes.data), Pointers(out.ctypes.data))
    assert status == 0
    (want,) = ReferenceEvaluator(cnn()).run(None, {"x": x})
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert run_batch(-1, Pointers(x.ctypes.data), Pointers(out.ctypes.data)) != 0


def test_dlc_compile_dynamic_batch_writes_one_library(tmp_path: object) -> None:
    from dlc.tools.dlc_main import main

    import dlc

    path, library = f"{tmp_path}/cnn.onnx", f"{tmp_path}/cnn.so"
    onnx.save(cnn(), path)
    assert main(["compile", path, "--dynamic-batch", "--no-cache", "--jobs", "1",
                 "-o", library]) == 0
    loaded = dlc.load(library)
    for n in (4, 9):
        x = RNG.standard_normal((n, 3, 8, 8)).astype(np.float32)
        (want,) = ReferenceEvaluator(cnn()).run(None, {"x": x})
        np.testing.assert_allclose(loaded(x), want, rtol=1e-5, atol=1e-5)


def test_the_model_cache_keeps_the_batch(tmp_path: object) -> None:
    import dlc

    for _ in range(2):  # compiled, then read from the cache
        executable = dlc.compile(cnn(), cache_dir=str(tmp_path), jobs=1, threads=1,
                                 dynamic_batch=True)
        assert executable.batch_symbol == "N"  # type: ignore[union-attr]
        x = RNG.standard_normal((3, 3, 8, 8)).astype(np.float32)
        (want,) = ReferenceEvaluator(cnn()).run(None, {"x": x})
        np.testing.assert_allclose(executable(x), want, rtol=1e-5, atol=1e-5)
    static = dlc.compile(cnn(), cache_dir=str(tmp_path), jobs=1, threads=1,
                         input_shapes={"x": (3, 3, 8, 8)})
    assert static.batch_symbol is None  # the dynamic compile is not this one's cache entry


@settings(max_examples=200, deadline=None)
@given(block=st.sampled_from([4, 8, 16]), work=st.floats(0, 1e6), fixed=st.floats(0, 1e7),
       data=st.data())
def test_blocks_for_fixed_costs_are_new_sizes_below_the_block(block: int, work: float,
                                                              fixed: float,
                                                              data: st.DataObject) -> None:
    """The sizes added for a call's fixed costs are below the block, new (not among the
    sizes the weights chose: each becomes one function, named by its rows), each added once,
    and leave every tail the runtime can plan within the tolerance where a size could."""
    from dlc.rewrites.batch_cost import TAIL_TOLERANCE, tail_cost
    from dlc.rewrites.graph_batch_rows import _fixed_cost_blocks, block_sizes
    from dlc.rewrites.llvm_lowering.batch import tail_plans

    chosen = data.draw(st.lists(st.sampled_from(block_sizes(block)), unique=True))
    added = _fixed_cost_blocks(block, work, fixed, chosen)
    assert len(set(added)) == len(added) and not set(added) & set(chosen)
    assert all(size < block for size in added)
    sizes = {1, block, *chosen, *added}
    costs = {rows: tail_cost(rows, work, fixed) for rows in sizes}
    plans = tail_plans(costs, block)
    for left in range(2, block):
        fits = min(rows for rows in block_sizes(block) if rows >= left)
        if fits < block:
            total = sum(costs[call.rows] for call in plans[left])
            assert total <= TAIL_TOLERANCE * tail_cost(left, work, fixed) * (fits / left) + 1e-6
