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

from .. import dtypes as D
from .._tensor import views as V
from .graph import CPP_NAMES, Node, edge_of, move_retain_grad, set_view_fn


def _inside(g, idx, vdt, sign):
    """The gradient of the view: ``g``'s elements at the view's index map. ``vdt``: the view's dtype, whose elements
    the index map counts (``x.real`` of a complex base: interleaved floats); ``sign``: the view's conjugate /
    negative bit (its gradient is conjugated / negated, as its values are)."""
    inside = V.to_units(g, vdt)[idx]
    return V.apply_sign(inside) if sign else inside


def _rest(g, idx, vdt):
    """The gradient outside the view: ``g`` with the view's elements zeroed."""
    return V.from_units(V.to_units(g, vdt).at[idx.reshape(-1)].set(0), g.shape, g.dtype)


@functools.partial(jax.jit, static_argnums=(2, 3))
def _split(g, idx, vdt, sign):
    """(gradient outside the view, gradient of the view): CopySlices' backward, one kernel."""
    return _rest(g, idx, vdt), _inside(g, idx, vdt, sign)


def _scatter(g_view, idx, shape, dtype, sign):
    """The view's gradient scattered into zeros of its base's ``shape`` / ``dtype``."""
    g_view = V.apply_sign(g_view) if sign else g_view
    flat = V.to_units(jnp.zeros(shape, dtype), g_view.dtype).at[idx.reshape(-1)].add(g_view.reshape(-1))
    return V.from_units(flat, shape, dtype)


_scatter_into = jax.jit(_scatter, static_argnums=(2, 3, 4))


# ---- create_graph=True: the same bodies as recorded ops (dispatch differentiates them again) ------------------
# Named as torch's nodes of these gradients: the view's part is its ``grad_slice.clone()`` (CloneBackward0), the
# rest its ``result`` written through the view (CopySlices), a scattered view gradient ``as_strided_backward``'s
# result (AsStridedBackward0). The index map goes in as an int tensor (no gradient), so one program serves every
# view of a shape.
_OPS: dict = {}


def _np_dtype(dt):
    return D.from_numpy_dtype(jnp.dtype(dt))


_RULES = {
    "inside": (_inside, "CloneBackward0", lambda op, sig, sargs: ((None, None), (_np_dtype(sargs[0]),))),
    "rest": (_rest, "CopySlices", lambda op, sig, sargs: ((None, None), (sig[0][1],))),
    "scatter": (_scatter, "AsStridedBackward0", lambda op, sig, sargs: ((None, None), (_np_dtype(sargs[1]),))),
}


def _recorded(kind, g, idx, dev, dt, sargs):
    """``kind``'s body on gradient ``g`` (a tensor, or an array of dtype ``dt``) as a recorded op."""
    from .._device import to_jax
    from .._tensor.tensor import Tensor
    from ..ops._dispatch import dispatch
    op = _OPS.get(kind)
    if op is None:
        from .higher_order import backward_op
        body, grad_fn, rule = _RULES[kind]
        op = _OPS[kind] = backward_op(body, f"copy_slices_{kind}", grad_fn, rule, 2, 1, ())
    if not isinstance(g, Tensor):
        g = Tensor._from_array(g, dt, dev)
    if not isinstance(idx, jax.Array):  # (a numpy map: a view's under a trace, or a transposed base's)
        idx = jax.device_put(idx, to_jax(dev))
    out = dispatch(op, (g, Tensor._from_array(idx, D.from_numpy_dtype(idx.dtype), dev)), sargs)
    if out._grad_fn is not None:  # (the index map is no input of torch's node)
        out._grad_fn.next_functions = out._grad_fn.next_functions[:1]
    return out


class CopySlices(Node):
    __slots__ = ("_idx", "_has_base", "_vdt", "_sign", "_dev")

    def name(self) -> str:
        return CPP_NAMES["CopySlices"]  # PyTorch's C++ node name (its class is named CopySlices)

    def apply_custom(self, cts):
        g = cts[0]
        if g is None:
            return [None] * len(self._edges)
        rest, inside = _split(g, self._idx, self._vdt, self._sign)
        return [rest, inside] if self._has_base else [inside]

    def apply_tensors(self, cts):
        """``create_graph=True``: :meth:`apply_custom` as recorded ops."""
        g = cts[0]
        if g is None:
            return [None] * len(self._edges)
        dt = self._out_meta[0][1]
        inside = _recorded("inside", g, self._idx, self._dev, dt, (self._vdt, self._sign))
        if not self._has_base:
            return [inside]
        return [_recorded("rest", g, self._idx, self._dev, dt, (self._vdt,)), inside]


class AsStridedBackward0(Node):
    __slots__ = ("_idx", "_shape", "_dtype", "_sign", "_dev")

    def apply_custom(self, cts):
        g = cts[0]
        if g is None:
            return [None]
        return [_scatter_into(g, self._idx, self._shape, self._dtype, self._sign)]

    def apply_tensors(self, cts):
        """``create_graph=True``: :meth:`apply_custom` as a recorded op."""
        g = cts[0]
        if g is None:
            return [None]
        return [_recorded("scatter", g, self._idx, self._dev, self._out_meta[0][1],
                          (self._shape, self._dtype, self._sign))]


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
    cs._dev = base._storage.device
    edges = ((edge_of(base),) if base._requires_grad else ()) + ((node, out_nr),)
    cs._edges = edges
    cs._diff_idx = tuple(range(len(edges)))  # (its gradients go to ``edges`` in order: ``grad_fn(...)``)
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
    vn._dev = base._storage.device
    vn._edges = edges
    vn._diff_idx = (0,)
    vn.next_functions = edges
    vn._out_meta = ((view._shape, view.dtype),)
    return vn
