"""Bad input to the ONNX frontend and dlc-translate: one clear error naming the node and op (or
the file, or the input), exit code 1, no traceback, no partial output file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from dlc.frontends.onnx import OnnxImportError, import_onnx, load_model
from dlc.tools.dlc_translate import main as translate_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import AttributeProto, TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

from tests.onnx.models import conv_block, model, shape_chain, tensor

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "dlc-translate"


def run_tool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def assert_clean_failure(result: subprocess.CompletedProcess[str], output: Path,
                         *fragments: str) -> None:
    """Exit 1, one `dlc-translate: error:` diagnostic holding `fragments`, no output file."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("dlc-translate: error: "), result.stderr
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert not output.exists()


def import_error(proto: onnx.ModelProto | Path, **kwargs: object) -> str:
    with pytest.raises(OnnxImportError) as info:
        import_onnx(proto, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# The file
# ---------------------------------------------------------------------------------------------


def test_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "truncated.onnx"
    path.write_bytes(conv_block().SerializeToString()[:200])
    assert f"cannot parse '{path}' as an ONNX model" in import_error(path)
    out = tmp_path / "out.mlir"
    assert_clean_failure(run_tool("--import-onnx", path, "-o", out), out, "cannot parse")


def test_garbage_and_empty_files(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(bytes(range(256)) * 4)
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    assert "cannot parse" in import_error(garbage)
    assert "is not an ONNX model: it has no graph" in import_error(empty)


def test_missing_file(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    result = run_tool("--import-onnx", tmp_path / "nope.onnx", "-o", out)
    assert_clean_failure(result, out, "cannot read ONNX model", "No such file")


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------


def test_all_unsupported_ops_in_one_error(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("Hardmax", ["a"], ["b"], name="hm"),
        helper.make_node("LinearRegressor", ["b"], ["c"], name="lr", domain="ai.onnx.ml"),
        helper.make_node("Hardmax", ["c"], ["y"], name="hm2"),
    ]
    proto = model(nodes, [tensor("x", [2, 3])], [tensor("y", [2, 3])])
    proto.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    message = import_error(proto)
    assert message.startswith("unsupported ONNX ops in 3 nodes:")
    assert "Hardmax (domain 'ai.onnx', opset 17) in node 'hm'" in message
    assert "LinearRegressor (domain 'ai.onnx.ml', opset 3) in node 'lr'" in message
    assert "in node 'hm2'" in message and "'ok'" not in message
    path, out = tmp_path / "m.onnx", tmp_path / "out.mlir"
    onnx.save(proto, path)
    assert_clean_failure(run_tool("--import-onnx", path, "-o", out), out, "node 'lr'")


def test_op_too_new_for_the_model_opset() -> None:
    gelu = helper.make_node("Gelu", ["x"], ["y"], name="g")
    proto = model([gelu], [tensor("x", [2])], [tensor("y", [2])], opset=20)
    proto.opset_import[0].version = 17
    assert ("Gelu (domain 'ai.onnx', opset 17) in node 'g': dlc converts it from opset 20"
            in import_error(proto))


@pytest.mark.parametrize("opset", [6, 99])
def test_opset_out_of_range(opset: int, tmp_path: Path) -> None:
    proto = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [2])],
                  [tensor("y", [2])])
    proto.opset_import[0].version = opset
    assert f"model opset {opset} (domain 'ai.onnx') is out of range" in import_error(proto)
    path, out = tmp_path / "m.onnx", tmp_path / "out.mlir"
    onnx.save(proto, path)
    assert_clean_failure(run_tool("--import-onnx", path, "-o", out), out, "out of range")


def test_dynamic_dimension_names_the_input_and_the_fix(tmp_path: Path) -> None:
    message = import_error(conv_block(batch="N"))
    assert "graph input 'x' has dynamic dimension 0 ('N')" in message
    assert "first used by node 'conv1' (Conv)" in message
    assert "--input-shape x=1x3x8x8" in message
    path, out = tmp_path / "m.onnx", tmp_path / "out.mlir"
    onnx.save(conv_block(batch="N"), path)
    assert_clean_failure(run_tool("--import-onnx", path, "-o", out), out, "--input-shape")
    fixed = run_tool("--import-onnx", path, "-o", out, "--input-shape", "x=4x3x8x8")
    assert fixed.returncode == 0, fixed.stderr
    assert "tensor<4x10xf32>" in out.read_text()


