"""``torch.utils.deterministic.fill_uninitialized_memory``: whether ``torch.empty`` and friends fill their memory
with known values (NaN, an integer's largest value) under ``use_deterministic_algorithms(True)``. True by default."""
import sys
import types

from .. import _config


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        return _config._SWITCHES["fill_uninitialized_memory"]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode) -> None:
        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _config._SWITCHES["fill_uninitialized_memory"] = mode


sys.modules[__name__].__class__ = _Deterministic
