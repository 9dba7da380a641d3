"""``Optimizer``: PyTorch's optimizer API over optax (design.md §3 "optim on optax").

Each subclass supplies an optax ``GradientTransformation`` built with ``optax.inject_hyperparams`` so
every numeric hyperparameter (``lr``, ``momentum``, ``betas``...) is an array in the optax state:
changing ``param_groups[i]['lr']`` changes an argument value, never a static one, and never
recompiles. ``step()`` runs ONE cached jitted update per param group (params, grads and per-parameter
optax states in, new params and states out, states donated) and writes each parameter back into its
storage as an in-place update (its ``_version`` bumps by one; it stays the same leaf tensor).

Per-parameter state (``optimizer.state[p]``) is created lazily on the parameter's first step, as in
PyTorch (Adagrad creates it in its constructor, as PyTorch does); parameters whose ``.grad`` is None
are skipped (their state is untouched).

Hooks: ``register_step_pre_hook`` / ``register_step_post_hook`` (and the global ones of ``_hooks.py``),
``register_state_dict_pre/post_hook``, ``register_load_state_dict_pre/post_hook``, as torch's; without any step hook,
``step`` costs one check more.

Rounding: the transforms compute each PyTorch op with the ``t_*`` helpers at the end of this file (float64
arithmetic rounded to the parameter dtype where torch's CPU kernel rounds, FMAs where torch fuses), and
return float64 deltas that land exactly on PyTorch's result. SGD is bit-for-bit torch's on float32; the
optimizers with a ``sqrt`` differ by at most an ulp or two there (torch's float32 CPU ``sqrt`` is MKL's,
not correctly rounded).
"""
from __future__ import annotations

import copy
import inspect
import types
import warnings
from collections import OrderedDict, defaultdict
from typing import Any, Callable, Iterable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .. import _config
from ..dtypes import opmath
from .._tensor import storage as _storage
from .._tensor.legacy import typename as _typename
from .._tensor.tensor import Tensor, zero_grads
from .._symbolic import SymNumber
from ..autograd.grad_mode import no_grad
from .._warn import user_stacklevel as _user_stacklevel
from ._edits import StateEdits
from ._hooks import (_HookedStep, _LIVE, _STEP_HOOKS, _global_optimizer_post_hooks,  # noqa: F401  (re-exported)
                     _global_optimizer_pre_hooks, _register, _run_step_hooks, register_optimizer_step_post_hook,
                     register_optimizer_step_pre_hook)

TRACES = {"count": 0}  # traces of the jitted group step (a retrace = a recompile); read by the tests

_STEP_FNS: dict = {}

# While ``compile`` traces a function, an optimizer group's numeric options (lr, betas, momentum...) hold tracers:
# ``CONCRETE[id(group)]`` is the group as it was, read by what selects a program (``_static_key``) or a state
# layout (``_state_fields``): ``momentum != 0`` is a Python choice, its value a traced input.
CONCRETE: dict = {}
# While ``compile`` traces: ``FIRST_STEPS[0]`` lists (optimizer, parameter, traced skip flag) for a GradScaler
# step that creates a parameter's state although it may be skipped (inf gradients): after the program, a skipped
# one leaves no state, as eagerly (the state's existence is the flag's value, known only then).
FIRST_STEPS: list = [None]


def _group_step_fn(key: tuple, make_tx: Callable[[], optax.GradientTransformation]):
    """The cached jitted update of one param group for transform ``key`` (built once per key)."""
    key = key + (_config.OPTIM_ROUNDING,)  # the arithmetic mode is fixed when the step is traced
    fn = _STEP_FNS.get(key)
    if fn is not None:
        return fn
    tx = make_tx()

    def step(params, grads, states, hyper):
        TRACES["count"] += 1
        new_params, new_states = [], []
        for p, g, inner in zip(params, grads, states):
            # the per-parameter state is the transform's own (step, moments...); inject_hyperparams' wrapper
            # (its count and a copy of every hyperparameter per parameter) is rebuilt here from the group's values
            s = optax.InjectStatefulHyperparamsState(jnp.zeros((), jnp.int32), dict(hyper), {}, inner)
            updates, s = tx.update(g, s, p)
            # float64 updates (exact deltas for float32 params) land on PyTorch's rounded value
            new_params.append(apply_delta(p, updates))
            new_states.append(s.inner_state)
        return new_params, new_states

    fn = jax.jit(step, donate_argnums=(2,))
    _STEP_FNS[key] = fn
    return fn


def check_betas(betas, foreach, capturable) -> tuple:
    """torch's checks of Adam's ``betas`` (both floats or both 1-element tensors; a tensor one not with
    ``foreach`` unless ``capturable``), as the tuple torch keeps (a 1-element tensor as a 0-d one)."""
    if not (isinstance(betas[0], float) and isinstance(betas[1], float)
            or isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas[:2]):
        if isinstance(b, Tensor):
            if not capturable and foreach:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
            if b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return tuple(b.reshape(()) if isinstance(b, Tensor) and b.dim() else b for b in betas)


