"""A fix for xDSL 0.75's lexer: string literals are matched in linear time.

xDSL's `MLIRLexer` matches a string literal with `"(?:[^"\\...]+|\\...)*"`: a repetition inside
a repetition, which a backtracking regex engine retries in every way of splitting the literal
when the closing quote is missing. A 40-character literal cut by a newline then takes hours
(each added character doubles the time), so `dlc-opt` hung on such input instead of reporting
it. The same language matched with possessive repetitions (Python 3.11+) never backtracks into
the literal: an unterminated one fails at once, and xDSL reports "End of file reached before
closing string literal". Counterpart: MLIR's hand-written lexer, which scans a literal once.
"""

from __future__ import annotations

import re

from xdsl.utils.mlir_lexer import MLIRLexer

STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""What xDSL's lexer accepts as a string literal (same escapes), without backtracking."""


def use_linear_time_string_literals() -> None:
    """Makes xDSL's `MLIRLexer` match string literals with `STRING_LITERAL` (idempotent)."""
    MLIRLexer._unescaped_characters_regex = STRING_LITERAL  # noqa: SLF001 - see module docstring
