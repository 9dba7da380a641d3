"""``torch.get_device_module``: the ``torch.<type>`` module of a device type."""
from __future__ import annotations

import importlib

from . import _device


def get_device_module(device=None):
    """``torch.get_device_module("cuda")`` is ``torch.cuda``; ``None``: the current accelerator's module, else
    ``torch.cpu``."""
    if isinstance(device, _device.device):
        name = device.type
    elif isinstance(device, str):
        name = _device.device(device).type
    elif device is None:
        name = _device.accelerator_type() or "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    if name not in ("cpu", "cuda", "mps", "xpu", "tpu"):
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return importlib.import_module(f"{__package__}.{name}")
