"""Unit tests of the tensor_expr, loop and target_gpu dialects: constructors, verifiers, effects."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from dlc.dialects import loop, make_context, target_gpu, tensor_expr
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    VectorType,
    f16,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint
from xdsl.traits import MemoryEffectKind, get_effects, is_side_effect_free
from xdsl.transforms.dead_code_elimination import DeadCodeElimination, is_trivially_dead
from xdsl.utils.exceptions import VerifyException

from dlc import dialects

REPO = Path(__file__).resolve().parent.parent
FILECHECK_DIALECTS = REPO / "tests" / "filecheck" / "dialects"


def _parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


FunctionBody = Callable[[Builder, list[SSAValue]], None]


def _function(
    name: str, arg_types: Sequence[Attribute], build: FunctionBody
) -> tuple[ModuleOp, func.FuncOp]:
    """A module with one `func.func @name(args)` whose body `build(builder, args)` fills."""
    block = Block(arg_types=arg_types)
    build(Builder(InsertPoint.at_end(block)), list(block.args))
    block.add_op(func.ReturnOp())
    function = func.FuncOp(name, (arg_types, []), Region(block))
    return ModuleOp([function]), function


def _index(builder: Builder, value: int) -> SSAValue:
    return builder.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


# ----------------------------------------------------------------------------------------------
# registry and docstrings
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "dialect"),
    [("tensor_expr", tensor_expr.TensorExpr), ("loop", loop.Loop),
     ("target_gpu", target_gpu.TargetGpu)],
)
def test_registry_resolves_to_this_repository(name: str, dialect: Dialect) -> None:
    assert dialects.get_all_dialects()[name]() is dialect
    assert dialect.name == name
    assert Path(inspect.getfile(next(iter(dialect.operations)))).is_relative_to(REPO)


def _example_lines(op: type[Operation]) -> list[str]:
    doc = inspect.getdoc(op) or ""
    assert "Example:" in doc, f"{op.name} has no Example"
    example = doc.split("Example:", 1)[1]
    return [line.strip() for line in example.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "dialect", [tensor_expr.TensorExpr, loop.Loop, target_gpu.TargetGpu], ids=lambda d: d.name
)
def test_every_docstring_example_is_in_ops_mlir(dialect: Dialect) -> None:
    ops_lines = {
        line.strip()
        for line in (FILECHECK_DIALECTS / dialect.name / "ops.mlir").read_text().splitlines()
    }
    for op in dialect.operations:
        doc = inspect.getdoc(op) or ""
        assert "Semantics:" in doc, f"{op.name} has no Semantics"
        missing = [line for line in _example_lines(op) if line not in ops_lines]
        assert not missing, f"{op.name}: example lines not in ops.mlir: {missing}"


# ----------------------------------------------------------------------------------------------
# tensor_expr
# ----------------------------------------------------------------------------------------------


def _matmul(builder: Builder, a: SSAValue, b: SSAValue) -> tensor_expr.ComputeOp:
    def body(b_: Builder, spatial: list[SSAValue], reduction: list[SSAValue]) -> SSAValue:
        (i, j), (k,) = spatial, reduction
        x = b_.insert(tensor_expr.ReadOp(a, [i, k])).result
        y = b_.insert(tensor_expr.ReadOp(b, [k, j])).result
        return b_.insert(arith.MulfOp(x, y)).result

    compute = tensor_expr.ComputeOp.build(
        "matmul", TensorType(f32, [4, 3]), body, reduce_extents=[5], combiner="sum", init=0.0,
        tag="matmul",
    )
    return builder.insert(compute)


def test_compute_build_matmul_verifies_and_exposes_its_parts() -> None:
    types = [TensorType(f32, [4, 5]), TensorType(f32, [5, 3])]
    computes: list[tensor_expr.ComputeOp] = []
    module, _ = _function("mm", types, lambda b, args: computes.append(_matmul(b, *args)))
    module.verify()
    (compute,) = computes
    a, b = module.body.block.first_op.body.block.args  # type: ignore[union-attr]
    assert compute.block_name.data == "matmul"
    assert compute.tag == StringAttr("matmul")
    assert compute.get_reduce_extents() == (5,)
    assert compute.init == FloatAttr(0.0, f32)
    assert len(compute.spatial_indices) == 2 and len(compute.reduction_indices) == 1
    assert all(isinstance(arg.type, IndexType) for arg in compute.body.block.args)
    assert compute.read_tensors() == [a, b]
    assert isinstance(compute.yielded.owner, arith.MulfOp)
    assert is_side_effect_free(compute)


def test_compute_text_round_trips() -> None:
    types = [TensorType(f32, [4, 5]), TensorType(f32, [5, 3])]
    module, _ = _function("mm", types, lambda b, args: _matmul(b, *args))
    text = str(module)
    assert 'tensor_expr.compute "matmul" tag "matmul" reduce [5] sum init' in text
    assert str(_parse(text)) == text


def test_compute_build_types_an_integer_init_with_the_element_type() -> None:
    def body(b: Builder, spatial: list[SSAValue], reduction: list[SSAValue]) -> SSAValue:
        return b.insert(arith.ConstantOp(IntegerAttr(1, i32))).result

    compute = tensor_expr.ComputeOp.build(
        "count", TensorType(i32, [2]), body, reduce_extents=[7], combiner="sum", init=0
    )
    compute.verify()
    assert compute.init == IntegerAttr(0, i32)


def test_compute_build_without_reduction_has_no_combiner() -> None:
    def body(b: Builder, spatial: list[SSAValue], reduction: list[SSAValue]) -> SSAValue:
        assert reduction == []
        return b.insert(arith.ConstantOp(FloatAttr(1.0, f32))).result

    compute = tensor_expr.ComputeOp.build("ones", TensorType(f32, [2, 2]), body)
    compute.verify()
    assert compute.combiner is None and compute.init is None
    assert compute.get_reduce_extents() == ()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reduce_extents": [3]}, "expected a combiner and an init with 1 reduction extents"),
        ({"combiner": "sum", "init": 0.0}, "expected no combiner and no init"),
        ({"reduce_extents": [3], "combiner": "mean", "init": 0.0}, "expected combiner to be"),
        ({"reduce_extents": [3], "combiner": "max", "init": IntegerAttr(0, i32)}, "expected init"),
    ],
)
def test_compute_verifier_rejects_inconsistent_reductions(
    kwargs: dict[str, object], message: str
) -> None:
    def body(b: Builder, spatial: list[SSAValue], reduction: list[SSAValue]) -> SSAValue:
        return b.insert(arith.ConstantOp(FloatAttr(1.0, f32))).result

    compute = tensor_expr.ComputeOp.build("c", TensorType(f32, [2]), body, **kwargs)
    with pytest.raises(VerifyException, match=message):
        compute.verify()


def test_compute_verifier_rejects_a_yield_of_the_wrong_type() -> None:
    def body(b: Builder, spatial: list[SSAValue], reduction: list[SSAValue]) -> SSAValue:
        return b.insert(arith.ConstantOp(FloatAttr(1.0, f16))).result

    compute = tensor_expr.ComputeOp.build("c", TensorType(f32, [2]), body)
    with pytest.raises(VerifyException, match="yielded type to be the element type f32"):
        compute.verify()


def test_read_result_is_the_element_type_and_checks_rank() -> None:
    tensor = Block(arg_types=[TensorType(f32, [2, 3])]).args[0]
    reads: list[tensor_expr.ReadOp] = []

    def body(b: Builder, spatial: list[SSAValue], reduction: list[SSAValue]) -> SSAValue:
        reads.append(b.insert(tensor_expr.ReadOp(tensor, spatial)))
        return reads[0].result

    compute = tensor_expr.ComputeOp.build("c", TensorType(f32, [2]), body)
    assert reads[0].result.type == f32
    with pytest.raises(VerifyException, match="expected 2 indices for tensor<2x3xf32>, found 1"):
        compute.verify()


# ----------------------------------------------------------------------------------------------
# loop
# ----------------------------------------------------------------------------------------------


def _matmul_loops(b: Builder, args: list[SSAValue]) -> None:
    a, bb, c = args
    c0, c1 = _index(b, 0), _index(b, 1)
    ubs = {"i": _index(b, 4), "j": _index(b, 3), "k": _index(b, 5)}
    ivs: dict[str, SSAValue] = {}

    def statement(body: Builder) -> None:
        i, j, k = ivs["i"], ivs["j"], ivs["k"]
        x = body.insert(loop.LoadOp(a, [i, k])).result
        y = body.insert(loop.LoadOp(bb, [k, j])).result
        acc = body.insert(loop.LoadOp(c, [i, j])).result
        prod = body.insert(arith.MulfOp(x, y)).result
        body.insert(loop.StoreOp(body.insert(arith.AddfOp(acc, prod)).result, c, [i, j]))

    def nest(axes: list[str]) -> Callable[[Builder, SSAValue], None]:
        def fill(body: Builder, iv: SSAValue) -> None:
            ivs[axes[0]] = iv
            if len(axes) > 1:
                body.insert(loop.ForOp.build(c0, ubs[axes[1]], c1, axes[1], nest(axes[1:])))
            else:
                body.insert(
                    loop.BlockOp.build("matmul", [a, bb], [c], statement, ["i", "j"], ["k"])
                )

        return fill

    b.insert(loop.ForOp.build(c0, ubs["i"], c1, "i", nest(["i", "j", "k"]), kind="parallel"))


def test_loop_constructors_build_a_valid_matmul_nest() -> None:
    types = [MemRefType(f32, [4, 5]), MemRefType(f32, [5, 3]), MemRefType(f32, [4, 3])]
    module, function = _function("mm", types, _matmul_loops)
    module.verify()
    fors = [op for op in function.walk() if isinstance(op, loop.ForOp)]
    assert [op.axis.data for op in fors] == ["i", "j", "k"]
    assert fors[0].kind.data == "parallel" and fors[1].kind.data == "serial"
    assert [op.constant_bounds() for op in fors] == [(0, 4, 1), (0, 3, 1), (0, 5, 1)]
    assert [op.trip_count() for op in fors] == [4, 3, 5]
    assert all(isinstance(op.body.block.last_op, loop.YieldOp) for op in fors)
    (block,) = [op for op in function.walk() if isinstance(op, loop.BlockOp)]
    assert block.block_name.data == "matmul"
    assert [axis.data for axis in block.reduction_axes] == ["k"]
    text = str(module)
    assert 'loop.block "matmul" reads(' in text and 'spatial ["i", "j"] reduction ["k"]' in text
    assert str(_parse(text)) == text


def test_for_trip_count_rounds_up_and_needs_constants() -> None:
    def build(b: Builder, args: list[SSAValue]) -> None:
        c0, c10, c3 = _index(b, 0), _index(b, 10), _index(b, 3)
        b.insert(loop.ForOp(c0, c10, c3, Block(arg_types=[IndexType()]), "i"))
        b.insert(loop.ForOp(c0, args[0], c3, Block(arg_types=[IndexType()]), "j"))

    _, function = _function("f", [IndexType()], build)
    first, second = [op for op in function.walk() if isinstance(op, loop.ForOp)]
    assert first.trip_count() == 4
    assert second.constant_bounds() is None and second.trip_count() is None


@pytest.mark.parametrize(
    ("kind", "thread", "message"),
    [
        ("bound", None, "expected a thread for kind bound"),
        ("serial", "threadIdx.x", "expected no thread for kind serial"),
        ("bound", "lane.x", "expected thread to be one of"),
        ("tiled", None, "expected kind to be one of"),
    ],
)
def test_for_verifier_checks_kind_and_thread(kind: str, thread: str | None, message: str) -> None:
    index = Block(arg_types=[IndexType()]).args[0]
    op = loop.ForOp(index, index, index, Block(arg_types=[IndexType()]), "i", kind, thread)
    with pytest.raises(VerifyException, match=message):
        op.verify()


def test_bound_for_with_thread_verifies() -> None:
    index = Block(arg_types=[IndexType()]).args[0]
    op = loop.ForOp(index, index, index, Block(arg_types=[IndexType()]), "i", "bound", "blockIdx.y")
    op.verify()
    assert op.thread == StringAttr("blockIdx.y")


def test_block_verifier_requires_stores_to_be_declared() -> None:
    buffers = Block(arg_types=[MemRefType(f32, [4]), MemRefType(f32, [4]), IndexType(), f32])
    a, c, i, v = buffers.args
    block = loop.BlockOp.build("b", [], [c], lambda b: b.insert(loop.StoreOp(v, a, [i])))
    with pytest.raises(VerifyException, match="to be in its writes"):
        block.verify()
    loop.BlockOp.build("b", [], [a], lambda b: b.insert(loop.StoreOp(v, a, [i]))).verify()


def test_load_defaults_to_the_element_type_and_allows_vectors() -> None:
    memref, i = Block(arg_types=[MemRefType(f32, [4, 16]), IndexType()]).args
    assert loop.LoadOp(memref, [i, i]).result.type == f32
    vector = loop.LoadOp(memref, [i, i], VectorType(f32, [8]))
    vector.verify()
    with pytest.raises(VerifyException, match="vector width at most the last dimension 16"):
        loop.LoadOp(memref, [i, i], VectorType(f32, [32])).verify()


def test_memory_effects_of_loop_ops() -> None:
    memref, i, v = Block(arg_types=[MemRefType(f32, [4]), IndexType(), f32]).args
    load = loop.LoadOp(memref, [i])
    store = loop.StoreOp(v, memref, [i])
    alloc = loop.AllocOp(MemRefType(f32, [4]), "local")
    assert {e.kind for e in get_effects(load) or ()} == {MemoryEffectKind.READ}
    assert {e.kind for e in get_effects(store) or ()} == {MemoryEffectKind.WRITE}
    assert is_trivially_dead(load) and not is_trivially_dead(store)
    assert is_trivially_dead(alloc)  # an unused allocation may be removed
    assert is_side_effect_free(loop.YieldOp())
    block = loop.BlockOp("b", [], [memref], [])
    assert not is_trivially_dead(block)  # a block is never dead code
    loop_op = loop.ForOp(i, i, i, Block([store], arg_types=[IndexType()]), "i")
    assert not is_trivially_dead(loop_op)


def test_dce_keeps_stores_and_removes_unused_loads() -> None:
    module = _parse(
        """
        func.func @f(%A: memref<4xf32>, %i: index, %v: f32) {
          %b = loop.alloc local : memref<4xf32>
          %x = loop.load %A[%i] : memref<4xf32> -> f32
          loop.store %v, %A[%i] : f32 -> memref<4xf32>
          func.return
        }
        """
    )
    DeadCodeElimination().apply(make_context(), module)
    text = str(module)
    assert "loop.load" not in text and "loop.alloc" not in text and "loop.store" in text


def test_alloc_scope_and_static_shape() -> None:
    alloc = loop.AllocOp(MemRefType(f32, [2, 2]), "shared")
    alloc.verify()
    assert alloc.scope.data == "shared"
    assert loop.AllocOp(MemRefType(f32, [2])).scope.data == "global"
    with pytest.raises(VerifyException, match="expected one size operand per dynamic dim"):
        loop.AllocOp(MemRefType(f32, [-1])).verify()
    with pytest.raises(VerifyException, match="expected a static shape in scope 'local'"):
        loop.AllocOp(MemRefType(f32, [-1]), "local").verify()


# ----------------------------------------------------------------------------------------------
# target_gpu
# ----------------------------------------------------------------------------------------------


def test_kernel_module_and_launch_constructors_verify() -> None:
    buffer_type = MemRefType(f32, [64])
    kernel = target_gpu.KernelOp("fill", [buffer_type, f32])
    out, value = kernel.args
    builder = Builder(InsertPoint.at_end(kernel.body.block))
    tid = builder.insert(target_gpu.ThreadIdOp("x")).result
    builder.insert(loop.StoreOp(value, out, [tid]))
    builder.insert(target_gpu.ReturnOp())
    device = target_gpu.ModuleOp("kernels", [kernel])

    def host(b: Builder, args: list[SSAValue]) -> None:
        one, n = _index(b, 1), _index(b, 64)
        b.insert(target_gpu.LaunchOp("kernels::fill", [one, one, one], [n, one, one], args))

    module, function = _function("host", [buffer_type, f32], host)
    module.body.block.insert_op_before(device, function)
    module.verify()
    (launch,) = [op for op in function.walk() if isinstance(op, target_gpu.LaunchOp)]
    assert launch.kernel == SymbolRefAttr("kernels", ["fill"])
    assert launch.dynamic_shared_memory is None
    assert str(_parse(str(module))) == str(module)


def test_launch_checks_argument_types_against_the_kernel() -> None:
    module = _parse(
        """
        target_gpu.kernel @k(%x: memref<8xf32>) {
          target_gpu.return
        }
        func.func @f(%y: memref<8xf32>) {
          %o = arith.constant 1 : index
          target_gpu.launch @k grid(%o, %o, %o) block(%o, %o, %o) args(%y : memref<8xf32>)
          func.return
        }
        """
    )
    launch = next(op for op in module.walk() if isinstance(op, target_gpu.LaunchOp))
    other = Block(arg_types=[MemRefType(f32, [9])]).args[0]
    launch.operands = [*launch.operands[:6], other]
    with pytest.raises(VerifyException, match="to have type memref<8xf32>, found memref<9xf32>"):
        launch.verify()


def test_launch_needs_three_sizes() -> None:
    one = Block(arg_types=[IndexType()]).args[0]
    with pytest.raises(ValueError, match="3 grid and 3 block sizes"):
        target_gpu.LaunchOp("k", [one], [one, one, one])


def test_shared_alloc_uses_memory_space_3() -> None:
    memref_type = target_gpu.shared_memref_type([32, 32], f32)
    assert target_gpu.is_shared_memref(memref_type)
    assert not target_gpu.is_shared_memref(MemRefType(f32, [32, 32]))
    assert memref_type == _parse_type("memref<32x32xf32, 3>")
    target_gpu.SharedAllocOp(memref_type).verify()
    with pytest.raises(VerifyException, match="memory space 3"):
        target_gpu.SharedAllocOp(MemRefType(f32, [32])).verify()


@pytest.mark.parametrize(
    "op_type",
    [target_gpu.ThreadIdOp, target_gpu.BlockIdOp, target_gpu.BlockDimOp, target_gpu.GridDimOp],
)
def test_dimension_ops_are_pure_index_values(op_type: type[target_gpu.ThreadIdOp]) -> None:
    op = op_type("z")
    op.verify()
    assert op.result.type == IndexType() and is_side_effect_free(op)
    with pytest.raises(VerifyException, match="expected dimension to be one of x, y, z"):
        op_type("w").verify()


def test_barrier_is_never_dead() -> None:
    assert get_effects(target_gpu.BarrierOp()) is None
    assert not is_trivially_dead(target_gpu.BarrierOp())


def _parse_type(text: str) -> Attribute:
    return Parser(make_context(), text).parse_type()


def test_kernel_rejects_tensor_arguments() -> None:
    kernel = target_gpu.KernelOp("k", [TensorType(f32, [4])])
    Builder(InsertPoint.at_end(kernel.body.block)).insert(target_gpu.ReturnOp())
    with pytest.raises(VerifyException, match=re.escape("to be a memref or a scalar")):
        kernel.verify()
