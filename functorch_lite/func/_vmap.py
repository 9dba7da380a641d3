"""``vmap`` on facade functions, by ``jax.vmap``.

The mapped tensors' arrays go into ``jax.vmap`` (per-leaf ``in_axes`` from torch's ``in_dims`` rules); inside,
they are wrapped as facade Tensors over batch tracers, whose avals are per-example, so the function sees the
per-example shapes exactly as under ``torch.vmap``. Outputs leave with ``out_axes=0`` and are then moved to
their ``out_dims`` (``None``: the unbatched value, an error if it was batched, as torch).

Randomness: every random op draws its key through ``Generator.next_key``; while the function is traced that
method is wrapped: ``'error'`` raises torch's error, ``'different'`` folds the batch index into the key (a
batched key, so every example draws its own values), ``'same'`` leaves it (one draw, broadcast). With
``chunk_size`` every chunk starts from the generators' state before the first one (and ``'different'`` folds in
the global batch index), so chunking changes neither the draws nor how far the generators advance.
"""
from __future__ import annotations

import contextlib
import functools
import sys
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp

from .._tensor import storage as _storage
from .._tensor.tensor import Tensor
from . import _core as C
from . import _tape as T

_RANDOMNESS: list = []  # the randomness of the vmaps being traced, innermost last
_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def check_randomness(randomness: Any) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


_SAME_MSG = ("Vmap does not currently support same randomness with a batched tensor input. Please file an issue with "
             "functorch")
# the random ops whose tensor arguments torch's vmap refuses to batch under randomness='same' (rand_like, dropout
# and the in-place fills it allows): (module, function) -> the argument names, looked up in their frame
_SAME_BATCHED = {("functorch_lite.ops.creation", "bernoulli"): ("input",),
                 ("functorch_lite.ops.creation", "normal"): ("mean", "std"),
                 ("functorch_lite.ops.creation", "multinomial"): ("input",),
                 ("functorch_lite.ops.creation", "_key_on"): ("t",),
                 ("functorch_lite.distributions._ops", "_draw"): ("tensors",)}


def _check_same() -> None:
    """Under randomness='same', a random op drawing for a batched tensor argument: torch's error."""
    f = sys._getframe(2)  # (the caller of the wrapped next_key)
    for _ in range(3):
        if f is None:
            return
        names = _SAME_BATCHED.get((f.f_globals.get("__name__"), f.f_code.co_name))
        if names is not None:
            for n in names:
                v = f.f_locals.get(n)
                for t in v if isinstance(v, tuple) else (v,):
                    if isinstance(t, Tensor) and isinstance(getattr(t._array, "batch_dim", None), int):
                        raise RuntimeError(_SAME_MSG)
            return
        f = f.f_back


@contextlib.contextmanager
def random_guard(randomness: str, index: Any, check_same: bool = False) -> Iterator[None]:
    """Wrap ``Generator.next_key`` while a batched function is traced (see the module docstring).
    ``check_same`` (vmap): under 'same', a random op given a batched tensor raises torch's error."""
    if (randomness == "same" and not check_same) or (randomness == "different" and index is None):
        yield
        return

    def make(orig):
        def next_key(self):
            if randomness == "error":
                raise RuntimeError(_RANDOM_ERROR)
            if randomness == "same":
                _check_same()
                return orig(self)
            return jax.random.fold_in(orig(self), index)
        return next_key
    with T.next_key_as(make):
        yield


def inplace_random_check(t) -> None:
    """torch's refusal of an in-place draw under ``randomness='different'`` into a tensor the vmap does not batch
    (``torch.zeros(3).normal_()`` inside: one value for the whole batch, which would look like 'same')."""
    if _RANDOMNESS and _RANDOMNESS[-1] == "different" and not isinstance(getattr(t._array, "batch_dim", None), int):
        raise RuntimeError("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
                           "appear like same randomness. If this is necessary for your usage, please file an issue "
                           "with functorch.")


