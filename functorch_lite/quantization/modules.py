"""Quantized replacements for ``nn.Linear`` and the model-level API: ``quantize_``, ``dequantize``, ``weight_bytes``.

A quantized layer keeps its quantized weight as buffers (so ``state_dict`` / ``functorch_lite.save`` carry
int8/uint8 tensors and float32 scales, and ``load_state_dict`` into a freshly quantized model restores it
exactly) and its bias as a float Parameter. Quantized layers are for inference: their ops have no gradient.
"""
from __future__ import annotations

from typing import Callable, Iterable, Union

from .. import dtypes as D
from .._tensor.tensor import Tensor
from ..nn.modules.layers import Linear
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from . import int8 as _int8
from . import nf4 as _nf4

__all__ = ["Int8Linear", "NF4Linear", "quantize_", "dequantize", "weight_bytes"]


def _bias_param(bias: Tensor | None) -> Parameter | None:
    return None if bias is None else Parameter(bias.detach().clone(), requires_grad=False)


class Int8Linear(Module):
    """``nn.Linear`` with an int8 per-output-channel weight and dynamic per-token int8 activations.

    Buffers: ``weight`` (int8, ``(out, in)``), ``weight_scale`` (float32, ``(out,)``); ``bias`` stays float.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import Int8Linear
    >>> _ = torch.manual_seed(0); lin = torch.nn.Linear(4, 3)
    >>> q = Int8Linear.from_linear(lin)
    >>> q.weight.dtype, q(torch.ones(2, 4)).shape
    (torch.int8, torch.Size([2, 3]))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        from .. import zeros, ones
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight", zeros((out_features, in_features), dtype=D.int8))
        self.register_buffer("weight_scale", ones(out_features, dtype=D.float32))
        if bias:
            self.bias = Parameter(zeros(out_features), requires_grad=False)
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_linear(cls, linear: Linear) -> "Int8Linear":
        """Quantize ``linear``'s weight (per-output-channel absmax); the bias is copied."""
        m = cls(linear.in_features, linear.out_features, bias=linear.bias is not None)
        q, s = _int8.int8_weight_quantize(linear.weight.detach())
        m.weight, m.weight_scale = q, s
        if linear.bias is not None:
            m.bias = _bias_param(linear.bias)
        return m

    def forward(self, input: Tensor) -> Tensor:
        return _int8.int8_linear(input, self.weight, self.weight_scale, self.bias)

    def dequantized_weight(self) -> Tensor:
        """The float32 weight this layer stands for: ``weight * weight_scale[:, None]``."""
        return _int8.int8_dequantize(self.weight, self.weight_scale)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NF4Linear(Module):
    """``nn.Linear`` with a block-wise NF4 weight (QLoRA), dequantized on the fly inside the forward kernel.

    Buffers: ``weight`` (uint8, two 4-bit codes per byte), ``weight_absmax`` (float32 per block, or int8 with
    ``double_quant``, then also ``weight_absmax_scale`` (float32 per 256 absmax values) and
    ``weight_absmax_offset`` (float32 scalar)); ``bias`` stays float.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import NF4Linear
    >>> _ = torch.manual_seed(0); lin = torch.nn.Linear(64, 8)
    >>> q = NF4Linear.from_linear(lin, double_quant=True)
    >>> q.weight.dtype, q.weight.shape, q(torch.ones(2, 64)).shape
    (torch.uint8, torch.Size([256]), torch.Size([2, 8]))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, block_size: int = 64,
                 double_quant: bool = False) -> None:
        super().__init__()
        from .. import zeros, ones
        if block_size <= 0 or block_size % 2:
            raise ValueError(f"block_size must be a positive even integer, got {block_size!r}")
        self.in_features, self.out_features = in_features, out_features
        self.block_size, self.double_quant = block_size, double_quant
        blocks = -(-in_features * out_features // block_size)
        self.register_buffer("weight", zeros(blocks * block_size // 2, dtype=D.uint8))
        if double_quant:
            self.register_buffer("weight_absmax", zeros(blocks, dtype=D.int8))
            self.register_buffer("weight_absmax_scale", ones(-(-blocks // _nf4.DQ_BLOCK), dtype=D.float32))
            self.register_buffer("weight_absmax_offset", zeros((), dtype=D.float32))
        else:
            self.register_buffer("weight_absmax", ones(blocks, dtype=D.float32))
        if bias:
            self.bias = Parameter(zeros(out_features), requires_grad=False)
        else:
            self.register_parameter("bias", None)

    @classmethod
    def from_linear(cls, linear: Linear, block_size: int = 64, double_quant: bool = False) -> "NF4Linear":
        """Quantize ``linear``'s weight to NF4 (block-wise absmax, optional double quantization)."""
        m = cls(linear.in_features, linear.out_features, bias=linear.bias is not None, block_size=block_size,
                double_quant=double_quant)
        packed, absmax = _nf4.nf4_quantize(linear.weight.detach(), block_size)
        m.weight = packed
        if double_quant:
            m.weight_absmax, m.weight_absmax_scale, m.weight_absmax_offset = _nf4.blockwise_int8_quantize(absmax)
        else:
            m.weight_absmax = absmax
        if linear.bias is not None:
            m.bias = _bias_param(linear.bias)
        return m

    def _absmax_args(self):
        if self.double_quant:
            return self.weight_absmax, self.weight_absmax_scale, self.weight_absmax_offset
        return self.weight_absmax, None, None

    def forward(self, input: Tensor) -> Tensor:
        return _nf4.nf4_linear(input, self.weight, *self._absmax_args(), self.bias, self.out_features,
                               self.in_features, self.block_size)

    def dequantized_weight(self) -> Tensor:
        """The float32 ``(out, in)`` weight this layer stands for."""
        return _nf4.nf4_dequantize(self.weight, *self._absmax_args(), shape=(self.out_features, self.in_features),
                                   block_size=self.block_size)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"block_size={self.block_size}, double_quant={self.double_quant}")