# the devices torch's ``capturable=True`` steps accept (torch.optim.optimizer._get_capturable_supported_devices)
_CAPTURABLE = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


READS = [0]  # user-level reads of an ``optimizer.state`` mapping (the optimizers' own code reads it with dict's)


class _StateMapping(defaultdict):
    """``optimizer.state``: tensor -> dict of PyTorch-named state tensors (views onto the optax state); a
    ``defaultdict(dict)``, as PyTorch's (its type, ``default_factory`` and repr).

    The tensors of ``state[p]`` are kept and rewritten in place after every step (their storage
    receives the new optax arrays), so a reference held across steps sees the current values; a
    value written into them (``state[p]['exp_avg'].zero_()``) is read back into the optax state
    before the next step."""

    def __init__(self, opt: "Optimizer"):
        super().__init__(dict)
        self._opt = opt

    def __reduce__(self):
        """Pickled / deep-copied as a dict subclass (defaultdict's own would call ``_StateMapping(dict)``): rebuilt
        with no optimizer, its entries stored as they come, then its ``__dict__`` (its optimizer) restored."""
        return type(self), (None,), self.__dict__, None, iter(dict.items(self))

    def __repr__(self):  # (defaultdict's names the type: torch's is a plain defaultdict)
        return f"defaultdict({self.default_factory!r}, {dict.__repr__(self)})"

    def __copy__(self):
        new = type(self)(None)
        dict.update(new, self)
        new.__dict__.update(self.__dict__)
        return new

    def __missing__(self, p):
        """A ``defaultdict(dict)``, as PyTorch's: the new empty dict is stored (a custom optimizer keeps its
        state in it); an empty entry means no state (entries written into it before the first step are that
        step's state: ``_edits.py``)."""
        d = {}
        dict.__setitem__(self, p, d)
        return d

    def __setitem__(self, p, value):
        """``state[p] = d``: ``d`` is ``p``'s state from then on, read at its next step (``_edits.py``)."""
        dict.__setitem__(self, p, value)
        opt = self.__dict__.get("_opt")  # (a pickle or a copy being rebuilt: not yet its optimizer's)
        if opt is not None and "_ostate" in opt.__dict__ and not opt._custom():
            opt._state_assigned(p, value)

    def __getitem__(self, p):
        READS[0] += 1
        if dict.__contains__(self, p):
            return dict.__getitem__(self, p)
        return self.__missing__(p)

    # removing a parameter's entry removes its state (the next step starts afresh, as in PyTorch)
    def __delitem__(self, p):
        dict.__delitem__(self, p)
        self._opt._ostate.pop(p, None)
        self._opt._mark_odd(p, False)

    def pop(self, p, *default):
        self._opt._ostate.pop(p, None)
        self._opt._mark_odd(p, False)
        return dict.pop(self, p, *default)

    def popitem(self):
        p, v = dict.popitem(self)
        self._opt._ostate.pop(p, None)
        self._opt._mark_odd(p, False)
        return p, v

    def clear(self):
        dict.clear(self)
        self._opt._ostate.clear()
        self._opt._clear_odd()


def _counted(name: str):
    base = getattr(dict, name)

    def read(self, *args):
        READS[0] += 1
        return base(self, *args)
    read.__name__ = name
    return read


# the user-level reads of ``optimizer.state`` are counted: a compiled step that looks at the state does not get its
# first call run with the state made beforehand (_compile.runner.CompiledFunction._primed)
for _name in ("__contains__", "__len__", "__iter__", "get", "keys", "values", "items"):
    setattr(_StateMapping, _name, _counted(_name))


