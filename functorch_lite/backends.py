"""``functorch_lite.backends``: ``backends.mps.is_available()`` (JAX has no Metal backend here), and
``backends.cuda.matmul.allow_tf32``, which is ``set_float32_matmul_precision`` under another name (as PyTorch's:
``True`` means "high", ``False`` "highest"), and the scaled-dot-product-attention backend switches
(``backends.cuda.enable_flash_sdp`` ..., ``sdp_kernel``)."""
from __future__ import annotations

import contextlib
import types
import warnings

from . import _config
from ._warn import user_stacklevel as _user_stacklevel


class _Matmul:
    @property
    def allow_tf32(self) -> bool:
        return _config.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _config.set_float32_matmul_precision("high" if value else "highest")


# scaled_dot_product_attention's backend switches (PyTorch's global flags, for every device):
# ``nn.attention.sdpa_kernel`` sets them; F.scaled_dot_product_attention reads them (ops/attention.py)
SDP_ENABLED = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True, "overrideable": True}
SDP_KEY = [tuple(SDP_ENABLED.values())]  # (the switches as one value: part of compile's guard key)


def set_sdp(name: str, enabled: bool) -> None:
    SDP_ENABLED[name] = bool(enabled)
    SDP_KEY[0] = tuple(SDP_ENABLED.values())


def _sdp_switch(name):
    def enable(enabled: bool) -> None:
        set_sdp(name, enabled)

    def is_enabled() -> bool:
        return SDP_ENABLED[name]
    return enable, is_enabled


def _sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """``torch.backends.cuda.sdp_kernel`` (deprecated): ``nn.attention.sdpa_kernel`` over the enabled backends. It
    warns when called, as PyTorch's, not when entered."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=_user_stacklevel())
    return _sdp_kernel_context(enable_flash, enable_math, enable_mem_efficient, enable_cudnn)


@contextlib.contextmanager
def _sdp_kernel_context(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    from .nn.attention import SDPBackend, sdpa_kernel
    chosen = [b for on, b in ((enable_flash, SDPBackend.FLASH_ATTENTION),
                              (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION), (enable_math, SDPBackend.MATH),
                              (enable_cudnn, SDPBackend.CUDNN_ATTENTION)) if on]
    with sdpa_kernel(chosen) as context:
        yield context


mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = types.SimpleNamespace(matmul=_Matmul(), is_built=lambda: True, sdp_kernel=_sdp_kernel)
for _name in ("flash", "mem_efficient", "math", "cudnn"):
    _enable, _enabled = _sdp_switch(_name)
    setattr(cuda, f"enable_{_name}_sdp", _enable)
    setattr(cuda, f"{_name}_sdp_enabled", _enabled)
# cudnn.allow_tf32 (True, as PyTorch's default) is recorded only: XLA's convolutions follow the matmul precision
cudnn = types.SimpleNamespace(benchmark=False, deterministic=False, allow_tf32=True, enabled=True)
