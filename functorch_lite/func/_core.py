"""Shared machinery of ``functorch_lite.func``: facade functions as JAX functions over arrays.

A transform turns the user's facade function into a pure JAX function: the incoming arrays (or tracers) are
wrapped as fresh facade Tensors with the *original* facade dtype and device, the user's function runs with
autograd recording off (JAX does the differentiation), and the output Tensors are unwrapped to their arrays.
Results coming back from JAX are wrapped again with facade dtypes (the input's or output's, whichever the
result corresponds to; ``from_numpy_dtype`` only when JAX produced a different dtype). Nested transforms
compose because an inner transform simply sees tensors whose arrays are the outer transform's tracers.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp

from .. import dtypes as D
from .._tensor import storage as _storage
from .._tensor.tensor import Tensor
from ..autograd import grad_mode as _gm
from ..autograd.grad_mode import no_grad


def _register_return_types() -> None:
    """``torch.return_types`` results (``x.max(dim=0)``) are pytree nodes in torch.func; make them JAX pytrees."""
    from ..ops.reduction import return_types
    for name in dir(return_types):
        cls = getattr(return_types, name)
        if isinstance(cls, type) and issubclass(cls, tuple):
            try:
                jax.tree_util.register_pytree_node(cls, lambda t: (tuple(t), None),
                                                   lambda _, c, cls=cls: cls(tuple(c)))
            except ValueError:  # already registered
                pass


_register_return_types()


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def leaves(tree: Any) -> list:
    """The leaves of a pytree whose leaves are facade Tensors (or other objects)."""
    return jax.tree_util.tree_leaves(tree, is_leaf=is_tensor)


def ordered_leaves(tree: Any) -> list:
    """The leaves of a pytree in torch's order (dicts in insertion order, JAX's sorts their keys; None a leaf)."""
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in ordered_leaves(v)]
    if isinstance(tree, (list, tuple)) and not isinstance(tree, Tensor):
        return [x for v in tree for x in ordered_leaves(v)]
    return [tree]


def tensor_or_none(x: Any) -> bool:
    return x is None or isinstance(x, Tensor)


def input_leaves(tree: Any) -> list:
    """``leaves``, a None among them (a pytree input's None is a leaf to torch.func, refused where it must be a
    Tensor; JAX's pytrees drop it)."""
    return jax.tree_util.tree_leaves(tree, is_leaf=tensor_or_none)


def tree_str(tree: Any, indent: int = 0) -> str:
    """A pytree's structure as torch's ``TreeSpec`` repr (leaves ``*``), for torch.func's error messages."""
    if isinstance(tree, Tensor) or not isinstance(tree, (tuple, list, dict)):
        return "*"
    if isinstance(tree, dict):
        name, context, children = type(tree).__name__, list(tree), list(tree.values())
    elif hasattr(tree, "_fields"):
        name, context, children = "namedtuple", type(tree), list(tree)
    else:
        name, context, children = type(tree).__name__, None, list(tree)
    body = ""
    if children:
        indent += 2
        body = tree_str(children[0], indent) + ("," if len(children) > 1 else "")
        body += ",".join("\n" + " " * indent + tree_str(c, indent) for c in children[1:])
    return f"TreeSpec({name}, {context}, [{body}])"


class _Star:
    def __repr__(self) -> str:
        return "*"


def tree_pprint(tree: Any) -> str:
    """A pytree's structure as torch's ``treespec_pprint`` (the containers' repr, leaves ``*``)."""
    def star(t):
        if isinstance(t, dict):
            return type(t)((k, star(v)) for k, v in t.items())
        if isinstance(t, (tuple, list)) and not isinstance(t, Tensor):
            items = [star(v) for v in t]
            return type(t)(*items) if hasattr(t, "_fields") else type(t)(items)
        return _Star()
    return repr(star(tree))


def fn_name(func: Callable) -> str:
    return getattr(func, "__name__", repr(func))


def skeleton(tree: Any) -> Any:
    """The containers of a pytree with its leaves dropped: remembers dict key order (JAX sorts dict keys)."""
    if isinstance(tree, dict):
        return type(tree)((k, skeleton(v)) for k, v in tree.items()) if type(tree) is not dict else \
            {k: skeleton(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)) and not isinstance(tree, Tensor):
        return [skeleton(v) for v in tree]
    return None


class Meta:
    """The facade dtype/device of every tensor leaf of one argument (a pytree of Tensors)."""
    __slots__ = ("tree", "metas", "skel")

    def __init__(self, arg: Any):
        flat, self.tree = jax.tree_util.tree_flatten(arg, is_leaf=is_tensor)
        self.metas = [(t.dtype, t.device) for t in flat]
        self.skel = skeleton(arg)

    def arrays(self, arg: Any) -> Any:
        """The argument's arrays, in the same structure (JAX pytree: dict keys sorted)."""
        flat = jax.tree_util.tree_leaves(arg, is_leaf=is_tensor)
        return jax.tree_util.tree_unflatten(self.tree, [t._array for t in flat])

    def take(self, it: Any) -> Any:
        """The next of this argument's leaves from the iterator ``it`` (flat arrays), in its structure."""
        return jax.tree_util.tree_unflatten(self.tree, [next(it) for _ in self.metas])

    def wrap(self, arrays: Any) -> Any:
        """Facade Tensors over ``arrays`` (same structure as the argument), with the argument's dtypes."""
        flat = self.tree.flatten_up_to(arrays)
        return reorder_like(jax.tree_util.tree_unflatten(self.tree, [wrap_array(a, dt, dev)
                                                                     for a, (dt, dev) in zip(flat, self.metas)]),
                            self.skel)


def wrap_array(arr: Any, hint: D.dtype | None, device: Any) -> Tensor:
    """A facade Tensor over a JAX array: dtype ``hint`` when it is the array's dtype, else inferred."""
    if hint is None or hint.jnp != arr.dtype:
        if arr.dtype == jax.dtypes.float0:
            arr = jnp.zeros(arr.shape, hint.jnp if hint is not None else jnp.float32)
        else:
            hint = D.from_numpy_dtype(arr.dtype)
    return Tensor._from_array(arr, hint, device)


def diff_meta(arg: Any, *, forward: bool = False) -> Meta:
    """Meta of a differentiated argument: every leaf a floating (or complex) Tensor, as torch.func demands."""
    for leaf in input_leaves(arg):
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
        if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
            if forward:
                raise ValueError(f"Expected primal to be floating point or complex, but got: {leaf.dtype}")
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
    return Meta(arg)


def normalize_argnums(argnums: Any, num_args: int) -> tuple:
    """torch.func's argnums validation: returns the wrapped argnums as a tuple."""
    if not isinstance(argnums, (int, tuple)) or isinstance(argnums, bool):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")

    def one(a):
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if 0 <= a < num_args:
            return a
        if -num_args <= a < 0:
            return a + num_args
        raise RuntimeError(f"Got argnum={a}, but only {num_args} positional inputs")
    if isinstance(argnums, int):
        return (one(argnums),)
    nums = tuple(one(a) for a in argnums)
    if len(nums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {nums}")
    return nums


_RG_MSG = ("You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* APIs) "
           "inside of a function being transformed by a functorch transform. This is unsupported, please attempt to "
           "use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside "
           "of a function being transformed instead.")
_BW_MSG = ("backward() called inside a functorch transform. This is not supported, please use functorch.grad or "
           "functorch.vjp instead or call backward() outside of functorch transforms.")
_AG_MSG = ("torch.autograd.grad inside a differentiating torch.func transform (grad, vjp, jvp, jacrev, jacfwd, "
           "hessian) is not supported in functorch_lite: the transform differentiates with JAX and the facade's "
           "autograd tape is off inside it. Compose the transforms instead (e.g. grad(grad(f))).")
_MSGS = {"requires_grad_": _RG_MSG, "backward": _BW_MSG, "grad": _AG_MSG}


def refuse_inside_transform(what: str) -> None:
    """Called by ``Tensor.requires_grad_``, ``Tensor.backward`` and ``autograd.grad`` while a transform runs
    (``grad_mode._state.transform``): torch's error when their caller is user code (the library's own uses, e.g.
    a Parameter made inside the function, are not what torch refuses); ``autograd.grad`` only inside a
    differentiating transform."""
    if what == "grad" and not _gm._state.func:
        return
    if not sys._getframe(2).f_globals.get("__name__", "").startswith("functorch_lite"):
        raise RuntimeError(_MSGS[what])


def call(func: Callable, args: tuple, kwargs: dict, differentiate: bool = False, forward: bool = False) -> Any:
    """Run the user's function with autograd recording off: JAX differentiates, the facade tape must not.

    ``differentiate`` (``grad``, ``vjp``, ``jvp``, ``jac*``): the function sees grad mode on, as under torch.func,
    and what it cuts from the graph is cut from JAX's differentiation (``no_grad`` regions unless ``forward``,
    ``detach()``, ``.data``: ``grad_mode._State``). A ``vmap`` keeps the mode it is called in. Inside,
    ``requires_grad_()`` and ``backward()`` raise torch's errors (``refuse_inside_transform``)."""
    st = _gm._state
    st.transform += 1
    try:
        return _call(func, args, kwargs, differentiate, forward)
    finally:
        st.transform -= 1


def _call(func: Callable, args: tuple, kwargs: dict, differentiate: bool, forward: bool) -> Any:
    st = _gm._state
    if not (differentiate or st.func):
        with no_grad():
            return func(*args, **kwargs)
    prev = st.enabled, st.func, st.user, st.stop, st.forward
    st.enabled = False
    if differentiate:
        st.func, st.user, st.stop, st.forward = st.func + 1, True, False, forward
        _gm.FUNC_ACTIVE[0] += 1
    try:
        return func(*args, **kwargs)
    finally:
        st.enabled, st.func, st.user, st.stop, st.forward = prev
        if differentiate:
            _gm.FUNC_ACTIVE[0] -= 1


def split_aux(out: Any, has_aux: bool, api: str) -> tuple:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def unwrap_outputs(out: Any, api: str, strict: bool = True) -> tuple:
    """(arrays pytree, Meta) of a function's output, every leaf a Tensor (torch.func's 'only tensors'); ``strict``
    (all but ``linearize``, as torch's): at least one, and a None among them refused."""
    flat = input_leaves(out) if strict else leaves(out)
    if strict and (not flat or flat == [None]):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat!r})")
    for leaf in flat:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(leaf)}")
    m = Meta(out)
    return m.arrays(out), m


