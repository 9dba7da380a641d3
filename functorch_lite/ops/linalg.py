"""Matrix products (spec §9.4, §9.5): no dtype promotion (PRO-33), PyTorch's shape errors; and torch.linalg's
matrix_power, cross, vecdot, multi_dot (their public functions are in ``functorch_lite/linalg.py``)."""
from __future__ import annotations

import math

import jax.numpy as jnp

from .. import dtypes as D
from ._registry import defop, saves_crossed
from .._promotion import _cname, no_kernel
from .._tensor.tensor import _size_dim, _wrap_dim
from ._dispatch import _type_name, scalars_prep


def _mm_check(targs, sargs):
    a, b = targs[0], targs[1]
    if len(a._shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} and "
                           f"{b._shape[0]}x{b._shape[1]})")


def folds_into_mm(shape, strides, b) -> bool:
    """PyTorch's matmul ``should_fold`` for a >= 3-D left operand (``shape`` / ``strides``) and a 1-D or 2-D ``b``:
    the batch dims are folded into one mm / mv when ``b`` requires grad, the operand is empty, or its leading dims
    view as one without a copy; otherwise it is an expanded bmm (whose dtype check words differently)."""
    return b._requires_grad or 0 in shape or all(strides[i] == strides[i + 1] * shape[i + 1]
                                                 for i in range(len(shape) - 2))


def _matmul_check(targs, sargs):
    a, b = targs
    sa, sb = a._shape, b._shape
    if a.dtype is not b.dtype and len(sa) >= 3 and len(sb) <= 2 and sb:  # (the rule leaves this case here)
        da, db = a.dtype, b.dtype
        if not folds_into_mm(sa, a.stride(), b):
            raise RuntimeError(f"expected scalar type {da.short} but found {db.short}")
        if len(sb) == 1:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {db.short}, {da.short}, and "
                               f"{db.short}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(da)} != {_cname(db)}")
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {len(sa)}D and {len(sb)}D")
    if len(sa) == 1 and len(sb) == 1:
        if sa[0] != sb[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
                               f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
        return
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        if len(sa) <= 2 and len(sb) <= 2:
            ra = sa[0] if len(sa) == 2 else 1
            cb = sb[1] if len(sb) == 2 else 1
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ra}x{k_a} and {k_b}x{cb})")
        if len(sa) == 3 and len(sb) == 3 and sa[0] == sb[0]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sb[0]}, {k_a}] but "
                               f"got: [{sb[0]}, {k_b}].")
        ra = 1
        for s in sa[:-1]:
            ra *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ra}x{k_a} and {k_b}x{sb[-1]})")
    if len(sa) > 2 or len(sb) > 2:
        from ._dispatch import broadcast_shapes
        broadcast_shapes(sa[:-2] if len(sa) > 2 else (), sb[:-2] if len(sb) > 2 else ())


def _matmul_name(targs, sargs):
    a, b = targs
    na, nb = len(a._shape), len(b._shape)
    if na == 2 and nb == 2:
        return "MmBackward0"
    if na == 2 and nb == 1:
        return "MvBackward0"
    if na == 1 and nb == 1:
        return "DotBackward0"
    if na == 1 and nb == 2:
        return "SqueezeBackward4"
    return "UnsafeViewBackward0"


