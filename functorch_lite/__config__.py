"""``torch.__config__``: what this build is: functorch_lite on JAX (versions, devices, threads)."""
from __future__ import annotations


def show() -> str:
    """How this build is configured: the functorch_lite, JAX and jaxlib versions and the devices JAX has."""
    import jax
    import jaxlib

    from . import __version__, _device
    return ("functorch_lite built with:\n"
            f"  - functorch_lite (PyTorch API {__version__})\n"
            f"  - JAX {jax.__version__}, jaxlib {jaxlib.__version__} (XLA)\n"
            f"  - Devices: {_device.available()}\n"
            f"  - CUDA backend: {'yes' if _device.jax_devices('cuda') else 'no'}\n")


def parallel_info() -> str:
    """The thread settings (``get_num_threads`` / ``get_num_interop_threads``) and the XLA CPU backend's."""
    import os

    from . import _config
    return ("functorch_lite/XLA parallel info:\n"
            f"\tget_num_threads() : {_config.get_num_threads()}\n"
            f"\tget_num_interop_threads() : {_config.get_num_interop_threads()}\n"
            f"os.cpu_count() : {os.cpu_count()}\n"
            "Environment variables:\n"
            f"\tXLA_FLAGS : {os.environ.get('XLA_FLAGS', '[not set]')}\n"
            "Parallel backend: XLA CPU (Eigen thread pool)\n")
