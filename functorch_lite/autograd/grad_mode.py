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
        self.transform = 0  # func transforms (vmap included) running their function: torch's errors for autograd calls
        self.forward = False
        self.inf_user = False  # inside inference_mode: the grad mode the code sees (``enabled`` stays off)


_state = _State()
# differentiating func transforms running, in any thread: the dispatcher's cheap first check before it reads the
# thread's ``stop`` flag (func._core.call keeps it)
FUNC_ACTIVE = [0]


def is_grad_enabled() -> bool:
    s = _state
    return s.user if s.func else s.inf_user if s.inference else s.enabled


def _set(mode: bool) -> tuple:
    """Set the grad mode the running code sees: the recording flag, or inside a differentiating ``func``
    transform its user-visible mode. Returns the token ``_reset`` takes."""
    s = _state
    if s.func:
        tok = (True, s.user)
        s.user, s.stop = mode, not mode and not s.forward
    elif s.inference:  # (inference mode records nothing, whatever the grad mode: torch's enable_grad inside it)
        tok = (2, s.enabled, s.inf_user)
        s.enabled = False
        s.inf_user = mode
    else:
        tok = (False, s.enabled)
        s.enabled = mode
    return tok


def _reset(tok: tuple) -> None:
    s = _state
    if tok[0] is True:
        s.user, s.stop = tok[1], s.func > 0 and not tok[1] and not s.forward
    elif tok[0] == 2:
        s.enabled, s.inf_user = tok[1], tok[2]
    else:
        s.enabled = tok[1]


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base for the grad-mode context managers; instances also work as decorators."""

    def __call__(self, fn):
        if isinstance(fn, type):  # (torch's deprecated class decoration: the class becomes a function building it
            import warnings       # inside the mode)
            from .._warn import user_stacklevel
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning,
                          stacklevel=user_stacklevel())
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)
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


class _NoParamMode(_Mode):
    """A mode without parameters, also usable as a bare decorator (``@torch.no_grad``), as PyTorch's
    ``_NoParamDecoratorContextManager``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        self._args = ()


class no_grad(_NoParamMode):
    """Disable graph recording (``with torch.no_grad():``, ``@torch.no_grad()`` or ``@torch.no_grad``)."""

    def __enter__(self):  # (``_set(False)``, inlined for the common case: it is on every optimizer step's path)
        s = _state
        if s.func or s.inference:
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


class enable_grad(_NoParamMode):
    def __enter__(self):
        self._prev = _set(True)

    def __exit__(self, *exc):
        _reset(self._prev)
        return False


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` acts at once (function form) and restores on ``__exit__``."""

    def __init__(self, mode: bool):
        if type(mode) is not bool:
            t = type(mode)
            name = f"{t.__module__}.{t.__name__}" if t.__module__ == "numpy" else t.__name__
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {name}")
        self._args = (mode,)
        self._prev = _set(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _reset(self._prev)
        return False

    def __call__(self, fn):
        _reset(self._prev)  # used as a decorator: the constructor must not change the mode
        return super().__call__(fn)


_MULTITHREADING = [True]


def _is_multithreading_enabled() -> bool:
    """torch's ``torch._C._is_multithreading_enabled()``: the flag ``set_multithreading_enabled`` sets."""
    return _MULTITHREADING[0]


class set_multithreading_enabled(_Mode):
    """torch's switch for the autograd engine's per-device worker threads: acts at once (function form), restores
    on ``__exit__``, works as a decorator. Accepted and recorded, with no effect: this engine runs every backward on
    the calling thread."""

    def __init__(self, mode: bool):
        self._args = (mode,)
        self.mode = mode
        self.prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _MULTITHREADING[0] = self.prev
        return False


class inference_mode(_Mode):
    """Like no_grad; tensors created inside are inference tensors (MODE-*)."""

    def __new__(cls, mode=True):  # (a bare ``@torch.inference_mode`` decorates its function: ``mode`` is it)
        if mode is None or isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True):
        self._args = (mode,)
        self.mode = bool(mode)

    def __enter__(self):
        # as PyTorch's InferenceMode(mode): grad mode is ``not mode`` (inference_mode(False) turns it on)
        s = _state
        prev = s.inference
        if self.mode:
            s.inference = True
            self._prev = (_set(False), prev)
        else:
            s.inference = False
            self._prev = (_set(True), prev)

    def __exit__(self, *exc):
        _state.inference = self._prev[1]
        _reset(self._prev[0])
        return False
