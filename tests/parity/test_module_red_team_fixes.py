"""nn.Module parity against real PyTorch 2.13 (red-team findings): ``Module._apply`` converting ``.grad`` in place
(``param.grad.data = ...``), ``torch.__future__``'s overwrite / swap switches honoured by module conversions, saving
and loading an untyped storage (in torch's format, both ways), the check of what a full backward hook hands on
("hook 'hook' has changed the size of value"), ``Module.to``'s refusal of ``copy``, and ``_modules`` /
``_parameters`` / ``_buffers`` shown as torch's plain dicts."""
import io
import weakref

import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded


def same(fn):
    """``fn(torch)`` and ``fn(functorch_lite)`` give the same values or raise the same error type and message."""
    return same_rounded(fn, torch, ft)


def _trained(lib):
    lin = lib.nn.Linear(2, 2)
    lin.register_buffer("cnt", lib.zeros(2))
    lin(lib.ones(1, 2)).sum().backward()
    return lin


def _convert(lin, how, lib):
    if how == "to":
        return lin.to(lib.float64)
    return getattr(lin, how)()


def _identities(lib, how):
    lin = _trained(lib)
    w, g, b = lin.weight, lin.weight.grad, lin.cnt
    _convert(lin, how, lib)
    return (lin.weight is w, lin.weight.grad is g, lin.cnt is b, str(w.dtype), str(g.dtype), str(lin.weight.dtype),
            str(lin.weight.grad.dtype), type(lin.weight).__name__, lin.weight.requires_grad,
            lin.weight.grad.requires_grad, lin.weight.is_leaf, str(lin.cnt.dtype))


@pytest.fixture
def future_flags():
    """Set both libraries' ``__future__`` switches: ``set(overwrite, swap)``; put back to False afterwards."""
    def set_(overwrite, swap):
        for lib in (torch, ft):
            lib.__future__.set_overwrite_module_params_on_conversion(overwrite)
            lib.__future__.set_swap_module_params_on_conversion(swap)
    yield set_
    set_(False, False)


# ---- 1. _apply converts .grad in place ------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["double", "half", "to", "float", "bfloat16"])
def test_apply_keeps_grad_object(how):
    r = same(lambda lib: _identities(lib, how))[1]
    assert r[0] is True and r[1] is True


def test_apply_grad_then_backward_into_kept_grad():
    def f(lib):
        lin = _trained(lib)
        g = lin.weight.grad
        lin.double()
        lin(lib.ones(1, 2, dtype=lib.float64)).sum().backward()
        return lin.weight.grad is g, str(g.dtype), g
    same(f)


def test_apply_requires_grad_false_param():
    def f(lib):
        lin = _trained(lib)
        lin.weight.requires_grad_(False)
        w = lin.weight
        lin.double()
        return lin.weight is w, lin.weight.requires_grad, str(lin.weight.grad.dtype)
    same(f)


# ---- 2. torch.__future__ ---------------------------------------------------------------------------------------
def test_future_defaults_and_names():
    def f(lib):
        fut = lib.__future__
        return (fut.get_overwrite_module_params_on_conversion(), fut.get_swap_module_params_on_conversion(),
                sorted(k for k in dir(fut) if not k.startswith("__")))
    same(f)


