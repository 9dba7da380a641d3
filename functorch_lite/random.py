"""Random state: ``manual_seed``, ``Generator``, ``seed``/``initial_seed`` (spec CRE-36..40).

Values come from JAX's PRNG (threefry), so they differ from PyTorch's Mersenne Twister stream;
what matches PyTorch is the contract: the same seed gives the same values, a seeded
``Generator`` reproduces the global stream seeded the same way, and every draw advances the state.
Under ``compile`` the key is threaded through the traced function as state (it is ``Generator.key``).

``get_rng_state()`` / ``Generator.get_state()`` return a uint8 tensor (a ``torch.ByteTensor``, as PyTorch's) that
holds the generator's whole state: a tag, the initial seed and the bytes of the current JAX key. It round-trips
through ``.to(torch.uint8)``, ``clone()``, ``ByteTensor(state.tolist())`` and ``save``/``load``; it is not
PyTorch's 5056-byte Mersenne Twister state, and a state saved by PyTorch cannot be restored here.
"""
from __future__ import annotations

import contextlib
import os
import struct

import jax
import numpy as np

_STATE_TAG = b"FLRNG\x01"  # functorch_lite generator state, layout version 1: tag, initial seed (u64 LE), key data
_TORCH_CPU_STATE_SIZE = 5056  # sizeof(CPUGeneratorImplState): a state saved by PyTorch's CPU generator
_TORCH_CUDA_STATE_SIZE = 16   # PyTorch's CUDA generator state: seed + philox offset


class Generator:
    """``torch.Generator(device='cpu')``: owns a JAX PRNG key; each draw splits it."""

    def __init__(self, device="cpu"):
        from ._device import canonical
        self.device = canonical(device)
        if self.device.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        self._seed = 67280421310721
        self._key = None

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < -(2 ** 63) or seed >= 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % (2 ** 64)
        self._key = None
        return self

    def seed(self):
        self.manual_seed(_nondeterministic_seed())
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

    def clone_state(self):
        """A new generator on the same device in this one's state (the same seed, the same stream from here)."""
        g = Generator(self.device)
        g._seed, g._key = self._seed, self._key
        return g

    def get_offset(self):
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        raise RuntimeError("CPU Generator does not use offset")

    def graphsafe_get_state(self):
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def get_state(self):
        """The generator state as a uint8 tensor (``torch.ByteTensor``): ``set_state`` restores the exact stream."""
        from .ops.creation import tensor
        from . import dtypes as D
        k = self.key
        if isinstance(k, jax.core.Tracer):
            from .ops._dispatch import data_dependent_error
            raise data_dependent_error("reading the generator state (get_rng_state / Generator.get_state)")
        data = np.ascontiguousarray(np.asarray(jax.random.key_data(k)), dtype="<u4").tobytes()
        raw = _STATE_TAG + struct.pack("<Q", self._seed) + data
        return tensor(np.frombuffer(raw, dtype=np.uint8).copy(), dtype=D.uint8)

    def set_state(self, new_state):
        """Restore a state that ``get_state`` (or ``get_rng_state``) returned."""
        from ._tensor.tensor import Tensor
        from . import dtypes as D
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.asarray(new_state.detach().cpu().reshape(-1).numpy(), dtype=np.uint8).tobytes()
        nkey = np.asarray(jax.random.key_data(jax.random.key(0))).size
        size = len(_STATE_TAG) + 8 + 4 * nkey
        if len(raw) != size or raw[:len(_STATE_TAG)] != _STATE_TAG:
            raise RuntimeError(_foreign_state_message(len(raw), size))
        seed, = struct.unpack("<Q", raw[len(_STATE_TAG):len(_STATE_TAG) + 8])
        data = np.frombuffer(raw[len(_STATE_TAG) + 8:], dtype="<u4").astype(np.uint32)
        self._seed = seed
        self._key = jax.random.wrap_key_data(data)
        return self


def _foreign_state_message(n: int, size: int) -> str:
    if n == _TORCH_CPU_STATE_SIZE:
        what = ("this is a PyTorch CPU generator state (its 5056-byte Mersenne Twister state, as checkpoints written "
                "by PyTorch store), which functorch_lite cannot restore: its generators are JAX PRNG keys")
    elif n == _TORCH_CUDA_STATE_SIZE:
        what = ("this looks like a PyTorch CUDA generator state (seed and Philox offset), which functorch_lite cannot "
                "restore: its generators are JAX PRNG keys")
    elif n == size:
        what = "the state does not start with functorch_lite's generator-state tag"
    else:
        what = f"Expected a functorch_lite generator state of size {size} but found the input RNG state size to be {n}"
    return (f"{what}. set_rng_state / Generator.set_state accept only a state returned by functorch_lite's "
            "get_rng_state() / Generator.get_state(); to start a reproducible stream instead, use manual_seed(seed).")


@jax.jit
def _split(k):
    a, b = jax.random.split(k)
    return a, b


def _nondeterministic_seed() -> int:
    """64 random bits from the OS (c10's ``getNonDeterministicRandom``): the seed of ``seed()`` and of the default
    generator at import."""
    return int.from_bytes(os.urandom(8), "little")


default_generator = Generator()
default_generator._seed = _nondeterministic_seed()  # (PyTorch seeds its default generator so at startup; a
# ``Generator()`` made later starts at the fixed default seed 67280421310721)


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
