"""dlc-opt for its users: --help, --list-passes, --help-pass, --version, one timing flag, and large
constants elided from the printed IR (tests/filecheck/tools/ checks the same output's layout)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dlc.codegen import TARGETS
from dlc.pipelines import PIPELINES
from dlc.rewrites import get_dlc_passes
from dlc.tools.dlc_opt import main
from dlc.tools.elide_constants import elide_large_constants
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, f32
from xdsl.transforms import get_all_passes as upstream_passes

REPO = Path(__file__).resolve().parent.parent
DLC_OPT = REPO / "tools" / "dlc-opt"


def run(*args: str) -> tuple[int, str, str]:
    """dlc-opt in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()


def first_doc_line(cls: type) -> str:
    return (cls.__doc__ or "").strip().splitlines()[0]


def test_help_lists_dlc_passes_pipelines_and_targets_before_the_options() -> None:
    rc, out, err = run("--help")
    assert rc == 0, err
    text = " ".join(out.split())  # the summaries are wrapped: compare with whitespace collapsed
    for name, factory in get_dlc_passes().items():
        assert f" {name} {first_doc_line(factory())[:30]}" in text, name
    for name, pipeline in PIPELINES.items():
        assert f" {name} {pipeline.summary[:30]}" in text, name
    for name, entry in TARGETS.items():
        assert f" {name} {entry.summary[:30]}" in text, name
    dlc_first = out.index("graph-fold-constants")
    assert dlc_first < out.index("options:") < out.index("upstream xDSL passes")
    upstream = out[out.index("upstream xDSL passes"):]
    assert all(name in upstream for name in upstream_passes()), "every upstream pass is named"


def test_list_passes_shows_every_option_with_its_type_and_default() -> None:
    rc, out, _ = run("--list-passes")
    assert rc == 0
    blocks = re.split(r"\n  (?=\S)", out)  # one block per pass, starting with its name
    for name, factory in get_dlc_passes().items():
        block = next(b for b in blocks if b.split("\n", 1)[0] == name)
        for field in dataclasses.fields(factory()):
            assert f"\n      {field.name.replace('_', '-')}: " in block, (name, field.name)
    for name in PIPELINES:
        assert any(b.split("\n", 1)[0] == name for b in blocks), name
    assert "max-depth: int = 256" in out and "decompose: bool = true" in out


def test_help_pass_prints_the_whole_docstring_and_the_options() -> None:
    rc, out, _ = run("--help-pass", "graph-fuse-ops")
    assert rc == 0
    doc = get_dlc_passes()["graph-fuse-ops"]().__doc__ or ""
    text = " ".join(out.split())
    assert " ".join(doc.split()) in text
    assert "max-depth: int = 256" in out
    rc, out, _ = run("--help-pass", "canonicalize")  # upstream passes too
    assert rc == 0 and "canonicalization" in out and "No options." in out


def test_unknown_pass_names_close_matches_and_exits_1() -> None:
    rc, out, err = run("--help-pass", "graph-fuse-op")
    assert (rc, out) == (1, "")
    assert err.startswith("dlc-opt: error: unknown pass 'graph-fuse-op'; did you mean "
                          "'graph-fuse-ops'"), err
    rc, _, err = run("--help-pass", "zzz")
    assert rc == 1 and "unknown pass 'zzz' (dlc-opt --list-passes" in err
    assert "did you mean" not in err and "Traceback" not in err


def test_unknown_pass_in_the_pipeline_names_close_matches(tmp_path: Path) -> None:
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    rc, _, err = run(str(source), "-p", "graph-simplfy")
    assert rc == 1
    assert "Unrecognized passes: ['graph-simplfy']\n  'graph-simplfy': did you mean " \
        "'graph-simplify'" in err, err


def test_version_names_dlc_and_xdsl() -> None:
    from importlib.metadata import version

    rc, out, _ = run("--version")
    assert rc == 0
    assert out.strip() == f"dlc-opt from dlc {version('dlc')}, built on xdsl {version('xdsl')}"


