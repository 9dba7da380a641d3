"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` on facade functions.

Each one builds a pure JAX function over the differentiated arguments' arrays (``_core``), hands it to the
matching ``jax`` transform, and wraps the results as facade Tensors. PyTorch's complex gradient is the
conjugate of JAX's cotangent convention, so complex gradients/cotangents are conjugated on the way in and out.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp

from .. import _promotion, dtypes as D
from .._tensor.tensor import Tensor, Size
from ..autograd import _function_transforms as _cf_tr
from . import _core as C
from . import _tape as T


def _conj(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda a: jnp.conj(a) if jnp.iscomplexobj(a) else a, tree)


def _pure(func: Callable, args: tuple, kwargs: dict, nums: tuple, metas: list, post: Callable,
          writes: C.ExternalWrites, reverse: bool = True) -> Callable:
    """``g(*arrays) -> (main, (aux arrays, written arrays))``: the user's function with the arguments ``nums``
    rebuilt from ``arrays``; ``post`` turns its result into ``(main, aux arrays)``. ``reverse`` (grad, vjp,
    jacrev): inside the function the differentiated inputs require grad, as torch.func's reverse-mode transforms
    show them (so an in-place op on one is refused as on any leaf that requires grad); forward mode (jvp, jacfwd,
    linearize) leaves them as they are. What the function writes into the rebuilt arguments (under ``no_grad``,
    through ``detach()``) reaches the caller's tensors (``writes.track``)."""
    targets = [t for i in nums for t in C.leaves(args[i])]

    def g(*arrays):
        new = [m.wrap(a) for m, a in zip(metas, arrays)]
        flat = C.leaves(new)
        writes.track(flat, targets)
        if reverse:
            for t in flat:
                if isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex):
                    t._requires_grad = True
        main, aux = post(C.call(func, tuple(C.replace_args(args, nums, new)), kwargs, True, forward=not reverse))
        return main, (aux, writes.collect())
    return g


def _recorded(cls, func: Callable, args: tuple, kwargs: dict, nums: tuple, arrays: list, body: Callable,
              extra: tuple = (), drop=None) -> tuple:
    """``body(arrays) -> (outs, aux)`` (``arrays``: one pytree per differentiated argument, as ``Meta.arrays``;
    ``outs`` a list of arrays, ``aux`` arrays not differentiated), on the facade's tape as one ``cls`` node when
    a differentiated argument or a tensor the function captures requires grad (``_tape.record``): (outs, aux,
    node or None). ``extra``: (tensors, arrays) differentiated too (jvp's tangents). ``drop``: see
    ``_tape.record``."""
    if not T.recording():
        return (*body(arrays if not extra else (arrays, list(extra[1]))), None)
    n = len(arrays)
    flat, tree = jax.tree_util.tree_flatten(list(arrays) + [list(extra[1]) if extra else []])
    tensors = [t for i in nums for t in jax.tree_util.tree_leaves(args[i], is_leaf=C.is_tensor)]
    tensors += list(extra[0]) if extra else []
    others = [a for j, a in enumerate(args) if j not in nums]

    def compute(fl):
        arrs = jax.tree_util.tree_unflatten(tree, fl)
        return body(arrs[:n] if not extra else (arrs[:n], arrs[n]))
    return T.record(compute, flat, tensors, others, func, kwargs, cls, drop=drop)


def _leaves(x: Any) -> list:
    return jax.tree_util.tree_leaves(x, is_leaf=C.is_tensor)


