"""``torch.version``: the PyTorch API version this facade reproduces (``__version__``), the build's accelerator
versions, and the facade's own release number (``facade_version``, pyproject.toml's ``version``).

``cuda`` is the CUDA runtime version (``"12.8"``) when JAX has a CUDA backend, else None, as PyTorch's is None in
a CPU build; it is read on first access, so importing the library does not start JAX's backends."""
from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "2.13.0"
facade_version = "0.1.0"
debug = False
git_version = "Unknown"  # (PyTorch's value for a build made outside a git checkout)
hip = None
rocm = None
xpu = None


def __getattr__(name):
    if name == "cuda":
        globals()["cuda"] = v = _cuda_version()
        return v
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cuda_version():
    from . import cuda as _cuda
    if not _cuda.is_available():  # (the one test of a CUDA backend: functorch_lite.cuda's)
        return None
    try:
        from jax._src.lib import cuda_versions  # (JAX's CUDA plugin: private, so absent means unknown)
        n = cuda_versions.cuda_runtime_get_version()
    except (ImportError, AttributeError, RuntimeError):
        return None
    return f"{n // 1000}.{n % 1000 // 10}"