def _matmul_shown(targs):
    """The graph torch's matmul records below its final view (spec AG-56..58; ``autograd.graph.shown``): a 1-D
    first operand ``unsqueeze(0)``-ed into an mm; a first operand of three or more dims folded by a reshape into an
    mm / mv (a 1-D first operand against a batched second: the second's transpose folded, into an mv); batched
    operands expanded to their common batch shape and reshaped into a bmm. Each reshape is a view of a contiguous
    operand, a reshape alias of one whose batch dims merge, else a copy (``_unsafe_view`` of a clone). None for
    the routes that transpose the result back (a 2-D or broadcast batch-1 first operand): their nodes are not
    shown."""
    a, b = targs
    na, nb = len(a._shape), len(b._shape)
    if na == 1 and nb == 2:
        return (("MmBackward0", (("UnsqueezeBackward0", (0,), "view"), 1), "inner", (1, b._shape[1])),)
    if na >= 3 and nb in (1, 2):
        rows, v = math.prod(a._shape[:-1]), _reshaped(a, 0, ())
        return (("MmBackward0", (v, 1), "inner", (rows, b._shape[1])) if nb == 2 else
                ("MvBackward0", (v, 1), "inner", (rows,)),)
    if na == 1 and nb >= 3:
        bt = ("TransposeBackward0", (1,), "view")
        v = ("UnsafeViewBackward0", (("CloneBackward0", (bt,), "view"),), "view")
        return (("MvBackward0", (v, 0), "inner", (math.prod(b._shape[:-2]) * b._shape[-1],)),)
    if na >= 3 and nb >= 3:
        from ._dispatch import broadcast_shapes
        batch = tuple(broadcast_shapes(a._shape[:-2], b._shape[:-2]))
        sides = []
        for i, t in enumerate(targs):
            if tuple(t._shape[:-2]) != batch and math.prod(t._shape[:-2]) == 1:
                return None  # (torch folds a batch-1 operand into an mm instead)
            sides.append(_reshaped(t, i, (("ExpandBackward0", (i,), "view"),),
                                   copies=tuple(t._shape[:-2]) != batch))
        return (("BmmBackward0", tuple(sides), "inner", (math.prod(batch), a._shape[-2], b._shape[-1])),)
    return None


def _reshaped(t, i, below, copies=False):
    """The node torch's ``reshape`` of operand ``i`` (``t``) records in matmul's folding, over ``below`` (or the
    operand's own edge): a view of a contiguous tensor, a reshape alias where its leading dims merge, else a copy
    (``copies``: an expanded operand, whose zero strides never merge)."""
    kids = below or (i,)
    st, sh = t.stride(), t._shape
    if not copies and t.is_contiguous():
        return ("ViewBackward0", kids, "view")
    if not copies and all(st[k] == st[k + 1] * sh[k + 1] for k in range(len(sh) - (3 if below else 2))):
        return ("ReshapeAliasBackward0", kids, "view")
    return ("UnsafeViewBackward0", (("CloneBackward0", kids, "view"),), "view")


def _matmul_device(targs):
    """matmul reports the device check of the kernel it lowers to (spec §4.3 rule 3)."""
    na, nb = len(targs[0]._shape), len(targs[1]._shape)
    if na == 2 and nb == 1:
        return ("self", "vec"), "mv"
    if na == 1 and nb == 1:
        return ("self", "tensor"), "dot"
    if na <= 2 and nb <= 2:
        return ("self", "mat2"), "mm"
    return ("self", "mat2"), "bmm"


@defop(required=True, float8=True, promote="matmul", grad_fn=_matmul_name, tensors=2, check=_matmul_check, device_check=_matmul_device,
       kernel="dot", autocast="lower", saves=saves_crossed(0, 1), shown=_matmul_shown)
def matmul(input, other):
    """``a @ b`` with PyTorch's broadcasting and errors; operands must share a dtype."""
    return _mm(input, other)


def _mm(a, b):
    if jnp.dtype(a.dtype).itemsize == 1 and jnp.issubdtype(a.dtype, jnp.floating):  # float8: upcast, cast back
        r = jnp.matmul(a.astype(jnp.float32), b.astype(jnp.float32))
        return D.cast_array(r, D.float32, D.from_numpy_dtype(a.dtype))
    return jnp.matmul(a, b)


@defop(required=True, float8=True, promote="matmul", grad_fn="MmBackward0", tensors=2, check=_mm_check, device_check=("self", "mat2"),
       kernel="addmm_impl_cpu_", autocast="lower", saves=saves_crossed(0, 1))
def mm(input, mat2):
    return _mm(input, mat2)


def _bmm_check(targs, sargs):
    a, b = targs
    if len(a._shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b._shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b._shape[0] != a._shape[0] or b._shape[1] != a._shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a._shape[0]}, "
                           f"{a._shape[2]}] but got: [{b._shape[0]}, {b._shape[1]}].")


