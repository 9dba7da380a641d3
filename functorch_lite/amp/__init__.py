"""``functorch_lite.amp``: automatic mixed precision (``torch.amp``): :class:`autocast` and :class:`GradScaler`."""
from .autocast_mode import (  # noqa: F401
    autocast, is_autocast_available, is_autocast_enabled, set_autocast_enabled, get_autocast_dtype,
    set_autocast_dtype, is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache, custom_fwd,
    custom_bwd,
)
from .grad_scaler import GradScaler, OptState  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
