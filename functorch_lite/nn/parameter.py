"""``nn.Parameter``: a Tensor subclass that modules register as a learnable parameter."""
from __future__ import annotations

from .._tensor.tensor import INFERENCE_REQUIRES_GRAD, Tensor
from ..autograd.grad_mode import _state as _gm_state


class Parameter(Tensor):
    """A tensor that shares ``data``'s storage and requires grad by default (``torch.nn.Parameter``)."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .. import empty
            data = empty(0)
        if type(requires_grad) is not bool:  # (torch's Tensor._make_subclass parser)
            from ..ops._registry import _not_bool
            _not_bool("_make_subclass", ("require_grad",), (requires_grad,), pos=3)
        d = data.detach()
        if requires_grad and d._storage.inference and not _gm_state.inference:
            raise RuntimeError(INFERENCE_REQUIRES_GRAD)
        if requires_grad and not (d.is_floating_point() or d.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p = cls._header(d._storage, d._shape, d.dtype, d._chain, d._strides, d._offset, None, d._cache, d._idx)
        p._requires_grad = requires_grad
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


# torch's ``UninitializedTensorMixin._allowed_methods`` (its ``__torch_function__`` refuses every other Tensor
# method; properties pass): here ``__getattribute__`` refuses the others' public names and the mixin defines the
# operators, so only uninitialized tensors pay. (Function forms, ``torch.cat([p])``, are not refused.)
_ALLOWED = frozenset(("size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char", "short",
                      "int", "long", "cuda", "cpu", "to", "get_device", "materialize", "share_memory_"))
_ALIASES = {"nelement": "numel", "ndimension": "dim"}  # (names torch's error gives for an alias)
_BLOCKED: list = []  # [frozenset of refused public method names], built on first use


def _blocked() -> frozenset:
    if not _BLOCKED:
        names = set()
        for k in dir(Tensor):
            if k.startswith("_") or k in _ALLOWED:
                continue
            for c in Tensor.__mro__:
                if k in c.__dict__:
                    if callable(c.__dict__[k]) and not isinstance(c.__dict__[k], (type, classmethod, staticmethod)):
                        names.add(k)
                    break
        _BLOCKED.append(frozenset(names))
    return _BLOCKED[0]


def _uninit_error(cls, func: str) -> ValueError:
    return ValueError(f"Attempted to use an uninitialized parameter in {func}. This error happens when you are using "
                      f"a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` objects. When "
                      "using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling "
                      "torch functions")


def _refused(func: str):
    """An operator of an uninitialized tensor: torch's error naming ``func`` (a C method's name, or "<...>")."""
    shown = func if func.startswith("<") else f"<method '{func}' of 'torch._C.TensorBase' objects>"

    def op(self, *args, **kwargs):
        raise _uninit_error(type(self), shown.replace("@", f" at {id(op):#x}"))
    return op


def _py_fn(name: str) -> str:  # (an operator torch defines in Python: the function's repr)
    return f"<function Tensor.{name}@>"


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: no shape until ``materialize(shape)``, which gives them
    storage (the factory device/dtype, or the ones ``module.to(...)`` set since) and turns them into
    ``cls_to_become`` (the same object, so references and optimizers keep it). Other Tensor methods and the
    operators raise torch's ValueError."""

    cls_to_become: type = Tensor

    def __getattribute__(self, name):
        if name[0] != "_" and name in _blocked():
            raise _uninit_error(type(self), f"<method '{_ALIASES.get(name, name)}' of 'torch._C.TensorBase' objects>")
        return object.__getattribute__(self, name)

    __hash__ = Tensor.__hash__
    __len__ = _refused(_py_fn("__len__"))
    __iter__ = _refused("dim")
    __reversed__ = _refused(_py_fn("__reversed__"))
    __contains__ = _refused(_py_fn("__contains__"))
    __format__ = _refused(_py_fn("__format__"))
    __array__ = _refused(_py_fn("__array__"))
    __getitem__ = _refused("<slot wrapper '__getitem__' of 'torch._C.TensorBase' objects>")
    __setitem__ = _refused("<slot wrapper '__setitem__' of 'torch._C.TensorBase' objects>")
    __bool__ = _refused("__bool__")
    __float__ = _refused("__float__")
    __int__ = _refused("__int__")
    __index__ = _refused("__index__")
    __add__ = __radd__ = _refused("add")
    __iadd__ = _refused("add_")
    __sub__ = _refused("sub")
    __rsub__ = _refused(_py_fn("__rsub__"))
    __mul__ = __rmul__ = _refused("mul")
    __truediv__ = _refused("div")
    __rtruediv__ = _refused(_py_fn("__rdiv__"))
    __floordiv__ = _refused(_py_fn("__floordiv__"))
    __mod__ = _refused("remainder")
    __matmul__ = _refused("matmul")
    __rmatmul__ = _refused(_py_fn("__rmatmul__"))
    __pow__ = _refused("<function TensorBase.pow@>")
    __rpow__ = _refused(_py_fn("__rpow__"))
    __neg__ = _refused("neg")
    __abs__ = _refused("abs")
    __invert__ = _refused("__invert__")
    __and__ = _refused("__and__")
    __or__ = _refused("__or__")
    __eq__ = _refused("__eq__")
    __ne__ = _refused("ne")
    __lt__ = _refused("lt")
    __le__ = _refused("le")
    __gt__ = _refused("gt")
    __ge__ = _refused("ge")

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


def _keeps_buffer(name: str):
    """``UninitializedBuffer``'s conversion ``name`` (torch's ``__torch_function__`` converts the result back to
    the subclass): a new result is an ``UninitializedBuffer`` over it, so ``module.double()`` keeps it lazy."""
    conv = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        r = conv(self, *args, **kwargs)
        if r is self or not isinstance(r, Tensor) or isinstance(r, UninitializedTensorMixin):
            return r
        t = UninitializedBuffer._header(r._storage, r._shape, r.dtype, r._chain, r._strides, r._offset, None,
                                        r._cache, r._idx)
        t._requires_grad = r._requires_grad
        return t
    method.__name__ = name
    return method


for _n in ("to", "half", "float", "double", "char", "short", "int", "long", "cuda", "cpu"):
    setattr(UninitializedBuffer, _n, _keeps_buffer(_n))
del _n