@defop(required=True, promote="matmul", grad_fn="BmmBackward0", tensors=2, check=_bmm_check, device_check=("self", "mat2"),
       kernel="bmm", autocast="lower", saves=saves_crossed(0, 1))
def bmm(input, mat2):
    return jnp.matmul(input, mat2)


def _mv_check(targs, sargs):
    a, v = targs
    if len(a._shape) != 2 or len(v._shape) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a._shape)}, {len(v._shape)}")
    if a._shape[1] != v._shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._shape[0]}), mat ({a._shape[0]}x{a._shape[1]}), vec "
                           f"({v._shape[0]})")


@defop(required=True, promote="matmul", grad_fn="MvBackward0", tensors=2, check=_mv_check, device_check=("self", "vec"),
       kernel="addmv_impl_cpu", autocast={"cuda": "lower"}, saves=saves_crossed(0, 1))
def mv(input, vec):
    return jnp.matmul(input, vec)


def _dot_check(targs, sargs):
    a, b = targs
    if len(a._shape) != 1 or len(b._shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a._shape)}D and {len(b._shape)}D tensors")
    if a._shape[0] != b._shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._shape[0]}] and src [{b._shape[0]}] to have "
                           f"the same number of elements, but got {a._shape[0]} and {b._shape[0]} elements "
                           "respectively")


@defop(required=True, promote="matmul", grad_fn="DotBackward0", tensors=2, check=_dot_check, device_check=("self", "tensor"),
       autocast={"cuda": "promote"}, saves=saves_crossed(0, 1))
def dot(input, tensor):
    return jnp.dot(input, tensor)


def _inner_prep(targs, sargs):
    a, b = targs
    if a._shape and b._shape and a._shape[-1] != b._shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a._shape)} and {list(b._shape)}")
    return sargs


def _inner_rule(op, sig, sargs):
    """A 0-d operand: ``self * other`` (elementwise promotion); else tensordot's rule: one dtype for both."""
    if sig[0][0] == 0 or sig[1][0] == 0:
        from .._promotion import rule_elementwise
        return rule_elementwise(op, sig, sargs)
    dt = sig[0][1]
    if dt is not sig[1][1]:
        raise RuntimeError("both inputs should have same dtype")
    vectors = sig[0][0] == 1 and sig[1][0] == 1
    if dt is D.bool or dt in D.UNSIGNED_WIDE or (vectors and dt in D.FLOAT8):  # (PyTorch's float8 mm exists on CPU)
        raise no_kernel("dot" if vectors else "addmm_impl_cpu_", dt)
    return (None, None), (dt,)


def _inner_name(targs, sargs):
    return "MulBackward0" if not targs[0]._shape or not targs[1]._shape else "ViewBackward0"


def _inner_autocast(sargs, targs):
    """torch's inner is a product with a 0-d operand, ``dot`` for two vectors (neither autocasts on CPU), else a
    ``tensordot`` -- a matmul, on the lower-precision list, reached after tensordot's same-dtype check."""
    a, b = targs
    if not (a.ndim and b.ndim):
        return None
    if a.ndim > 1 or b.ndim > 1:
        return "lower" if a.dtype is b.dtype else None
    from ._registry import OPS
    return OPS["dot"].autocast


@defop(required=True, promote=_inner_rule, grad_fn=_inner_name, tensors=2, prep=_inner_prep,
       device_check=("self", "other"), broadcast=False, float8=True, autocast=_inner_autocast)
