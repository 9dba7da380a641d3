"""Grad modes (spec §8): no_grad, enable_grad, set_grad_enabled, inference_mode — per thread."""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    def __init__(self):
        self.enabled = True
        self.inference = False


_state = _State()


def is_grad_enabled() -> bool:
    return _state.enabled


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

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False


class enable_grad(_Mode):
    def __init__(self):
        self._args = ()

    def __enter__(self):
        self._prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` acts at once (function form) and restores on ``__exit__``."""

    def __init__(self, mode: bool):
        self._args = (mode,)
        self._prev = _state.enabled
        _state.enabled = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self._prev
        return False

    def __call__(self, fn):
        _state.enabled = self._prev  # used as a decorator: the constructor must not change the mode
        return super().__call__(fn)


class inference_mode(_Mode):
    """Like no_grad; tensors created inside are inference tensors (MODE-*)."""

    def __init__(self, mode: bool = True):
        self._args = (mode,)
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference)
        if self.mode:
            _state.enabled = False
            _state.inference = True
        else:
            _state.inference = False

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._prev
        return False