def check_float_outputs(out: Any) -> None:
    """torch.func's reverse mode (``vjp``, ``jacrev``): every output floating point or complex."""
    for leaf in leaves(out):
        if isinstance(leaf, Tensor) and not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {leaf.dtype}")


class Aux:
    """Auxiliary outputs: Tensors only (torch.func's rule, None included), carried through JAX as arrays."""
    __slots__ = ("tree", "metas", "skel")

    def unwrap(self, aux: Any) -> list:
        self.skel = skeleton(aux)
        flat, self.tree = jax.tree_util.tree_flatten(aux, is_leaf=lambda x: x is None or isinstance(x, Tensor))
        if not all(isinstance(x, Tensor) for x in flat):  # (the first bad leaf in torch's order: dicts as built)
            for x in ordered_leaves(aux):
                if not isinstance(x, Tensor):
                    raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        self.metas = [(x.dtype, x.device) for x in flat]
        return [x._array for x in flat]

    def wrap(self, arrays: list) -> Any:
        return reorder_like(jax.tree_util.tree_unflatten(self.tree, [wrap_array(a, dt, dev)
                                                                     for a, (dt, dev) in zip(arrays, self.metas)]),
                            self.skel)


def reorder_like(result: Any, template: Any) -> Any:
    """Dicts in ``result`` rebuilt in ``template``'s key order (JAX sorts dict keys; torch keeps insertion);
    ``template`` is a pytree or its ``skeleton``."""
    if isinstance(template, dict) and isinstance(result, dict) and set(template) == set(result):
        return type(template)((k, reorder_like(result[k], template[k])) for k in template) \
            if type(template) is not dict else {k: reorder_like(result[k], template[k]) for k in template}
    if isinstance(template, (list, tuple)) and not isinstance(template, Tensor) and \
            isinstance(result, (list, tuple)) and len(template) == len(result):
        items = [reorder_like(r, t) for r, t in zip(result, template)]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


