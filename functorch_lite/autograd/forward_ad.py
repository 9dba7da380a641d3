"""``autograd.forward_ad``: dual tensors and forward-mode AD through the op table (``torch.autograd.forward_ad``).

>>> import functorch_lite as torch
>>> import functorch_lite.autograd.forward_ad as fwAD
>>> x, v = torch.tensor([1.0, 2.0]), torch.ones(2)
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, v).sin()
...     primal, tangent = fwAD.unpack_dual(y)   # tangent == cos(x) * v

How it runs: while a level is entered, ``ops/_dispatch.dispatch`` hands every call to :func:`dispatch` here (one
global check, ``ACTIVE``). It runs the op as usual, then, when an input carries a tangent, the output tangents
come from the op entry's cached jitted ``jax.jvp`` of the op's forward body (``Entry.jvp_fn``); composites are
sequences of such ops, so they need nothing more.

How tangents are held, so that views and in-place ops carry them as PyTorch does: a *dual root* (a tensor made by
``make_dual``, an op output, or a base that an in-place op gave a tangent) holds ``_fw``: a tangent tensor laid out
like the root's *storage*. The tangent of the root, or of any view of it, is a header over that tangent storage
with the tensor's own view chain, strides and offset: a view of a dual tensor has the view of its tangent, and an
in-place op writes the new tangent through the same view (the root and every other view see it). A view points at
its root with ``_fwr`` (views made before their base had a tangent find it through ``_base``).
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

ACTIVE = [0]  # 1 while a dual level is entered and no op is inside its primal run: the dispatcher's one check
_LEVEL: list = [None]  # the current level (0: PyTorch supports one at a time) or None
_HOLDERS: list = []  # weak references to the tensors holding a tangent at the current level (cleared on exit)


class UnpackedDualTensor(NamedTuple):
    r"""Namedtuple returned by :func:`unpack_dual` containing the primal and tangent components of the dual
    tensor."""
    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Enter a new forward grad level (only one at a time, as in PyTorch); returns it."""
    if _LEVEL[0] is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVEL[0] = 0
    ACTIVE[0] = 1
    return 0


def exit_dual_level(*, level=None) -> None:
    """Exit the forward grad level: every tangent made in it is dropped."""
    cur = -1 if _LEVEL[0] is None else _LEVEL[0]
    if level is None:
        level = cur
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != cur:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    for ref in _HOLDERS:
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw", None)
    _HOLDERS.clear()
    _LEVEL[0] = None
    ACTIVE[0] = 0


class dual_level:
    """Context manager (or decorator) for forward AD: ``with dual_level(): ...``; tangents are dropped on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


def _check_level(level, what):
    if level is None:
        level = -1 if _LEVEL[0] is None else _LEVEL[0]
    if level < 0 and what == "_make_dual":
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level != _LEVEL[0]:
        raise RuntimeError(f"Invalid level given to {what}")


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient (``torch.autograd.forward_ad.make_dual``).

    ``tangent`` has ``tensor``'s size; its values are copied (in ``tensor``'s dtype)."""
    from .._tensor.tensor import Tensor
    if level is None and _LEVEL[0] is None:
        _check_level(None, "_make_dual")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    _check_level(level, "_make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {_LEVEL[0]} is not supported.")
    if tuple(tangent._shape) != tuple(tensor._shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor._shape)} while the given "
                           f"forward gradient is of size {list(tangent._shape)}.")
    if tangent.is_complex() and not tensor.is_complex():
        raise RuntimeError("functorch_lite: a complex tangent for a real primal is not supported (its imaginary "
                           "part would be dropped); make the primal complex")
    if not isinstance(tangent, Tensor):
        from ..ops._dispatch import _type_name  # (late: the dispatcher imports this module)
        raise TypeError(f"make_dual(): argument 'tangent' must be Tensor, not {_type_name(tangent)}")
    d = tensor.view(tensor._shape)  # (a view of the primal: ViewBackward0 when it requires grad, as in PyTorch)
    _set_tangent(d, _cast(tangent._array, tangent.dtype, d.dtype))
    return d


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)``: the primal as a view without tangent, the tangent (None for a non-dual tensor)."""
    from .._tensor.tensor import Tensor
    if not isinstance(tensor, Tensor):
        from ..ops._dispatch import _type_name  # (late: the dispatcher imports this module)
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {_type_name(tensor)}")
    if level is not None and level != _LEVEL[0]:
        raise RuntimeError("Invalid level given to _fw_primal")
    if _LEVEL[0] is None:
        return UnpackedDualTensor(tensor, None)
    t = tangent_of(tensor)
    ACTIVE[0] = 0
    try:
        p = tensor.view(tensor._shape)  # (the primal: a view sharing the values, with no tangent)
    finally:
        ACTIVE[0] = 1
    p.__dict__["_fwr"] = _NO_TANGENT
    return UnpackedDualTensor(p, t)


_NO_TANGENT = object()  # the ``_fwr`` of ``unpack_dual``'s primal: no tangent, whatever its base has


# ---- where a tensor's tangent lives ----------------------------------------------------------------------------
def _root(t):
    """The tensor holding ``t``'s tangent storage (itself, the root a view was made from, or its base); or None."""
    d = t.__dict__
    if d:
        if "_fw" in d:
            return t
        r = d.get("_fwr")
        if r is not None:
            return r if r is not _NO_TANGENT and "_fw" in r.__dict__ else None
    b = t._base
    if b is not None and "_fw" in b.__dict__:
        return b
    return None