@contextlib.contextmanager
def _rewinder(randomness: str) -> Iterator[Callable[[], None]]:
    """For ``chunk_size``: yields ``rewind()``, which puts every generator the chunks have drawn from back to
    its state before the first chunk, so each chunk draws the keys one unchunked call would (``'same'``: one
    value/mask for the whole batch; ``'different'``: the same base keys, folded with the global batch index)
    and the generators end up advanced as by one call. (torch resets the default generator's state before
    each chunk under ``'same'``; its CPU stream under ``'different'`` is sequential, so chunks continue it.)"""
    if randomness == "error":
        yield lambda: None
        return
    start: dict = {}

    def rewind():
        for g, k in start.values():
            g.key = k
    with T.keys_drawn(start):
        yield rewind


def _is_dims(d: Any) -> bool:
    if d is None or (isinstance(d, int) and not isinstance(d, bool)):
        return True
    if isinstance(d, (tuple, list)):
        return all(_is_dims(x) for x in d)
    if isinstance(d, dict):
        return all(_is_dims(x) for x in d.values())
    return False


def _out_leaf(x: Any) -> bool:
    return x is None or isinstance(x, Tensor)


def _broadcast(dims: Any, tree: Any, is_leaf: Callable = C.is_tensor) -> list | None:
    """Per-leaf dims: ``dims`` (a prefix of ``tree``, None/int leaves) broadcast over ``tree``'s leaves (Tensors,
    or what ``is_leaf`` says)."""
    d_leaves, d_tree = jax.tree_util.tree_flatten(dims, is_leaf=lambda x: x is None)
    try:
        subs = d_tree.flatten_up_to(tree)
    except (ValueError, TypeError):
        return None
    out = []
    for d, sub in zip(d_leaves, subs):
        out.extend([d] * len(jax.tree_util.tree_leaves(sub, is_leaf=is_leaf)))
    return out


def _batched(a: Any, trace: Any) -> bool:
    """Whether ``a`` is batched by the vmap whose trace is ``trace`` (JAX's batch tracers carry their trace and
    an int ``batch_dim``; anything else is unbatched at this level)."""
    return isinstance(a, jax.core.Tracer) and trace is not None and getattr(a, "_trace", None) is trace and \
        isinstance(getattr(a, "batch_dim", None), int)


_WRITE_CODE = Tensor._write.__code__
_ARITH = ("vmap: {}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args that has "
          "more elements than `self`. This happened due to `other` being vmapped over but `self` not being vmapped "
          "over {}. Please try to use out-of-place operators instead of {}. If said operator is being called inside "
          "the PyTorch framework, please file a bug report instead.")
_BN_MSG = ("Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in "
           "place, were not batched.\nIf you are using a module and do not need eval mode, please set "
           "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please "
           "see the functorch website for resources on how to patch your module to work with vmap")
# how torch's vmap words a batched value written in place into an unbatched tensor, by the in-place op: the ops
# whose batching rule checks the broadcast shape, those whose own rule names them, those with no batching rule
# (the fallback, "aten::" and the level); the others (copy_, mul_, setitem...) are "inplace arithmetic"
_VMAP_BROADCAST = {"add_", "copysign_", "atan2_"}
_VMAP_NAMED = {"index_put_", "fill_", "index_add_", "index_fill_", "scatter_add_", "scatter_reduce_"}
_VMAP_FALLBACK = {"addcmul_", "addcdiv_", "clamp_", "clamp_min_", "clamp_max_", "pow_", "float_power_", "lerp_",
                  "index_copy_", "fmod_", "remainder_", "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "put_", "hypot_",
                  "masked_scatter_", "scatter_", "embedding_renorm_", "xlogy_"}


def _batched_at(a: Any, trace: Any) -> bool:
    """Whether ``a`` is batched by the vmap whose trace is ``trace``, looking through the tracers of the
    transforms inside it (a ``grad`` in the vmapped function)."""
    while isinstance(a, jax.core.Tracer):
        if getattr(a, "_trace", None) is trace:
            return isinstance(getattr(a, "batch_dim", None), int)
        a = getattr(a, "val", None) if hasattr(a, "batch_dim") else getattr(a, "primal", None)
    return False


def _batch_size(a: Any, trace: Any) -> int:
    while getattr(a, "_trace", None) is not trace:
        a = getattr(a, "val", None) if hasattr(a, "batch_dim") else getattr(a, "primal", None)
    return a.val.shape[a.batch_dim]


