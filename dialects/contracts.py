"""The `dlc.*` attributes that passes, the driver, the tuner and the emitters exchange: each
declared once, with who writes it and who reads it (MLIR's discardable attributes, named by a
dialect prefix).

Bottom layer: imports nothing of dlc, so every layer may read it.
"""

from __future__ import annotations

TARGET_ATTR = "dlc.target"
"""`StringAttr` on a `builtin.module`: the target string it is compiled for (`llvm -mcpu=znver3
-num-cores=2`, `cuda -arch=sm_90`; grammar in `dlc.target.parse`), MLIR's DLTI target spec.
Written by the driver before the pipeline runs (its resolved `host`), by `dlc-opt --target`, by
the tuner's builders, and by `convert-loop-to-llvm` (the target it lowered for). Read by every
pass with a `target` option that is left empty (`loop-default-schedule`, `convert-loop-to-llvm`,
`loop-interpret-transforms`, the GPU passes) and by the `-t llvm` emitter; without it they use
`dlc.target.DEFAULT_CPU_TARGET` / `DEFAULT_GPU_TARGET`. Also on a `target_gpu.module`: the CUDA
target its kernels were lowered for (written by `target-gpu-lower-to-nvvm`, read by `-t ptx`)."""

NUM_OUTPUTS_ATTR = "dlc.num_outputs"
"""`IntegerAttr` on a destination-passing function: how many of its trailing memref arguments
are outputs. Written by `convert-tensor-expr-to-loop`; read by `loop-plan-memory`,
`loop-dedup-functions`, `convert-loop-to-llvm` (the entry ABI), the loop interpreter, the tuner
and the GPU host plan."""

DIM_SIZES_ATTR = "dlc.dim_sizes"
"""`AffineMapAttr` on an output argument of a destination-passing function whose dynamic dims
the function computes from its inputs' sizes: `affine_map<()[s0, s1] -> (s0 - 2, s1 - 2)>`, one
result per dynamic dim of the output, the symbols the dynamic dims of the memref inputs in
`dlc.dim_args` order (the shape function, `rewrites.output_sizes`). Written by
`convert-tensor-expr-to-loop`; read by `convert-loop-to-llvm`, which puts it in the metadata for
the runtime to allocate and check outputs."""

SIZE_CHECKS_ATTR = "dlc.size_checks"
"""On a function over runtime sizes: what its inputs' sizes must satisfy, an `ArrayAttr` of
`DictionaryAttr`s `{sizes = affine_map<()[s0, s1] -> (lhs, rhs)>, kind = "eq" | "ge", what =
"..."}` (lhs equal to rhs, or at least rhs), the symbols those of `dlc.dim_sizes`; `what` names
the op and node that needs it. Written on tensor_expr functions by the compute definitions (a
concat's operands agreeing on their other dims, a window fitting its input); gathered by
`convert-tensor-expr-to-loop` from a function's calls into its own symbols; read by
`convert-loop-to-llvm` into the metadata, which the runtime checks before each call (an
`ExecutableError` instead of reads past a buffer)."""

DIM_ARGS_ATTR = "dlc.dim_args"
"""`IntegerAttr` on a destination-passing function whose memref arguments have dynamic dims: how
many trailing `index` arguments it has after its outputs, the sizes of those dims (passed beside
the bare pointers), memref argument by argument and dim by dim in order (`dialects.loop.
dim_args` pairs them up; a count, so that passes adding or removing static arguments keep it
true). Written by `convert-tensor-expr-to-loop`; read by the loop interpreter,
`loop-dedup-functions` (where the inputs end), and `convert-loop-to-llvm` (the entry ABI)."""

UNSIGNED_ATTR = "dlc.unsigned"
"""`UnitAttr` in a function's argument/result attributes: the integer tensor is unsigned (MLIR's
signless integers do not say). Written by `convert-graph-to-tensor-expr`; read by the
tensor_expr interpreter and `convert-loop-to-llvm` (the metadata's dtypes)."""

ONNX_NODE_ATTR = "onnx_node"
"""`StringAttr` on a graph op (and the computes defined from it): the ONNX node it came from.
Written by the ONNX importer; read by the driver (kernel names in profiles)."""

ONNX_NAME_ATTR = "onnx.name"
"""`StringAttr` in an entry function's argument/result attributes: the ONNX graph input's or
output's name. Written by the ONNX importer; read by `convert-loop-to-llvm` (the names the
runtimes report, `argument_names`)."""