def inner(input, other):
    """``torch.inner``: a sum over the last dims of both (``tensordot(a, b, ([-1], [-1]))``, shape
    ``a.shape[:-1] + b.shape[:-1]``); a 0-d operand multiplies (PyTorch's composite, so ViewBackward0 /
    MulBackward0)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    dt = input.dtype
    if dt.itemsize == 1 and jnp.issubdtype(dt, jnp.floating):  # float8: accumulate in float32, round once
        return jnp.tensordot(input.astype(jnp.float32), other.astype(jnp.float32), axes=((-1,), (-1,))).astype(dt)
    return jnp.tensordot(input, other, axes=((-1,), (-1,)))


def _outer_check(targs, sargs):
    for t, name in zip(targs, ("self", "vec2")):
        if len(t._shape) != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {len(t._shape)}-D")


@defop(required=True, float8=True, promote="elementwise", broadcast=False, grad_fn="MulBackward0", tensors=2,
       aliases=("ger",), check=_outer_check, saves=saves_crossed(0, 1))
def outer(input, vec2):
    """``input[:, None] * vec2`` (it promotes, as PyTorch's outer does)."""
    return jnp.outer(input, vec2)


def _addmm_rule(op, sig, sargs):
    """torch's addmm checks the added tensor's dtype against mat2's, then mat1's (where it took ``input`` cast to
    the product's dtype: a float64 bias on a float32 product came back float32)."""
    from .._promotion import rule_matmul
    i, a, b = sig
    if type(b) is tuple and type(i) is tuple and i[1] is not b[1]:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {i[1].short} and {b[1].short}")
    if type(a) is tuple and type(b) is tuple and a[1] is not b[1] and a[0] == b[0] == 2:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {a[1].short} and {b[1].short}")
    rule_matmul(op, sig[1:], sargs)
    dt = sig[1][1]
    return (dt, None, None), (dt,)


def expands_to(t, target) -> None:
    """The added tensor of addmm / baddbmm / linear (``input``, the bias) broadcasts to the product's shape
    ``target``, else torch's expand error (JAX's ValueError leaked); the usual exact fit costs one compare."""
    n = len(t._shape)
    if n > len(target) or t._shape != tuple(target[len(target) - n:]):
        from .view_ops import _expand_meta
        _expand_meta(t, (tuple(target),))


def _addmm_check(targs, sargs):
    i, a, b = targs
    if len(a._shape) == 2 and len(b._shape) == 2 and a._shape[1] == b._shape[0]:
        expands_to(i, (a._shape[0], b._shape[1]))


def _baddbmm_check(targs, sargs):
    i, a, b = targs
    if len(a._shape) == 3 and len(b._shape) == 3 and a._shape[0] == b._shape[0] and a._shape[2] == b._shape[1]:
        expands_to(i, (a._shape[0], a._shape[1], b._shape[2]))


@defop(required=True, float8=True, promote=_addmm_rule, grad_fn="AddmmBackward0", tensors=3, autocast="lower",
       device_check=("self", "mat1", "mat2"), saves=saves_crossed(1, 2), check=_addmm_check,
       prep=scalars_prep("addmm", "beta", "alpha"))  # (a 0-d tensor beta / alpha: its number, as torch's parser)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _add_product(input, mat1, mat2, beta, alpha)


def _add_product(input, a, b, beta, alpha):
    """``beta * input + alpha * (a @ b)`` as PyTorch's addmm / baddbmm kernels compute it: bfloat16 / float16
    accumulate in float32, scale and add ``input`` there and round once; beta == 0 ignores ``input`` (NaN
    included)."""
    lowp = a.dtype in (jnp.bfloat16, jnp.float16)
    r = jnp.matmul(a, b, preferred_element_type=jnp.float32 if lowp else None)
    if alpha != 1:
        r = r * jnp.asarray(alpha, r.dtype)
    if beta == 0:
        r = jnp.broadcast_to(r, jnp.broadcast_shapes(input.shape, r.shape))
    else:
        i = input.astype(r.dtype)
        r = r + (i if beta == 1 else i * jnp.asarray(beta, r.dtype))
    return r.astype(a.dtype) if lowp else r


def _baddbmm_rule(op, sig, sargs):
    """baddbmm's own dtype checks, in its order (``input`` against ``batch1``, then the batches), and its own
    kernel (no bool, float8, uint16/32/64 one), named in its errors."""
    if not all(type(s) is tuple for s in sig):  # (a Python number where a tensor goes: left to what follows)
        return _addmm_rule(op, sig, sargs)
    i, a, b = (s[1] for s in sig)
    if i is not a:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cname(i)}, batch1: {_cname(a)}, "
                           f"batch2: {_cname(b)}")
    if a is not b:
        raise RuntimeError(f"expected scalar type {a.short} but found {b.short}")
    if a is D.bool or a in D.FLOAT8 or a in D.UNSIGNED_WIDE:
        raise no_kernel(op.kernel, a)
    return (None, None, None), (a,)


