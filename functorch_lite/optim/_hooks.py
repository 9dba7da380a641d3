"""The optimizer hooks' machinery (``torch.optim.optimizer``'s global step hooks, the handles, torch's
``profile_hook_step`` wrapper of a subclass's ``step``); the ``register_*`` methods are ``Optimizer``'s.

Cost without hooks: ``Optimizer.step`` (and a subclass's wrapped ``step``) checks ``_STEP_HOOKS`` once, the ids of
every live step hook (global, or of a live optimizer). ``compile``: a hooked step cannot be one program (the
program would skip the hooks on every later call), so tracing one is a graph break (eager calls, hooks run;
``fullgraph=True``: an error); a hook's arrival or removal changes the optimizer's compile key (``_key_of``) and
replaces its ``param_groups`` list, so a compiled function that reaches it walks it again and sees the change.
"""
from __future__ import annotations

import functools
import itertools
import sys
import types
import weakref
from collections import OrderedDict
from typing import Any, Callable

# ---- step hooks (torch.optim.optimizer.register_optimizer_step_pre_hook & co) ---------------------------------------
_global_optimizer_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_optimizer_post_hooks: "OrderedDict[int, Callable]" = OrderedDict()
# the id of every step hook registered anywhere (global or on one optimizer): ``step``'s one check when there is none
_STEP_HOOKS: dict = {}
_HOOK_IDS = itertools.count()
_LIVE: "weakref.WeakSet" = weakref.WeakSet()  # every optimizer (a global hook changes each one's compile key)
_IN_STEP: set = set()  # id() of optimizers inside a hooked step (a ``super().step()`` does not run the hooks again)


def _handle_cls():
    """``RemovableHandle`` whose ``remove()`` also drops the hook from ``_STEP_HOOKS`` and tells the optimizers."""
    cls = _HANDLE[0]
    if cls is None:
        from .._hooks import RemovableHandle

        class _OptimizerHookHandle(RemovableHandle):
            def __init__(self, hooks, key, *extra, touch=None):
                super().__init__(hooks, key, *extra)
                self._touch = touch

            def remove(self) -> None:
                super().remove()
                if self._touch is not None:
                    for o in self._touch():
                        if o is not None:
                            o._hooks_changed()

        cls = _HANDLE[0] = _OptimizerHookHandle
    return cls


_HANDLE: list = [None]


def _register(table: dict, hook: Callable, prepend: bool = False, step: bool = False, opt=None):
    """Put ``hook`` into ``table`` (first with ``prepend``); a step hook also into ``_STEP_HOOKS``, and the
    optimizers it concerns (``opt``, or every one for a global hook) hear of it when it comes and goes."""
    key = next(_HOOK_IDS)
    table[key] = hook
    if prepend:
        table.move_to_end(key, last=False)
    if not step:
        return _handle_cls()(table, key)
    _STEP_HOOKS[key] = True
    if opt is None:
        def touch():
            return list(_LIVE)
    else:
        ref = weakref.ref(opt)

        def touch():
            return (ref(),)
        weakref.finalize(opt, _STEP_HOOKS.pop, key, None)  # (an optimizer's hooks go with it)
    for o in touch():
        o._hooks_changed()
    return _handle_cls()(table, key, _STEP_HOOKS, touch=touch)


def register_optimizer_step_pre_hook(hook: Callable) -> Any:
    """Register a pre hook common to all optimizers: ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``
    (``args`` starts with the optimizer, as torch's). Returns a handle (``handle.remove()``)."""
    return _register(_global_optimizer_pre_hooks, hook, step=True)


def register_optimizer_step_post_hook(hook: Callable) -> Any:
    """Register a post hook common to all optimizers: ``hook(optimizer, args, kwargs) -> None``."""
    return _register(_global_optimizer_post_hooks, hook, step=True)


def _run_step_hooks(func: Callable, opt: Any, args: tuple, kwargs: dict, shown: Callable | None = None):
    """torch's ``profile_hook_step``: global pre hooks, the optimizer's pre hooks (each may return new
    ``(args, kwargs)``), the step, the optimizer's post hooks, the global post hooks. ``args`` includes the
    optimizer (``shown``: the step function a bad pre hook's error names). Inside a ``compile`` trace hooks cannot run
    on every call (the program would skip them): a graph break, so the call runs eagerly, hooks and all
    (``fullgraph=True``: an error)."""
    d = opt.__dict__
    pre = d.get("_optimizer_step_pre_hooks") or {}
    post = d.get("_optimizer_step_post_hooks") or {}
    runner = sys.modules.get("functorch_lite._compile.runner")
    if id(opt) in _IN_STEP or not (pre or post or _global_optimizer_pre_hooks or _global_optimizer_post_hooks):
        if d.get("_odd") and runner is not None and runner.TRACING[0]:
            from ..ops._dispatch import data_dependent_error
            raise data_dependent_error(f"{type(opt).__name__}.state holds entries written by hand that its compiled "
                                       "step does not keep (a key of the user's own, None, a tensor of another "
                                       "dtype): its steps run eagerly while it does (optim/_edits.py)")
        return func(*args, **kwargs)
    if runner is not None and runner.TRACING[0]:
        from ..ops._dispatch import data_dependent_error
        raise data_dependent_error(f"optimizer step hooks (registered on {type(opt).__name__} or globally with "
                                   "register_optimizer_step_pre/post_hook) run Python on every step: the compiled "
                                   "program would skip them")
    for hook in list(_global_optimizer_pre_hooks.values()) + list(pre.values()):
        result = hook(opt, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(f"{shown or func} must return None or a tuple of (new_args, new_kwargs), but got "
                                   f"{result}.")
    if not args:  # (a pre hook that dropped the optimizer from the arguments: torch's step reads ``args[0]``)
        raise IndexError("tuple index out of range")
    _IN_STEP.add(id(opt))
    try:
        out = func(*args, **kwargs)
    finally:
        _IN_STEP.discard(id(opt))
    for hook in list(post.values()) + list(_global_optimizer_post_hooks.values()):
        hook(opt, args, kwargs)
    return out


class _HookedStep:
    """The ``step`` a subclass of ``Optimizer`` defines, run between the step hooks (torch wraps it the same way).
    Its ``__code__`` is the step's own: ``compile`` learns what a custom step reads from its code."""

    hooked = True

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self.__code__ = fn.__code__

        def step(self_, *args, **kwargs):
            if not _STEP_HOOKS:  # (the one check when no hook is registered)
                return fn(self_, *args, **kwargs)
            return _run_step_hooks(fn, self_, (self_,) + args, kwargs)

        functools.update_wrapper(step, fn)
        self._fn = step

    def __get__(self, obj, cls=None):
        return self if obj is None else types.MethodType(self._fn, obj)

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)