@pytest.mark.parametrize("overwrite,swap", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("how", ["double", "half", "to"])
def test_future_conversion_modes(future_flags, overwrite, swap, how):
    future_flags(overwrite, swap)
    same(lambda lib: (lib.__future__.get_overwrite_module_params_on_conversion(),
                      lib.__future__.get_swap_module_params_on_conversion(), _identities(lib, how)))


@pytest.mark.parametrize("overwrite,swap", [(True, False), (False, True)])
def test_future_modes_requires_grad_false(future_flags, overwrite, swap):
    future_flags(overwrite, swap)

    def f(lib):
        lin = _trained(lib)
        lin.weight.requires_grad_(False)
        w = lin.weight
        lin.double()
        return lin.weight is w, lin.weight.requires_grad, str(lin.weight.grad.dtype), lin.weight.grad.requires_grad
    same(f)


def test_future_swap_poisons_graph_recorded_before(future_flags):
    future_flags(False, True)

    def f(lib):
        lin = lib.nn.Linear(2, 2)
        y = lin(lib.ones(1, 2)).sum()
        lin.double()
        y.backward()
    same(f)


def test_future_swap_refused_names_parameter(future_flags):
    future_flags(False, True)

    def f(lib):
        lin = lib.nn.Linear(2, 2)
        ref = weakref.ref(lin.weight)  # noqa: F841  (a weakref forbids the swap)
        try:
            lin.double()
        except RuntimeError as e:
            return str(e), type(e.__cause__).__name__, str(e.__cause__), str(lin.weight.dtype)
    same(f)


def test_future_swap_refused_names_grad(future_flags):
    future_flags(False, True)

    def f(lib):
        lin = _trained(lib)
        g = lin.weight.grad
        ref = weakref.ref(g)  # noqa: F841
        try:
            lin.double()
        except RuntimeError as e:
            return str(e), str(e.__cause__), lin.weight.grad is None, str(lin.weight.dtype), str(g.dtype)
    same(f)


# ---- 3. save / load of an untyped storage -----------------------------------------------------------------------
def _bytes_of(lib, storage):
    return lib.tensor([], dtype=lib.uint8).set_(storage).tolist()


def _save(lib, obj, **kw):
    b = io.BytesIO()
    lib.save(obj, b, **kw)
    return b.getvalue()


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize("writer", [torch, ft], ids=["torch_file", "ft_file"])
def test_untyped_storage_round_trips(writer):
    data = _save(writer, writer.arange(4.).untyped_storage())
    out = []
    for lib in (torch, ft):
        s = lib.load(io.BytesIO(data))
        out.append((s.nbytes(), s.size(), _bytes_of(lib, s)))
    assert out[0] == out[1]
    assert out[0][0] == 16


@pytest.mark.parametrize("writer", [torch, ft], ids=["torch_file", "ft_file"])
def test_untyped_storage_shared_with_uint8_tensor(writer):
    u = writer.arange(5, dtype=writer.uint8)
    data = _save(writer, {"u": u, "s": u.untyped_storage(), "v": u[2:].untyped_storage(),
                          "d": writer.tensor([1.5, -2.0], dtype=writer.float64)[1:].untyped_storage()})

    def f(lib):
        o = lib.load(io.BytesIO(data))
        shared = o["s"].data_ptr() == o["u"].untyped_storage().data_ptr() == o["v"].data_ptr()
        o["u"][0] = 9
        return shared, _bytes_of(lib, o["s"]), _bytes_of(lib, o["d"]), o["d"].nbytes()
    same(f)


def test_untyped_storage_legacy_format_read():
    data = _save(ft, ft.arange(3, dtype=ft.int16).untyped_storage(), _use_new_zipfile_serialization=False)
    assert _bytes_of(ft, ft.load(io.BytesIO(data), weights_only=False)) == [0, 0, 1, 0, 2, 0]


def test_untyped_storage_save_errors():
    def mixed(lib):
        t = lib.arange(3.)
        lib.save([t, t.untyped_storage()], io.BytesIO())

    def meta(lib):
        lib.save(lib.empty(3, device="meta").untyped_storage(), io.BytesIO())
    same(mixed)
    same(meta)


# ---- 4. what a full backward hook hands on is checked as torch's inner hook ------------------------------------------
@pytest.mark.parametrize("case", ["size", "dtype", "scale", "list", "count", "row", "float", "pre_size", "pre_dtype",
                                  "pre_scale"])
def test_full_backward_hook_result_checks(case):
    hooks = {"size": lambda m, gi, go: (gi[0][:, :2],), "dtype": lambda m, gi, go: (gi[0].double(),),
             "scale": lambda m, gi, go: (gi[0] * 2,), "list": lambda m, gi, go: [gi[0] * 2],
             "count": lambda m, gi, go: (gi[0], gi[0]), "row": lambda m, gi, go: (gi[0][0],),
             "float": lambda m, gi, go: (1.0,)}
    pre = {"pre_size": lambda m, go: (go[0][:1],), "pre_dtype": lambda m, go: (go[0].double(),),
           "pre_scale": lambda m, go: (go[0] * 3,)}

    def f(lib):
        lin = lib.nn.Linear(3, 1)
        if case in hooks:
            lin.register_full_backward_hook(hooks[case])
        else:
            lin.register_full_backward_pre_hook(pre[case])
        x = lib.ones(2, 3, requires_grad=True)
        lin(x).sum().backward()
        return tuple(x.grad.shape), str(x.grad.dtype)
    same(f)


# ---- 5. Module.to refuses copy ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{"copy": True}, {"copy": False}, {"dtype": "float64", "copy": False}])
def test_module_to_refuses_copy(kwargs):
    def f(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return str(lib.nn.Linear(2, 2).to(**kw).weight.dtype)
    same(f)


# ---- 6. _modules / _parameters / _buffers are shown as dicts, hook tables as OrderedDicts ----------------------------
def test_member_tables_repr():
    def f(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = None
                self.l2 = lib.nn.Linear(1, 1, bias=False)
                self.register_buffer("b", lib.zeros(1))
                self.register_parameter("p", None)
        m = M()
        m.register_forward_hook(lambda *a: None)
        e = lib.nn.Module()
        return (repr(m._modules), repr(m._buffers), repr(m._parameters), str(m.l2._parameters.keys()),
                str(list(m._modules.items())[0][0]), repr(e._modules), repr(e._parameters), repr(e._buffers),
                repr(e._forward_hooks), repr(e._forward_pre_hooks), repr(e._backward_hooks), len(m._forward_hooks),
                type(m._forward_hooks.keys()).__name__)
    same(f)


def test_full_backward_hook_unreached_input_gets_zeros():
    """grad_input is torch's identity node's materialized outputs: zeros for an input that requires grad but no
    gradient reached, which a hook may replace."""
    def f(lib):
        class M(lib.nn.Module):
            def forward(self, x, y):
                return x * 2
        seen = []

        def hook(m, gi, go):
            seen.append([None if g is None else g.tolist() for g in gi])
            return gi[0], lib.ones(2)
        m = M()
        m.register_full_backward_hook(hook)
        x, y = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        m(x, y).sum().backward()
        return seen, x.grad, y.grad
    same(f)