@defop(required=True, promote=_baddbmm_rule, grad_fn="BaddbmmBackward0", tensors=3, autocast="lower", kernel="baddbmm",
       saves=saves_crossed(1, 2), check=_baddbmm_check, prep=scalars_prep("baddbmm", "beta", "alpha"))
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _add_product(input, batch1, batch2, beta, alpha)


def _einsum_labels(part: str, offset: int, what: str):
    """PyTorch's einsum parser for one operand's (or the output's) subscripts: a list of labels with "..." for
    an ellipsis; spaces are skipped, ``offset`` places ``part`` in the equation for the error's index."""
    labels, i, found = [], 0, False
    while i < len(part):
        ch = part[i]
        if ch == ".":
            if found:
                raise RuntimeError(f"einsum(): found '.' for {what} but an ellipsis (...) was already found"
                                   if what == "output" else
                                   f"einsum(): found '.' for {what} for which an ellipsis was already found")
            if not part.startswith("...", i):
                raise RuntimeError(f"einsum(): found '.' for {what} that is not part of any ellipsis"
                                   + (" (...)" if what == "output" else ""))
            labels.append("...")
            found = True
            i += 3
            continue
        if ch != " ":
            if not ("a" <= ch <= "z" or "A" <= ch <= "Z"):
                raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            labels.append(ch)
        i += 1
    return labels


def _einsum_prep(targs, sargs):
    """PyTorch's einsum checks in its order: subscripts and operand count, subscripts vs. each operand's
    dims, the output's subscripts, label sizes that must broadcast, one dtype. Returns the equation sans spaces."""
    eq = sargs[0]
    ops = targs[0]
    lhs, arrow, rhs = eq.partition("->")
    parts = lhs.split(",")
    op_labels = []
    pos = 0
    for k, part in enumerate(parts):
        if k >= len(ops):  # (PyTorch raises on reaching the comma)
            raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
        op_labels.append(_einsum_labels(part, pos, f"operand {k}"))
        pos += len(part) + 1
    if len(parts) < len(ops):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for k, (labels, t) in enumerate(zip(op_labels, ops)):
        n, nd = sum(lab != "..." for lab in labels), len(t._shape)
        if "..." in labels and n > nd:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the number of "
                               f"dimensions ({nd}) for operand {k}")
        if "..." not in labels and n != nd:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the "
                               f"number of dimensions ({nd}) for operand {k} and no ellipsis was given")
    if arrow:
        seen_in = {lab for labels in op_labels for lab in labels}
        out_seen = set()
        for lab in _einsum_labels(rhs, len(lhs) + 2, "output"):
            if lab == "...":
                continue
            if lab in out_seen:
                raise RuntimeError(f"einsum(): output subscript {lab} appears more than once in the output")
            if lab not in seen_in:
                raise RuntimeError(f"einsum(): output subscript {lab} does not appear in the equation for any input "
                                   "operand")
            out_seen.add(lab)
    # sizes, operand by operand and label by label as PyTorch walks them: a size other than 1 must match the one seen
    # before (ellipsis dims aligned right); a label repeated within an operand takes a diagonal (sizes equal)
    ell_n = max((len(t._shape) - len(labels) + 1 for labels, t in zip(op_labels, ops) if "..." in labels), default=0)
    seen, ell_sizes = {}, [1] * ell_n
    for k, (labels, t) in enumerate(zip(op_labels, ops)):
        sizes, first, dim = list(t._shape), {}, 0
        for ch in labels:
            if ch == "...":
                for j in range(ell_n - (len(t._shape) - len(labels) + 1), ell_n):
                    n = sizes[dim]
                    if n != 1:
                        if ell_sizes[j] not in (1, n):
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {k}has size "
                                               f"{n} which does not broadcast with previously seen ellipsis with size "
                                               f"{ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = n
                    dim += 1
            elif ch in first:
                if sizes[dim] != sizes[first[ch]]:
                    raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {k} but the sizes don't match, "
                                       f"{sizes[dim]} != {sizes[first[ch]]}")
                del sizes[dim]  # (the diagonal stays at the first occurrence's dim)
            else:
                n = sizes[dim]
                if n != 1:
                    if seen.get(ch, 1) not in (1, n):
                        raise RuntimeError(f"einsum(): subscript {ch} has size {n} for operand {k} which does not "
                                           f"broadcast with previously seen size {seen[ch]}")
                    seen[ch] = n
                first[ch] = dim
                dim += 1
    dts = {t.dtype for t in ops}
    if len(dts) > 1:
        a, b = ops[0].dtype, next(t.dtype for t in ops if t.dtype is not ops[0].dtype)
        raise RuntimeError(f"expected scalar type {a.short} but found {b.short}")
    return (eq.replace(" ", ""),)


