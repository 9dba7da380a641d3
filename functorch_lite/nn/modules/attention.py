"""MultiheadAttention (``torch.nn.MultiheadAttention``) and its ``out_proj`` Linear."""
from __future__ import annotations

from ..._tensor.tensor import Tensor
from ...ops.attention import _mha_forward
from ..parameter import Parameter
from .layers import Linear
from .module import Module

__all__: list = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name (PyTorch uses it for ``MultiheadAttention.out_proj``)."""


class MultiheadAttention(Module):
    """Multi-head attention with PyTorch's parameters, initialisation, masks and state_dict keys.

    >>> mha = functorch_lite.nn.MultiheadAttention(16, 4, batch_first=True)
    >>> x = functorch_lite.randn(2, 5, 16)
    >>> out, w = mha(x, x, x)   # out (2, 5, 16), w (2, 5, 5) averaged over heads
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        from ... import empty
        fk = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """PyTorch's init: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k/bias_v."""
        from .. import init
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """``(attn_output, attn_weights)``; inputs ``(L, N, E)`` (``(N, L, E)`` if batch_first) or ``(L, E)``.

        Bool masks: True marks a position that is NOT attended; float masks are added to the scores.
        """
        sep = not self._qkv_same_embed_dim
        return _mha_forward(query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
                            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
                            self.out_proj.weight, self.out_proj.bias, self.training, key_padding_mask,
                            need_weights, attn_mask, sep, self.q_proj_weight, self.k_proj_weight,
                            self.v_proj_weight, None, None, average_attn_weights, is_causal,
                            bool(self.batch_first and query.dim() == 3),
                            self._fast_path(query, key, value, key_padding_mask, attn_mask))

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """PyTorch's mask merge for its fused path: ``(mask, mask_type)``. A padding mask alone is type 1; an
        ``attn_mask`` ((L, L), or (N * num_heads, L, L)) is expanded to (N, num_heads, L, L), type 2, and added to
        the padding mask ((N, L), expanded alike) when both are given; neither gives ``(None, None)``."""
        if attn_mask is None:
            return (key_padding_mask, 1) if key_padding_mask is not None else (None, None)
        n, length, _ = query.shape  # (a query of another rank: the unpacking's ValueError, as torch's)
        full = attn_mask.view(n, -1, length, length) if attn_mask.dim() == 3 else \
            attn_mask.view(1, 1, length, length).expand(n, self.num_heads, -1, -1)
        if key_padding_mask is not None:
            full = full + key_padding_mask.view(n, 1, 1, length).expand(-1, self.num_heads, -1, -1)
        return full, 2

    def _fast_path(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask, attn_mask) -> bool:
        """Whether PyTorch would run its fused inference kernel (``torch._native_multi_head_attention``)."""
        from ...autograd.grad_mode import is_grad_enabled
        if any(m is not None and m.dtype.is_floating_point for m in (attn_mask, key_padding_mask)):
            return False
        if query.dim() != 3 or query is not key or key is not value or self.training:
            return False
        if self.in_proj_weight is None or self.in_proj_bias is None or query.dtype is not self.in_proj_weight.dtype:
            return False
        if self.in_proj_bias.dtype is not query.dtype:
            return False
        if self.num_heads % 2 or not self.batch_first or self.bias_k is not None or self.bias_v is not None:
            return False
        if self.add_zero_attn or not self._qkv_same_embed_dim:
            return False
        args = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight, self.out_proj.bias)
        return not (is_grad_enabled() and any(t is not None and t.requires_grad for t in args))