def tangent_of(t):
    """The tangent of ``t`` at the current level (a tensor sharing the root's tangent storage), or None."""
    r = _root(t)
    if r is None:
        return None
    ts = r.__dict__["_fw"]
    if t._chain is None:
        return ts
    from .._tensor.tensor import Tensor
    return Tensor._header(ts._storage, t._shape, t.dtype, t._chain, t._strides, t._offset, ts)


def _set_tangent(t, arr):
    """Make ``t`` a dual root whose tangent is ``arr`` (an array of ``t``'s shape and dtype, or a tensor autograd
    recorded: ``_recorded_tangents``)."""
    from .._tensor.tensor import Tensor
    s = t._storage
    if t._chain is None:
        ts = arr if isinstance(arr, Tensor) else Tensor._from_array(arr, t.dtype, s.device)
    else:  # a view: the tangent storage is laid out as the primal's storage, the values written through the chain
        import jax.numpy as jnp
        from .. import dtypes as D
        base = s.array
        ts = Tensor._from_array(jnp.zeros(base.shape, base.dtype), D.from_numpy_dtype(base.dtype), s.device)
        view = Tensor._header(ts._storage, t._shape, t.dtype, t._chain, t._strides, t._offset, ts)
        view.copy_(arr) if isinstance(arr, Tensor) else view._write(arr)
    t.__dict__["_fw"] = ts
    _HOLDERS.append(weakref.ref(t))


def _cast(arr, src, dst):
    if src is dst:
        return arr
    from .. import dtypes as D
    return D.cast_array(arr, src, dst)


# ---- the dispatcher's hooks ------------------------------------------------------------------------------------
def _primal(op, targs, sargs, autocast):
    from ..ops import _dispatch
    ACTIVE[0] = 0
    try:
        return _dispatch.dispatch(op, targs, sargs, autocast)
    finally:
        ACTIVE[0] = 1


def dispatch(op, targs, sargs, autocast=True):
    """``_dispatch.dispatch`` while a dual level is active: the op, then its output tangents (``jax.jvp``)."""
    from .._tensor.tensor import Tensor
    from ..ops import _dispatch
    tlist = tuple(targs[0]) if op.tensors == "list" else targs
    tans = [tangent_of(a) if isinstance(a, Tensor) else None for a in tlist]
    if all(t is None for t in tans):
        return _primal(op, targs, sargs, autocast)
    if autocast and _dispatch._AC_ANY[0] and op.autocast is not None:
        # the autocast casts are dispatches of their own (they carry the tangents); then the op without them
        return dispatch(op, _dispatch.autocast_args(op, targs, sargs), sargs, False)
    out = _primal(op, targs, sargs, autocast)
    first = tlist[0] if tlist else None
    if isinstance(out, Tensor) and isinstance(first, Tensor) and out._storage is first._storage:
        if out is not first:  # a view of its input: its tangent is the view of the input's
            out.__dict__["_fwr"] = _root(first)
        return out
    outs = out if isinstance(out, tuple) else (out,)
    if not any(isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex) for o in outs):
        return out
    sp = op.prep(targs, sargs) if op.prep is not None else sargs
    arrays = [a._array if isinstance(a, Tensor) else a for a in tlist]
    sig = tuple((len(a._shape), a.dtype) if isinstance(a, Tensor) else (None if a is None else type(a))
                for a in tlist)
    from .. import dtypes as D
    if op.traced is not None:
        sp, extra = _dispatch._split_traced(op.traced, sp)
        arrays.extend(extra or ())
    entry = _dispatch._entry(op, sp, sig)
    if not entry.diff_ok:
        return out
    idx = tuple(i for i, t in enumerate(tans) if t is not None)
    res = _recorded_tangents(op, entry, idx, tlist, arrays, tans, outs)
    if res is not None:  # (a tangent reverse mode differentiates: torch's tangents carry their own graph)
        for o, r in zip(outs, res):
            if not any(o is a for a in tlist):
                _set_tangent(o, r)
        return out
    tarrs = tuple(_cast(tans[i]._array, tans[i].dtype, tlist[i].dtype) for i in idx)
    try:
        res = entry.jvp_fn(idx, not op.eager)(tuple(arrays), tarrs)
    except TypeError as e:
        if "custom_vjp" not in str(e):
            raise
        raise NotImplementedError(
            f"Trying to use forward AD with {op.name} that does not support it because it has not been implemented "
            "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
            "feature-request.yml so that we can prioritize its implementation or submit a PR adding the "
            "implementation to derivatives.yaml") from None
    res = res if isinstance(res, tuple) else (res,)
    for o, r in zip(outs, res):
        if isinstance(o, Tensor) and o.dtype.category >= D.FLOAT and not any(o is a for a in tlist):
            _set_tangent(o, r)
    return out


