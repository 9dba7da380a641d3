"""``torch.nn.parallel`` / ``nn.DataParallel``: PyTorch's single-process data-parallel wrapper.

As in PyTorch, the wrapper holds the model as ``.module`` (its ``state_dict`` keys start with ``module.``) and
runs it unchanged where no accelerator is available (``device_ids == []``) or on one device (``device_ids=[0]``:
the model moves there and the inputs follow). Splitting a batch over several GPUs (replicas, per-replica
BatchNorm statistics, gathered outputs) is not done: more than one device is refused by name rather than run on
one device with different BatchNorm results. Multi-device training belongs on JAX sharding.
"""
from __future__ import annotations

from typing import Any

from .. import _device as _dev
from .modules.module import Module


def _index(d) -> int:
    if isinstance(d, int):
        return d
    d = _dev.device(d) if not isinstance(d, _dev.device) else d
    return d.index or 0


class DataParallel(Module):
    """``nn.DataParallel(module, device_ids=None, output_device=None, dim=0)``."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not _dev.jax_devices("cuda"):
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(len(_dev.jax_devices("cuda"))))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        if len(self.device_ids) > 1 or self.output_device != self.device_ids[0]:
            raise RuntimeError(f"DataParallel over devices {self.device_ids} (output device {self.output_device}) "
                               "is not supported by functorch_lite: it runs the module on one device; pass "
                               f"device_ids=[{self.device_ids[0]}] (or shard with JAX for several devices)")
        self.src_device_obj = _dev.device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers "
                                   f"on device {self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        move = self._to_device
        return self.module(*[move(x) for x in inputs], **{k: move(v) for k, v in kwargs.items()})

    def _to_device(self, x):
        from .._tensor.tensor import Tensor
        if isinstance(x, Tensor):
            return x.to(self.src_device_obj)
        if isinstance(x, (list, tuple)):
            return type(x)(self._to_device(v) for v in x)
        if isinstance(x, dict):
            return {k: self._to_device(v) for k, v in x.items()}
        return x