def grad_and_value(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``torch.func.grad_and_value``: returns ``(grad, value)`` (``(grad, (value, aux))`` with ``has_aux``).

    >>> gv = grad_and_value(lambda x: (x.sin() * x).sum())
    """
    return _grad_and_value(func, argnums, has_aux, True)


def _grad_and_value(func: Callable, argnums: Any, has_aux: bool, keep_value: bool) -> Callable:
    """``grad_and_value``; ``keep_value=False`` (``grad``): the value is dropped, so on the tape it gives the
    tensors it depends on no edge (torch: ``grad``'s result reaches only what the gradient depends on)."""
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = C.normalize_argnums(argnums, len(args))
        metas = [C.diff_meta(args[i]) for i in nums]
        arrays = [m.arrays(args[i]) for m, i in zip(metas, nums)]
        box, aux_box = {}, C.Aux()

        def post(out):
            out, aux = C.split_aux(out, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            if out.dtype.is_complex:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            box["out"] = (out.dtype, out.device)
            aux_arrays = aux_box.unwrap(aux) if has_aux else []
            if not (out.dtype.is_floating_point or out.dtype.is_complex):
                # an integer/bool output has no gradient: torch returns zeros; the value travels as an aux
                box["int"] = True
                return jnp.zeros((), jnp.float32), aux_arrays + [out._array]
            return out._array, aux_arrays

        def body(arrays):
            with C.ExternalWrites(refuse=(args, kwargs)) as w:
                g = _pure(func, args, kwargs, nums, metas, post, w)
                (value, (aux_arrays, written)), grads = jax.value_and_grad(g, argnums=tuple(range(len(nums))),
                                                                           has_aux=True)(*arrays)
            box["w"] = w
            if box.get("int"):
                value, aux_arrays = aux_arrays[-1], aux_arrays[:-1]
            box["n"] = (len(jax.tree_util.tree_leaves(grads)), len(aux_arrays))
            return [*jax.tree_util.tree_leaves(_conj(grads)), value, *aux_arrays], written

        outs, written, node = _recorded(T.GradBackward0, func, args, kwargs, nums, arrays, body,
                                        drop=None if keep_value else (lambda: (box["n"][0],)))
        box["w"].write_back(written)
        ng, _ = box["n"]
        it = iter(outs[:ng])
        grads = [C.reorder_like(m.wrap(m.take(it)), args[i])
                 for m, i in zip(metas, nums)]
        value = C.wrap_array(outs[ng], *box["out"])
        aux = aux_box.wrap(outs[ng + 1:]) if has_aux else None
        T.attach(node, [t for g in grads for t in _leaves(g)] + [value] + _leaves(aux))
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        if has_aux:
            return grads, (value, aux)
        return grads, value
    return wrapper


def grad(func: Callable, argnums: int | tuple = 0, has_aux: bool = False) -> Callable:
    """``torch.func.grad``: the gradient of a scalar-valued function w.r.t. the arguments ``argnums``.

    >>> g = grad(lambda x: (x.sin() * x).sum())   # g(x) == x.cos() * x + x.sin()
    """
    gv = _grad_and_value(func, argnums, has_aux, False)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = gv(*args, **kwargs)
        return (g, v[1]) if has_aux else g
    return wrapper


def _check_cotangents(cts: Any, out: Any) -> list:
    ct_leaves, out_leaves = C.leaves(cts), C.leaves(out)
    for c in ct_leaves:
        if isinstance(c, (bool, int, float, complex)):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(c).__name__}")
    if jax.tree_util.tree_structure(cts, is_leaf=C.is_tensor) != jax.tree_util.tree_structure(
            out, is_leaf=C.is_tensor) or C.tree_str(cts) != C.tree_str(out):  # (JAX's ignores dict key order)
        raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs to "
                           f"the function. cotangents: {C.tree_pprint(cts)}, primal output: {C.tree_pprint(out)}")
    arrays = []
    for i, (c, o) in enumerate(zip(ct_leaves, out_leaves)):
        if not isinstance(c, Tensor):
            raise RuntimeError(f"vjp(f, *primals): expected cotangents to be Tensors, got {type(c)}")
        if tuple(c.shape) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(c.shape)} and output[{i}] "
                               f"has a shape of {Size(o.shape)}.")
        a = c._array
        arrays.append(a if a.dtype == o.dtype.jnp else a.astype(o.dtype.jnp))
    return arrays


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``torch.func.vjp``: ``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``);
    ``vjp_fn(cotangents)`` returns a tuple with one gradient per primal.

    >>> out, vjp_fn = vjp(torch.sin, x); (gx,) = vjp_fn(torch.ones_like(out))
    """
    api = "vjp(f, *primals)"
    metas = [C.diff_meta(p) for p in primals]
    arrays = [m.arrays(p) for m, p in zip(metas, primals)]
    box, aux_box = {}, C.Aux()

    def post(out):
        out, aux = C.split_aux(out, has_aux, api)
        arrs, box["out"] = C.unwrap_outputs(out, api)
        C.check_float_outputs(out)
        return arrs, (aux_box.unwrap(aux) if has_aux else [])

    nums = tuple(range(len(primals)))

    def forward(arrays):
        with C.ExternalWrites(refuse=primals) as w:
            g = _pure(func, primals, {}, nums, metas, post, w)
            out_arrays, pullback, (aux_arrays, written) = jax.vjp(g, *arrays, has_aux=True)
        box["w"] = w
        return out_arrays, pullback, aux_arrays, written

    draws: dict = {}  # (the generators the forward drew from, their keys before: vjp_fn's rerun draws the same)

    def body(arrays):
        with T.keys_drawn(draws):
            out_arrays, pullback, aux_arrays, written = forward(arrays)
        box["pullback"] = pullback
        out_leaves = jax.tree_util.tree_leaves(out_arrays)
        box["n"] = len(out_leaves)
        return [*out_leaves, *aux_arrays], written

    outs, written, node = _recorded(T.VjpBackward0, func, primals, {}, nums, arrays, body)
    box["w"].write_back(written)
    out_meta = box["out"]
    n = box["n"]
    out = out_meta.wrap(jax.tree_util.tree_unflatten(out_meta.tree, outs[:n]))
    aux = aux_box.wrap(outs[n:]) if has_aux else None
    T.attach(node, _leaves(out) + _leaves(aux))
    # (recorded: the pullback's residuals are the recording's tracers; vjp_fn runs the forward again, on the tape)
    pullback = None if node is not None else box["pullback"]

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None) -> tuple:
        flat = _check_cotangents(cotangents, out)
        ct_tensors = C.leaves(cotangents)

        def back(arrs):
            prim, cts = arrs
            cts = _conj(jax.tree_util.tree_unflatten(out_meta.tree, cts))
            if pullback is not None and not T.DIFFERENTIATED[0]:
                pb = pullback
            else:
                with T.keys_as(draws):
                    pb = forward(prim)[1]
            res = pb(cts)
            return list(jax.tree_util.tree_leaves(_conj(res))), []

        if pullback is not None and not T.recording():
            res_flat, _ = back((None, flat))
            rnode = None
        else:
            res_flat, _, rnode = _recorded(T.VjpBackward0, func, primals, {}, nums, arrays, back,
                                           extra=(ct_tensors, flat))
        it = iter(res_flat)
        res = tuple(C.reorder_like(m.wrap(m.take(it)), p)
                    for m, p in zip(metas, primals))
        T.attach(rnode, [t for r in res for t in _leaves(r)])
        return res

    if has_aux:
        return out, vjp_fn, aux
    return out, vjp_fn


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> tuple:
    """``torch.func.jvp``: ``(output, jvp_out)`` (``(output, jvp_out, aux)`` with ``has_aux``).

    >>> out, t = jvp(torch.sin, (x,), (torch.ones_like(x),))   # t == x.cos()
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    if jax.tree_util.tree_structure(primals, is_leaf=C.is_tensor) != \
            jax.tree_util.tree_structure(tangents, is_leaf=C.is_tensor):
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{C.tree_str(primals)} and tangents with structure {C.tree_str(tangents)}")
    flat_p = C.input_leaves(primals)
    if not flat_p:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    for p in flat_p:
        if not isinstance(p, Tensor):
            raise RuntimeError(f"{api}: Expected primals to only contain Tensors, got {type(p)}")
    for t in C.input_leaves(tangents):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected tangents to only contain Tensors, got {type(t)}")
    metas = [C.diff_meta(p, forward=True) for p in primals]
    for t in C.leaves(tangents):
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise ValueError(f"Expected tangent to be floating point or complex, but got: {t.dtype}")
    p_arrays = tuple(m.arrays(p) for m, p in zip(metas, primals))
    t_flat = []
    for p, t in zip(flat_p, C.leaves(tangents)):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
        t_flat.append(t._array)
    # torch's tangent has the dtype promote_types(primal, tangent) (a float64 tangent on a float32 primal stays
    # float64; a complex one on a real primal keeps its imaginary part); JAX's must have the primal's
    p_dts = [p.dtype for p in flat_p]
    wide = [_promotion.promote_types(pd, t.dtype) for pd, t in zip(p_dts, C.leaves(tangents))]
    widen = any(q is not pd for q, pd in zip(wide, p_dts))
    box, aux_box = {}, C.Aux()

    def post(out):
        out, aux = C.split_aux(out, has_aux, api)
        arrs, box["out"] = C.unwrap_outputs(out, api)
        return arrs, (aux_box.unwrap(aux) if has_aux else [])

    nums = tuple(range(len(primals)))

    def take(flat):
        it = iter([a if a.dtype == pd.jnp else a.astype(pd.jnp) for a, pd in zip(flat, p_dts)])
        return tuple(m.take(it) for m in metas)

    def body(arrs):
        p_arrs, t_flat_arrs = arrs
        with C.ExternalWrites(refuse=primals) as w:
            g = _pure(func, primals, {}, nums, metas, post, w, reverse=False)
            if not widen:
                (out_arrays, (aux_arrays, written)), (tan_arrays, _) = jax.jvp(g, tuple(p_arrs), take(t_flat_arrs))
                tan_leaves = jax.tree_util.tree_leaves(tan_arrays)
            else:
                (out_arrays, (aux_arrays, written)), f_jvp = jax.linearize(g, *p_arrs)
                tan_leaves = _wide_tangents(f_jvp, take, t_flat_arrs, p_dts, wide)
        box["w"] = w
        out_leaves = jax.tree_util.tree_leaves(out_arrays)
        box["n"] = len(out_leaves)
        return [*out_leaves, *tan_leaves, *aux_arrays], written

    if T.recording():
        outs, written, node = _recorded(T.JvpBackward0, func, primals, {}, nums, list(p_arrays), body,
                                        extra=(C.leaves(tangents), t_flat))
    else:
        (outs, written), node = body((p_arrays, t_flat)), None
    box["w"].write_back(written)
    n = box["n"]
    tree = box["out"].tree
    out = box["out"].wrap(jax.tree_util.tree_unflatten(tree, outs[:n]))
    tan = box["out"].wrap(jax.tree_util.tree_unflatten(tree, outs[n:2 * n]))
    aux = aux_box.wrap(outs[2 * n:]) if has_aux else None
    T.attach(node, _leaves(out) + _leaves(tan) + _leaves(aux))
    if has_aux:
        return out, tan, aux
    return out, tan


