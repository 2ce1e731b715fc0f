"""The oneDNN codegen of BYOC regions: C source that runs a region as oneDNN primitives.

Counterpart: TVM's DNNL BYOC codegen (`src/relay/backend/contrib/dnnl`, its C source module).
Each op of a region becomes one oneDNN primitive on the CPU engine: `graph.conv2d` (NCHW,
groups, bias) a convolution, `graph.matmul` (2-D) a matmul, `graph.max_pool2d` /
`graph.avg_pool2d` a pooling, `graph.relu` an eltwise; a relu that alone reads a conv's or
matmul's result is fused into it as an eltwise post-op. The primitives, and their memory
objects, are created on the region's first call and kept (once per loaded executable); each call
points the memory objects at that call's buffers, executes, and waits on the stream (so a
region, like dlc's entry functions, is not for concurrent calls).
Intermediate tensors are allocated per call. Layouts are the plain ones dlc uses (nchw, oihw /
goihw, ab): no reorders at region boundaries.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from dlc.dialects.graph.ops import (
    AvgPool2DOp,
    Conv2DOp,
    MatmulOp,
    MaxPool2DOp,
    ReluOp,
)
from dlc.driver.errors import CompileError
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue


def onednn_prefix() -> Path | None:
    """The prefix where the oneDNN wheels (`onednn-cpu-gomp`, `onednn-devel-cpu-gomp`) put
    `include/oneapi/dnnl/dnnl.h` and `lib/libdnnl.so` (the interpreter's), or None."""
    prefix = Path(sys.prefix)
    if (prefix / "include" / "oneapi" / "dnnl" / "dnnl.h").exists() and any(
        (prefix / "lib").glob("libdnnl.so*")
    ):
        return prefix
    return None


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _dims(values: tuple[int, ...] | list[int]) -> str:
    return "{" + ", ".join(str(v) for v in values) + "}"


_PRELUDE = r"""#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>

#define DLC_CHECK(call) do { dnnl_status_t s_ = (call); if (s_ != dnnl_success) { \
  fprintf(stderr, "dlc onednn region: %s failed with status %d\n", #call, (int)s_); \
  abort(); } } while (0)

void omp_set_num_threads(int threads);

static dnnl_engine_t dlc_engine;
static dnnl_stream_t dlc_stream;

static dnnl_memory_desc_t dlc_md(int ndims, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
  dnnl_memory_desc_t md;
  DLC_CHECK(dnnl_memory_desc_create_with_tag(&md, ndims, dims, dnnl_f32, tag));
  return md;
}

static dnnl_memory_t dlc_memory(const_dnnl_memory_desc_t md) {
  dnnl_memory_t memory;
  DLC_CHECK(dnnl_memory_create(&memory, md, dlc_engine, DNNL_MEMORY_NONE));
  return memory;
}

static dnnl_primitive_t dlc_primitive(dnnl_primitive_desc_t pd) {
  dnnl_primitive_t primitive;
  DLC_CHECK(dnnl_primitive_create(&primitive, pd));
  DLC_CHECK(dnnl_primitive_desc_destroy(pd));
  return primitive;
}

static dnnl_primitive_attr_t dlc_attr(int relu) {
  dnnl_primitive_attr_t attr;
  DLC_CHECK(dnnl_primitive_attr_create(&attr));
  if (relu) {
    dnnl_post_ops_t post_ops;
    DLC_CHECK(dnnl_post_ops_create(&post_ops));
    DLC_CHECK(dnnl_post_ops_append_eltwise(post_ops, dnnl_eltwise_relu, 0.0f, 0.0f));
    DLC_CHECK(dnnl_primitive_attr_set_post_ops(attr, post_ops));
    DLC_CHECK(dnnl_post_ops_destroy(post_ops));
  }
  return attr;
}
"""


class _Region:
    """The C text of one region while it is generated."""

    def __init__(self, function: func.FuncOp) -> None:
        self.function = function
        self.name = function.sym_name.data
        self.statics: list[str] = []
        self.init: list[str] = []
        self.call: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.temporaries: list[str] = []
        self.count = 0

    def buffer(self, value: SSAValue, outputs: dict[SSAValue, str]) -> str:
        """The C pointer of `value`: an argument, an output, or a new temporary."""
        if value in self.names:
            return self.names[value]
        name = outputs.get(value)
        if name is None:
            name = f"t{len(self.temporaries)}"
            self.temporaries.append(name)
            self.call.append(
                f"  float *{name} = (float *)malloc(sizeof(float) * {math.prod(_shape(value))});"
            )
        self.names[value] = name
        return name

    def primitive(self, pd_create: str, memories: list[tuple[str, str, str]]) -> None:
        """Adds one primitive: `pd_create` makes `pd` from the descriptors it declares;
        `memories` are (DNNL_ARG_*, descriptor expression, C pointer) per argument."""
        index = self.count
        self.count += 1
        self.statics.append(f"static dnnl_primitive_t {self.name}_p{index};")
        self.statics.append(f"static dnnl_memory_t {self.name}_m{index}[{len(memories)}];")
        self.init.append("  {")
        self.init.append(pd_create)
        for position, (_, md, _) in enumerate(memories):
            self.init.append(f"    {self.name}_m{index}[{position}] = dlc_memory({md});")
        self.init.append(f"    {self.name}_p{index} = dlc_primitive(pd);")
        self.init.append("  }")
        args = []
        for position, (arg, _, pointer) in enumerate(memories):
            self.call.append(f"  DLC_CHECK(dnnl_memory_set_data_handle({self.name}_m{index}"
                             f"[{position}], (void *){pointer}));")
            args.append(f"{{{arg}, {self.name}_m{index}[{position}]}}")
        self.call.append(f"  {{ dnnl_exec_arg_t args[] = {{{', '.join(args)}}};")
        self.call.append(f"    DLC_CHECK(dnnl_primitive_execute({self.name}_p{index}, "
                         f"dlc_stream, {len(args)}, args)); }}")


def _fused_relu(op: Operation, ops: list[Operation], outputs: dict[SSAValue, str]
                ) -> ReluOp | None:
    """The relu that alone reads `op`'s result right after it, if `op`'s result is not also a
    region output."""
    result = op.results[0]
    uses = list(result.uses)
    if len(uses) != 1 or result in outputs:
        return None
    user = uses[0].operation
    position = ops.index(op)
    if isinstance(user, ReluOp) and position + 1 < len(ops) and ops[position + 1] is user:
        return user
    return None


def _conv(region: _Region, op: Conv2DOp, relu: bool, dst: str) -> None:
    n, c, h, w = _shape(op.input)
    o, i, kh, kw = _shape(op.weight)
    out = _shape(op.result)
    groups = op.groups.value.data
    strides = list(op.strides.get_values())
    pads = list(op.padding.get_values())
    dilation = [d - 1 for d in op.dilation.get_values()]
    weights = (f"dlc_md(5, (dnnl_dims_t){_dims([groups, o // groups, i, kh, kw])}, dnnl_goihw)"
               if groups > 1 else f"dlc_md(4, (dnnl_dims_t){_dims([o, i, kh, kw])}, dnnl_oihw)")
    has_bias = op.bias is not None
    create = "\n".join([
        f"    dnnl_memory_desc_t src = dlc_md(4, (dnnl_dims_t){_dims([n, c, h, w])}, dnnl_nchw);",
        f"    dnnl_memory_desc_t wei = {weights};",
        (f"    dnnl_memory_desc_t bia = dlc_md(1, (dnnl_dims_t){{{o}}}, dnnl_a);" if has_bias
         else "    dnnl_memory_desc_t bia = NULL;"),
        f"    dnnl_memory_desc_t dst = dlc_md(4, (dnnl_dims_t){_dims(list(out))}, dnnl_nchw);",
        f"    dnnl_primitive_attr_t attr = dlc_attr({int(relu)});",
        "    dnnl_primitive_desc_t pd;",
        "    DLC_CHECK(dnnl_convolution_forward_primitive_desc_create(&pd, dlc_engine, "
        "dnnl_forward_inference, dnnl_convolution_direct, src, wei, bia, dst, "
        f"(dnnl_dims_t){_dims(strides)}, (dnnl_dims_t){_dims(dilation)}, "
        f"(dnnl_dims_t){_dims(pads[:2])}, (dnnl_dims_t){_dims(pads[2:])}, attr));",
        "    DLC_CHECK(dnnl_primitive_attr_destroy(attr));",
    ])
    memories = [("DNNL_ARG_SRC", "src", region.names[op.input]),
                ("DNNL_ARG_WEIGHTS", "wei", region.names[op.weight])]
    if op.bias is not None:
        memories.append(("DNNL_ARG_BIAS", "bia", region.names[op.bias]))
    memories.append(("DNNL_ARG_DST", "dst", dst))
    region.primitive(create, memories)


def _matmul(region: _Region, op: MatmulOp, relu: bool, dst: str) -> None:
    (m, k), (_, n) = _shape(op.lhs), _shape(op.rhs)
    create = "\n".join([
        f"    dnnl_memory_desc_t src = dlc_md(2, (dnnl_dims_t){{{m}, {k}}}, dnnl_ab);",
        f"    dnnl_memory_desc_t wei = dlc_md(2, (dnnl_dims_t){{{k}, {n}}}, dnnl_ab);",
        f"    dnnl_memory_desc_t dst = dlc_md(2, (dnnl_dims_t){{{m}, {n}}}, dnnl_ab);",
        f"    dnnl_primitive_attr_t attr = dlc_attr({int(relu)});",
        "    dnnl_primitive_desc_t pd;",
        "    DLC_CHECK(dnnl_matmul_primitive_desc_create(&pd, dlc_engine, src, wei, NULL, dst, "
        "attr));",
        "    DLC_CHECK(dnnl_primitive_attr_destroy(attr));",
    ])
    region.primitive(create, [("DNNL_ARG_SRC", "src", region.names[op.lhs]),
                              ("DNNL_ARG_WEIGHTS", "wei", region.names[op.rhs]),
                              ("DNNL_ARG_DST", "dst", dst)])


def _pool(region: _Region, op: MaxPool2DOp | AvgPool2DOp, dst: str) -> None:
    if isinstance(op, MaxPool2DOp):
        algorithm = "dnnl_pooling_max"
    elif op.count_include_pad.value.data:
        algorithm = "dnnl_pooling_avg_include_padding"
    else:
        algorithm = "dnnl_pooling_avg_exclude_padding"
    pads = list(op.padding.get_values())
    create = "\n".join([
        f"    dnnl_memory_desc_t src = dlc_md(4, (dnnl_dims_t){_dims(list(_shape(op.x)))}, "
        "dnnl_nchw);",
        f"    dnnl_memory_desc_t dst = dlc_md(4, (dnnl_dims_t){_dims(list(_shape(op.result)))}, "
        "dnnl_nchw);",
        "    dnnl_primitive_desc_t pd;",
        "    DLC_CHECK(dnnl_pooling_forward_primitive_desc_create(&pd, dlc_engine, "
        f"dnnl_forward_inference, {algorithm}, src, dst, "
        f"(dnnl_dims_t){_dims(list(op.strides.get_values()))}, "
        f"(dnnl_dims_t){_dims(list(op.kernel.get_values()))}, (dnnl_dims_t){{0, 0}}, "
        f"(dnnl_dims_t){_dims(pads[:2])}, (dnnl_dims_t){_dims(pads[2:])}, NULL));",
    ])
    region.primitive(create, [("DNNL_ARG_SRC", "src", region.names[op.x]),
                              ("DNNL_ARG_DST", "dst", dst)])


def _relu(region: _Region, op: ReluOp, dst: str) -> None:
    count = math.prod(_shape(op.x))
    create = "\n".join([
        f"    dnnl_memory_desc_t src = dlc_md(1, (dnnl_dims_t){{{count}}}, dnnl_a);",
        "    dnnl_primitive_desc_t pd;",
        "    DLC_CHECK(dnnl_eltwise_forward_primitive_desc_create(&pd, dlc_engine, "
        "dnnl_forward_inference, dnnl_eltwise_relu, src, src, 0.0f, 0.0f, NULL));",
    ])
    region.primitive(create, [("DNNL_ARG_SRC", "src", region.names[op.x]),
                              ("DNNL_ARG_DST", "src", dst)])


def onednn_region_source(function: func.FuncOp, threads: int = 0) -> str:
    """The C function `void <name>(const float *in0, ..., float *out0, ...)` running the
    region `function` as oneDNN primitives. With `threads` > 0, the first call sets the OpenMP
    thread count of the calling thread (oneDNN's CPU build runs on libgomp, dlc's pool) to it,
    so that oneDNN's parallel regions do not oversubscribe the cores dlc was given."""
    region = _Region(function)
    block = function.body.block
    params = []
    for index, arg in enumerate(block.args):
        region.names[arg] = f"in{index}"
        params.append(f"const float *in{index}")
    terminator = block.last_op
    assert isinstance(terminator, func.ReturnOp)
    outputs: dict[SSAValue, str] = {}
    for index, value in enumerate(terminator.arguments):
        params.append(f"float *out{index}")
        outputs.setdefault(value, f"out{index}")
    ops = [op for op in block.ops if not isinstance(op, func.ReturnOp)]
    skip: set[Operation] = set()
    for op in ops:
        if op in skip:
            continue
        relu = _fused_relu(op, ops, outputs) if isinstance(op, Conv2DOp | MatmulOp) else None
        final = relu if relu is not None else op
        dst = region.buffer(final.results[0], outputs)
        if relu is not None:
            skip.add(relu)
            region.names[op.results[0]] = dst
        if isinstance(op, Conv2DOp):
            _conv(region, op, relu is not None, dst)
        elif isinstance(op, MatmulOp):
            _matmul(region, op, relu is not None, dst)
        elif isinstance(op, MaxPool2DOp | AvgPool2DOp):
            _pool(region, op, dst)
        elif isinstance(op, ReluOp):
            _relu(region, op, dst)
        else:
            raise CompileError(f"'{op.name}' op: the onednn codegen does not compute it")
    copies = []
    for index, value in enumerate(terminator.arguments):
        source = region.names[value]
        if source != f"out{index}":  # an argument, or a value returned twice
            copies.append(f"  for (long i = 0; i < {math.prod(_shape(value))}; ++i) "
                          f"out{index}[i] = {source}[i];")
    lines = [_PRELUDE, *region.statics, f"void {region.name}({', '.join(params)}) {{",
             f"  if (!{region.name}_p0) {{",
             "    if (!dlc_engine) {",
             *([f"      omp_set_num_threads({threads});"] if threads > 0 else []),
             "      DLC_CHECK(dnnl_engine_create(&dlc_engine, dnnl_cpu, 0));",
             "      DLC_CHECK(dnnl_stream_create(&dlc_stream, dlc_engine, "
             "dnnl_stream_default_flags));",
             "    }", *region.init, "  }", *region.call,
             "  DLC_CHECK(dnnl_stream_wait(dlc_stream));", *copies,
             *[f"  free({t});" for t in region.temporaries], "}"]
    return "\n".join(lines) + "\n"
