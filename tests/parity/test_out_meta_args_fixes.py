"""out= checks of the gather / scatter / index ops, histc, multi_dot and chain_matmul (the dtype of ``out``, an
input requiring grad, ``out`` sharing an input's memory); meta tensors through one_hot / histc; argument errors of
tril_indices / triu_indices, chain_matmul and einsum -- each against real torch."""
import warnings

import pytest
import torch

import functorch_lite as ft


def _err(fn):
    """(type name, message) of what ``fn`` raises, or None when it returns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    return None


def _same_error(tfn, ffn):
    t, f = _err(tfn), _err(ffn)
    assert t is not None
    assert f == t


# ---- out= -------------------------------------------------------------------------------------------------------
def _ops(m):
    """The out= calls, ``(self, source)`` -> result with ``out=o``, for the module ``m`` (torch or functorch_lite)."""
    i0 = lambda: m.tensor([0])  # noqa: E731
    z = lambda *s: m.zeros(*s, dtype=m.long)  # noqa: E731
    return {
        "gather": lambda a, s, o: m.gather(a, 1, z(3, 1), out=o),
        "index_select": lambda a, s, o: m.index_select(a, 0, m.tensor([2, 0, 1]), out=o),
        "index_add": lambda a, s, o: m.index_add(a, 0, i0(), s[:1], out=o),
        "index_copy": lambda a, s, o: m.index_copy(a, 0, i0(), s[:1], out=o),
        "scatter": lambda a, s, o: m.scatter(a, 0, z(1, 3), s, out=o),
        "scatter_value": lambda a, s, o: m.scatter(a, 0, z(1, 3), 2.0, out=o),
        "scatter_add": lambda a, s, o: m.scatter_add(a, 0, z(1, 3), s, out=o),
        "scatter_reduce": lambda a, s, o: m.scatter_reduce(a, 0, z(1, 3), s, "amax", out=o),
        "histc": lambda a, s, o: m.histc(a, 4, out=o),
        "multi_dot": lambda a, s, o: m.linalg.multi_dot([a, s], out=o),
        "multi_dot3": lambda a, s, o: m.linalg.multi_dot([s, s, a], out=o),
        "chain_matmul": lambda a, s, o: m.chain_matmul(a, s, out=o),
    }


_SHAPE = {"gather": (3, 1), "histc": (4,)}
_NAMES = list(_ops(torch))


def _pair(name):
    return _ops(torch)[name], _ops(ft)[name]


def _data(m):
    return m.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [3.0, -2.0, 1.0]]), m.ones(3, 3)


@pytest.mark.parametrize("name", _NAMES)
def test_out_of_another_dtype(name):
    tf, ff = _pair(name)
    s = _SHAPE.get(name, (3, 3))
    _same_error(lambda: tf(*_data(torch), torch.empty(*s, dtype=torch.float64)),
                lambda: ff(*_data(ft), ft.empty(*s, dtype=ft.float64)))


@pytest.mark.parametrize("name,which", [(n, w) for n in _NAMES if n != "histc" for w in ("self", "source", "out")
                                        if not (w == "source" and n in ("gather", "index_select", "scatter_value"))])
def test_out_with_an_argument_requiring_grad(name, which):
    tf, ff = _pair(name)
    s = _SHAPE.get(name, (3, 3))

    def run(m, f):
        a, src = _data(m)
        o = m.empty(*s)
        if which == "self":
            a.requires_grad_()
        elif which == "source":
            src.requires_grad_()
        else:
            o.requires_grad_()
        return lambda: f(a, src, o)
    _same_error(run(torch, tf), run(ft, ff))


def test_histc_out_checks_the_dtype_not_grad():
    _same_error(lambda: torch.histc(torch.ones(3, requires_grad=True), 4, out=torch.empty(4, dtype=torch.float64)),
                lambda: ft.histc(ft.ones(3, requires_grad=True), 4, out=ft.empty(4, dtype=ft.float64)))
    for m in (torch, ft):  # (not differentiable: no autograd refusal; the values are written)
        o = m.empty(4)
        m.histc(m.tensor([0.0, 1.0, 2.0], requires_grad=True), 4, out=o)
        assert o.tolist() == [1.0, 0.0, 1.0, 1.0]
        assert not o.requires_grad


def test_multi_dot_checks_the_dtype_before_grad():
    _same_error(lambda: torch.linalg.multi_dot([torch.ones(3, 3, requires_grad=True), torch.ones(3, 3)],
                                               out=torch.empty(3, 3, dtype=torch.long)),
                lambda: ft.linalg.multi_dot([ft.ones(3, 3, requires_grad=True), ft.ones(3, 3)],
                                            out=ft.empty(3, 3, dtype=ft.long)))


# which argument ``out`` aliases: "self" (the same tensor), "self_t" (self is out's transpose), "self_part" (shifted
# rows of one buffer), and the same for the source
_ALIAS = ["self", "self_t", "self_part", "source", "source_part"]


def _alias_call(m, f, how):
    if how == "self":
        y = m.arange(9.0).reshape(3, 3)
        return lambda: f(y, m.ones(3, 3), y)
    if how == "self_t":
        y = m.arange(9.0).reshape(3, 3)
        return lambda: f(y.t(), m.ones(3, 3), y)
    if how == "self_part":
        y = m.arange(12.0).reshape(4, 3)
        return lambda: f(y[1:], m.ones(3, 3), y[:3])
    if how == "source":
        y = m.arange(9.0).reshape(3, 3)
        return lambda: f(m.ones(3, 3), y, y)
    y = m.arange(12.0).reshape(4, 3)
    return lambda: f(m.ones(3, 3), y[1:], y[:3])


@pytest.mark.parametrize("name", ["index_select", "index_add", "index_copy", "scatter", "scatter_value",
                                  "scatter_add", "scatter_reduce"])
def test_out_sharing_an_input(name):
    tf, ff = _pair(name)
    for how in _ALIAS:
        t, f = _err(_alias_call(torch, tf, how)), _err(_alias_call(ft, ff, how))
        assert f == t, how
        if t is None:  # (allowed: the same values)
            a, b = _alias_call(torch, lambda *x: x, how)(), _alias_call(ft, lambda *x: x, how)()
            tf(*a)
            ff(*b)
            assert b[2].tolist() == a[2].tolist(), how


def test_gather_out_sharing_its_input_or_index():
    x = lambda m: m.arange(9.0).reshape(3, 3)  # noqa: E731
    for case in ("self", "index_full", "index_part"):
        def run(m, case=case):
            if case == "self":
                y = x(m)
                return lambda: m.gather(y, 1, m.tensor([[1, 0, 2]] * 3), out=y)
            if case == "index_full":  # (the index may be out itself: torch reads it first)
                o = m.zeros(3, 3, dtype=m.long)
                return lambda: m.gather(m.zeros(3, 3, dtype=m.long), 1, o, out=o)
            o = m.zeros(4, 3, dtype=m.long)
            return lambda: m.gather(m.zeros(3, 3, dtype=m.long), 1, o[1:], out=o[:3])
        assert _err(run(ft)) == _err(run(torch))


def test_index_select_out_sharing_its_index():
    def run(m):
        o = m.zeros(3, dtype=m.long)
        return lambda: m.index_select(m.arange(3), 0, o, out=o)
    _same_error(run(torch), run(ft))


def test_chain_matmul_of_one_matrix_copies_into_out():
    for m in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = m.ones(2, 2, requires_grad=True)
            o = m.empty(2, 2)
            m.chain_matmul(w, out=o)
            assert o.requires_grad  # (torch's copy_ into out: recorded)
            o.sum().backward()
            assert w.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    y = lambda m: m.arange(4.0).reshape(2, 2)  # noqa: E731
    _same_error(lambda: (lambda t: torch.chain_matmul(t.t(), out=t))(y(torch)),
                lambda: (lambda t: ft.chain_matmul(t.t(), out=t))(y(ft)))


# ---- meta tensors -----------------------------------------------------------------------------------------------
def _meta_result(m, fn):
    r = fn(m)
    return tuple(r.shape), str(r.dtype).split(".")[-1], r.device.type


@pytest.mark.parametrize("shape,nc", [((6, 2), 4), ((6, 2), 0), ((6, 2), -1), ((0,), -1), ((6, 2), -2)])
def test_one_hot_of_a_meta_tensor(shape, nc):
    fn = lambda m: m.nn.functional.one_hot(m.empty(*shape, dtype=m.long, device="meta"), nc)  # noqa: E731
    t = _err(lambda: fn(torch))
    assert _err(lambda: fn(ft)) == t
    if t is None:
        assert _meta_result(ft, fn) == _meta_result(torch, fn)


@pytest.mark.parametrize("case", ["data range", "long", "bool", "inf", "nan", "max < min",
                                  "bins 0", "out", "out f64", "out on cpu"])
def test_histc_of_a_meta_tensor(case):
    def fn(m):
        x = m.empty(6, device="meta")
        kw = {}
        if case in ("long", "bool"):
            x = m.empty(6, dtype=getattr(m, case), device="meta")
        elif case == "inf":
            kw = {"min": 0, "max": float("inf")}
        elif case == "nan":
            kw = {"min": float("nan"), "max": 1}
        elif case == "max < min":
            kw = {"min": 2, "max": 1}
        elif case == "out":
            kw = {"out": m.empty(4, device="meta")}
        elif case == "out f64":
            kw = {"out": m.empty(4, dtype=m.float64, device="meta")}
        elif case == "out on cpu":
            kw = {"out": m.empty(4)}
        return m.histc(x, 0 if case == "bins 0" else 4, **kw)
    t = _err(lambda: fn(torch))
    assert _err(lambda: fn(ft)) == t
    if t is None:
        assert _meta_result(ft, fn) == _meta_result(torch, fn)


# ---- argument errors ----------------------------------------------------------------------------------------------
_ARG_CASES = {
    "row float": lambda m: m.tril_indices(3.0, 3),
    "col float": lambda m: m.tril_indices(3, 3.0),
    "offset float": lambda m: m.tril_indices(3, 3, 1.0),
    "triu row float": lambda m: m.triu_indices(3.0, 3),
    "row keyword float": lambda m: m.tril_indices(row=3.0, col=3),
    "offset keyword float": lambda m: m.triu_indices(3, 3, offset=1.0),
    "row bool": lambda m: m.tril_indices(True, 3),
    "row str": lambda m: m.tril_indices("3", 3),
    "row None": lambda m: m.tril_indices(None, 3),
    "row float tensor": lambda m: m.tril_indices(m.tensor(3.0), 3),
    "row 1-d tensor": lambda m: m.tril_indices(m.tensor([3]), 3),
    "four positional": lambda m: m.tril_indices(3, 3, 0, 1),
    "requires_grad": lambda m: m.tril_indices(3, 3, requires_grad=True),
    "triu requires_grad": lambda m: m.triu_indices(3, 3, requires_grad=True),
    "requires_grad float dtype": lambda m: m.tril_indices(3, 3, dtype=m.float32, requires_grad=True),
    "chain_matmul list": lambda m: m.chain_matmul([m.ones(2, 2), m.ones(2, 2)]),
    "chain_matmul int": lambda m: m.chain_matmul(m.ones(2, 2), 3),
    "einsum list among operands": lambda m: m.einsum("i,i", [m.ones(3)], m.ones(3)),
    "einsum list second": lambda m: m.einsum("i,i", m.ones(3), [m.ones(3)]),
    "einsum int operand": lambda m: m.einsum("i,i", m.ones(3), 3),
    "einsum int in the list": lambda m: m.einsum("i,i", [m.ones(3), 3]),
    "einsum int equation": lambda m: m.einsum(3, m.ones(3)),
    "einsum None equation": lambda m: m.einsum(None, [m.ones(3)]),
}


@pytest.mark.parametrize("case", list(_ARG_CASES))
def test_argument_errors(case):
    fn = _ARG_CASES[case]
    _same_error(lambda: fn(torch), lambda: fn(ft))


@pytest.mark.parametrize("call", [lambda m: m.tril_indices(m.tensor(3), 3, requires_grad=False),
                                  lambda m: m.triu_indices(3, 3, dtype=m.int32, requires_grad=None)])
def test_tri_indices_still_work(call):
    t, f = call(torch), call(ft)
    assert f.tolist() == t.tolist()
    assert str(f.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_chain_matmul_warning_text_and_no_warning_for_a_type_error():
    texts = []
    for m in (torch, ft):
        m.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                with pytest.raises(TypeError):
                    m.chain_matmul([m.ones(2, 2)])  # (the argument parser refuses it before the kernel's warning)
                assert not w
                m.chain_matmul(m.ones(2, 2), m.ones(2, 2))
                m.chain_matmul(m.ones(2, 2), m.ones(2, 2), out=m.empty(2, 2))  # (the out= kernel's own line)
        finally:
            m.set_warn_always(False)
        texts.append([str(x.message) for x in w])
    assert texts[1] == texts[0]
