"""``autocast``: PyTorch's automatic mixed precision regions (spec §11.1, AMP-01..12).

The state is per thread, as in PyTorch: for each device type, whether autocast is enabled and its
low-precision dtype. Dispatch (``ops/_dispatch.py``) reads it through one cheap check: the global
counter ``ANY[0]`` is non-zero only while some thread has an enabled autocast device type; only then
does it read this thread's ``STATE.active`` and apply the op's ``autocast`` policy (a field of the
op table, see ``_registry.defop``). Policies, per device family (``"cpu"``, or ``"cuda"`` for the
GPU-like device types):

- ``"lower"``: floating inputs (not float64) are cast to the autocast dtype (matmul, linear, conv...);
- ``"fp32"``: floating inputs (not float64) are cast to float32 (losses; CPU's fp32 list);
- ``"fp32_opt"``: as ``"fp32"`` unless the call passes an explicit ``dtype=`` (CUDA's sum/softmax...);
- ``"promote"``: floating inputs are cast to the widest of them and the autocast dtype (cat, stack);
- ``"banned"``: the op raises PyTorch's "unsafe to autocast" error (CUDA's binary_cross_entropy);
- ``None``: the op runs on its inputs as they are.

The field may also be a function of the call's static arguments returning a policy or a per-family dict.

The casts are ordinary ``_to_copy`` dispatches, so autograd records ``ToCopyBackward0`` and the
gradient of a float32 parameter comes back in float32 (AMP-10). Under ``functorch_lite.compile`` the
state is read while tracing; :func:`state_key` is the value a compiled function's guard key needs.
"""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Callable, Optional

import jax

from .. import dtypes as D
from ..autograd import grad_mode as _gm

# the device types with an autocast dispatch key in PyTorch (plus the facade's 'tpu'), with their default autocast
# dtype; other device types have no autocast state (PyTorch's "unknown device type for autocast")
_DEFAULT_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16, "ipu": D.float16, "xpu": D.float16, "maia": D.bfloat16,
                   "xla": D.bfloat16, "mps": D.float16, "hpu": D.bfloat16, "mtia": D.float16,
                   "privateuseone": D.float16, "tpu": D.bfloat16}
_OTHER_DTYPES = {"hip": D.float16}  # (a default dtype without an autocast key)
_NO_KEY = "unknown device type for autocast in get_autocast_dispatch_key_from_device_type"
_MISSING = object()

ANY = [0]  # number of threads with at least one enabled autocast device type: dispatch's one cheap check


class _State(threading.local):
    def __init__(self):
        self.enabled: dict = {}
        self.dtype: dict = {}
        self.active: Optional[dict] = None  # device type -> dtype, for the enabled device types only
        self.nesting = 0
        self.cache_enabled = True
        self.counted = False
        self.cache: dict = {}  # id(weight) -> (weight, its cast): cleared when the outermost region exits


STATE = _State()


def _refresh() -> None:
    st = STATE
    act = {d: st.dtype.get(d, _DEFAULT_DTYPES[d]) for d, on in st.enabled.items() if on}
    st.active = act or None
    on = st.active is not None
    if on != st.counted:
        ANY[0] += 1 if on else -1
        st.counted = on


def _tname(v) -> str:
    from ..ops.view_ops import _tname as tname
    return tname(v)


def _torch_class(v) -> str:
    """``str(type(v))`` as PyTorch's messages print it: the facade's device, dtype and Tensor classes under their
    ``torch`` names."""
    from .._device import device
    from .._tensor.tensor import Tensor
    for cls, name in ((device, "torch.device"), (D.dtype, "torch.dtype"), (Tensor, "torch.Tensor")):
        if type(v) is cls:
            return f"<class '{name}'>"
    return str(type(v))


def _device_type(fname: str, device_type) -> str:
    """The device type a ``device_type`` argument names (``'cuda:0'`` -> ``'cuda'``), with PyTorch's errors for a
    non-string and for a string that is no device."""
    if type(device_type) is str and device_type in _DEFAULT_DTYPES:
        return device_type
    if not isinstance(device_type, str):
        raise TypeError(f"{fname}(): argument 'device_type' (position 1) must be str, not {_tname(device_type)}")
    from .._device import _parse
    return _parse(device_type).type


def _keyed(fname: str, device_type) -> str:
    """:func:`_device_type`, which must have an autocast state."""
    t = _device_type(fname, device_type)
    if t not in _DEFAULT_DTYPES:
        raise RuntimeError(_NO_KEY)
    return t