_JVP_OPS: dict = {}


def _recorded_tangents(op, entry, idx, tlist, arrays, tans, outs):
    """The output tangents as tensors autograd records, where grad mode is on and a primal or a tangent requires
    grad (torch's forward-mode formulas are ops of its graph: ``(p + t).backward()`` reaches x through t); None
    otherwise, or where the op's other arguments are not plain constants or an output is not floating (the arrays
    path). The op: (the primal tensors, the input tangents) -> the output tangents, ``jax.jvp`` of the op's body;
    its backward, JAX's vjp of that."""
    from .._tensor.tensor import Tensor
    from ..autograd import grad_mode as _gm
    from .. import dtypes as D
    if not _gm._state.enabled or not (any(isinstance(a, Tensor) and a._requires_grad for a in tlist) or
                                      any(tans[i]._requires_grad for i in idx)):
        return None
    if not all(isinstance(o, Tensor) and o.dtype.category >= D.FLOAT for o in outs):
        return None
    pos = tuple(i for i, a in enumerate(tlist) if isinstance(a, Tensor))
    consts = tuple((i, a) for i, a in enumerate(arrays) if i not in pos)
    if not all(a is None or type(a) in (int, float, bool, complex) for _, a in consts):
        return None
    out_dts = tuple(o.dtype for o in outs)
    key = (id(entry), idx, pos, consts, out_dts)
    hit = _JVP_OPS.get(key)
    if hit is None or hit[0] is not entry:
        from .higher_order import backward_op
        jvp, n = entry.jvp_fn(idx, not op.eager), len(arrays)

        def impl(tensors):
            full = [None] * n
            for i, a in zip(pos, tensors):
                full[i] = a
            for i, a in consts:
                full[i] = a
            r = jvp(tuple(full), tuple(tensors[len(pos):]))
            return r

        def rule(_op, sig, sargs):
            return (None,) * len(sig), out_dts
        name = op.name.title().replace("_", "")
        hit = (entry, backward_op(impl, op.name, name + "JvpBackward0", rule, "list", len(outs), ("all",)))
        if len(_JVP_OPS) > 4096:
            _JVP_OPS.clear()
        _JVP_OPS[key] = hit
    ins = [tlist[i] for i in pos] + [tans[i] if tans[i].dtype is tlist[i].dtype else tans[i].to(tlist[i].dtype)
                                     for i in idx]
    res = _primal(hit[1], (ins,), (), False)  # (the tangent op itself carries no tangent: no second level)
    return res if isinstance(res, tuple) else (res,)


def mark_views(t, outs):
    """Views of ``t`` made from view metadata (split, unbind): their tangents are views of ``t``'s."""
    r = _root(t)
    if r is not None:
        for o in outs:
            o.__dict__["_fwr"] = r


def after_write(self, r):
    """``self`` received the values of ``r`` (an in-place op, ``out=``): its tangent receives ``r``'s, through
    its view (a view of a tensor without tangent gives its base a zero tangent first, as PyTorch does)."""
    tr = tangent_of(r)
    if tr is None:
        return
    arr = _cast(tr._array, tr.dtype, self.dtype)
    t = tangent_of(self)
    if t is None:
        d = self.__dict__
        if d.get("_fwr") is _NO_TANGENT:
            del d["_fwr"]
        if self._base is None:
            _set_tangent(self, arr)
            return
        import jax.numpy as jnp
        b = self._base
        _set_tangent(b, jnp.zeros(b._array.shape, b._array.dtype))
        t = tangent_of(self)
    t._write(arr)
