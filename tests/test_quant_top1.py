"""`dlc quantize` of ResNet-18 (benchmarks/model_zoo.py, random weights, BN folded, 10 classes,
224x224): top-1 agreement of the int8 model with fp32 on held-back random inputs (slow).

dlc calibrates (64 samples, the fp32 model compiled by dlc); the int8 QDQ model is evaluated
with ONNX Runtime, whose int8 run dlc matches exactly on QDQ convnets
(tests/test_quant_ort_int8.py), so that 256 held-back samples take seconds. The issue asks for
99%. Measured (2026-12-02): 96.5% (percentile) before bias correction, residual fusion and
the float stem conv and classifier; with them 99.22% (254/256, entropy; percentile 98.8%:
the margin to 99% is one or two samples, benchmarks/quantize.py has the analysis).
"""

from __future__ import annotations

import numpy as np
import pytest

import dlc

ort = pytest.importorskip("onnxruntime")


@pytest.mark.slow
def test_dlc_quantize_resnet18_top1_agreement() -> None:
    from benchmarks.model_zoo import random_inputs, resnet18
    from dlc.quantization import fold_batch_norms

    model = fold_batch_norms(resnet18(batch=1, image=224, classes=10))
    calibration = [random_inputs(model, seed) for seed in range(64)]
    # The stem conv (whose input is the image) and the classifier stay float; every other conv
    # is int8, with bias correction and one quantization point per residual block.
    result = dlc.quantize(model, calibration, method="entropy", keep_float=["conv1", "fc"],
                          report=False)
    output = model.graph.output[0].name
    sessions = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
                for m in (model, result.model)]
    agree = 0
    for seed in range(1000, 1256):
        sample = random_inputs(model, seed)
        expected, got = (s.run([output], sample)[0] for s in sessions)
        agree += int(np.argmax(expected) == np.argmax(got))
    print(f"top-1 agreement {agree}/256 = {agree / 256:.2%}")
    assert agree / 256 >= 0.99
