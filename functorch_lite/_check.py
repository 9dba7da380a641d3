"""``torch._check`` and its family: assertions that raise the given exception type when ``cond`` is False.

torch.compile reads them as facts about symbolic sizes; here ``cond`` is a Python bool (or, inside a compiled
function with dynamic arguments, a comparison of them: its outcome is a branch the program is kept for).
``message``: a callable returning the text, as torch's; without it torch's generic text."""
from __future__ import annotations

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? If so, please report an "
            "enhancement request to PyTorch.)")


class OutOfMemoryError(RuntimeError):
    """``torch.OutOfMemoryError`` (also ``torch.cuda.OutOfMemoryError``): what a failed device allocation raises."""


def _check_with(error_type, cond, message=None):
    """Raise ``error_type(message())`` (torch's default text without ``message``) unless ``cond``."""
    from ._symbolic import SymNumber
    from ._tensor.tensor import Tensor
    if isinstance(cond, Tensor):
        raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use torch._check_tensor_all() "
                        "to assert that all elements are true.")
    if type(cond) is not bool and not (type(cond) is SymNumber and cond._t is bool):
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if message is None:
        raise error_type(_DEFAULT)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond, message=None):
    """``torch._check``: RuntimeError unless ``cond``."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond, message=None):
    _check_with(IndexError, cond, message)


def _check_value(cond, message=None):
    _check_with(ValueError, cond, message)


def _check_type(cond, message=None):
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    _check_with(NotImplementedError, cond, message)


def _check_tensor_all(cond, message=None):
    """``torch._check_tensor_all``: RuntimeError unless every element of the bool tensor ``cond`` is True (a host
    read)."""
    from ._tensor.tensor import Tensor
    from . import dtypes as D
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype is not D.bool:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    _check_with(RuntimeError, bool(cond.all()), message)