ONNX_NODES_ATTR = "dlc.onnx_nodes"
"""`ArrayAttr` of `StringAttr` on a kernel (then on its calls): the ONNX nodes its computes came
from. Written by the driver after `convert-graph-to-tensor-expr`; moved to the calls by
`loop-dedup-functions`; read by the driver (the profiler's kernel names)."""

CONCAT_AXIS_ATTR = "dlc.concat_axis"
"""`IntegerAttr` on a kernel whose whole body is one concatenation of its inputs, in argument
order, along this axis (in [0, rank)) into its one output. Written by
`convert-graph-to-tensor-expr` when it outlines a fused group that is a lone `graph.concat` of
distinct group inputs; read by `loop-plan-memory`, which places the inputs inside the output
instead of calling the kernel (`concat_aliases`)."""

WORKSPACE_BYTES_ATTR = "dlc.workspace_bytes"
"""`IntegerAttr` on an entry function: the size of its planned workspace. Written by
`loop-plan-memory`; read by the driver (the workspace the runtime allocates)."""

SCHEDULED_ATTR = "dlc.scheduled"
"""`UnitAttr` on a function whose loop nests already have their schedule: the default schedules
(`loop-default-schedule`, `loop-gpu-default-schedule`) leave it alone. Written by those passes
and by applying a tuning log."""

SCAN_ANNOTATION = "dlc.scan"
"""Key (`UnitAttr`) in the `annotations` of a `loop.for`: the time loop of a `tensor_expr.scan`,
whose body is a sequence of loop nests run once per step. Written by
`convert-tensor-expr-to-loop`; read by `loop-default-schedule`, which schedules each nest of the
body as it schedules a function's nests."""

TUNED_ATTR = "dlc.tuned"
"""`StringAttr` on a function scheduled from a tuning log: the workload key of its record.
Written by `loop-apply-tuning-log`; read by the driver's compile statistics."""

UNROLL_FULL_ATTR = "dlc.unroll_full"
"""`UnitAttr` on a lowered loop's branch: unroll it completely (`llvm.loop.unroll.full`).
Written by the LLVM lowering of `unrolled` loops; read by the `-t llvm` emitter."""

GLOBAL_FENCE_ATTR = "dlc.global_fence"
"""`UnitAttr` on a `target_gpu.barrier` that must also order global memory. Written by the GPU
barrier insertion; read by the OpenCL emitter (`CLK_GLOBAL_MEM_FENCE`)."""

KNOB_ATTR = "dlc.knob"
"""`StringAttr` on a transform op of a sketch: the tunable decision it stands for. Written and
read by the tuner's search space."""

PART_ATTR = "dlc.part"
"""`IntegerAttr` on a sketch's split: which factor of a multi-level tile it holds (tuner)."""

CANDIDATES_ATTR = "dlc.candidates"
"""`ArrayAttr` on a knob: the values the search may choose from (tuner)."""

SPLIT_ATTR = "dlc.split"
"""`StringAttr` on a knob whose value is a split's factors (tuner)."""

CONSTANT_ARG_ATTR = "dlc.constant"
"""`UnitAttr` in a kernel's argument attributes: the argument is a constant weight (the tuner
feeds it the model's values, not random data)."""

NVVM_KERNEL_ATTR = "nvvm.kernel"
"""`UnitAttr` on an `llvm.func` of a `target_gpu.module`: the function is a kernel entry (MLIR's
NVVM kernel attribute). Written by `target-gpu-lower-to-nvvm`; read by the `-t ptx` emitter (the
`ptx_kernel` calling convention)."""

TARGET_TRIPLE_ATTR = "llvm.target_triple"
"""`StringAttr` on a `target_gpu.module`: the LLVM target triple of its functions
(`dlc.target.NVPTX_TRIPLE`). Written by `target-gpu-lower-to-nvvm`."""

BUFFER_TAKE = "dlc_buffer_take"
"""The function `ptr dlc_buffer_take(ptr slot, i64 alignment, i64 size)` that lowered code calls
for a heap buffer: the buffer cached in the allocation site's `slot` (taken out of it
atomically), else a fresh `aligned_alloc(alignment, size)`. Declared by `convert-loop-to-llvm`
(`rewrites.llvm_lowering.memref.cached_heap_allocate`); defined, internal to each module, by the
`-t llvm` emitter (`codegen.llvm.define_buffer_cache`), since the llvm dialect has no atomics."""

BUFFER_RELEASE = "dlc_buffer_release"
"""The function `void dlc_buffer_release(ptr slot, ptr buffer)`: puts `buffer` back into `slot`
when the slot is empty (an atomic compare-and-swap), else frees it (see `BUFFER_TAKE`)."""

