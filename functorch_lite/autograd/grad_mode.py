"""Grad modes (spec §8): no_grad, enable_grad, set_grad_enabled, inference_mode — per thread."""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    """``enabled``: the facade records autograd nodes. Inside a ``func`` transform that differentiates (``grad``,
    ``vjp``, ``jvp``, ``jac*``: JAX differentiates, ``func`` > 0) recording stays off, and ``user`` is the grad
    mode the function sees (``no_grad`` inside sets it); ``stop`` (``func`` and not ``user``): results computed
    now are cut from JAX's differentiation (``lax.stop_gradient``), as torch.func's reverse-mode transforms
    respect an inner no_grad; ``forward``: the innermost of them is forward mode (``jvp``, ``jacfwd``), which
    no_grad does not affect in torch (no cut; ``detach()`` still cuts)."""
    def __init__(self):
        self.enabled = True
        self.inference = False
        self.func = 0
        self.user = True
        self.stop = False
        self.forward = False


_state = _State()
# differentiating func transforms running, in any thread: the dispatcher's cheap first check before it reads the
# thread's ``stop`` flag (func._core.call keeps it)
FUNC_ACTIVE = [0]


def is_grad_enabled() -> bool:
    return _state.user if _state.func else _state.enabled


def _set(mode: bool) -> tuple:
    """Set the grad mode the running code sees: the recording flag, or inside a differentiating ``func``
    transform its user-visible mode. Returns the token ``_reset`` takes."""
    s = _state
    if s.func:
        tok = (True, s.user)
        s.user, s.stop = mode, not mode and not s.forward
    else:
        tok = (False, s.enabled)
        s.enabled = mode
    return tok


def _reset(tok: tuple) -> None:
    s = _state
    if tok[0]:
        s.user, s.stop = tok[1], s.func > 0 and not tok[1] and not s.forward
    else:
        s.enabled = tok[1]


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base for the grad-mode context managers; instances also work as decorators."""

    def __call__(self, fn):
        if isinstance(fn, type):
            raise TypeError("grad-mode decorators apply to functions, not classes")
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper

    def _wrap_generator(self, fn):
        """Each step of a decorated generator runs inside the mode (MODE-10)."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.__class__(*self._args):
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.__class__(*self._args):
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.__class__(*self._args):
                            response = gen.throw(exc)
                    else:
                        with self.__class__(*self._args):
                            response = gen.send(request)
            except StopIteration as e:
                return e.value
        return wrapper

    _args: tuple = ()

    def clone(self):
        return self.__class__(*self._args)


class no_grad(_Mode):
    """Disable graph recording (``with torch.no_grad():`` or ``@torch.no_grad()``)."""

    def __init__(self):
        self._args = ()

    def __enter__(self):  # (``_set(False)``, inlined for the common case: it is on every optimizer step's path)
        s = _state
        if s.func:
            self._prev = _set(False)
        else:
            self._prev = s.enabled
            s.enabled = False

    def __exit__(self, *exc):
        p = self._prev
        if type(p) is tuple:
            _reset(p)
        else:
            _state.enabled = p
        return False


class enable_grad(_Mode):
    def __init__(self):
        self._args = ()

    def __enter__(self):
        self._prev = _set(True)

    def __exit__(self, *exc):
        _reset(self._prev)
        return False


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` acts at once (function form) and restores on ``__exit__``."""

    def __init__(self, mode: bool):
        self._args = (mode,)
        self._prev = _set(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _reset(self._prev)
        return False

    def __call__(self, fn):
        _reset(self._prev)  # used as a decorator: the constructor must not change the mode
        return super().__call__(fn)


class inference_mode(_Mode):
    """Like no_grad; tensors created inside are inference tensors (MODE-*)."""

    def __init__(self, mode: bool = True):
        self._args = (mode,)
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = (_set(False) if self.mode else None, _state.inference)
        _state.inference = self.mode

    def __exit__(self, *exc):
        if self._prev[0] is not None:
            _reset(self._prev[0])
        _state.inference = self._prev[1]
        return False