def _inplace_error(op: tuple | None, self: Tensor, new: Any, log: "_VmapLog") -> RuntimeError:
    """torch's error for the in-place op ``op`` (``C.writer_op``) writing ``new``, batched by ``log``'s vmap, into
    ``self``, which that vmap does not batch."""
    name, targs = op if op is not None else ("copy_", ())
    if name == "batch_norm":
        return RuntimeError(_BN_MSG)
    if name in _VMAP_BROADCAST:
        shape = list(self._shape)
        return RuntimeError(f"output with shape {shape} doesn't match the broadcast shape "
                            f"{[_batch_size(new, log.trace), *shape]}")
    if name in _VMAP_FALLBACK or name == "masked_fill_" and C.tensor_overload(name, targs):
        return RuntimeError(_ARITH.format(f"aten::{name}", f"at level {log.level}", f"aten::{name}"))
    if name in _VMAP_NAMED:
        return RuntimeError(_ARITH.format(name, "in a vmap", name))
    return RuntimeError(_ARITH.format("inplace arithmetic", "in a vmap", "inplace arithmetic"))


class _VmapLog(C.CheckedLog):
    """The write log of a vmap being traced (``trace``; ``level``: how many vmaps deep): before every write
    (``storage.log_write`` asks ``in`` first), a value this vmap or an enclosing one batches, written into a
    tensor made before it (captured, or an argument it does not map) that it does not batch, raises torch's
    error, the tensor unchanged. (Tensors made inside the function are not checked: a ``zeros_like`` of a batched
    tensor is batched in torch, an unbatched constant here.)"""
    __slots__ = ("trace", "level")

    @classmethod
    def around(cls) -> "_VmapLog":
        """A log of this vmap's level, the one around its chunks' (``trace`` None: it checks nothing itself)."""
        log = cls()
        prev = _storage.WRITE_LOG[0]
        log.trace, log.level = None, prev.level if isinstance(prev, _VmapLog) else 0
        return log

    def __contains__(self, k) -> bool:
        f = sys._getframe(2)  # (log_write <- Tensor._write)
        if f.f_code is _WRITE_CODE:
            new = f.f_locals.get("arr")
            if isinstance(new, jax.core.Tracer):
                st = f.f_locals["s"].root()
                old = T._ARRAY.__get__(st)
                log = self
                while isinstance(log, _VmapLog):
                    if st.uid < log.start and _batched_at(new, log.trace) and not _batched_at(old, log.trace):
                        raise _inplace_error(C.writer_op(f.f_back), f.f_locals["self"], new, log)
                    log = log.prev
        return dict.__contains__(self, k)


_FALLBACK_WARN = ("There is a performance drop because we have not yet implemented the batching rule for {}. Please "
                  "file us an issue on GitHub so that we can prioritize its implementation. (Triggered internally at "
                  "/__w/pytorch/pytorch/aten/src/ATen/functorch/BatchedFallback.cpp:82.)")


def per_example_values(arr: Any, op: str) -> Any:
    """torch's vmap fallback for an op whose output shape depends on its input's values (``op``: its aten name,
    ``"aten::bincount"``), which runs the op once per example: ``arr``'s values on the host (numpy), with the
    batch dims of the vmaps batching it first (outermost first), then the example's own dims, after torch's
    performance warning; None where ``arr`` is not batched or its values are not there to read (a compiled or
    jitted trace). The op then runs batched with the output shape the examples agree on."""
    import warnings
    from .._warn import user_stacklevel
    from ..ops._deferred import concrete_batched
    a, batch = concrete_batched(arr)
    if not batch:
        return None
    warnings.warn(_FALLBACK_WARN.format(op), UserWarning, stacklevel=user_stacklevel())
    return a


