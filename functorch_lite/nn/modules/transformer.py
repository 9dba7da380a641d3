"""Transformer modules (``torch.nn.Transformer``, ``TransformerEncoder``/``Decoder`` and their layers).

Built on the facade's MultiheadAttention, Linear, LayerNorm and Dropout with PyTorch 2.13's constructors,
submodule names (hence state_dict keys), initialisation, masks and errors. PyTorch's eval-mode fast paths
change some results, and those changes are reproduced here:

* ``TransformerEncoderLayer`` (``torch._transformer_encoder_layer_fwd``): masks are read as bool (a nonzero
  float entry masks its position, whatever its value); a query row whose every key is masked gives NaN (not
  0); ``is_causal`` is ignored (only the given masks count); a GELU activation is the exact one whatever its
  ``approximate``; submodule ``training`` flags are not consulted.
* ``TransformerEncoder`` with ``enable_nested_tensor``: with a ``src_key_padding_mask`` the input becomes a
  nested tensor of the unpadded tokens, so padded positions come back as zeros (before the final norm) and a
  float padding mask acts as "nonzero = padding".
"""
from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from ..._tensor.tensor import Tensor
from .. import functional as F
from ..functional import _canonical_mask, _none_or_dtype
from .attention import MultiheadAttention
from .container import ModuleList
from .layers import GELU, Dropout, Linear, ReLU
from .module import Module
from .normalization import LayerNorm
from ..._warn import user_stacklevel as _user_stacklevel

__all__: list = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                 "TransformerDecoderLayer"]

_NESTED_WARNED = [False]


# ---- helpers (PyTorch's module-level functions of the same names) ---------------------------------------
def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """``-inf`` above the diagonal, 0 elsewhere: position i may attend to positions <= i."""
    from ... import full, triu
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    shape = src.size()
    if len(shape) == 2:  # unbatched (S, E)
        return shape[0]
    return shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal: bool | None = None, size: int | None = None) -> bool:
    """``is_causal`` when given; when None, whether ``mask`` equals the square subsequent mask."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = tuple(mask.size()) == tuple(causal.size()) and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, N: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _needs_grad(tensors) -> bool:
    from ...autograd.grad_mode import is_grad_enabled
    return is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _autocast_on() -> bool:
    from ...amp.autocast_mode import is_autocast_enabled
    return is_autocast_enabled()  # torch.is_autocast_enabled(): the CUDA flag


def _fast_tensors(layer: "TransformerEncoderLayer", src: Tensor) -> tuple:
    sa = layer.self_attn
    return (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, layer.norm1.weight,
            layer.norm1.bias, layer.norm2.weight, layer.norm2.bias, layer.linear1.weight, layer.linear1.bias,
            layer.linear2.weight, layer.linear2.bias)


# ---- Transformer -------------------------------------------------------------------------------------
class Transformer(Module):
    """Encoder-decoder transformer (Vaswani et al.), PyTorch's ``nn.Transformer``.

    >>> model = functorch_lite.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1,
    ...                                      num_decoder_layers=1, dim_feedforward=32)
    >>> src, tgt = functorch_lite.rand(5, 2, 16), functorch_lite.rand(3, 2, 16)
    >>> model(src, tgt).shape
    torch.Size([3, 2, 16])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Any | None = None,
                 custom_decoder: Any | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **fk)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, bias, **fk)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode ``src``, decode ``tgt`` against the memory; shapes ``(S, N, E)`` / ``(T, N, E)``
        (``(N, S, E)`` / ``(N, T, E)`` if batch_first, or unbatched ``(S, E)`` / ``(T, E)``)."""
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A causal mask for a sequence of length ``sz``: ``-inf`` above the diagonal, 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        """xavier_uniform_ on every parameter with more than one dimension."""
        from ..init import xavier_uniform_
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


# ---- TransformerEncoder -----------------------------------------------------------------------------
class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm`` when given.

    >>> layer = functorch_lite.nn.TransformerEncoderLayer(d_model=16, nhead=2, batch_first=True)
    >>> enc = functorch_lite.nn.TransformerEncoder(layer, num_layers=2)
    >>> enc(functorch_lite.rand(2, 5, 16)).shape
    torch.Size([2, 5, 16])
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: "TransformerEncoderLayer", num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor  # the value given at construction
        self.use_nested_tensor = enable_nested_tensor  # whether nested tensors are used
        self.mask_check = mask_check
        why = _why_not_sparsity(encoder_layer, "encoder_layer")
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          UserWarning, stacklevel=_user_stacklevel())
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """Pass ``src`` through every layer with the same masks; ``is_causal=None`` detects a causal ``mask``."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        batch_first = first.self_attn.batch_first
        kpm_layers, pad = src_key_padding_mask, None
        if self._nested_ok(src, mask, src_key_padding_mask):
            pad = self._padding_of_nested(src_key_padding_mask)
            kpm_layers = pad
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=kpm_layers)
            if pad is not None:  # the nested tensor holds only the unpadded tokens: padded rows read as 0
                output = output.masked_fill(pad.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_ok(self, src: Tensor, mask, kpm) -> bool:
        """Whether PyTorch would run the layers on a nested tensor built from ``src`` and ``kpm``."""
        from ..._dynamo import is_compiling
        first = self.layers[0]
        do_mask_check = getattr(self, "mask_check", True)
        if not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3 or kpm is None:
            return False
        if do_mask_check and (is_compiling() or not _left_aligned(kpm == 0)):
            return False
        if mask is not None or _autocast_on():
            return False
        return not _needs_grad(_fast_tensors(first, src))

    def _padding_of_nested(self, kpm: Tensor) -> Tensor:
        """(N, S) bool: True at the positions a nested tensor from ``kpm`` lacks (PyTorch keeps the first
        ``count_nonzero(kpm == 0)`` tokens of every sequence)."""
        from ... import arange
        if not _NESTED_WARNED[0]:
            _NESTED_WARNED[0] = True
            warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change in the near "
                          "future. We recommend specifying layout=torch.jagged when constructing a nested tensor, "
                          "as this layout receives active development, has better operator coverage, and works "
                          "with torch.compile.", UserWarning, stacklevel=_user_stacklevel())
        lengths = (kpm == 0).sum(-1, keepdim=True)
        return arange(kpm.size(-1), device=kpm.device).unsqueeze(0) >= lengths