@pytest.mark.parametrize("shape,message", [
    ("x=1x3x8", "has rank 3, but the model declares rank 4"),
    ("x=2x3x8x8", "has 2 at dimension 0, but the model declares 1"),
    ("y=1x3x8x8", "input shape given for 'y', which is not a graph input"),
    ("x=1xthreex8x8", "dimensions must be integers"),
    ("1x3x8x8", "expected NAME=D0xD1x..."),
])
def test_bad_input_shapes(shape: str, message: str, tmp_path: Path) -> None:
    path, out = tmp_path / "m.onnx", tmp_path / "out.mlir"
    onnx.save(conv_block(), path)
    assert_clean_failure(run_tool("--import-onnx", path, "-o", out, "--input-shape", shape),
                         out, message)


def test_value_needed_at_import_time() -> None:
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="rs")]
    proto = model(nodes, [tensor("x", [2, 6]), tensor("shape", [2], TensorProto.INT64)],
                  [tensor("y", [3, 4])])
    assert ("node 'rs' (Reshape, opset 17): expected input 1 ('shape', the shape) to be known "
            "at import time") in import_error(proto)


def test_converter_errors_name_node_and_op() -> None:
    nodes = [helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[0, 0])]
    proto = model(nodes, [tensor("x", [2, 3])], [tensor("y", [3, 2])])
    assert import_error(proto) == ("node 'tr' (Transpose, opset 17): expected perm to be a "
                                   "permutation of 0..1, found [0, 0]")


@pytest.mark.parametrize(
    ("data", "indices", "batch", "values", "message"),
    [([4, 5], [3, 3], 0, None, "expected the indices' last dim in [1, 2] for data [4, 5] and "
      "batch_dims 0, found 3"),
     ([2, 5], [3, 1], 1, None, "expected the first 1 dims of the indices [3, 1] to be the "
      "data's [2]"),
     ([4, 5], [1, 2], 0, np.array([[4, 0]]), "expected index tuples within the dims [4, 5]")],
)
def test_gather_nd_errors_name_the_node(data: list[int], indices: list[int], batch: int,
                                        values: np.ndarray | None, message: str) -> None:
    node = helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd", batch_dims=batch)
    inputs = [tensor("x", data)]
    if values is None:
        inputs.append(tensor("i", indices, TensorProto.INT64))
    proto = model([node], inputs, [tensor("y", ["n"])],
                  None if values is None else {"i": values.astype(np.int64)})
    assert import_error(proto) == f"node 'gnd' (GatherND, opset 17): {message}"


def test_success_writes_the_output_file(tmp_path: Path) -> None:
    path, out = tmp_path / "m.onnx", tmp_path / "out.mlir"
    onnx.save(shape_chain(), path)
    assert translate_main(["--import-onnx", str(path), "-o", str(out)]) == 0
    assert "graph.reshape" in out.read_text()
    assert load_model(path).graph.name == "test"


def test_weights_in_an_external_file(tmp_path: Path) -> None:
    """A model whose initializers live beside it imports with their values; the same model
    without the weights file is a clear error."""
    expected = str(import_onnx(conv_block()))
    path = tmp_path / "m.onnx"
    onnx.save(conv_block(), path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="m.weights", size_threshold=0)
    assert (tmp_path / "m.weights").exists()
    assert str(import_onnx(path)) == expected
    (tmp_path / "m.weights").unlink()
    assert "external data" in import_error(path)


@pytest.mark.parametrize("source", ["file", "proto"])
def test_checker_errors_from_a_file_or_a_proto(source: str, tmp_path: Path) -> None:
    """onnx's checker runs on a model read from a file (on the file's bytes) as on a ModelProto."""
    proto = conv_block()
    for value in ("a", "b"):
        entry = proto.metadata_props.add()
        entry.key, entry.value = "author", value
    path = tmp_path / "m.onnx"
    path.write_bytes(proto.SerializeToString())
    message = import_error(path if source == "file" else proto)
    assert message.startswith("invalid ONNX model"), message


# ---------------------------------------------------------------------------------------------
# Mutated models
# ---------------------------------------------------------------------------------------------