_QUANTIZED = (Int8Linear, NF4Linear)
Skip = Union[None, Iterable[str], Callable[[str, Module], bool]]


def _skipped(skip: Skip, name: str, module: Module) -> bool:
    if skip is None:
        return False
    if callable(skip):
        return bool(skip(name, module))
    return name in set(skip)


def _replace(model: Module, make: Callable[[str, Module], Module | None]) -> Module:
    """Swap children in place (keeping their position in ``_modules``); ``make`` returns None to keep one."""
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent._modules.items()):
            if child is None:
                continue
            full = f"{parent_name}.{child_name}" if parent_name else child_name
            new = make(full, child)
            if new is not None:
                new.train(child.training)
                parent._modules[child_name] = new
    return model


def quantize_(model: Module, method: str = "int8", *, block_size: int = 64, double_quant: bool = False,
              skip: Skip = None) -> Module:
    """Replace every ``nn.Linear`` of ``model`` in place with an :class:`Int8Linear` (``"int8"``) or
    :class:`NF4Linear` (``"nf4"``); returns ``model``. ``skip``: qualified module names to leave alone, or a
    predicate ``(name, module) -> bool`` (e.g. keep the LM head in float). A bare ``nn.Linear`` cannot be
    replaced in place: quantize its parent, or use ``Int8Linear.from_linear`` / ``NF4Linear.from_linear``.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import quantize_
    >>> m = quantize_(torch.nn.Sequential(torch.nn.Linear(64, 8), torch.nn.ReLU()), "nf4")
    >>> type(m[0]).__name__
    'NF4Linear'
    """
    if method not in ("int8", "nf4"):
        raise ValueError(f"quantize_: method must be 'int8' or 'nf4', got {method!r}")
    if block_size <= 0 or block_size % 2:
        raise ValueError(f"block_size must be a positive even integer, got {block_size!r}")

    def make(name: str, m: Module):
        if not isinstance(m, Linear) or _skipped(skip, name, m):
            return None
        if method == "int8":
            return Int8Linear.from_linear(m)
        return NF4Linear.from_linear(m, block_size=block_size, double_quant=double_quant)
    return _replace(model, make)


def _to_linear(m: Module) -> Linear:
    from ..autograd.grad_mode import no_grad
    lin = Linear(m.in_features, m.out_features, bias=m.bias is not None)
    with no_grad():
        lin.weight.copy_(m.dequantized_weight())
        if m.bias is not None:
            lin.bias.copy_(m.bias.to(D.float32))
    return lin


def dequantize(obj: Union[Module, tuple]) -> Union[Module, Tensor]:
    """Undo quantization: a model (its quantized layers become float ``nn.Linear`` again, in place), a single
    quantized layer (a new ``nn.Linear``), or a tuple from the quantizers — ``(q, scale)`` of
    ``int8_weight_quantize``, ``(x_f8, inv_scale)`` of ``to_float8`` — giving a float32 tensor.

    >>> import functorch_lite as torch
    >>> from functorch_lite.quantization import dequantize, int8_weight_quantize
    >>> dequantize(int8_weight_quantize(torch.tensor([[1.0, -0.5]]))).tolist()
    [[1.0, -0.5039370059967041]]
    """
    if isinstance(obj, _QUANTIZED):
        return _to_linear(obj)
    if isinstance(obj, Module):
        return _replace(obj, lambda name, m: _to_linear(m) if isinstance(m, _QUANTIZED) else None)
    if isinstance(obj, tuple) and len(obj) == 2 and all(isinstance(t, Tensor) for t in obj):
        q, s = obj
        if q.dtype is D.int8:
            return _int8.int8_dequantize(q, s)
        if q.dtype in D.FLOAT8:
            from .float8 import from_float8
            return from_float8(q, s)
    raise TypeError("dequantize: expected a Module, a quantized layer, (int8 q, scale) or (float8 x, inv_scale), "
                    f"got {type(obj).__name__}")


def weight_bytes(model: Module) -> int:
    """Bytes held by the weights of ``model``'s linear layers, float or quantized (weights plus their scales;
    biases excluded): compare before/after ``quantize_`` for the memory shrink."""
    total = 0
    for m in model.modules():
        if isinstance(m, Linear):
            total += m.weight.nbytes
        elif isinstance(m, _QUANTIZED):
            total += sum(b.nbytes for n, b in m.named_buffers(recurse=False))
    return total
