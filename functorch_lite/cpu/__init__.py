"""``torch.cpu``: the deprecated ``torch.cpu.amp.autocast`` spelling."""
from . import amp  # noqa: F401


def is_available() -> bool:
    return True


def synchronize(device=None) -> None:
    import jax
    jax.effects_barrier()