def _wide_tangents(f_jvp: Callable, take: Callable, t_flat: list, p_dts: list, wide: list) -> list:
    """``jvp``'s output tangents for tangents wider than their primals (``wide``: the promoted dtypes): the
    linearised ``f_jvp`` (in the primals' dtypes) applied to the real and imaginary parts of the tangents, each
    floating output tangent promoted with the widest of them (torch: the tangent flows through the ops)."""
    to = functools.reduce(_promotion.promote_types, wide)
    split = [jnp.iscomplexobj(a) and not pd.is_complex for a, pd in zip(t_flat, p_dts)]
    tan = jax.tree_util.tree_leaves(f_jvp(*take([jnp.real(a) if sp else a for a, sp in zip(t_flat, split)]))[0])
    if any(split):
        im = jax.tree_util.tree_leaves(f_jvp(*take([jnp.imag(a) if sp else jnp.zeros_like(a, pd.jnp)
                                                    for a, sp, pd in zip(t_flat, split, p_dts)]))[0])
    out = []
    for k, a in enumerate(tan):
        if a.dtype == jax.dtypes.float0:
            out.append(a)
            continue
        dt = _promotion.promote_types(D.from_numpy_dtype(a.dtype), to).jnp
        out.append(a.astype(dt) + 1j * im[k].astype(dt) if any(split) else a.astype(dt))
    return out


