"""torch.linalg's keyword names as torch 2.13 takes them (``input``/``b`` where its parser names them so, ``A``/``B``
where it does: inv, solve, svd...): a valid torch call by keyword runs, one torch refuses is refused."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

S = [[4., 1.], [1., 3.]]
CALLS = {
    "cholesky": ("input", {}), "cholesky_ex": ("input", {}), "eigh": ("input", {}), "eigvalsh": ("input", {}),
    "pinv": ("input", {}), "matrix_rank": ("input", {}), "matrix_norm": ("input", {}), "norm": ("input", {}),
    "vector_norm": ("input", {}), "vector_norm_x": ("x", {}), "matrix_power": ("input", {"n": 2}), "lstsq": ("input", {"b": S}),
    "inv": ("A", {}), "det": ("A", {}), "svd": ("A", {}), "qr": ("A", {}), "solve": ("A", {"B": S}),
    "solve_triangular": ("input", {"B": S, "upper": False}), "tensorsolve": ("input", {"other": [4., 1.]}),
    "cond": ("input", {}), "eig": ("input", {}), "eigvals": ("input", {}), "matrix_exp": ("input", {}),
    "ldl_factor": ("input", {}), "householder_product": ("input", {"tau": [1.]}), "tensorinv": ("input", {"ind": 1}),
}


def _call(m, name, key, extra):
    kw = {k: m.tensor(v) if isinstance(v, list) else v for k, v in extra.items()}
    try:
        r = getattr(m.linalg, name.removesuffix("_x"))(**{key: m.tensor(S)}, **kw)
    except TypeError:
        return "TypeError"
    r = r[0] if isinstance(r, tuple) else r
    return np.abs(r.detach().numpy()) if r.dtype.is_floating_point or r.dtype.is_complex else r.numpy()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_keyword_names_as_torch(name):
    key, extra = CALLS[name]
    for k in {key, "A" if key == "input" else "input"}:
        want, got = _call(torch, name, k, extra), _call(ft, name, k, extra)
        if isinstance(want, str):
            assert got == want, (name, k)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