def _mutants() -> st.SearchStrategy[tuple[str, onnx.ModelProto | bytes, str | None]]:
    """(kind, mutated model or bytes, name of the node mutated or None)."""
    bases = [conv_block(), shape_chain()]

    @st.composite
    def mutate(draw: st.DrawFn) -> tuple[str, onnx.ModelProto | bytes, str | None]:
        proto = onnx.ModelProto()
        proto.CopyFrom(draw(st.sampled_from(bases)))
        kind = draw(st.sampled_from(["drop_input", "attribute_type", "input_shape",
                                     "initializer_shape", "garbage", "truncate"]))
        nodes = proto.graph.node
        node = nodes[draw(st.integers(0, len(nodes) - 1))]
        if kind == "drop_input":
            index = draw(st.integers(0, len(node.input) - 1))
            if draw(st.booleans()):
                node.input[index] = ""
            else:
                del node.input[index]
            return kind, proto, node.name
        if kind == "attribute_type":
            if not node.attribute:
                node.attribute.append(helper.make_attribute("axis", 1))
            attr = node.attribute[draw(st.integers(0, len(node.attribute) - 1))]
            replacement = draw(st.sampled_from([1.5, "text", [1.0, 2.0], 7]))
            new = helper.make_attribute(attr.name, replacement)
            if new.type == attr.type:
                new = helper.make_attribute(attr.name, "text")
            attr.CopyFrom(new)
            assert attr.type != AttributeProto.UNDEFINED
            return kind, proto, node.name
        if kind == "input_shape":
            dims = proto.graph.input[0].type.tensor_type.shape.dim
            dims[draw(st.integers(0, len(dims) - 1))].dim_value = draw(st.integers(1, 9))
            return kind, proto, None
        if kind == "initializer_shape":
            init = proto.graph.initializer[draw(st.integers(0, len(proto.graph.initializer) - 1))]
            array = onnx.numpy_helper.to_array(init)
            grown = np.concatenate([array.reshape(-1), array.reshape(-1)[:1]])
            init.CopyFrom(onnx.numpy_helper.from_array(grown, init.name))
            return kind, proto, None
        data = bytearray(proto.SerializeToString())
        if kind == "truncate":
            return kind, bytes(data[: draw(st.integers(0, len(data) - 1))]), None
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return kind, bytes(data), None

    return mutate()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutant=_mutants())
def test_mutated_models_fail_cleanly_or_import(
    mutant: tuple[str, onnx.ModelProto | bytes, str | None],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    kind, proto, node_name = mutant
    if isinstance(proto, bytes):
        path = tmp_path_factory.mktemp("mutant") / "m.onnx"
        path.write_bytes(proto)
        source: onnx.ModelProto | Path = path
    else:
        source = proto
    try:
        module = import_onnx(source)
    except OnnxImportError as e:
        message = str(e)
        assert message and "Traceback" not in message
        if kind in ("drop_input", "attribute_type"):
            # The error names a node and its op: the mutated one, or the one where the mutation
            # (which may leave a valid model, e.g. a Concat with one input fewer) shows.
            assert re.search(r"node '[^']*' \(\w+|node producing '[^']*' \(\w+", message), message
            if kind == "attribute_type":
                assert f"'{node_name}'" in message, message
        return
    assert isinstance(module, ModuleOp)
    module.verify()
    assert kind not in ("attribute_type", "initializer_shape"), "a mutated model was accepted"


@pytest.mark.parametrize("kind", ["truncate", "attribute_type", "initializer_shape"])
def test_mutated_models_through_the_tool(kind: str, tmp_path: Path) -> None:
    proto = conv_block()
    if kind == "attribute_type":
        conv = proto.graph.node[0]
        conv.attribute[0].CopyFrom(helper.make_attribute("pads", "1,1,1,1"))
        data = proto.SerializeToString()
    elif kind == "initializer_shape":
        proto.graph.initializer[0].dims[0] = 5
        data = proto.SerializeToString()
    else:
        data = proto.SerializeToString()[:-7]
    path, out = tmp_path / "m.onnx", tmp_path / "out.mlir"
    path.write_bytes(data)
    assert_clean_failure(run_tool("--import-onnx", path, "-o", out), out)