def linearize(func: Callable, *primals: Any) -> tuple:
    """``torch.func.linearize``: ``(output, jvp_fn)``; ``jvp_fn(*tangents)`` is the JVP at ``primals``
    (the linearised program is built once, by ``jax.linearize``). On the tape (as torch's): ``output`` is
    differentiable w.r.t. the primals and captured tensors, ``jvp_fn``'s result w.r.t. the tangents only (it
    requires grad, reaching nothing, where ``output`` did: the linearised program's constants require grad).

    >>> out, jvp_fn = linearize(torch.sin, x); jvp_fn(torch.ones_like(x))   # == x.cos()
    """
    api = "linearize(f, *primals)"
    metas = [C.diff_meta(p, forward=True) for p in primals]
    arrays = [m.arrays(p) for m, p in zip(metas, primals)]
    flat_p = C.leaves(primals)
    nums = tuple(range(len(primals)))
    box = {}

    def post(out):
        arrs, box["out"] = C.unwrap_outputs(out, api, strict=False)
        return arrs, []

    def lin(arrs):
        with C.ExternalWrites() as w:
            g = _pure(func, primals, {}, nums, metas, post, w, reverse=False)
            (out_arrays, (_, written)), box["f_jvp"] = jax.linearize(g, *arrs)
        box["n"] = len(jax.tree_util.tree_leaves(out_arrays))
        return jax.tree_util.tree_leaves(out_arrays), (w, written)

    draws: dict = {}  # (the generators the forward drew from, their keys before: the rerun below draws the same)

    def body(arrs):
        with T.keys_drawn(draws):
            outs, (w, written) = lin(arrs)
        box["w"] = w
        if box["probe"]:
            # (recorded: the linearised program applied to ones, as extra outputs: whether each output tangent
            # depends on the primals, i.e. whether jvp_fn's results require grad, as torch's do)
            it = iter([jnp.ones_like(a) for a in jax.tree_util.tree_leaves(arrs)])
            tl = jax.tree_util.tree_leaves(box["f_jvp"](*[m.take(it) for m in metas])[0])
            box["pidx"] = [i for i, a in enumerate(tl) if T._floating(a)]
            outs = list(outs) + [tl[i] for i in box["pidx"]]
        return outs, written

    box["probe"] = T.recording()
    outs, written, node = _recorded(T.LinearizeBackward0, func, primals, {}, nums, arrays, body)
    n_out = box["n"]
    lin_rg: list = []  # per output tangent leaf: whether jvp_fn's result requires grad through the primals
    if node is not None:  # (the linearised program's residuals are the recording's tracers: build it again)
        live = node._live
        pidx = box["pidx"]
        n_tan = (max(pidx) + 1) if pidx else 0
        lin_rg = [False] * n_tan
        for k, i in enumerate(pidx):
            lin_rg[i] = live is None or live[n_out + k]
        with T.keys_as(draws):
            lin(arrays)  # (its writes are dropped: the recorded call's are written back)
    box["w"].write_back(written)
    out_meta, f_jvp = box["out"], box["f_jvp"]
    out = out_meta.wrap(jax.tree_util.tree_unflatten(out_meta.tree, outs[:n_out]))
    T.attach(node, _leaves(out) + [C.wrap_array(a, None, flat_p[0].device) for a in outs[n_out:]])

    def jvp_fn(*tangents: Any) -> Any:
        if jax.tree_util.tree_structure(tangents, is_leaf=C.is_tensor) != \
                jax.tree_util.tree_structure(primals, is_leaf=C.is_tensor):
            raise RuntimeError(f"Expected the tangents {C.tree_str(tangents)} to have the same argspec as the "
                               f"primals {C.tree_str(primals)}")
        flat_t = C.leaves(tangents)
        for i, (t, p) in enumerate(zip(flat_t, flat_p)):
            for what, a, b in (("shape", Size(t.shape), Size(p.shape)), ("device", t.device, p.device),
                               ("dtype", t.dtype, p.dtype)):
                if a != b:
                    raise RuntimeError(f"tangent:{i} with {what} {a} in flattened pytree doesn't match the {what} "
                                       f"{b} of the corresponding primal.")

        def compute(fl):
            it = iter(fl)
            return jax.tree_util.tree_leaves(f_jvp(*[m.take(it) for m in metas])[0]), []

        flat = [t._array for t in flat_t]
        if T.recording():
            tan, _, rnode = T.record(compute, flat, flat_t, [], None, {}, T.LinearizeBackward0, captured=False)
            rg = [i < len(lin_rg) and lin_rg[i] for i in range(len(tan))]
            if any(rg):  # (a nonlinear function: results that require grad, reaching nothing, as torch's)
                if rnode is None:
                    rnode = T.edgeless(T.LinearizeBackward0)
                    rnode._live = tuple(rg)
                elif rnode._live is not None:
                    rnode._live = tuple(a or b for a, b in zip(rnode._live, rg))
        else:
            (tan, _), rnode = compute(flat), None
        res = out_meta.wrap(jax.tree_util.tree_unflatten(out_meta.tree, tan))
        T.attach(rnode, _leaves(res))
        return res

    return out, jvp_fn