def _left_aligned(keep: Tensor) -> bool:
    """Every row of ``keep`` is a run of True then a run of False."""
    if keep.size(-1) < 2:
        return True
    return not bool((keep[:, 1:] & ~keep[:, :-1]).any())


def _why_not_sparsity(layer, name: str) -> str:
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


# ---- TransformerDecoder -----------------------------------------------------------------------------
class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm`` when given.

    >>> layer = functorch_lite.nn.TransformerDecoderLayer(d_model=16, nhead=2)
    >>> dec = functorch_lite.nn.TransformerDecoder(layer, num_layers=2)
    >>> dec(functorch_lite.rand(3, 2, 16), functorch_lite.rand(5, 2, 16)).shape
    torch.Size([3, 2, 16])
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: "TransformerDecoderLayer", num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Pass ``tgt`` (attending to ``memory``) through every layer; ``tgt_is_causal=None`` detects a
        causal ``tgt_mask``."""
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                         memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


# ---- layers -----------------------------------------------------------------------------------------
class _LayerBlocks(Module):
    """The self-attention and feed-forward blocks both layers run (torch writes them in each class; a subclass
    overriding ``_sa_block`` / ``_ff_block`` still does so per class). ``_FF_DROPOUT``: the feed-forward
    block's last dropout (``dropout2`` in the encoder layer, ``dropout3`` in the decoder layer)."""

    _FF_DROPOUT = "dropout2"

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, self._FF_DROPOUT)(x)