def _check_bool(fname: str, v, pos: int) -> None:
    if type(v) is not bool:
        raise TypeError(f"{fname}(): argument 'enabled' (position {pos}) must be bool, not {_tname(v)}")


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` supports autocast (``torch.amp.is_autocast_available``): a device string (an index
    allowed) whose type has autocast."""
    if not isinstance(device_type, str):
        raise TypeError(f"_is_autocast_available(): argument 'device_type' (position 1) must be str, not "
                        f"{_tname(device_type)}")
    return _device_type("_is_autocast_available", device_type) in _DEFAULT_DTYPES


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is enabled for ``device_type`` in this thread (AMP-02); no argument: CUDA's.

    >>> with autocast('cpu'): is_autocast_enabled('cpu')
    True
    """
    return bool(STATE.enabled.get(_keyed("is_autocast_enabled", device_type), False))


def set_autocast_enabled(device_type=_MISSING, enabled=_MISSING) -> None:
    """Enable or disable autocast for ``device_type`` in this thread (``torch.set_autocast_enabled``); the legacy
    one-argument form ``set_autocast_enabled(enabled)`` sets CUDA's (no warning, as PyTorch)."""
    if enabled is _MISSING:
        if device_type is _MISSING:
            raise TypeError("set_autocast_enabled() received an invalid combination of arguments - got (), but "
                            "expected one of:\n * (str device_type, bool enabled)\n * (bool enabled)\n")
        device_type, enabled = "cuda", device_type
        _check_bool("set_autocast_enabled", enabled, 1)
    elif device_type is _MISSING:
        device_type = "cuda"
        _check_bool("set_autocast_enabled", enabled, 1)
    else:
        if not isinstance(device_type, str):
            raise TypeError(f"set_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                            f"{_tname(device_type)}")
        _check_bool("set_autocast_enabled", enabled, 2)
    STATE.enabled[_keyed("set_autocast_enabled", device_type)] = enabled
    _refresh()


def get_autocast_dtype(device_type=_MISSING) -> D.dtype:
    """The autocast dtype of ``device_type`` (bfloat16 on CPU, float16 on CUDA unless set; AMP-02/03)."""
    if device_type is _MISSING:
        raise TypeError('get_autocast_dtype() missing 1 required positional arguments: "device_type"')
    t = _device_type("get_autocast_dtype", device_type)
    dt = STATE.dtype.get(t) or _DEFAULT_DTYPES.get(t) or _OTHER_DTYPES.get(t)
    if dt is None:
        raise RuntimeError("unsupported scalarType")
    return dt


def set_autocast_dtype(device_type=_MISSING, dtype=_MISSING) -> None:
    """Set the autocast dtype of ``device_type`` in this thread (``torch.set_autocast_dtype``)."""
    if device_type is _MISSING:
        raise TypeError('set_autocast_dtype() missing 2 required positional argument: "device_type", "dtype"')
    if not isinstance(device_type, str):
        raise TypeError(f"set_autocast_dtype(): argument 'device_type' (position 1) must be str, not "
                        f"{_tname(device_type)}")
    if dtype is _MISSING:
        raise TypeError('set_autocast_dtype() missing 1 required positional arguments: "dtype"')
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                        f"{_tname(dtype)}")
    STATE.dtype[_device_type("set_autocast_dtype", device_type)] = dtype
    _refresh()


def autocast_increment_nesting() -> int:
    """``torch.autocast_increment_nesting()``: one more autocast region entered; the new depth."""
    STATE.nesting += 1
    return STATE.nesting


def autocast_decrement_nesting() -> int:
    """``torch.autocast_decrement_nesting()``: one autocast region left; the new depth (it may go negative, as
    PyTorch's). A region that brings it to 0 clears the weight cache."""
    STATE.nesting -= 1
    return STATE.nesting


def _deprecated(old: str, new: str, fn, check=None):
    """torch's deprecated per-device spellings (``torch.is_autocast_cpu_enabled()``...): ``check`` of the argument
    (its TypeError comes first), its DeprecationWarning, then ``fn``."""
    def f(*args):
        if check is not None:
            check(*args)
        from .._warn import user_stacklevel
        warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning,
                      stacklevel=user_stacklevel())
        return fn(*args)
    f.__name__ = f.__qualname__ = old.split("(")[0]
    return f


def _bool_arg(enabled) -> None:
    if type(enabled) is not bool:
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")


def _dtype_arg(dtype) -> None:
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")


def _legacy(device_type: str, name: str) -> tuple:
    """``torch.{is,set}_autocast_<name>_enabled`` and ``torch.{get,set}_autocast_<name>_dtype`` of ``device_type``:
    deprecated, each with its DeprecationWarning."""
    return (_deprecated(f"is_autocast_{name}_enabled()", f"is_autocast_enabled('{device_type}')",
                        lambda: is_autocast_enabled(device_type)),
            _deprecated(f"set_autocast_{name}_enabled(enabled)", f"set_autocast_enabled('{device_type}', enabled)",
                        lambda enabled: set_autocast_enabled(device_type, enabled), _bool_arg),
            _deprecated(f"get_autocast_{name}_dtype()", f"get_autocast_dtype('{device_type}')",
                        lambda: get_autocast_dtype(device_type)),
            _deprecated(f"set_autocast_{name}_dtype(dtype)", f"set_autocast_dtype('{device_type}', dtype)",
                        lambda dtype: set_autocast_dtype(device_type, dtype), _dtype_arg))


(is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
 set_autocast_cpu_dtype) = _legacy("cpu", "cpu")
(is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype,
 set_autocast_xla_dtype) = _legacy("xla", "xla")
(is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype,
 set_autocast_ipu_dtype) = _legacy("ipu", "ipu")
_, _, get_autocast_gpu_dtype, set_autocast_gpu_dtype = _legacy("cuda", "gpu")  # (torch has no *_gpu_enabled)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the casts of leaf float32 tensors that require grad (weights) in a region."""
    return STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Set the autocast cache flag."""
    STATE.cache_enabled = bool(enabled)


def state_key() -> Optional[tuple]:
    """The autocast state as a hashable value, for compiled functions' guard keys: None when off."""
    act = STATE.active
    return None if act is None else tuple(sorted((d, dt.name) for d, dt in act.items()))


def _cuda_available() -> bool:
    from .. import cuda
    return cuda.is_available()


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a region where ops run
    in mixed precision (spec §11.1). A context manager and a decorator.

    >>> import functorch_lite as torch
    >>> a = torch.ones(2, 2)
    >>> with torch.amp.autocast('cpu'):
    ...     (a @ a).dtype
    torch.bfloat16
    """

    def __init__(self, device_type: str, dtype: Optional[D.dtype] = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{_torch_class(device_type)}`")
        # (not a dtype -- a string, a number: torch keeps it, warns that it is not supported, and refuses it on
        # entering)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else \
            dtype if not isinstance(dtype, D.dtype) else D.as_dtype(dtype)
        self.device = device_type  # (as given: 'cuda:0' stays so, as in PyTorch)
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if device_type == "privateuseone":  # (no backend module is registered here, as in a plain PyTorch build)
            raise AssertionError("Tried to use AMP with the `privateuseone` backend, but the backend has not "
                                 "registered a module or  the module miss some necessary funcs. The backend should "
                                 "register a module by `torch._register_device_module`, and the module must have "
                                 "these funcs: \n`get_amp_supported_dtype() -> List[torch.dtype]`. \n")
        self._type = _device_type("autocast", device_type)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        supported = (D.bfloat16, D.float16)
        if enabled:
            if device_type == "cuda":  # (only the exact string: PyTorch's check; 'cuda:0' is not checked)
                if not _cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                                  stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in supported:
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                              stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)

    def __enter__(self) -> "autocast":
        if not isinstance(self.fast_dtype, D.dtype):
            raise TypeError("set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                            f"{type(self.fast_dtype).__name__}")
        st = STATE
        t = self._type
        self.prev_cache_enabled = st.cache_enabled
        self.prev = st.enabled.get(t, False)
        self.prev_fastdtype = get_autocast_dtype(t)
        st.enabled[t] = self._enabled
        st.dtype[t] = self.fast_dtype
        autocast_increment_nesting()
        st.cache_enabled = self._cache_enabled
        _refresh()
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        st = STATE
        if autocast_decrement_nesting() == 0:
            st.cache.clear()
        t = self._type
        st.enabled[t] = self.prev
        st.dtype[t] = self.prev_fastdtype
        st.cache_enabled = self.prev_cache_enabled
        _refresh()
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                            f"Did you mean to use autocast as a context manager? For example:\n"
                            f"    with torch.autocast(device_type=...):\n"
                            f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        decorate_autocast.__script_unsupported = "@autocast() decorator is not supported in script mode"
        return decorate_autocast


class cpu_autocast(autocast):
    """Deprecated ``torch.cpu.amp.autocast`` (AMP-11): a FutureWarning, then ``autocast('cpu', ...)``."""

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.bfloat16, cache_enabled: bool = True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class cuda_autocast(autocast):
    """Deprecated ``torch.cuda.amp.autocast``: a FutureWarning, then ``autocast('cuda', ...)``."""

    def __init__(self, enabled: bool = True, dtype: D.dtype = D.float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


# torch's classes are ``torch.cpu.amp.autocast`` / ``torch.cuda.amp.autocast``: their names (repr, pickling by
# reference) are those, where the facade exposes them
for _cls, _where in ((cpu_autocast, "functorch_lite.cpu.amp"), (cuda_autocast, "functorch_lite.cuda.amp")):
    _cls.__name__ = _cls.__qualname__ = "autocast"
    _cls.__module__ = _where
del _cls, _where


# ---- the per-op policy, applied by dispatch --------------------------------------------------------------

def _family(device_type: str) -> str:
    return "cpu" if device_type == "cpu" else "cuda"


def policy_of(op, device_type: str, sargs: tuple = (), targs: tuple = ()) -> Optional[str]:
    """The op's autocast policy for ``device_type``. The ``autocast`` field is a policy name, a dict
    ``{"cpu": ..., "cuda": ...}`` (a missing family means None), or a function of the call's static and tensor
    arguments returning one of those (``F.pad``: only the reflect/replicate kernels are on CPU's fp32 list;
    ``inner``: only its matmul form autocasts)."""
    p = op.autocast
    if callable(p):
        p = p(sargs, targs)
    if p is None or type(p) is str:
        return p
    return p.get(_family(device_type))


_BCE_MSG = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
            "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
            "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
            "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
            "safe to autocast.")


def apply(op, targs: tuple, sargs: tuple, cast: Callable) -> tuple:
    """``targs`` with the op's autocast policy applied (``cast(tensor, dtype)`` records the cast).

    Only called by dispatch while ``ANY[0]`` is set; returns ``targs`` itself when nothing changes."""
    act = STATE.active
    if act is None:
        return targs
    from .._tensor.tensor import Tensor
    is_list = op.tensors == "list"
    if is_list:
        if not isinstance(targs[0], (list, tuple)):
            return targs  # a generator or a Tensor: left to the op's own argument checks
        ts = tuple(targs[0])
    else:
        ts = targs
    first = next((t for t in ts if isinstance(t, Tensor)), None)
    if first is None:
        return targs
    dev = first._storage.device.type
    low = act.get(dev)
    if low is None:
        return targs
    pol = policy_of(op, dev, sargs, ts)
    if pol is None:
        return targs
    if pol == "banned":
        raise RuntimeError(_BCE_MSG)
    if pol == "lower":
        to = low
    elif pol == "fp32":
        to = D.float32
    elif pol == "fp32_opt":
        if op.sarg(sargs, "dtype") is not None:
            return targs
        to = D.float32
    elif pol == "promote":
        to = low
        for t in ts:
            if _eligible(t, dev) and t.dtype is not D.float64 and t.dtype is not to:
                if to is D.float32 or t.dtype is D.float32:
                    to = D.float32
                else:
                    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    else:
        raise ValueError(f"unknown autocast policy {pol!r} of op {op.name}")
    out = tuple((_cached_cast(t, to, cast) if to is low else cast(t, to))
                if _eligible(t, dev) and t.dtype is not D.float64 and t.dtype is not to else t for t in ts)
    return (list(out),) + tuple(targs[1:]) if is_list else out


def cpu_lower_dtype(t) -> Optional[D.dtype]:
    """The CPU autocast dtype while autocast is on for ``t``'s device (a CPU tensor), else None (one list read when
    autocast is off everywhere): the static argument of an op whose PyTorch CPU kernel calls ops of autocast's
    lower-precision list inside itself (``_trilinear``'s bmm's under ``F.bilinear``), so that its body runs those
    parts in that dtype while the op itself keeps its inputs' dtype."""
    if not ANY[0]:
        return None
    act = STATE.active
    if act is None or t._storage.device.type != "cpu":
        return None
    return act.get("cpu")


class state_as:
    """A region under the autocast state ``active`` (``STATE.active`` as it was: device type -> dtype, or None):
    the backward of a compiled forward (and a checkpointed region) runs the forward again as it ran."""

    def __init__(self, active: Optional[dict]):
        self.active = active

    def __enter__(self) -> None:
        st = STATE
        self.prev = (st.enabled, st.dtype)
        st.enabled = {d: True for d in self.active or ()}
        st.dtype = {**st.dtype, **(self.active or {})}
        _refresh()

    def __exit__(self, *exc) -> bool:
        STATE.enabled, STATE.dtype = self.prev
        _refresh()
        return False


def clear_autocast_cache() -> None:
    """Drop this thread's cached weight casts (``torch.clear_autocast_cache``)."""
    STATE.cache.clear()


def _cached_cast(t, to, cast: Callable):
    """PyTorch's autocast cache: a leaf float32 tensor that requires grad (a weight, not a view) is cast once per
    outermost region, so a weight used by several ops has one cast (one ToCopyBackward0 node). As in PyTorch, a
    cast first made under no_grad is made with grad on (so a later grad-mode use of the cached cast still reaches
    the weight), and inference mode neither reads nor fills the cache. Never while tracing (a traced cast must not
    outlive its trace) nor inside a differentiating ``func`` transform (which records nothing)."""
    st = STATE
    gs = _gm._state
    if not (st.cache_enabled and t.dtype is D.float32 and t._requires_grad and t.grad_fn is None
            and not gs.inference and not gs.func and not t._is_view()
            and not isinstance(t._storage.array, jax.core.Tracer)):
        return cast(t, to)
    hit = st.cache.get(id(t))
    if hit is not None and hit[0] is t and hit[1].dtype is to:
        return hit[1]
    if gs.enabled:
        c = cast(t, to)
    else:
        gs.enabled = True
        try:
            c = cast(t, to)
        finally:
            gs.enabled = False
    st.cache[id(t)] = (t, c)
    return c


def _eligible(t, dev: str) -> bool:
    from .._tensor.tensor import Tensor
    return isinstance(t, Tensor) and t.dtype.is_floating_point and t._storage.device.type == dev


# ---- custom autograd.Function helpers (torch.amp.custom_fwd / custom_bwd) ---------------------------------

def _cast_inputs(value: Any, device_type: str, dtype: D.dtype) -> Any:
    """``value`` with its floating tensors on ``device_type`` (not float64) cast to ``dtype``, through lists,
    tuples and dicts (``torch.amp.autocast_mode._cast``)."""
    from .._tensor.tensor import Tensor
    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype is not D.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, dict):
        return {_cast_inputs(k, device_type, dtype): _cast_inputs(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd: Optional[Callable] = None, *, device_type: str, cast_inputs: Optional[D.dtype] = None):
    """Decorator for the ``forward`` of a custom ``autograd.Function`` (``torch.amp.custom_fwd``).

    In an autocast-enabled region with ``cast_inputs`` given, floating inputs are cast to it and ``forward`` runs
    with autocast disabled; otherwise ``forward`` runs under the current autocast state, which is recorded on
    ``ctx`` so that :func:`custom_bwd` runs ``backward`` under the same state.

    >>> import functorch_lite as torch
    >>> class Mm(torch.autograd.Function):
    ...     @staticmethod
    ...     @torch.amp.custom_fwd(device_type='cpu', cast_inputs=torch.float32)
    ...     def forward(ctx, a, b):
    ...         return a.mm(b)
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{_torch_class(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        enabled = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, cast_inputs), **_cast_inputs(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd: Optional[Callable] = None, *, device_type: str):
    """Decorator for the ``backward`` of a custom ``autograd.Function`` (``torch.amp.custom_bwd``): it runs under
    the autocast state (enabled, dtype) its :func:`custom_fwd` forward ran under."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{_torch_class(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def cuda_custom_fwd(fwd: Optional[Callable] = None, *, cast_inputs: Optional[D.dtype] = None):
    """Deprecated ``torch.cuda.amp.custom_fwd``: a FutureWarning, then ``custom_fwd(..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd: Callable):
    """Deprecated ``torch.cuda.amp.custom_bwd``: a FutureWarning, then ``custom_bwd(..., device_type='cuda')``."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use `torch.amp.custom_bwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(custom_bwd, device_type="cuda")(bwd)
