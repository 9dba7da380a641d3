"""In-place writes through a view of a tensor in the graph (spec §7, INP-16..20).

After ``view.op_(...)`` the base's history becomes a ``CopySlices`` node: the gradient of the base
splits into the part outside the view (to the base's old history) and the part inside it (to the
in-place op's node). The view itself gets an ``AsStridedBackward0`` node that scatters its gradient
into the base. Both use the view's flat index map (views.py), so any view (transposed, strided,
diagonal) works.

Every other view of that storage is then stale (its node describes values the storage no longer holds):
``graph.regraph`` gives it an ``AsStridedBackward0`` on the base's current node when it is next used
(``Tensor.grad_fn``, ``graph.edge_of``), as PyTorch does.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .._tensor import views as V
from .graph import CPP_NAMES, Node, edge_of, move_retain_grad, set_view_fn


@functools.partial(jax.jit, static_argnums=(2, 3))
def _split(g, idx, vdt, sign):
    """(gradient outside the view, gradient of the view). ``vdt``: the view's dtype, whose elements the index
    map counts (``x.real`` of a complex base: interleaved floats); ``sign``: the view's conjugate / negative
    bit (its gradient is conjugated / negated, as its values are)."""
    flat = V.to_units(g, vdt)
    inside = flat[idx]
    rest = V.from_units(flat.at[idx.reshape(-1)].set(0), g.shape, g.dtype)
    return rest, (V.apply_sign(inside) if sign else inside)


@functools.partial(jax.jit, static_argnums=(2, 3, 4))
def _scatter_into(g_view, idx, shape, dtype, sign):
    g_view = V.apply_sign(g_view) if sign else g_view
    flat = V.to_units(jnp.zeros(shape, dtype), g_view.dtype).at[idx.reshape(-1)].add(g_view.reshape(-1))
    return V.from_units(flat, shape, dtype)


class CopySlices(Node):
    __slots__ = ("_idx", "_has_base", "_vdt", "_sign")

    def name(self) -> str:
        return CPP_NAMES["CopySlices"]  # PyTorch's C++ node name (its class is named CopySlices)

    def apply_custom(self, cts):
        g = cts[0]
        if g is None:
            return [None] * len(self._edges)
        rest, inside = _split(g, self._idx, self._vdt, self._sign)
        return [rest, inside] if self._has_base else [inside]


class AsStridedBackward0(Node):
    __slots__ = ("_idx", "_shape", "_dtype", "_sign")

    def apply_custom(self, cts):
        g = cts[0]
        if g is None:
            return [None]
        return [_scatter_into(g, self._idx, self._shape, self._dtype, self._sign)]


def view_index(view):
    """The view's flat index map into its storage (cached on the view, as ``Tensor._write`` does)."""
    idx = view._idx
    if idx is None:
        idx = view._idx = V.device_index_map(view._shape, view.stride(), view._offset, view._storage.array)
    return idx


def _base_positions(view):
    """The view's index map in its base's logical (row-major) element order: its storage positions translated
    when the base is laid out differently from its storage (a base transposed in place, ``x.t_()``)."""
    base = view._base
    idx = view_index(view)
    if base._chain is None or view.dtype.itemsize != base._storage.array.dtype.itemsize:
        return idx
    import numpy as np
    pos = V.index_map(base._shape, base.stride(), base._offset).reshape(-1)
    inv = np.full(base._storage.array.size, -1, np.int64)
    inv[pos] = np.arange(pos.size)
    out = inv[np.asarray(idx)]
    return jax.device_put(out, next(iter(idx.devices()))) if isinstance(idx, jax.Array) else out


def copy_slices(view, node, out_nr):
    """Rebase ``view``'s base onto a CopySlices node after an in-place op recorded as ``node``."""
    base = view._base
    cs = CopySlices()
    cs._idx = idx = _base_positions(view)
    cs._has_base = base._requires_grad
    cs._vdt = view.dtype.jnp
    cs._sign = V.view_sign(view._chain)
    edges = ((edge_of(base),) if base._requires_grad else ()) + ((node, out_nr),)
    cs._edges = edges
    cs.next_functions = edges
    cs._out_meta = ((base._shape, base.dtype),)
    old = base._grad_fn
    base._grad_fn = cs
    base._requires_grad = True
    base._out_nr = 0
    if base._retains_grad and old is not None:
        move_retain_grad(base)  # (PyTorch moves it to the new grad_fn)
    set_view_fn(view, as_strided_node(view, ((cs, 0),), idx, cs._sign))


def as_strided_node(view, edges, idx=None, sign=None):
    """An ``AsStridedBackward0`` for ``view``: its gradient scattered into its base's shape, sent along ``edges``
    (the base's CopySlices after a write through the view; the base's current history when the view's node is
    regenerated, ``graph.regraph``)."""
    base = view._base
    vn = AsStridedBackward0()
    vn._idx = _base_positions(view) if idx is None else idx
    vn._shape = base._shape
    vn._dtype = base.dtype.jnp
    vn._sign = V.view_sign(view._chain) if sign is None else sign
    vn._edges = edges
    vn.next_functions = edges
    vn._out_meta = ((view._shape, view.dtype),)
    return vn