def _jac(kind: str, func: Callable, argnums: Any, has_aux: bool) -> Callable:
    api = "vjp(f, *primals)" if kind == "rev" else "jvp(f, primals, tangents)"

    @functools.wraps(func)
    def wrapper(*args):  # (no keyword arguments, as torch's jacrev / jacfwd: a TypeError naming the function)
        kwargs = {}
        nums = C.normalize_argnums(argnums, len(args))
        metas = [C.diff_meta(args[i], forward=kind == "fwd") for i in nums]
        _real(f"jac{kind}", "inputs", [dt for m in metas for dt, _ in m.metas])
        arrays = [m.arrays(args[i]) for m, i in zip(metas, nums)]
        box, aux_box = {}, C.Aux()

        def post(out):
            out, aux = C.split_aux(out, has_aux, api)
            arrs, box["out"] = C.unwrap_outputs(out, api)
            _real(f"jac{kind}", "outputs", [dt for dt, _ in box["out"].metas])
            if kind == "rev":
                C.check_float_outputs(out)
            return arrs, (aux_box.unwrap(aux) if has_aux else [])

        tr = jax.jacrev if kind == "rev" else jax.jacfwd

        def body(arrays):
            with C.ExternalWrites(refuse=args) as w:
                g = _pure(func, args, kwargs, nums, metas, post, w, reverse=kind == "rev")
                jac, (aux_arrays, written) = tr(g, argnums=tuple(range(len(nums))), has_aux=True)(*arrays)
            box["w"] = w
            leaves, box["jac"] = jax.tree_util.tree_flatten(jac)
            box["n"] = len(leaves)
            return [*[_conj_rev(a, kind) for a in leaves], *aux_arrays], written

        outs, written, node = _recorded(T.JacrevBackward0 if kind == "rev" else T.JacfwdBackward0, func, args,
                                        kwargs, nums, arrays, body)
        _share_jac_live(node, kind, box["n"], len(box["out"].metas), sum(len(m.metas) for m in metas))
        box["w"].write_back(written)
        jac = jax.tree_util.tree_unflatten(box["jac"], outs[:box["n"]])
        aux_arrays = outs[box["n"]:]
        out_meta = box["out"]
        per_out = out_meta.tree.flatten_up_to(jac)      # one entry per output leaf: a tuple over argnums
        wrapped = []
        for (odt, odev), per_arg in zip(out_meta.metas, per_out):
            row = []
            for m, j, i in zip(metas, per_arg, nums):
                flat = m.tree.flatten_up_to(j)
                hints = [odt if kind == "fwd" else dt for dt, _ in m.metas]
                row.append(C.reorder_like(jax.tree_util.tree_unflatten(
                    m.tree, [C.wrap_array(a, h, odev) for a, h in zip(flat, hints)]), args[i]))
            wrapped.append(row[0] if isinstance(argnums, int) else tuple(row))
        result = C.reorder_like(jax.tree_util.tree_unflatten(out_meta.tree, wrapped), out_meta.skel)
        aux = aux_box.wrap(aux_arrays) if has_aux else None
        T.attach(node, _leaves(result) + _leaves(aux))
        if has_aux:
            return result, aux
        return result
    return wrapper