def replace_args(args: tuple, nums: tuple, new: list) -> list:
    out = list(args)
    for i, v in zip(nums, new):
        out[i] = v
    return out


_MUTATE_MSG = ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place "
               "operation ({}) that would mutate a captured Tensor. This is not supported; please rewrite the "
               "function being transformed to explicitly accept the mutated Tensor(s) as inputs.")
_ALWAYS_TENSOR = {"add_", "sub_", "mul_", "div_", "true_divide_", "multiply_", "subtract_", "divide_"}
_BY_LAST_ARG = {"pow_", "fill_", "lerp_", "remainder_", "fmod_", "masked_fill_", "float_power_", "eq_", "ne_", "lt_",
                "le_", "gt_", "ge_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "xlogy_"}


# the library's own in-place writes that torch makes with an in-place op: (module, function) -> the op's name
# (``batch_norm``: a BatchNorm module's ``num_batches_tracked.add_(1)``; ``_write_stat``: the running statistics,
# which torch's batch_norm kernel updates itself, not refused under grad: "batch_norm" names that kernel)
_LIBRARY_WRITERS = {("functorch_lite.ops.norm", "batch_norm"): "add_",
                    ("functorch_lite.ops.norm", "_write_stat"): "batch_norm",
                    ("functorch_lite.ops.norm", "embedding"): "embedding_renorm_",
                    ("functorch_lite.ops.nn_sampling", "embedding_bag"): "embedding_renorm_"}


def writer_op(frame) -> tuple | None:
    """(name, tensor arguments) of the public in-place op whose write ``frame`` makes (``_dispatch``'s
    ``inplace`` / ``write_out``, or a library writer of ``_LIBRARY_WRITERS``: no arguments); None for another
    write the library makes itself."""
    mod = frame.f_globals.get("__name__", "")
    lib = _LIBRARY_WRITERS.get((mod, frame.f_code.co_name))
    if lib is not None:
        return lib, ()
    if frame.f_code.co_name not in ("inplace", "write_out") or not mod.endswith("ops._dispatch"):
        return None
    targs = frame.f_locals.get("targs") or ()
    name, f = None, frame.f_back
    while f is not None and (f.f_globals.get("__name__", "").startswith("functorch_lite") or
                             f.f_code.co_filename.startswith("<functorch_lite")):
        n = f.f_code.co_name
        if n == "setitem":
            key = f.f_locals.get("index")
            keys = key if isinstance(key, tuple) else (key,)
            name = "index_put_" if any(isinstance(k, (Tensor, list)) for k in keys) else "copy_"
        elif n.endswith("_") and not n.startswith("_"):
            name = n
        f = f.f_back
    if name is None:
        op = frame.f_locals.get("op")
        name = (getattr(op, "name", "") + "_") if op is not None else "copy_"
    return name, targs


def tensor_overload(name: str, targs: tuple) -> bool:
    """Whether an in-place op is torch's ``.Tensor`` overload (its last argument a Tensor) rather than
    ``.Scalar``."""
    if name in _ALWAYS_TENSOR:
        return True
    last = [a for a in targs[1:] if a is not None]
    return bool(last) and isinstance(last[-1], Tensor)


def _aten_name(frame) -> str | None:
    """The ``aten::`` name torch's refusal gives the in-place op whose write ``frame`` makes (``writer_op``);
    None for a write torch does not refuse (a BatchNorm's running statistics: carried out of the transform, see
    ``ExternalWrites``)."""
    op = writer_op(frame)
    if op is None or op[0] == "batch_norm":
        return None
    name, targs = op
    if name in _ALWAYS_TENSOR or name in _BY_LAST_ARG:
        return f"aten::{name}.{'Tensor' if tensor_overload(name, targs) else 'Scalar'}"
    return f"aten::{name}"


class CheckedLog(dict):
    """A write log that checks writes (``start``: the first storage uid made inside the transform; ``prev``: the
    enclosing log)."""
    __slots__ = ("start", "prev")


class _RefusingLog(CheckedLog):
    """The write log of a differentiating transform (``grad``, ``vjp``, ``jvp``, ``jac*``): an in-place op of the
    user's on a tensor made before the call and not passed to it (``own``: its arguments' root storages) raises
    torch's error, before the write (the tensor is unchanged)."""
    __slots__ = ("own",)

    def __setitem__(self, k, v):
        if v[0].uid < self.start and k not in self.own:
            name = _aten_name(sys._getframe(3))  # (log_write <- Tensor._write <- the writer)
            if name is not None:
                raise RuntimeError(_MUTATE_MSG.format(name))
        super().__setitem__(k, v)


class ExternalWrites:
    """In-place writes the transformed function makes to tensors that existed before the call (a BatchNorm's
    running statistics under ``functional_call``), and to the transformed arguments (``track``). A traced value
    must not stay in such a tensor after the trace, and a function run twice (a recorded call's rerun under
    ``jax.vjp``, ``vjp_fn``'s) must not write twice, so ``collect`` (inside the trace) takes the new values out
    and puts the old arrays back; they leave the transform as extra outputs and ``write_back`` stores them (an
    argument's into the caller's tensor, as torch's transforms write through to it). Uses the storage write log
    that ``compile`` uses (entries are handed on to an enclosing compile trace). ``refuse`` (the differentiating
    transforms but ``linearize``: their arguments, a pytree): the user's own in-place ops on such tensors, but
    the arguments (and their views), raise torch's "would mutate a captured Tensor" (``_RefusingLog``); the
    library's writes (running statistics) are carried out as above. ``log``: a ``CheckedLog`` to use instead
    (``vmap``'s)."""

    def __init__(self, refuse: Any = None, log: CheckedLog | None = None):
        self.refuse = refuse
        self.custom = log
        self.args: list = []
        self.targets: list = []

    def __enter__(self) -> "ExternalWrites":
        self.prev = _storage.WRITE_LOG[0]
        self.log: dict = self.custom if self.custom is not None else \
            _RefusingLog() if self.refuse is not None else {}
        _storage.WRITE_LOG[0] = self.log
        self.start = next(_storage._ids)      # storages created from now on belong to the trace
        if isinstance(self.log, CheckedLog):
            self.log.start, self.log.prev = self.start, self.prev
        if self.refuse is not None:
            self.log.own = {id(t._storage.root()) for t in leaves(self.refuse) if isinstance(t, Tensor)}
        self.written: list = []
        return self

    def track(self, tensors: list, targets: list) -> None:
        """Inside the trace, before the function: ``tensors`` (made for the trace) stand for the caller's
        ``targets`` (the transformed arguments' leaves): what the function writes into them reaches those."""
        self.args = [(t, t._storage.array) for t in tensors]
        self.targets = targets

    def _external(self) -> list:
        return [(st, old, ver) for st, old, ver in self.log.values() if st.uid < self.start]

    def collect(self) -> list:
        """Inside the trace, after the function: the new values of external tensors (old ones restored), then
        one entry per tracked argument (its new value, None where unchanged)."""
        out = []
        self.written = []
        for st, old, _ in self._external():
            if st.array is not old:
                self.written.append(st)
                out.append(st.array)
                st.array = old
        return out + [t._storage.array if t._storage.array is not a else None for t, a in self.args]

    def write_back(self, arrays: list) -> None:
        n = len(self.written)
        for st, a in zip(self.written, arrays[:n]):
            st.array = a
        for t, a in zip(self.targets, arrays[n:]):
            if a is not None:
                t._write(a)

    def __exit__(self, exc_type, exc, tb) -> bool:
        _storage.WRITE_LOG[0] = self.prev
        if exc_type is not None:
            for st, old, ver in self._external():
                st.array, st.version = old, ver
        elif self.prev is not None:
            for k, v in self.log.items():
                self.prev.setdefault(k, v)
        return False
