"""``torch.distributed`` as a build without it: ``is_available()`` is False, as on PyTorch builds without
distributed support, so the usual ``if dist.is_available() and dist.is_initialized():`` guards in training code
take their single-process branch. There are no process groups: one process drives every local device through JAX
(multi-host training on JAX sharding is on the roadmap). ``init_process_group`` refuses by name; the collectives
and rank queries raise PyTorch's "not initialized" error, as PyTorch's do before ``init_process_group``.
"""
from __future__ import annotations

import os

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_nccl_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    raise RuntimeError("torch.distributed.init_process_group: functorch_lite has no process groups (one process "
                       "drives every local device through JAX; multi-process training is not supported)")


def _uninitialized(name: str):
    def call(*args, **kwargs):
        raise ValueError(_NOT_INITIALIZED)
    call.__name__ = name
    return call


for _name in ("get_rank", "get_world_size", "barrier", "all_reduce", "all_gather", "all_gather_object", "broadcast",
              "broadcast_object_list", "reduce", "gather", "scatter", "reduce_scatter", "all_to_all", "send", "recv",
              "new_group", "get_backend"):
    globals()[_name] = _uninitialized(_name)
del _name