def _share_jac_live(node, kind: str, n: int, n_out: int, n_in: int) -> None:
    """torch's ``jacrev`` computes one Jacobian per input leaf (all outputs at once) and ``jacfwd`` one per output
    leaf (all inputs at once), then splits it into views: the blocks of one such Jacobian (leaf ``o * n_in + j``
    of ``n``) require grad together."""
    live = getattr(node, "_live", None)
    if live is None or n != n_out * n_in or n == 0:
        return
    live = list(live)
    groups = [[o * n_in + j for o in range(n_out)] for j in range(n_in)] if kind == "rev" else \
        [[o * n_in + j for j in range(n_in)] for o in range(n_out)]
    for g in groups:
        if any(live[k] for k in g):
            for k in g:
                live[k] = True
    node._live = tuple(live)


def _real(api: str, what: str, dtypes: list) -> None:
    """torch.func's jacrev/jacfwd: real inputs and outputs only (JAX's would take them, or want holomorphic=True)."""
    for i, dt in enumerate(dtypes):
        if dt.is_complex:
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex tensor at flattened "
                               f"input idx: {i}")


def _conj_rev(a: Any, kind: str) -> Any:
    return jnp.conj(a) if kind == "rev" and jnp.iscomplexobj(a) else a


def jacrev(func: Callable, argnums: int | tuple = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """``torch.func.jacrev``: the Jacobian by reverse mode; shape ``output.shape + input.shape``.

    >>> jacrev(torch.sin)(x)   # == torch.diag(x.cos())
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jac("rev", func, argnums, has_aux)


def jacfwd(func: Callable, argnums: int | tuple = 0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """``torch.func.jacfwd``: the Jacobian by forward mode; shape ``output.shape + input.shape``.

    >>> jacfwd(torch.sin)(x)   # == torch.diag(x.cos())
    """
    from ._vmap import check_randomness, random_guard
    inner = _jac("fwd", func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        check_randomness(randomness)
        _cf_tr._JACFWD[0] += 1  # (torch's jacfwd vmaps: a custom Function in it needs vmap support)
        try:
            with random_guard(randomness, None):
                return inner(*args, **kwargs)
        finally:
            _cf_tr._JACFWD[0] -= 1
    return wrapper


def hessian(func: Callable, argnums: int | tuple = 0) -> Callable:
    """``torch.func.hessian``: ``jacfwd(jacrev(func, argnums), argnums)``.

    >>> hessian(lambda x: (x ** 3).sum())(x)   # == torch.diag(6 * x)
    """
    return jacfwd(jacrev(func, argnums), argnums)
