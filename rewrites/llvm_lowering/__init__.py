"""Patterns that lower dlc's loop-level IR to the llvm dialect (MLIR's `*ToLLVM` pattern sets).

One module per source dialect (`func`, `cf`, `arith`, `math`, `index`, `memref`, `vector`, `loop`),
each exposing its pattern set as a function so that other passes can reuse it; `common` holds the
type lowering and the helpers every pattern shares. `rewrites.convert_loop_to_llvm` assembles them.
"""
