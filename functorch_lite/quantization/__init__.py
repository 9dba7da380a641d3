"""Quantization for inference (the seed's dtype list: float8, int8, NF4).

* float8: :func:`_scaled_mm` (PyTorch's float8 GEMM), :func:`to_float8` / :func:`from_float8` (amax scaling).
* int8: per-output-channel absmax weights + dynamic per-token int8 activations, int32-accumulated matmul.
* NF4: QLoRA's 4-bit NormalFloat, block-wise absmax (64), optional double quantization of the scales.

``quantize_(model, "int8" | "nf4")`` swaps every ``nn.Linear`` in place; ``dequantize`` undoes it;
``weight_bytes`` measures the memory shrink. Every kernel is an op of the op table (one jitted program each).
"""
from .float8 import _scaled_mm, to_float8, from_float8  # noqa: F401
from .int8 import (  # noqa: F401
    int8_weight_quantize, int8_linear, int8_dequantize, _int_mm, fake_quantize_per_tensor_affine,
    fake_quantize_per_channel_affine,
)
from .nf4 import (  # noqa: F401
    NF4_CODE, NF4_MAX_HALF_GAP, nf4_quantize, blockwise_int8_quantize, nf4_dequantize, nf4_linear,
)
from .modules import Int8Linear, NF4Linear, quantize_, dequantize, weight_bytes  # noqa: F401

__all__ = ["_scaled_mm", "to_float8", "from_float8", "int8_weight_quantize", "int8_linear", "int8_dequantize",
           "_int_mm", "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
           "NF4_CODE", "NF4_MAX_HALF_GAP", "nf4_quantize", "blockwise_int8_quantize", "nf4_dequantize",
           "nf4_linear", "Int8Linear", "NF4Linear", "quantize_", "dequantize", "weight_bytes"]
