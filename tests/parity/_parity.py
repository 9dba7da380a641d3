"""Shared helper of the parity tests: run the same program in torch and in functorch_lite."""
import math
import warnings
from typing import Any, Callable

import numpy as np


def run(fn: Callable[[Any], Any], lib: Any) -> tuple[Any, BaseException | None]:
    """Call ``fn(lib)`` with warnings silenced: (result, None) or (None, exception)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib), None
    except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
        return None, e


def rounded(r: Any) -> Any:
    """Tensors (nested in tuples/lists) as plain lists rounded to 4 decimals, anything else as it is."""
    if isinstance(r, (tuple, list)):
        return [rounded(x) for x in r]
    if hasattr(r, "detach"):
        return np.round(np.asarray(r.detach().numpy(), dtype=np.float64), 4).tolist()
    return r


def same_rounded(fn: Callable[[Any], Any], torch_mod: Any, ft_mod: Any, warnings_as_errors: bool = False) -> Any:
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values (:func:`rounded`) or raise the same error
    type and message; the common outcome. ``warnings_as_errors``: a warning is an outcome too (create_graph's
    reference-cycle warning aside)."""
    out = []
    for lib in (torch_mod, ft_mod):
        try:
            with warnings.catch_warnings():
                if warnings_as_errors:
                    warnings.simplefilter("error")
                    warnings.filterwarnings("ignore", message=r"Using backward\(\) with create_graph=True")
                out.append(("ok", rounded(fn(lib))))
        except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
            out.append((type(e).__name__, str(e)))
    assert out[1] == out[0], out
    return out[0]


def assert_same_error(t_err: BaseException, f_err: BaseException | None, f_out: Any) -> None:
    """functorch_lite raised what torch raised: same exception type, same message."""
    assert f_err is not None, f"torch raised {t_err!r}; functorch_lite returned {f_out}"
    assert type(f_err) is type(t_err) and str(f_err) == str(t_err), (t_err, f_err)


def assert_same_outcome(fn: Callable[[Any], Any], torch_mod: Any, ft_mod: Any) -> None:
    """``fn(torch)`` and ``fn(functorch_lite)`` raise the same error, or return the same tensor exactly (dtype,
    shape, every value) or the same non-tensor value (compared as text)."""
    (t_out, t_err), (f_out, f_err) = run(fn, torch_mod), run(fn, ft_mod)
    if t_err is not None:
        assert_same_error(t_err, f_err, f_out)
        return
    assert f_err is None, f"functorch_lite raised {f_err!r}"
    if not isinstance(t_out, torch_mod.Tensor):
        assert str(f_out) == str(t_out)
        return
    assert str(f_out.dtype) == str(t_out.dtype) and tuple(f_out.shape) == tuple(t_out.shape)
    exact = [(o.double() if o.dtype.is_floating_point else o).numpy() for o in (f_out, t_out)]
    np.testing.assert_array_equal(*exact)


def describe(r: Any) -> Any:
    """A result as comparable plain data: a tensor (of either library) as its shape, strides, storage offset,
    dtype name, requires_grad, grad_fn class name and values (bfloat16 values as float32); tuples, lists and
    Sizes element by element; anything else as it is."""
    if hasattr(r, "grad_fn") and hasattr(r, "storage_offset"):
        d = r.detach()
        vals = (d.float() if str(d.dtype).endswith("bfloat16") else d).cpu().tolist()
        return (tuple(r.shape), r.stride(), r.storage_offset(), str(r.dtype).split(".")[-1], r.requires_grad,
                type(r.grad_fn).__name__ if r.grad_fn is not None else None, vals)
    if type(r).__name__ == "Size":
        return ("Size", tuple(r))
    if isinstance(r, (tuple, list)):
        return type(r)(describe(x) for x in r)
    return r


def same(fn: Callable[[Any], Any]) -> tuple:
    """``fn(functorch_lite)`` and ``fn(torch)`` give the same ``describe``d result, or raise the same exception
    type with the same message (warnings are left to ``fn``); returns that outcome."""
    import torch
    import functorch_lite as ft
    out = []
    for lib in (ft, torch):
        try:
            out.append(("ok", describe(fn(lib))))
        except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
            out.append((type(e).__name__, str(e)))
    assert close(out[0], out[1]), out
    return out[0]


def grad_of(t: Any) -> Any:
    """A tensor's ``.grad`` as nested lists (None when it has none)."""
    return None if t.grad is None else t.grad.numpy().tolist()


def both(case: Callable[[Any], Any]) -> tuple:
    """``(case(torch), case(functorch_lite))``, warnings silenced."""
    import torch
    import functorch_lite as ft
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return case(torch), case(ft)


def close(a: Any, b: Any, rel: float = 1e-6, abs: float = 1e-12) -> bool:  # noqa: A002 (math.isclose's names)
    """``describe``d outcomes (nested lists/tuples) equal, floats to a few float32 ulps by default (a matmul's last
    bit differs between CPUs' kernels: 0.25909090 against 0.25909093 on an AVX-512 host), NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=abs) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(close(x, y, rel, abs) for x, y in zip(a, b))
    return a == b


def call_with_bad_target(step, params, target, pos, bad, good, poison: bool) -> list:
    """One call of a training step whose class ``target[pos]`` is set to the out-of-range ``bad`` first when
    ``poison`` (then back to ``good``): [its loss] or [the IndexError's text, which .grad objects it kept]."""
    grads_before = [p.grad for p in params]
    if poison:
        target[pos] = bad
    try:
        return [float(step())]
    except IndexError as e:
        return [str(e), [p.grad is g for p, g in zip(params, grads_before)]]
    finally:
        if poison:
            target[pos] = good


def seeded_mlp(L, rng, sizes=(4, 8, 3)):
    """Two ``L.nn.Linear`` layers (sizes[0] -> sizes[1] -> sizes[2]) with weights drawn from ``rng`` (normal x 0.5),
    the same in torch and the facade: (first, second, their parameters)."""
    lin1, lin2 = L.nn.Linear(sizes[0], sizes[1]), L.nn.Linear(sizes[1], sizes[2])
    params = list(lin1.parameters()) + list(lin2.parameters())
    with L.no_grad():
        for p in params:
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    return lin1, lin2, params


def caught_warnings(lib: Any, fn: Callable[[Any], Any]) -> list:
    """The warning records of ``fn(lib)``, with ``lib.set_warn_always(True)`` (a once-per-process warning an earlier
    test showed shows again)."""
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn(lib)
    finally:
        lib.set_warn_always(False)
    return w


def warnings_of(lib: Any, fn: Callable[[Any], Any]) -> list:
    """The (category name, message) of every warning ``fn(lib)`` gives (:func:`caught_warnings`)."""
    return [(x.category.__name__, str(x.message)) for x in caught_warnings(lib, fn)]
