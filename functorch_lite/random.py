"""Random state: ``manual_seed``, ``Generator``, ``seed``/``initial_seed`` (spec CRE-36..40).

Values come from JAX's PRNG (threefry), so they differ from PyTorch's Mersenne Twister stream;
what matches PyTorch is the contract: the same seed gives the same values, a seeded
``Generator`` reproduces the global stream seeded the same way, and every draw advances the state.
Under ``compile`` the key is threaded through the traced function as state (it is ``Generator.key``).
"""
from __future__ import annotations

import contextlib
import time

import jax


class Generator:
    """``torch.Generator(device='cpu')``: owns a JAX PRNG key; each draw splits it."""

    def __init__(self, device="cpu"):
        from ._device import canonical
        self.device = canonical(device)
        self._seed = 67280421310721
        self._key = None

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(2 ** 63) or seed >= 2 ** 64:
            raise RuntimeError("Overflow when unpacking long long")
        self._seed = seed % (2 ** 64)
        self._key = None
        return self

    def seed(self):
        self.manual_seed(time.time_ns() % (2 ** 63))
        return self._seed

    def initial_seed(self):
        return self._seed

    @property
    def key(self):
        if self._key is None:
            self._key = jax.random.key(self._seed % (2 ** 63))
        return self._key

    @key.setter
    def key(self, k):
        self._key = k

    def next_key(self):
        """Split the state: return a fresh key for one draw and keep the other."""
        k = self.key
        new, sub = _split(k)
        self._key = new
        return sub

    def get_state(self):
        from .ops.creation import tensor
        import numpy as np
        return tensor(np.asarray(jax.random.key_data(self.key)).astype(np.int64))

    def set_state(self, state):
        import numpy as np
        self._key = jax.random.wrap_key_data(np.asarray(state.numpy()).astype(np.uint32))
        return self


@jax.jit
def _split(k):
    a, b = jax.random.split(k)
    return a, b


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator; returns it (as PyTorch)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Run the block on a fork of the random state: draws inside it leave the state after it as before it. The
    facade's one generator serves every device, so its state is the only one to restore (a device listed in
    ``devices`` is still checked, as PyTorch reads its state: without a GPU, "Torch not compiled with CUDA")."""
    if not enabled:
        yield
        return
    if devices is not None:
        import functorch_lite
        device_mod = getattr(functorch_lite, device_type)
        for d in list(devices):
            device_mod.get_rng_state(d)
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
