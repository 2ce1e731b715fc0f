"""Lint is part of the suite: ruff (pycodestyle, pyflakes, isort, bugbear, pyupgrade and McCabe
complexity, configured in pyproject.toml) finds nothing in the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(REPO)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