class Optimizer(StateEdits):
    """Base class of the optimizers (``torch.optim.Optimizer``).

    Subclasses define ``_hyper_names`` (numeric hyperparameters injected as arrays), ``_static_key(group)``
    (the flags that select the transform), ``_make_tx(static_key)`` and ``_state_fields(group)``
    (PyTorch state names present for a group)."""

    _hyper_names: tuple = ()
    _scalar_state: tuple = ("step",)
    # the options torch's ``__setstate__`` gives a loaded group that lacks them (a state dict saved by an older
    # torch, before the option existed), and those it sets whatever the group holds (AdamW's decoupled decay)
    _setstate_defaults: dict = {}
    _setstate_forced: dict = {}
    _state_made_in_step = False  # (SGD's momentum buffer: made by the step, not before it)

    def __init_subclass__(cls, **kwargs):
        """A subclass's own ``step`` runs between the step hooks (as torch's ``_patch_step_function``)."""
        super().__init_subclass__(**kwargs)
        fn = cls.__dict__.get("step")
        if isinstance(fn, types.FunctionType):
            cls.step = _HookedStep(fn)

    # ---- hooks ---------------------------------------------------------------------------------------------
    def _table(self, name: str) -> OrderedDict:
        d = self.__dict__.get(name)
        if d is None:
            d = self.__dict__[name] = OrderedDict()
        return d

    def _has_step_hooks(self) -> bool:
        d = self.__dict__
        return bool(_global_optimizer_pre_hooks or _global_optimizer_post_hooks
                    or d.get("_optimizer_step_pre_hooks") or d.get("_optimizer_step_post_hooks"))

    def _hooks_changed(self) -> None:
        """A step hook came or went: ``compile``'s key for this optimizer changes (``_key_of``); a new list object
        for ``param_groups`` makes a compiled function that reaches it walk it again (and see the new key)."""
        pg = self.__dict__.get("param_groups")
        if isinstance(pg, list):
            self.param_groups = list(pg)

    def register_step_pre_hook(self, hook: Callable) -> Any:
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``, called before ``step`` (``args``
        starts with the optimizer). Returns a handle (``handle.remove()``)."""
        return _register(self._table("_optimizer_step_pre_hooks"), hook, step=True, opt=self)

    def register_step_post_hook(self, hook: Callable) -> Any:
        """``hook(optimizer, args, kwargs) -> None``, called after ``step``."""
        return _register(self._table("_optimizer_step_post_hooks"), hook, step=True, opt=self)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """``hook(optimizer) -> None``, called before ``state_dict`` builds the dict."""
        return _register(self._table("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """``hook(optimizer, state_dict) -> state_dict or None`` (a returned dict replaces it)."""
        return _register(self._table("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """``hook(optimizer, state_dict) -> state_dict or None``, called with a shallow copy of the loaded dict
        (a returned dict is loaded instead)."""
        return _register(self._table("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """``hook(optimizer) -> None``, called after ``load_state_dict``."""
        return _register(self._table("_optimizer_load_state_dict_post_hooks"), hook, prepend)  # float32 0-d state entries (NAdam's mu_product, ASGD's eta and mu too)

    def __init__(self, params: Iterable, defaults: dict):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        _LIVE.add(self)
        self._ostate: dict = {}  # param -> the transform's state (AdamState...): only what PyTorch's state holds
        self.state = _StateMapping(self)
        self.param_groups: list = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ---- groups -------------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options (missing options take ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]  # named_parameters() pairs
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        if len({id(p) for p in param_group["params"]}) != len(param_group["params"]):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=_user_stacklevel())
        seen: set = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients ------------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to None (default) or to zeros in place (``set_to_none=False``)."""
        zero_grads([p for group in self.param_groups for p in group["params"]], set_to_none)

    def __setattr__(self, name, value):
        """``optimizer.state = defaultdict(dict)`` (a reset, as torch's optimizers read whatever ``self.state``
        holds): the transforms' state goes with the old mapping, and the new one's entries, if any, are read as
        ``load_state_dict`` reads a saved state's."""
        if name == "state" and not isinstance(value, _StateMapping):
            self._clear_odd()
            fresh = _StateMapping(self)
            object.__setattr__(self, "_ostate", {})
            object.__setattr__(self, "state", fresh)
            for p, st in dict(value).items():
                if st:
                    self._load_entry(p, dict(st))
            return
        object.__setattr__(self, name, value)

    def _custom(self) -> bool:
        """A user's subclass that implements ``step`` itself (no optax transform): its state lives in
        ``self.state`` as it puts it there, as any ``torch.optim.Optimizer`` subclass's."""
        return type(self)._make_tx is Optimizer._make_tx

    # ---- the step ---------------------------------------------------------------------------------------
    def _hyper(self, group: dict) -> dict:
        """The group's numeric hyperparameters as float64 arrays (values, never static arguments)."""
        raise TypeError(f"{type(self).__name__} subclasses Optimizer without defining _hyper(group)")

    def _static_key(self, group: dict) -> tuple:
        """The group's switches (nesterov, amsgrad...) that select the jitted update."""
        raise TypeError(f"{type(self).__name__} subclasses Optimizer without defining _static_key(group)")

    def _make_tx(self, key: tuple) -> optax.GradientTransformation:
        """The optax transformation for one static key."""
        raise TypeError(f"{type(self).__name__} subclasses Optimizer without defining _make_tx(key)")

    def _state_fields(self, group: dict) -> tuple:
        """PyTorch's names of the per-parameter state (``exp_avg``...)."""
        raise TypeError(f"{type(self).__name__} subclasses Optimizer without defining _state_fields(group)")

    def _key_of(self, group: dict) -> tuple:
        """The static key that selects ``group``'s jitted update (from its values as they are, when traced). For a
        group with a ``weight_decay``, its last component says whether that is nonzero: PyTorch's ``if
        weight_decay != 0`` is a Python branch, so a group at 0 gets the program without the term (which reads
        every parameter once more) and its transform a ``weight_decay`` of None. Moving it off 0 selects another
        program (``compile`` guards on the key); its other values are data."""
        key = self._prog_key(group)
        if _STEP_HOOKS:
            if self._has_step_hooks():  # (compile's guard: a hooked step is no program, see step)
                key = ((key[0], "step hooks"),) + key[1:]
            elif self.__dict__.get("_odd"):  # (a state dict edited out of the usual layout: eager steps, _edits.py)
                key = ((key[0], "state edited"),) + key[1:]
        return key

    def _prog_key(self, group: dict) -> tuple:
        """``_key_of`` without the step-hooks mark (the jitted update is the same program either way)."""
        g = CONCRETE.get(id(group), group)
        key = (type(self).__name__,) + self._static_key(g)
        return key + (bool(g["weight_decay"] != 0),) if "weight_decay" in g else key

    def _fields_of(self, group: dict) -> tuple:
        """PyTorch's state names for ``group`` (from its values as they are, when traced)."""
        return self._state_fields(CONCRETE.get(id(group), group))

    def _put_state(self, p: Tensor, st) -> None:
        """``_ostate[p] = st``. While ``compile`` traces, the old state is noted first: an optimizer the compiled
        function does not reach must not keep a traced state (the trace puts it back, then breaks the graph)."""
        if _storage.SET_LOG[0] is not None:
            _storage.log_item(self._ostate, p)
        self._ostate[p] = st

    def _sync_from_views(self, p: Tensor, reads: tuple | None = None) -> bool:
        """Read values written into the ``state[p]`` tensors (or put into the dict) back into the optax state.
        ``reads`` (a step's: ``_read_fields``): the entries the step reads, and the step's answer: True where
        ``p``'s dict was emptied (``state[p].clear()``: torch's ``len(state) == 0``, a fresh state); an entry
        deleted from it is ``_missing_entry``'s (a ``KeyError``, or SGD's restarted buffer)."""
        views = dict.get(self.state, p)
        if not views:
            return views is not None and bool(reads)
        inner = self._ostate[p]
        try:
            for name, t in views.items():
                if t._array is not getattr(inner, name):
                    break
            else:  # (nobody wrote: the tensors hold the state's own arrays; none deleted)
                if reads is None or len(views) >= len(reads):
                    return False
        except AttributeError:  # (an entry of the user's own, or None: _edits.py)
            pass
        self._read_views(p, views, inner, reads)
        return False

    def _held_fields(self, p: Tensor, group: dict) -> tuple:
        """PyTorch's state names of ``p``: its group's, and those an option switched off since has left (torch
        keeps ``momentum_buffer`` after momentum goes to 0, ``max_exp_avg_sq`` after amsgrad goes off, unchanged;
        the transforms pass those arrays through)."""
        names = self._fields_of(group)
        views = dict.get(self.state, p)
        if not views or all(n in names for n in views):
            return names
        inner = self._ostate[p]
        held = {n for n in views if n not in names and self._ours(n, inner)}  # (not the user's own entries)
        return tuple(sorted(set(names) | held, key=inner._fields.index)) if held else names

    def _refresh_views(self, p: Tensor, group: dict, names: tuple | None = None) -> None:
        """Point the ``state[p]`` tensors at the new optax arrays (an in-place write: version bumps); a first
        step creates them for the group's state names (``names``: a loaded state's)."""
        inner = self._ostate[p]
        views = dict.get(self.state, p)
        if not views:  # (None, or the empty entry reading ``state[p]`` leaves)
            new = {}
            for name in self._fields_of(group) if names is None else names:
                arr = getattr(inner, name)
                new[name] = Tensor._from_array(arr, self._view_dtype(p, name, arr), p.device)
            if new:  # SGD without momentum keeps no state (``optimizer.state`` stays empty, as in PyTorch)
                if _storage.SET_LOG[0] is not None:
                    _storage.log_item(self.state, p)
                    dict.__setitem__(self.state, p, new)
                elif views is None:
                    dict.__setitem__(self.state, p, new)
                else:
                    views.update(new)  # the dict a reference taken before the first step holds
        else:
            try:
                for name, t in views.items():
                    t._write(getattr(inner, name))
            except AttributeError:  # (an entry of the user's own, in a dict not marked: _edits.py)
                self._write_views(p, views, group)

    def step(self, *args, **kwargs):
        """One optimisation step over every parameter that has a ``.grad`` (``step(closure=None)``: ``closure``
        re-evaluates the loss). Registered step hooks run around it."""
        if not _STEP_HOOKS:  # (the one check when no hook is registered)
            return self._optax_step(*args, **kwargs)
        return _run_step_hooks(Optimizer._optax_step, self, (self,) + args, kwargs, Optimizer.step)

    def _optax_step(self, closure: Callable[[], Any] | None = None):
        if self._custom():  # (the base class, or a subclass with neither a step nor a transform: torch's)
            raise NotImplementedError
        if self.defaults.get("differentiable"):
            return self._differentiable_step(closure)
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                ps = [p for p in group["params"] if p._grad is not None]
                if not ps:
                    continue
                if group.get("capturable"):
                    self._check_capturable(ps)
                key = self._prog_key(group)
                fn = _group_step_fn(key, lambda: self._make_tx(key))
                hyper = self._hyper(group)
                if len({id(p) for p in ps}) == len(ps):
                    self._group_step(group, ps, fn, key, hyper)
                    continue
                # a parameter listed twice in the group (warned at construction): torch's step updates it once per
                # listing, in turn; one update per round here, as one program cannot take its buffer twice
                seen: dict = {}
                rounds: list = []
                for p in ps:
                    k = seen[id(p)] = seen.get(id(p), -1) + 1
                    if k == len(rounds):
                        rounds.append([])
                    rounds[k].append(p)
                if self._state_made_in_step and isinstance(ps[0]._array, jax.core.Tracer):
                    # (whether a listing makes its own buffer depends on the state's value: eager's step decides)
                    from ..ops._dispatch import data_dependent_error
                    raise data_dependent_error(f"{type(self).__name__}.step() over a group that lists a parameter "
                                               "twice")
                new = [p for p in rounds[0] if p not in self._ostate]
                for k, ps in enumerate(rounds):
                    if k and self._state_made_in_step:
                        # (SGD makes a momentum buffer in its step: every listing of a parameter without one read
                        # None before the loop, and made its own, the last one kept)
                        again = {id(q) for q in ps}
                        for p in new:
                            if id(p) in again:  # (a parameter listed once keeps the buffer its one listing made)
                                self._ostate.pop(p, None)
                                dict.get(self.state, p, {}).clear()  # (its place in the state's order kept)
                    self._group_step(group, ps, fn, key, hyper)
        return loss

    # ``differentiable=True``'s update of one group: ``fn(self, group, params)`` in facade ops (_differentiable.py)
    _differentiable_update = None

    def _differentiable_step(self, closure):
        """``step`` of an optimizer built with ``differentiable=True``: torch's update formulas as facade ops under
        grad mode (torch's ``_use_grad_for_differentiable``), recorded by autograd; its state is ``state[p]``'s
        tensors."""
        from ..autograd.grad_mode import enable_grad
        update = self._differentiable_update
        if update is None:
            raise RuntimeError(f"{type(self).__name__}(differentiable=True) is not supported by functorch_lite: "
                               "its differentiable step is implemented for SGD, Adam, AdamW, RMSprop, Adadelta, "
                               "Adamax and RAdam")
        loss = None
        with enable_grad():
            if closure is not None:
                loss = closure()
            for group in self.param_groups:
                ps = [p for p in group["params"] if p._grad is not None]
                if ps:
                    update(group, ps)
        return loss

    # the state torch's capturable check names (NAdam's and ASGD's add theirs) and the devices it accepts
    _capturable_names = "params and state_steps"
    _capturable_devices = _CAPTURABLE

    def _check_capturable(self, ps: list) -> None:
        """torch's assertion that a ``capturable=True`` step's parameters are on a device that can capture."""
        if any(p.device.type not in self._capturable_devices for p in ps):
            raise AssertionError(f"If capturable=True, {self._capturable_names} must be on supported devices: "
                                 f"{self._capturable_devices}.")

    def _group_step(self, group: dict, ps: list, fn, key: tuple, hyper: dict) -> None:
        """One jitted update of ``group``'s parameters ``ps`` (each listed once)."""
        reads = self._read_fields(group)
        for p in ps:
            if p._grad.dtype is not p.dtype:  # (a grad_dtype set apart from the parameter's)
                raise RuntimeError(
                    f"{type(self).__name__}.step(): a {p._grad.dtype} gradient for a {p.dtype} parameter "
                    "(Tensor.grad_dtype) is not supported by functorch_lite's optimizers: update such "
                    "parameters by hand, or keep grad_dtype the parameter's dtype")
            if p not in self._ostate:
                views = dict.get(self.state, p)
                if views:  # (written by hand before the first step: _edits.py)
                    self._adopt(p, key, views)
                else:
                    self._put_state(p, self._init_state(key, p._array))
            elif self._sync_from_views(p, reads):  # (its dict emptied: the state starts afresh, as torch's)
                self._put_state(p, self._init_state(key, p._array))
        new_params, new_states = fn([p._array for p in ps], [p._grad._array for p in ps],
                                    [self._ostate[p] for p in ps], hyper)
        for p, arr, st in zip(ps, new_params, new_states):
            p._write(arr)
            self._put_state(p, st)
            self._refresh_views(p, group)

    step.__signature__ = inspect.signature(_optax_step)

    # a transform written for real parameters (squares of gradients): a complex one is refused (refuse_complex)
    _real_only = False

    def _read_fields(self, group: dict) -> tuple:
        """The state entries torch's step reads from a non-empty ``state[p]`` of ``group`` (``state[name]``: the
        group's names; Adafactor reads only ``step`` so, its others with ``state.get``)."""
        return self._fields_of(group)

    def _view_dtype(self, p: Tensor, name: str, arr):
        """The dtype of the ``state[p][name]`` tensor over the state's array ``arr``: the parameter's; a 0-d entry's
        own (``step``: float32, or the dtype of the tensor a loaded state held, which torch keeps)."""
        return p.dtype if name not in self._scalar_state else _dtype_of(arr)

    def _init_state(self, key: tuple, arr) -> Any:
        if self._real_only:
            refuse_complex(type(self).__name__, arr)
        return placed_like(self._make_tx(key).init(arr).inner_state, arr)

    # ---- state dict ----------------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """PyTorch's structure: ``{'state': {index: {name: tensor}}, 'param_groups': [{..., 'params': [indices]}]}``
        (the state-dict pre hooks run first, the post hooks last: one may return a new dict)."""
        d = self.__dict__
        for hook in list((d.get("_optimizer_state_dict_pre_hooks") or {}).values()):
            hook(self)
        out = self._build_state_dict()
        for hook in list((d.get("_optimizer_state_dict_post_hooks") or {}).values()):
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    def _build_state_dict(self) -> dict:
        # torch's indices: a parameter's position among all groups' listings (a group's duplicate listing: its last)
        index: dict = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ps = group["params"]
            index.update({id(p): i for i, p in enumerate(ps, start) if id(p) not in index})
            packed["params"] = [index[id(p)] for p in ps]
            start += len(ps)
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                views = dict.get(self.state, p)
                names = self._held_fields(p, group) if p in self._ostate else ()
                if names:  # (SGD that never had momentum keeps no state)
                    self._sync_from_views(p)
                    views = dict.get(self.state, p)
                    if views:
                        # the live ``state[p]`` dict, as torch's: its tensors are rewritten in place by every step,
                        # so a state_dict taken earlier (and saved later) holds the current values (and the
                        # user's own entries, as they put them there; without those they deleted)
                        state[index[id(p)]] = views
                        continue
                    inner = self._ostate[p]
                    entry = {name: Tensor._from_array(jnp.array(getattr(inner, name), copy=True),
                                                      self._view_dtype(p, name, getattr(inner, name)), p.device)
                             for name in names}
                    state[index[id(p)]] = {**entry, **{k: v for k, v in (views or {}).items() if k not in entry}}
                elif views is not None:
                    # a custom optimizer's own state; the user's entries; or the empty entry reading ``state[p]``
                    # leaves (torch's defaultdict keeps it: ``{0: {}}``)
                    state[index[id(p)]] = dict(views) if self._custom() else views
        # in the order the entries came into ``optimizer.state`` (their first steps), as torch's dict
        first = {index[id(p)]: k for k, p in enumerate(dict.keys(self.state)) if id(p) in index}
        state = dict(sorted(state.items(), key=lambda kv: first.get(kv[0], len(first))))
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a ``state_dict()`` (values are copied; group options replace the current ones). The load pre hooks
        get a shallow copy of ``state_dict`` (one may return the dict to load instead); the post hooks run last."""
        state_dict = state_dict.copy()
        d = self.__dict__
        for hook in list((d.get("_optimizer_load_state_dict_pre_hooks") or {}).values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        self._load_state_dict(state_dict)
        for hook in list((d.get("_optimizer_load_state_dict_post_hooks") or {}).values()):
            hook(self)

    def _load_state_dict(self, state_dict: dict) -> None:
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old_id, p in zip(s["params"], g["params"]):
                id_map[old_id] = (p, g)
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            for k, v in self._setstate_defaults.items():
                s.setdefault(k, v)
            s.update(self._setstate_forced)
            new_groups.append(s)
        self.param_groups = new_groups
        self._clear_odd()
        self._ostate = {}
        self.state = _StateMapping(self)
        for k, values in state_dict["state"].items():
            if k in id_map:
                self._load_entry(id_map[k][0], values)

    def _load_entry(self, p, values) -> None:
        """One parameter's saved state entries (``load_state_dict``, a new ``state`` mapping) as its state.

        As torch's, a saved tensor that the cast leaves as it is (``.to`` the parameter's dtype and device: already
        those) is put into ``state[p]`` itself, not a copy: two optimizers loaded from one ``state_dict()`` share
        it, and a step of either updates it in place (the other's next step reads it back: ``_sync_from_views``)."""
        group = next((g for g in self.param_groups if any(q is p for q in g["params"])), {})
        f32 = bool(group.get("fused") or group.get("capturable"))  # (the loaded group's options, as torch's)
        if self._custom():  # its state entries, cast as torch's
            dict.__setitem__(self.state, p, {name: _cast_like(v, p, name, f32) for name, v in values.items()})
            return
        st, odd = self._state_from(p, self._key_of(group), values, f32_step=f32)
        self._put_state(p, st)
        # the state's entries in the saved order, as torch's dict keeps it, then those the group adds
        loaded = tuple(n for n, v in values.items() if v is not None and self._ours(n, st))
        type(self)._refresh_views(self, p, group, loaded + tuple(n for n in self._fields_of(group) if n not in loaded))
        made = dict.get(self.state, p) or {}
        for name, t in list(made.items()):
            v = values.get(name)
            if (isinstance(v, Tensor) and isinstance(t, Tensor) and v.dtype is t.dtype and v._shape == t._shape
                    and _cast_like(v, p, name, f32) is v):
                dict.__setitem__(made, name, v)
        if odd:  # with the user's own entries (cast as torch casts them) and None ones, in the saved order
            views = {name: None if v is None else made[name] if name in made else _cast_like(v, p, name, f32)
                     for name, v in values.items()}
            views.update((k, v) for k, v in made.items() if k not in views)
            dict.__setitem__(self.state, p, views)
            self._mark_odd(p, True)

    def __repr__(self) -> str:
        """PyTorch's: each group opens with a newline and ends each of its lines with one (so a blank line
        separates groups)."""
        out = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for k in sorted(group):
                if k != "params":
                    out += f"    {k}: {group[k]}\n"
        return out + ")"


def check_fused(fused, foreach, differentiable) -> None:
    """torch's refusals of ``fused=True`` beside ``differentiable`` or ``foreach`` (SGD, Adam, AdamW, Adagrad)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def check_lr(lr, message: str = "Invalid learning rate: {}") -> None:
    """torch's checks of a learning rate given to an optimizer: a tensor one holds one element, and none is
    negative."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(message.format(lr))


def placed_like(state, arr):
    """``state``'s arrays committed to ``arr``'s device, as the update's outputs are. optax makes a scalar state
    (the step count) with ``jnp.zeros``, an uncommitted array, and a jitted function is keyed on its arguments'
    commitment too: the update was compiled for the first step's state and again for every later step's, the
    largest program of an eager training loop compiled twice. (A traced or a multi-device ``arr``, a state made
    inside a trace: unchanged.)"""
    if isinstance(arr, jax.core.Tracer) or not arr.committed or len(arr.devices()) != 1:
        return state
    dev = next(iter(arr.devices()))
    return jax.tree.map(lambda x: x if isinstance(x, jax.core.Tracer) or x.committed else jax.device_put(x, dev),
                        state)


def _cast_like(v, p, name, f32_step: bool = False):
    """A loaded state value, as PyTorch's ``load_state_dict`` casts it (``_process_value_according_to_param_policy``),
    in dicts, lists and tuples too: ``step`` as it is (float32 on the parameter's device for a fused or capturable
    group: ``f32_step``); any other tensor to the parameter's device, and its dtype for a floating parameter; other
    values as they are. A tensor already so is returned itself (``.to``), as torch's."""
    if isinstance(v, dict):
        return {k: _cast_like(x, p, k, f32_step) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_cast_like(x, p, None, f32_step) for x in v)
    if not isinstance(v, Tensor):
        return v
    if name == "step":
        return v.to(dtype=_float32(), device=p.device) if f32_step else v
    if p.dtype.is_floating_point:
        return v.to(dtype=p.dtype, device=p.device)
    return v.to(device=p.device)


def refuse_complex(name: str, arr) -> None:
    """For transforms written for real parameters: PyTorch steps a complex parameter as its view_as_real pairs;
    here a complex one is refused rather than stepped with complex arithmetic (a different answer)."""
    if jnp.iscomplexobj(arr):
        raise RuntimeError(f"functorch_lite.optim.{name}: complex parameters are not supported (PyTorch optimizes "
                           "them as their view_as_real pairs)")


def _float32():
    from .. import float32
    return float32


def _dtype_of(arr):
    """The facade dtype of a state array."""
    from ..dtypes import from_numpy_dtype
    return from_numpy_dtype(arr.dtype)


def hyper_arrays(values: dict) -> dict:
    """Hyperparameter values as float64 numpy scalars (jit arguments: same aval every call)."""
    return {k: jnp.asarray(value_of(v), jnp.float64) if isinstance(v, (jax.Array, Tensor, SymNumber))
            else np.asarray(float(v), dtype=np.float64)
            for k, v in values.items()}  # a tensor (an LR given as one), or one traced by compile (a value computed
    #                                      from a dynamic int argument: ``lr = base * 0.5 ** step``)


def value_of(v):
    """A group option's value: a tensor option's array (compile compares and returns traced options by it)."""
    return v._array if isinstance(v, Tensor) else v


# ---- PyTorch's CPU arithmetic ------------------------------------------------------------------------------
# ``_config.OPTIM_ROUNDING == "exact"``: torch's CPU kernels round after every op, and its ``add(alpha=)``,
# ``addcmul`` and ``lerp`` kernels are fused multiply-adds (one rounding); XLA contracts ``a * b + c`` where it
# likes. To get PyTorch's float32 updates bit for bit, the transforms compute each op in float64 (a product of
# two float32 values is exact there) and round to the tensor's dtype exactly where PyTorch rounds.
# "fast" (the default): the same formulas in the parameter's dtype, fused by XLA (a few ulps from torch).
# Hyperparameters are rounded to the op's compute dtype first, as torch converts a Python scalar: the tensor's
# dtype, float32 for a float16 / bfloat16 one, whose ops compute in float32 and round each result (opmath).

def _exact() -> bool:
    return _config.OPTIM_ROUNDING == "exact"


def _hi(x):
    """An operand as the arithmetic sees it: float64 in exact mode; a half one widened to float32 (opmath)."""
    x = jnp.asarray(x)
    if _exact():
        return x.astype(jnp.float64)
    return x.astype(opmath(x.dtype))


def _rnd(x, dt):
    """Round ``x`` to dtype ``dt``. Exact mode: ``reduce_precision`` first: XLA may drop a float64 -> float32 ->
    float64 convert pair (excess precision allowed), never an explicit rounding. A half dtype's value is rounded
    to float32 first (torch's opmath result, then its conversion)."""
    if not _exact():
        return x.astype(dt)
    if opmath(dt) != dt:  # (a half dtype: reduce_precision to a half format would flush its subnormals)
        return jax.lax.reduce_precision(x, exponent_bits=8, mantissa_bits=23).astype(dt)
    fi = jnp.finfo(dt)
    return jax.lax.reduce_precision(x, exponent_bits=fi.nexp, mantissa_bits=fi.nmant).astype(dt)


def cast(x, dt):
    """A Python/float64 scalar rounded to the tensor dtype ``dt``."""
    if not _exact():
        return jnp.asarray(x).astype(dt)
    return _rnd(_hi(x), dt)


def _scalar(x, dt):
    """A scalar (or tensor) operand of an op on a ``dt`` tensor, as torch's kernel applies it: in the op's compute
    dtype (a Python scalar becomes float32 for a half tensor, not the half dtype: 0.9, not bfloat16's 0.8984)."""
    return _hi(cast(x, opmath(dt)))


def t_mul(a, b):
    """``a.mul(b)`` (``b`` a tensor or a scalar), rounded once."""
    return _rnd(_hi(a) * _scalar(b, a.dtype), a.dtype)


def t_add(a, b, alpha=1.0):
    """``a.add(b, alpha=alpha)``: one rounding of ``a + alpha * b`` (torch's add kernel is an FMA); ``alpha`` in
    the tensor's dtype, a half one's too (torch's vectorized add rounds it so, where mul, div, addcmul, addcdiv
    and lerp keep their scalar in float32: measured on torch 2.13's CPU kernels)."""
    return _rnd(_hi(a) + _hi(cast(alpha, a.dtype)) * _hi(b), a.dtype)


def t_addcmul(a, b, c, value=1.0):
    """``a.addcmul(b, c, value=value)``: ``value * b`` rounded (to the compute dtype), then one FMA with ``c``
    onto ``a``."""
    vb = _rnd(_hi(b) * _scalar(value, a.dtype), opmath(a.dtype))
    return _rnd(_hi(a) + _hi(vb) * _hi(c), a.dtype)


def t_addcdiv(a, b, c, value=1.0):
    """``a.addcdiv(b, c, value=value)``: ``value * b``, ``/ c`` and ``a +`` each rounded (the first two to the
    compute dtype)."""
    op = opmath(a.dtype)
    q = _rnd(_hi(_rnd(_hi(b) * _scalar(value, a.dtype), op)) / _hi(c), op)
    return _rnd(_hi(a) + _hi(q), a.dtype)


def t_lerp(a, b, w):
    """``a.lerp(b, w)`` for a scalar weight: torch's two-branch CPU formula, each branch one FMA."""
    w = _scalar(w, a.dtype)
    if not _exact():
        return (_hi(a) + w * (_hi(b) - _hi(a))).astype(a.dtype)
    op = opmath(a.dtype)
    diff = _rnd(_hi(b) - _hi(a), op)
    lo = _hi(a) + w * _hi(diff)
    hi = _hi(b) - _hi(diff) * _hi(_rnd(1 - w, op))
    return _rnd(jnp.where(jnp.abs(w) < 0.5, lo, hi), a.dtype)


def t_sqrt(a):
    """``a.sqrt()`` (correctly rounded)."""
    return jnp.sqrt(a)


def t_div(a, b):
    """``a / b`` (``b`` a tensor or a scalar in the compute dtype), rounded once."""
    return _rnd(_hi(a) / _scalar(b, a.dtype), a.dtype)


def t_decay(g, p, weight_decay):
    """PyTorch's ``if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)``: ``weight_decay`` is None
    where the group's is 0 (``Optimizer._key_of``); traced, the parameter is still not added at 0 (``0 * inf``
    would put a nan into the gradient)."""
    if weight_decay is None:
        return g
    return jnp.where(weight_decay != 0, t_add(g, p, weight_decay), g)


def t_decoupled(p, lr, weight_decay):
    """AdamW's ``param.mul_(1 - lr * weight_decay)``: ``p`` itself where the group's weight decay is 0 (None)."""
    return p if weight_decay is None else t_mul(p, 1 - lr * weight_decay)


def delta(new_p, p):
    """The update ``Optimizer.step`` adds back onto ``p`` (``apply_delta``): float64 in exact mode (lands exactly
    on ``new_p``). Where ``p`` is not finite it carries ``new_p`` itself (``new_p - p`` would be ``inf - inf``:
    a nan where PyTorch's in-place update keeps the inf)."""
    return jnp.where(jnp.isfinite(p), _hi(new_p) - _hi(p), _hi(new_p))


def apply_delta(p, u):
    """``p`` after the update ``u`` that ``delta`` made."""
    return jnp.where(jnp.isfinite(p), p.astype(u.dtype) + u, u).astype(p.dtype)