def _einsum_rule(op, sig, sargs):
    dt = sig[0][1]
    eq = sargs[0]
    lhs, _, rhs = eq.partition("->")
    ins = set(lhs.replace(",", "").replace(".", ""))
    out = set(rhs.replace(".", "")) if rhs else {c for c in ins if lhs.replace(",", "").count(c) == 1}
    if ins - out and (dt is D.bool or dt in D.FLOAT8):  # a contraction runs PyTorch's bmm kernel
        raise no_kernel("bmm", dt)
    return (None,) * len(sig), (dt,)


@defop("_einsum", promote=_einsum_rule, grad_fn="ViewBackward0", tensors="list", method=False, function=False,
       prep=_einsum_prep, autocast="lower", device_check="cat")
def _einsum(operands, equation):
    return jnp.einsum(equation, *operands)


def _einsum_one(t, eq: str):
    """PyTorch's einsum of one operand: views of it (a diagonal per repeated label, moved back to the label's first
    dim, then one permute into the output order: PermuteBackward0, writes reach the input), then a sum over the
    contracted dims (SumBackward1) if there are any."""
    from ._dispatch import dispatch
    from ._registry import OPS
    lhs, arrow, rhs = eq.partition("->")
    labels = _einsum_labels(lhs, 0, "operand 0")
    ell_n = len(t._shape) - len(labels) + 1 if "..." in labels else 0
    named = sorted(set(labels) - {"..."})  # (PyTorch's label order: A-Z, then a-z)
    pos, p, ell_index = {}, 0, None
    if arrow:
        for ch in _einsum_labels(rhs, 0, "output"):
            if ch == "...":
                ell_index, p = p, p + ell_n
            else:
                pos[ch], p = p, p + 1
    else:  # the implicit output: the ellipsis, then the labels that appear once
        ell_index, p = 0, ell_n
        for ch in named:
            if labels.count(ch) == 1:
                pos[ch], p = p, p + 1
    n_out = p
    if ell_index is None:  # (an ellipsis left out of the output is summed)
        ell_index, p = p, p + ell_n
    for ch in named:
        if ch not in pos:
            pos[ch], p = p, p + 1
    perm, first, dim = [0] * p, {}, 0
    for ch in labels:
        if ch == "...":
            for j in range(ell_n):
                perm[ell_index + j], dim = dim, dim + 1
        elif ch in first:  # diagonal(0, first, dim).movedim(-1, first)
            t = dispatch(OPS["diagonal"], (t,), (0, first[ch], dim))
            order = list(range(len(t._shape) - 1))
            order.insert(first[ch], len(t._shape) - 1)
            t = dispatch(OPS["permute"], (t,), (tuple(order),))
        else:
            first[ch], perm[pos[ch]], dim = dim, dim, dim + 1
    t = dispatch(OPS["permute"], (t,), (tuple(perm),))
    if p > n_out:
        t = dispatch(OPS["sum"], (t,), (tuple(range(n_out, p)), False, None, None))
    return t


