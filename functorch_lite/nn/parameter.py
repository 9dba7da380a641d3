"""``nn.Parameter``: a Tensor subclass that modules register as a learnable parameter."""
from __future__ import annotations

from .._tensor.tensor import Tensor


class Parameter(Tensor):
    """A tensor that shares ``data``'s storage and requires grad by default (``torch.nn.Parameter``)."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .. import empty
            data = empty(0)
        d = data.detach()
        if requires_grad and not (d.is_floating_point() or d.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p = cls._header(d._storage, d._shape, d.dtype, d._chain, d._strides, d._offset, None, d._cache, d._idx)
        p._requires_grad = bool(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # (print(p) and f"{p}" show the header too, as PyTorch's)

    def __deepcopy__(self, memo):
        """As PyTorch's: a Parameter of the same class over a clone of the data (its own storage; ``.grad`` and
        attributes are not copied)."""
        if id(self) in memo:
            return memo[id(self)]
        r = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = r
        return r


# ---- Buffer (torch 2.5+) and the uninitialized kinds of the lazy modules ------------------------------------------
class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is True for the tensors ``Buffer(...)`` returns (plain tensors with a flag)."""

    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and instance.__dict__.get("_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that is module state but not a parameter (``torch.nn.Buffer``): assigned as a module attribute it
    is registered as a buffer (``persistent=False`` keeps it out of the state_dict). ``Buffer(t)`` returns a
    detached alias of ``t`` (keeping its ``requires_grad``) marked as a buffer."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            from .. import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: no shape until ``materialize(shape)``, which gives them
    storage (the factory device/dtype, or the ones ``module.to(...)`` set since) and turns them into
    ``cls_to_become`` (the same object, so references and optimizers keep it)."""

    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        from .. import empty
        self.data = empty(shape, device=device if device is not None else self.device,
                          dtype=dtype if dtype is not None else self.dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param) -> bool:
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (``torch.nn.parameter.UninitializedParameter``)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        from .. import empty
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        r = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = r
        return r


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (``torch.nn.parameter.UninitializedBuffer``)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        from .. import empty
        d = empty(0, device=device, dtype=dtype)
        t = cls._header(d._storage, d._shape, d.dtype, None, None, 0, None)
        t._requires_grad = bool(requires_grad)
        return t

    def __init__(self, requires_grad: bool = False, device=None, dtype=None):
        pass
