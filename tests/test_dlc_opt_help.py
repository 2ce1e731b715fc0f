"""dlc-opt for its users: --help, --list-passes, --help-pass, --version and one timing flag
(tests/filecheck/tools/ checks the same output's layout)."""

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