def _subscript(n) -> str:
    """One entry of an einsum sublist: Ellipsis, or 0..25 -> 'A'..'Z', 26..51 -> 'a'..'z' (PyTorch's mapping)."""
    if n == Ellipsis:
        return "..."
    if n >= 0 and n < 26:
        return chr(ord("A") + n)
    if n >= 26 and n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def einsum(*args):
    """``torch.einsum('bi,bj->bij', a, b)``, ``einsum(eq, [a, b])`` or the sublist form
    ``einsum(a, [0, 1], b, [1], [0])`` (operand, sublist, ..., optional output sublist; Ellipsis allowed);
    no dtype promotion (EIN-06)."""
    from ._dispatch import dispatch
    from ._registry import OPS
    from .._tensor.tensor import Tensor
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):  # sublist form -> an equation string, as PyTorch does
        equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):  # (PyTorch's argument parser: the equation, then each operand)
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {_type_name(equation)}")
    for i, t in enumerate(operands):
        if not isinstance(t, Tensor):
            from .indexing import _tp_name
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {_tp_name(t)}")
    if len(operands) == 1 and isinstance(operands[0], Tensor):  # views of the operand (and a sum), as PyTorch's:
        (eq,) = _einsum_prep((tuple(operands),), (equation,))  # (no autocast: it casts only a contraction's bmm)
        return _einsum_one(operands[0], eq)
    return dispatch(OPS["_einsum"], (tuple(operands),), (equation,))


# ``torch.spmm``: on dense tensors ATen's mm itself (its schema, errors and MmBackward0); no Tensor method
FUNCTIONS = {"einsum": einsum, "spmm": mm}


# ---- torch.linalg's products: matrix_power, cross, vecdot, multi_dot (public in functorch_lite/linalg.py) ----------
def _mpow_prep(targs, sargs):
    s = targs[0]._shape
    if len(s) < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if s[-1] != s[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {s[-2]} by {s[-1]} "
                           "matrices")
    return sargs


def _mpow_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt is D.bool and sargs[0] >= 2:
        raise no_kernel("addmm_impl_cpu_", dt)
    return (None,), (dt,)


def _mpow_name(targs, sargs):
    n = sargs[0]
    if n in (0, 1):
        return ("CopyBackwards", "CloneBackward0")[n]
    return "MmBackward0" if len(targs[0]._shape) == 2 else "UnsafeViewBackward0"


@defop("linalg_matrix_power", autocast="lower", promote=_mpow_rule, grad_fn=_mpow_name, prep=_mpow_prep,
       method=False, function=False, float8=True)
def _matrix_power(A, n):
    """``A^n`` for n >= 0 in PyTorch's multiplication order (the wrapper inverts A for n < 0)."""
    if n == 0:
        return jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    if n in (1, 2, 3):
        return A if n == 1 else (_mm(A, A) if n == 2 else _mm(_mm(A, A), A))
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else _mm(z, z)
        if bit:
            result = z if result is None else _mm(result, z)
    return result


def _cross_prep(targs, sargs):
    a, b = targs
    if len(a._shape) != len(b._shape):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _size_dim(sargs[0], len(a._shape))  # (torch wraps it without taking a 0-d input as 1-d: its IndexError)
    if a._shape[d] != 3 or b._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {sargs[0]} must have length 3. Got {a._shape[d]} and "
                           f"{b._shape[d]}")
    from ._dispatch import broadcast_shapes
    broadcast_shapes(a._shape, b._shape)
    return (d,)


def _cross_rule(op, sig, sargs):
    a, b = sig[0][1], sig[1][1]
    if a is not b:
        raise RuntimeError(f"expected scalar type {a.short} but found {b.short}")
    if a is D.bool:
        raise no_kernel("cross", a)
    return (None, None), (a,)


