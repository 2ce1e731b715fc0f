"""The error `dlc.compile` raises for what it cannot compile (no xDSL or llvmlite import here)."""


class CompileError(ValueError):
    """`dlc.compile` was given something it cannot compile: an unknown target or pipeline, a
    missing pass, an unreadable model, or IR that a pass or LLVM rejects (the message says which,
    naming the op)."""
