"""Module / init / tensor API corners a red-team found, against torch 2.13:
- ``Tensor.broadcast_to(2, 3)`` (sizes as separate ints) raised a TypeError;
- ``nn.init.trunc_normal_`` with ``a > b`` filled a constant, on an integer tensor it filled rounded values, and with
  a negative ``std`` a constant (torch: its uniform / normal errors; values drawn with |std|); ``orthogonal_`` of an
  integer tensor filled zeros;
- ``uniform_``'s range error printed ``2.0`` where torch prints ``2``;
- ``load_state_dict`` into a module on the meta device raised (torch warns that the copy is a no-op)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e).__name__, str(e))
    return tuple(r.shape), str(r.dtype)


CASES = {
    "broadcast_to ints": lambda L: L.ones(3).broadcast_to(2, 3),
    "broadcast_to tuple": lambda L: L.ones(3).broadcast_to((2, 3)),
    "broadcast_to size=": lambda L: L.ones(3).broadcast_to(size=[4, 3]),
    "broadcast_to -1": lambda L: L.ones(1, 3).broadcast_to(2, -1),
    "torch.broadcast_to ints": lambda L: L.broadcast_to(L.ones(3), 2, 3),
    "trunc_normal_ a > b": lambda L: L.nn.init.trunc_normal_(L.empty(2, 3), a=2.0, b=1.0),
    "trunc_normal_ int": lambda L: L.nn.init.trunc_normal_(L.zeros(2, 3, dtype=L.int64)),
    "trunc_normal_ int narrow": lambda L: L.nn.init.trunc_normal_(L.zeros(2, 3, dtype=L.int64), a=0.5, b=0.6),
    "orthogonal_ int": lambda L: L.nn.init.orthogonal_(L.zeros(2, 3, dtype=L.int64)),
    "uniform_ range": lambda L: L.empty(2).uniform_(2.0, 1.0),
    "uniform_ range big": lambda L: L.empty(2).uniform_(123456789.0, 1e-7),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_torch(name):
    assert _outcome(lambda: CASES[name](ft)) == _outcome(lambda: CASES[name](torch))


def test_trunc_normal_negative_std_draws_with_its_magnitude():
    x = ft.nn.init.trunc_normal_(ft.empty(20000), std=-1.0).numpy()
    assert np.abs(x).max() <= 2 and 0.8 < x.std() < 0.95 and len(np.unique(x)) > 19000


def test_load_state_dict_into_a_meta_module_warns_as_torch():
    def run(L):
        m = L.nn.Linear(2, 3, device="meta")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = m.load_state_dict({"weight": L.ones(3, 2), "bias": L.ones(3)})
        return str(r), m.weight.device.type, [str(c.message) for c in caught]
    assert run(ft) == run(torch)