ROWS_BUFFER_TAKE = "dlc_rows_buffer_take"
"""The function `ptr dlc_rows_buffer_take(ptr slot, i64 alignment, i64 size)` that lowered code
calls for a buffer of runtime size (`loop.alloc` with sizes): the buffer cached in the
allocation site's `slot` when it holds at least `size` bytes (its capacity sits in the 8 bytes
before it), else a new one (the smaller cached one freed), so that calls of one size or fewer
rows allocate nothing after the first. Declared by `convert-loop-to-llvm`
(`rewrites.llvm_lowering.memref.cached_rows_allocate`); defined like `BUFFER_TAKE` by
`codegen.llvm.define_buffer_cache`."""

ROWS_BUFFER_RELEASE = "dlc_rows_buffer_release"
"""The function `void dlc_rows_buffer_release(ptr slot, ptr buffer, i64 alignment)`: puts
`buffer` back into `slot` when the slot is empty, else frees it (see `ROWS_BUFFER_TAKE`)."""

VALID_EXTENT_ATTR = "dlc.valid_extent"
"""`array<i64: axis, count>` in an entry function's result attributes: the result is padded
along `axis` to a static bound, and only its first `r[count]` entries along it are valid, where
`r[count]` is the function's result number `count` (a 0-d `i64`, which carries
`EXTENT_COUNT_ATTR`). Written by `dialects.graph.extents.mark_valid_extents` (the ONNX importer,
`graph-mark-valid-extents`); carried to the lowered entry's argument attributes by
`convert-tensor-expr-to-loop`; read by the graph interpreter and `convert-loop-to-llvm` (the
metadata), whose runtimes trim the result to the count and return neither the padding nor the
count (XLA's bounded dynamic shapes)."""

EXTENT_COUNT_ATTR = "dlc.extent_count"
"""`UnitAttr` in an entry function's result attributes: the result is the count of valid
entries of another result (`VALID_EXTENT_ATTR`), which the runtimes do not return."""

DIM_SYMBOLS_ATTR = "dlc.dim_symbols"
"""`ArrayAttr` of `StringAttr` in an entry function's argument/result attributes, one per dim of
a tensor (or memref) with a dynamic dim: the symbol that names each dynamic dim (`"N"`, the ONNX
`dim_param`), and `""` for a static one. Every dim with one symbol has one size in a call (the
batch that all inputs share). Written by the ONNX importer (`dynamic_batch`); read by
`dialects.dim_symbols` (its verifier and queries), the graph interpreter and the runtimes' shape
checks, which name the input and dim of a mismatch."""

BATCH_ROWS_ATTR = "dlc.batch_rows"
"""`StringAttr` in an entry function's argument/result attributes: the argument is one row of a
batch whose size is the symbol (`"N"`), known at run time only; the function computes one row
and the runtime calls it once per row, with the row's slice of each such argument (the other
arguments whole). Written by `graph-batch-rows` (from `DIM_SYMBOLS_ATTR` on a leading `?`);
carried to the lowered entry by `convert-graph-to-tensor-expr` and
`convert-tensor-expr-to-loop`; read by `convert-loop-to-llvm` (the metadata's `batch`) and the
runtimes, which take the batch from the inputs' leading dims, check that they agree and
allocate outputs of that many rows. A block entry (`runtime.metadata.BATCH_BLOCK_SUFFIX`) has
the same marks on arguments of `k` rows."""

BATCH_COST_ATTR = "dlc.batch_cost"
"""`FloatAttr` on a loop-level entry function with batched arguments (`BATCH_ROWS_ATTR`): what
one call of it costs (`rewrites.llvm_lowering.batch.entry_cost`), estimated while its kernels'
bodies were in the module. Written by the compiler driver before it compiles the kernels apart
(`annotate_batch_costs`); read by `convert-loop-to-llvm`, which plans a batch's calls from the
costs and estimates them itself where the attribute is missing."""

BATCH_ENTRY_ATTR = "dlc.batch_entry"
"""`UnitAttr` on an `llvm.func @<entry>__batch(i64 n, ptr...)`
(`runtime.metadata.BATCH_ENTRY_SUFFIX`): the native loop that runs an entry with a dynamic batch
on n rows (its largest block entry on whole blocks, then the rows left by their plan). Written by
`convert-loop-to-llvm`; read by the driver (an exported symbol) and called by the runtimes."""