def test_a_normal_run_imports_no_pass_it_does_not_run(tmp_path: Path) -> None:
    """The catalog imports every pass module; only --help and its kin may build it."""
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    script = (
        "import sys\n"
        "from dlc.tools.dlc_opt import main\n"
        f"assert main([{str(source)!r}, '-p', 'graph-simplify']) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith('dlc.rewrites.')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout.strip().splitlines()[-1]
    assert "graph_simplify" in loaded and "graph_fuse_ops" not in loaded, loaded


@pytest.mark.parametrize("flag", ["--timing", "--time-passes"])
def test_one_timing_flag_with_two_names(flag: str, tmp_path: Path) -> None:
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    rc, _, err = run(str(source), "-p", "cse,dce", flag)
    assert rc == 0
    assert "Execution time report" in err and "  cse\n" in err
    _, out, _ = run(str(source), "-p", "cse,dce", flag)
    assert "took" not in out, "xdsl-opt's own timing lines stay off"


def test_help_piped_into_a_closed_reader_is_quiet() -> None:
    """`dlc-opt --help | head -1`: the reader leaves early; no internal error on stderr."""
    proc = subprocess.Popen([sys.executable, str(DLC_OPT), "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""


LARGE = """func.func @f() -> (tensor<17xf32>, tensor<4x8xf32>) {
  %a = graph.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
                             13.0, 14.0, 15.0, 16.0]> : tensor<17xf32>
  %b = graph.constant dense<2.0> : tensor<4x8xf32>
  func.return %a, %b : tensor<17xf32>, tensor<4x8xf32>
}
"""


def test_large_constants_are_elided_unless_told_otherwise(tmp_path: Path) -> None:
    source = tmp_path / "f.mlir"
    source.write_text(LARGE)
    _, out, _ = run(str(source))
    assert "%a = graph.constant dense_resource<__elided__> : tensor<17xf32>" in out
    assert "%b = graph.constant dense<2.000000e+00> : tensor<4x8xf32>" in out  # a splat
    _, out, _ = run(str(source), "--elide-elementsattrs-if-larger=17")
    assert "__elided__" not in out and "1.600000e+01]" in out
    _, out, _ = run(str(source), "--elide-elementsattrs-if-larger", "0")
    assert "__elided__" not in out
    _, out, _ = run(str(source), "-o", str(tmp_path / "out.mlir"))
    assert "dense_resource<__elided__>" in (tmp_path / "out.mlir").read_text()


def test_printing_elided_leaves_the_module_alone() -> None:
    constant = DenseIntOrFPElementsAttr.from_list(TensorType(f32, [20]), [float(i) for i in
                                                                          range(20)])
    from dlc.dialects.graph import ConstantOp

    module = ModuleOp([ConstantOp(constant)])
    printed = elide_large_constants(module, 16)
    assert printed is not module
    original = next(iter(module.ops))
    assert isinstance(original, ConstantOp) and original.value == constant
    assert elide_large_constants(module, 20) is module
    assert elide_large_constants(module, 0) is module


def test_reading_elided_ir_back_is_an_error_at_its_line(tmp_path: Path) -> None:
    source = tmp_path / "f.mlir"
    source.write_text(LARGE)
    rc, elided, _ = run(str(source))
    assert rc == 0
    chunks = tmp_path / "chunks.mlir"
    chunks.write_text("// a comment: dense_resource<__elided__>\n" + VALID_CHUNK + elided)
    for _ in range(2):  # xDSL renames an already declared handle: __elided___0 the second time
        rc, _, err = run(str(chunks), "--split-input-file")
        assert rc == 1
        line = 2 + VALID_CHUNK.count("\n") + elided.splitlines().index(
            next(x for x in elided.splitlines() if "__elided__" in x))
        assert f"chunks.mlir:{line}:" in err, err
        assert "'graph.constant' op holds an elided constant" in err
        assert "--elide-elementsattrs-if-larger=0" in err and "Traceback" not in err


VALID_CHUNK = "func.func @g() {\n  func.return\n}\n// -----\n"