def _move(arr: Any, od: int) -> Any:
    return arr if od == 0 else jnp.moveaxis(arr, 0, od)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``torch.func.vmap``: ``func`` mapped over a dimension of its inputs (``in_dims``), batched results
    stacked at ``out_dims``.

    >>> vmap(torch.dot)(x, y)          # x, y: (B, N) -> (B,)
    >>> vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)    # per-sample gradients
    """
    check_randomness(randomness)
    if chunk_size is not None and not chunk_size > 0:  # (torch's check: a str raises its TypeError here)
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = C.fn_name(func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is unsupported.")
        head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not (isinstance(in_dims, int) and not isinstance(in_dims, bool)) and not isinstance(in_dims, tuple):
            raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                             f"structure of inputs, got: {type(in_dims)}.")
        flat, tree = jax.tree_util.tree_flatten(args, is_leaf=C.tensor_or_none)
        dims = _broadcast(in_dims, args, C.tensor_or_none)
        if dims is None or len(dims) != len(flat):
            raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. in_dims has "
                             f"structure {C.tree_str(in_dims)} but inputs has structure {C.tree_str(args)}.")
        mapped, axes, sizes = [], [], []
        for leaf, d in zip(flat, dims):
            if d is None:
                continue
            if not isinstance(d, int):
                raise ValueError(f"{head}: Got in_dim={d} for an input but in_dim must be either an integer dimension "
                                 "or None.")
            if not isinstance(leaf, Tensor):
                raise ValueError(f"{head}: Got in_dim={d} for an input but the input is of type {type(leaf)}. We "
                                 "cannot vmap over non-Tensor arguments, please use None as the respective in_dim")
            n = leaf.dim()
            if not -n <= d < n:
                raise ValueError(f"{head}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
            mapped.append(leaf)
            axes.append(d % n)
            sizes.append(leaf.shape[d % n])
        if not mapped:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) != 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        if not _is_dims(out_dims):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                             "collection of ints representing where in the outputs the vmapped dimension should "
                             "appear.")
        if chunk_size is not None and not isinstance(chunk_size, int):
            raise TypeError(f"can't multiply sequence by non-int of type '{type(chunk_size).__name__}'")
        size = sizes[0]
        arrays = [t._array for t in mapped]

        def compute(arrays):
            """(output arrays, box, changed mapped inputs, external writes [(ExternalWrites, arrays)])"""
            if chunk_size is None or chunk_size >= size:
                outs, box, written, ext = _run(func, name, args, kwargs, flat, tree, dims, axes, arrays, size,
                                               out_dims, randomness)
                return outs, box, written, [ext]
            pieces = []
            # (each chunk runs the function: its writes to external tensors are stored before the next chunk, as
            # torch's chunks make them one after the other; ``every`` takes them all out at the end, as one)
            with _rewinder(randomness) as rewind, C.ExternalWrites(log=_VmapLog.around()) as every:
                for s in range(0, size, chunk_size):
                    n = min(chunk_size, size - s)
                    part = [jax.lax.slice_in_dim(a, s, s + n, axis=ax) for a, ax in zip(arrays, axes)]
                    rewind()
                    pieces.append(_run(func, name, args, kwargs, flat, tree, dims, axes, part, n, out_dims,
                                       randomness, s))
                    pieces[-1][3][0].write_back(pieces[-1][3][1])
                ext = (every, every.collect())
            box = pieces[0][1]
            outs = [p if od is None else jnp.concatenate(list(ps), axis=od)
                    for od, p, ps in zip(box["od"], pieces[0][0], zip(*[p[0] for p in pieces]))]
            written = [None if ws[0] is None else jnp.concatenate(ws, axis=0) for ws in zip(*[p[2] for p in pieces])]
            return outs, box, written, [ext]

        node = None
        if T.recording():  # the facade's tape records: one node for the whole call (if needed; _tape.py)
            py: list = []

            def flat_compute(arrs):
                outs, box, written, exts = compute(arrs)
                py[:] = [box, [w for w, _ in exts]]
                return outs, (written, [ws for _, ws in exts])
            outs, (written, ext_arrays), node = T.record(
                flat_compute, arrays, mapped, [x for x, d in zip(flat, dims) if d is None], func, kwargs,
                T.VmapBackward0)
            box, exts = py[0], list(zip(py[1], ext_arrays))
        else:
            outs, box, written, exts = compute(arrays)
        for w, ws in exts:
            w.write_back(ws)
        for t, a, ax in zip(mapped, written, axes):  # an in-place write to a mapped input reaches the caller's tensor
            if a is not None:
                t.copy_(C.wrap_array(_move(a, ax), t.dtype, t.device))
        res = [C.wrap_array(a, dt, dev) for a, (dt, dev) in zip(outs, box["metas"])]
        T.attach(node, res)
        for k, v in box["py"]:
            res.insert(k, v)
        return C.reorder_like(jax.tree_util.tree_unflatten(box["tree"], res), box["skel"])
    return wrapped


def _run(func, name, args, kwargs, flat, tree, dims, axes, arrays, size, out_dims, randomness, start=0):
    """One ``jax.vmap`` over ``arrays`` (the mapped tensors' arrays, in order; a chunk of the batch from index
    ``start``): (output arrays, box)."""
    box: dict = {}

    def inner(mapped_arrays, index):
        it = iter(mapped_arrays)
        new = [C.wrap_array(next(it), leaf.dtype, leaf.device) if d is not None else leaf
               for leaf, d in zip(flat, dims)]
        ins = [(t, t._storage.array) for t, d in zip(new, dims) if d is not None]
        trace = getattr(mapped_arrays[0], "_trace", None)
        log.trace = trace
        _RANDOMNESS.append(randomness)  # (what a custom Function's vmap staticmethod sees as info.randomness)
        try:
            with random_guard(randomness, index, True):
                out = C.call(func, C.reorder_like(jax.tree_util.tree_unflatten(tree, new), args), kwargs,
                             differentiate=T.DIFFERENTIATED[0] > 0)
        finally:
            _RANDOMNESS.pop()
        o_flat, o_tree = jax.tree_util.tree_flatten(out, is_leaf=_out_leaf)
        ods = _broadcast(out_dims, out, _out_leaf)
        for k, leaf in enumerate(o_flat):
            # a non-Tensor output (None too) is returned as it is where its out_dim is None, as torch's
            if not isinstance(leaf, Tensor) and (ods is None or k >= len(ods) or ods[k] is not None):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. Did "
                                 "you mean to set out_dims= to None for output?")
        if ods is None or len(ods) != len(o_flat):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                             f"structure of `outputs`. out_dims has structure {C.tree_str(out_dims)} but outputs has "
                             f"structure {C.tree_str(out)}.")
        box["py"] = [(k, leaf) for k, leaf in enumerate(o_flat) if not isinstance(leaf, Tensor)]
        if box["py"]:
            ods = [od for leaf, od in zip(o_flat, ods) if isinstance(leaf, Tensor)]
            o_flat = [leaf for leaf in o_flat if isinstance(leaf, Tensor)]
        for leaf, od in zip(o_flat, ods):
            a = leaf._array
            batched = _batched(a, trace)
            if od is None and batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            r = leaf.dim()
            if od is not None and not -(r + 1) <= od <= r:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-(r + 1)}, {r}], but got "
                                 f"{od})")
        box["tree"], box["metas"], box["skel"] = o_tree, [(t.dtype, t.device) for t in o_flat], C.skeleton(out)
        box["od"] = [None if od is None else od % (t.dim() + 1) for t, od in zip(o_flat, ods)]
        written = writes.collect()
        for a in written:
            if _batched(a, trace):
                raise RuntimeError(f"vmap({name}, ...): `{name}` wrote a batched value in place into a tensor that "
                                   f"is not batched (shape {list(a.shape)}, e.g. a BatchNorm running statistic in "
                                   "training mode). Use out-of-place operations, or pass that tensor as a vmapped "
                                   "input.")
        # the mapped inputs the function changed in place (``a.add_(1)``, BatchNorm statistics in a stacked buffer)
        changed = [t._storage.array if t._storage.array is not a else None for t, a in ins]
        return [t._array for t in o_flat], written, changed

    index = jnp.arange(start, start + size, dtype=jnp.uint32)
    log = _VmapLog()
    prev = _storage.WRITE_LOG[0]
    log.level = prev.level + 1 if isinstance(prev, _VmapLog) else 1
    with C.ExternalWrites(log=log) as writes:
        res, written, changed = jax.vmap(inner, in_axes=(list(axes), 0), out_axes=0, axis_size=size)(list(arrays),
                                                                                                       index)
    outs = [a[0] if od is None else _move(a, od) for a, od in zip(res, box["od"])]
    return outs, box, changed, (writes, [a[0] for a in written])
