"""Side-by-side performance runs of dlc against NumPy (OpenBLAS) and ONNX Runtime."""
