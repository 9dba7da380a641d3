"""``torch.utils.swap_tensors(t1, t2)``: the two tensor objects exchange their contents (class, ``__dict__`` and
every slot: storage, view metadata, dtype, autograd state), each keeping its identity.

As PyTorch's: a tensor some weakref points to cannot be swapped, nor two tensors whose classes have different
slots. A leaf's gradient accumulator is part of its old identity: one a recorded graph holds is poisoned (a
backward through it raises PyTorch's error), and each tensor gets a fresh one on its next use. (PyTorch also
refuses a tensor whose C++ use count shows other holders, a view's base for one; the facade has no such count.)
"""
from __future__ import annotations

import copyreg
import weakref

__all__ = ["swap_tensors"]

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try "
             "to run backward on a tensor that was swapped. For a module m with "
             "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or "
             "dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve "
             "this, please only change the device/dtype before running forward (or after both forward and "
             "backward).")


class _Poisoned:
    """What a poisoned ``AccumulateGrad`` accumulates into: any use raises PyTorch's error."""
    __slots__ = ()

    def __getattribute__(self, name):
        raise RuntimeError(_POISONED)


def swap_tensors(t1, t2) -> None:
    """Swap the contents of ``t1`` and ``t2`` (``t1`` gets ``t2``'s values, shape, dtype, grad...).

    >>> import functorch_lite as torch
    >>> a, b = torch.zeros(2), torch.ones(3)
    >>> torch.utils.swap_tensors(a, b); a
    tensor([1., 1., 1.])
    """
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")

    for t in (t1, t2):  # a graph recorded before the swap would accumulate into the other content: poisoned
        acc = getattr(t, "_acc", None)
        if acc is not None and getattr(acc, "variable", None) is t:
            acc.variable = _Poisoned()
            t._acc = None

    def swap_attr(name):
        tmp = getattr(t1, name)
        setattr(t1, name, getattr(t2, name))
        setattr(t2, name, tmp)

    swap_attr("__class__")
    swap_attr("__dict__")
    for slot in t1_slots:
        if hasattr(t1, slot) and hasattr(t2, slot):
            swap_attr(slot)
        elif hasattr(t1, slot):
            setattr(t2, slot, getattr(t1, slot))
            delattr(t1, slot)
        elif hasattr(t2, slot):
            setattr(t1, slot, getattr(t2, slot))
            delattr(t2, slot)
