"""dlc-opt on bad input: a diagnostic with a location, exit code 1, never a traceback or a hang."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from dlc.tools.dlc_opt import main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
DLC_OPT = REPO / "tools" / "dlc-opt"

VALID = """\
func.func @f(%a: i32, %b: f32) -> i32 {
  %c = arith.addi %a, %a : i32
  %d = arith.mulf %b, %b : f32
  func.return %c : i32
}
"""


def corpus() -> list[str]:
    """Valid IR to mutate: the small example above and every dialect's ops.mlir."""
    texts = [VALID]
    for path in sorted((REPO / "tests" / "filecheck" / "dialects").glob("*/ops.mlir")):
        body = "\n".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("//"))
        texts.extend(chunk for chunk in body.split("// -----") if chunk.strip())
    return texts


def run_in_process(text: str, tmp_path: Path, *args: str) -> tuple[int, str]:
    src = tmp_path / "input.mlir"
    src.write_text(text)
    import contextlib
    import io

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        rc = main([str(src), *args])
    return rc, err.getvalue()


def run_tool(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DLC_OPT), *args], input=stdin, capture_output=True, text=True,
        timeout=60)


CASES = {
    "malformed": ("func.func @f(%a: i32 {\n", "input.mlir:2:1"),
    "unknown_op": ("func.func @f() {\n  \"nodialect.op\"() : () -> ()\n  func.return\n}\n",
                   "nodialect.op"),
    "type_mismatch": ("func.func @f(%a: i32) -> f32 {\n  func.return %a : i32\n}\n",
                      "Operation does not verify"),
    "undefined_value": ("func.func @f() -> i32 {\n  func.return %x : i32\n}\n", "%x"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_ir_gives_a_diagnostic(name: str, tmp_path: Path) -> None:
    text, expected = CASES[name]
    rc, err = run_in_process(text, tmp_path)
    assert rc == 1
    assert "error" in err and expected in err, err
    assert "Traceback" not in err


def test_bad_pipeline_and_target(tmp_path: Path) -> None:
    for args, expected in [
        (("-p", "no-such-pass"), "Unrecognized passes"),
        (("-p", "canonicalize{bogus=1}"), "bogus"),
        (("-p", "canonicalize{"), "invalid pass pipeline"),
        (("-t", "no-such-target"), "invalid choice"),
    ]:
        rc, err = run_in_process(VALID, tmp_path, *args)
        assert rc == 1, args
        assert expected in err and "Traceback" not in err, (args, err)


def test_subprocess_exit_code_and_no_partial_output(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    proc = run_tool("-", "-o", str(out), stdin="func.func @f(%a: i32 {\n")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "error" in proc.stderr
    assert not out.exists(), "a failed run must not leave an output file"
    ok = run_tool("-", "-o", str(out), stdin=VALID)
    assert ok.returncode == 0, ok.stderr
    assert "arith.addi" in out.read_text()


def test_unterminated_string_literal_is_reported_at_once() -> None:
    """A string literal cut by a newline (xDSL 0.75's lexer backtracked exponentially on it: a
    mutated dense constant hung this file's fuzz test) is a parse error, in a subprocess that
    must finish within `run_tool`'s timeout."""
    text = 'func.func @f() {\n  %0 = graph.constant dense<"0x' + "0A" * 64 + '\n}\n'
    proc = run_tool("-", stdin=text)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "closing string literal" in proc.stderr, proc.stderr


def test_unknown_file_extension_is_an_error_unless_the_format_is_named(tmp_path: Path) -> None:
    source = tmp_path / "kernel.txt"
    source.write_text(VALID)
    proc = run_tool(str(source))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "unrecognized file extension '.txt'" in proc.stderr, proc.stderr
    named = run_tool(str(source), "--frontend", "mlir")
    assert named.returncode == 0, named.stderr
    assert "arith.addi" in named.stdout


def test_missing_input_file() -> None:
    proc = run_tool("/no/such/file.mlir")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "/no/such/file.mlir" in proc.stderr


def _mutate(text: str, data: st.DataObject) -> str:
    kind = data.draw(st.sampled_from(["truncate", "shuffle", "retype", "delete", "duplicate"]))
    tokens = text.split(" ")
    if kind == "truncate":
        return text[: data.draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == "shuffle" and len(tokens) > 1:
        i = data.draw(st.integers(0, len(tokens) - 1))
        j = data.draw(st.integers(0, len(tokens) - 1))
        tokens[i], tokens[j] = tokens[j], tokens[i]
        return " ".join(tokens)
    if kind == "retype":
        for old, new in (("f32", "i1"), ("i32", "f64"), ("index", "f16"), ("tensor<", "memref<")):
            if old in text:
                return text.replace(old, new, 1)
    if kind == "duplicate" and len(tokens) > 1:
        i = data.draw(st.integers(0, len(tokens) - 1))
        return " ".join(tokens[: i + 1] + tokens[i:])
    i = data.draw(st.integers(0, max(0, len(tokens) - 1)))
    return " ".join(tokens[:i] + tokens[i + 1:])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_ir_never_crashes(data: st.DataObject, tmp_path: Path) -> None:
    source = data.draw(st.sampled_from(corpus()))
    mutated = _mutate(source, data)
    rc, err = run_in_process(mutated, tmp_path)
    assert rc in (0, 1)
    assert "Traceback" not in err
    if rc == 1:
        assert "error" in err


def test_mutated_ir_in_a_subprocess_exits_1_without_traceback() -> None:
    for text in ("func.func @f(", "func.func @f() {\n  %0 = graph.relu\n}", "}}}", "\x00\xff"):
        proc = run_tool("-", stdin=text)
        assert proc.returncode == 1, text
        assert "Traceback" not in proc.stderr and "error" in proc.stderr, proc.stderr