@defop("linalg_cross", promote=_cross_rule, grad_fn="LinalgCrossBackward0", tensors=2, prep=_cross_prep,
       method=False, function=False, kernel="cross")
def _cross(input, other, dim):
    a, b = jnp.broadcast_arrays(input, other)
    return jnp.cross(a, b, axis=dim)


def _vecdot_rule(op, sig, sargs):
    a, b = sig[0][1], sig[1][1]
    if a.category < D.FLOAT:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got {a.short}")
    if a is not b:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {a.short} and "
                           f"y of type {b.short} instead")
    return (None, None), (a,)


def _vecdot_prep(targs, sargs):
    from ._dispatch import broadcast_shapes
    shape = broadcast_shapes(targs[0]._shape, targs[1]._shape)
    return (_wrap_dim(sargs[0], len(shape)),)


@defop("linalg_vecdot", autocast="lower", promote=_vecdot_rule, grad_fn="SumBackward1", tensors=2, prep=_vecdot_prep, method=False,
       function=False, kernel="sum_cpu")
def _vecdot(x, y, dim):
    """``sum(conj(x) * y, dim)`` over the broadcast inputs."""
    p = jnp.conj(x) * y
    return jnp.sum(p.astype(jnp.float32) if p.dtype in (jnp.float16, jnp.bfloat16) else p, dim)


def _chain_order(dims):
    """PyTorch's multi_dot order: a cost comparison for three matrices, else the matrix-chain DP (first
    minimal split). ``dims[i], dims[i+1]``: the shape of matrix i. Returns a nested tuple of indices."""
    n = len(dims) - 1
    if n == 2:
        return (0, 1)
    if n == 3:
        a, b, c, d = dims
        return (0, (1, 2)) if (a * c) * (b + d) > (b * d) * (a + c) else ((0, 1), 2)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def tree(i, j):
        return i if i == j else (tree(i, split[i][j]), tree(split[i][j] + 1, j))
    return tree(0, n - 1)


def _multi_dot_prep(targs, sargs):
    ts = list(targs[0])
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(ts):
        nd = len(t._shape)
        if i == 0 and nd not in (1, 2):
            raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {nd}D")
        if i == n - 1 and nd not in (1, 2):
            raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {nd}D")
        if 0 < i < n - 1 and nd != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
        if t.dtype is not ts[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_cname(ts[0].dtype)} and tensor {i} {_cname(t.dtype)}")
    shapes = [tuple(t._shape) for t in ts]
    shapes[0] = (1,) + shapes[0] if len(shapes[0]) == 1 else shapes[0]
    shapes[-1] = shapes[-1] + (1,) if len(shapes[-1]) == 1 else shapes[-1]
    for i in range(n - 1):
        if shapes[i][1] != shapes[i + 1][0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(ts[i]._shape)} and "
                               f"{list(ts[i + 1]._shape)} cannot be multiplied")
    return (_chain_order([s[0] for s in shapes] + [shapes[-1][1]]),)


def _multi_dot_rule(op, sig, sargs):
    dt = sig[0][1]
    if dt is D.bool:
        raise no_kernel("addmm_impl_cpu_", dt)
    return (None,) * len(sig), (dt,)


@defop("linalg_multi_dot", autocast="lower", promote=_multi_dot_rule, grad_fn="ViewBackward0", tensors="list", prep=_multi_dot_prep,
       method=False, function=False, device_check="cat", float8=True)
def _multi_dot(tensors, order):
    """The chain product of ``tensors`` in the cheapest order (the first/last may be vectors)."""
    ms = [t[None, :] if i == 0 and t.ndim == 1 else t for i, t in enumerate(tensors)]
    ms[-1] = ms[-1][:, None] if tensors[-1].ndim == 1 else ms[-1]

    def run(node):
        return ms[node] if isinstance(node, int) else _mm(run(node[0]), run(node[1]))
    r = run(order)
    if tensors[0].ndim == 1:
        r = r[0]
    if tensors[-1].ndim == 1:
        r = r[..., 0]
    return r
