import numpy as np, onnx, dlc
from onnx import helper as h, TensorProto as T
g = h.make_graph([h.make_node("NonZero", ["x"], ["y"], name="nz"), h.make_node("Transpose", ["y"], ["z"])], "g",
    [h.make_tensor_value_info("x", T.FLOAT, [3, 4])], [h.make_tensor_value_info("z", T.INT64, ["a","b"])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
ex = dlc.compile(m)
x = np.random.rand(3,4).astype(np.float32) * (np.random.rand(3,4) > 0.5)
print(ex(x), np.transpose(np.nonzero(x)))