class TransformerEncoderLayer(_LayerBlocks):
    """Self-attention then feed-forward, each with dropout, a residual and LayerNorm (before the block when
    ``norm_first``, after it otherwise).

    >>> layer = functorch_lite.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32)
    >>> layer(functorch_lite.rand(5, 2, 16)).shape
    torch.Size([5, 2, 16])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """``src`` is ``(S, N, E)`` (``(N, S, E)`` if batch_first) or unbatched ``(S, E)``."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        if not self._why_not_fast_path(src):
            return self._fast_forward(src, src_mask, src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _why_not_fast_path(self, src: Tensor) -> str:
        """Why PyTorch would not run ``torch._transformer_encoder_layer_fwd`` ('' when it would)."""
        sa = self.self_attn
        if src.dim() != 3:
            return f"input not batched; expected src.dim() of 3 but got {src.dim()}"
        if self.training:
            return "training is enabled"
        if not sa.batch_first:
            return "self_attn.batch_first was not True"
        if sa.in_proj_bias is None:
            return "self_attn was passed bias=False"
        if not sa._qkv_same_embed_dim:
            return "self_attn._qkv_same_embed_dim was not True"
        if not self.activation_relu_or_gelu:
            return "activation_relu_or_gelu was not True"
        if self.norm1.eps != self.norm2.eps:
            return "norm1.eps is not equal to norm2.eps"
        if sa.num_heads % 2 == 1:
            return "num_head is odd"
        if _autocast_on():
            return "autocast is enabled"
        if any(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in self.modules()):
            return "forward pre-/hooks are attached to the module"
        if _needs_grad(_fast_tensors(self, src)):
            return ("grad is enabled and at least one of query or the input/output projection weights or biases "
                    "requires_grad")
        return ""

    def _fast_forward(self, src: Tensor, src_mask, src_key_padding_mask) -> Tensor:
        """PyTorch's fused inference layer: no dropout, masks read as bool (nonzero = masked), ``is_causal``
        ignored, NaN for fully masked rows, ReLU or exact GELU by ``activation_relu_or_gelu``. Under CPU autocast
        the fused op is on the lower-precision list: its input and weights are cast to the autocast dtype, and
        it runs there (its result is in that dtype)."""
        from ...amp import autocast_mode as _amp
        act_ = _amp.STATE.active
        low = act_.get(src.device.type) if act_ else None
        if low is not None and src.dtype.is_floating_point:
            from ... import float64
            if src.dtype is not float64:
                with _amp.autocast(src.device.type, enabled=False):
                    return self._fast_body(src.to(low), src_mask, src_key_padding_mask,
                                           lambda t: None if t is None else t.to(low))
        return self._fast_body(src, src_mask, src_key_padding_mask, lambda t: t)

    def _fast_body(self, src: Tensor, src_mask, src_key_padding_mask, cast) -> Tensor:
        from ...ops.attention import _mha_forward
        sa = self.self_attn
        src_mask = None if src_mask is None else src_mask != 0
        src_key_padding_mask = None if src_key_padding_mask is None else src_key_padding_mask != 0
        act = F.gelu if self.activation_relu_or_gelu == 2 else F.relu

        def attend(x):
            return _mha_forward(x, x, x, sa.embed_dim, sa.num_heads, cast(sa.in_proj_weight), cast(sa.in_proj_bias),
                                bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0,
                                out_proj_weight=cast(sa.out_proj.weight), out_proj_bias=cast(sa.out_proj.bias),
                                training=False,
                                key_padding_mask=src_key_padding_mask, need_weights=False, attn_mask=src_mask,
                                use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                is_causal=False, batch_first=True, fast_path=True)[0]

        def ff(x):
            return F.linear(act(F.linear(x, cast(self.linear1.weight), cast(self.linear1.bias))),
                            cast(self.linear2.weight), cast(self.linear2.bias))

        def norm(n, x):
            return F.layer_norm(x, n.normalized_shape, cast(n.weight), cast(n.bias), self.norm1.eps)
        x = src
        if self.norm_first:
            x = x + attend(norm(self.norm1, x))
            return x + ff(norm(self.norm2, x))
        x = norm(self.norm1, x + attend(x))
        return norm(self.norm2, x + ff(x))



class TransformerDecoderLayer(_LayerBlocks):
    """Self-attention, attention over ``memory``, then feed-forward; each with dropout, a residual and
    LayerNorm (before the block when ``norm_first``, after it otherwise).

    >>> layer = functorch_lite.nn.TransformerDecoderLayer(d_model=16, nhead=2, dim_feedforward=32)
    >>> layer(functorch_lite.rand(3, 2, 16), functorch_lite.rand(5, 2, 16)).shape
    torch.Size([3, 2, 16])
    """

    __constants__ = ["norm_first"]
    _FF_DROPOUT = "dropout3"

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device=None,
                 dtype=None) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                            **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """``tgt`` ``(T, N, E)`` and ``memory`` ``(S, N, E)`` (batch first if batch_first), or unbatched."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)
