"""Parity with torch 2.13 for discrepancies a red team found around optimal transport / implicit layers: a 0-d
tensor read as a Scalar (addmm / baddbmm ``alpha`` / ``beta``, index_add's ``alpha``, var / std ``correction``,
vector / matrix norm ``ord``, matrix_power's ``n``, allclose's tolerances) and the parser's TypeError for a
tensor with dims there; the legacy ``ctx.saved_variables`` and ``InplaceFunction``; a Python number as
scatter_add / scatter_reduce's ``src``, index_add / index_copy's ``source`` or gather's ``index``; cdist's p
(NaN, a string); ``logsumexp(dim=())``; a one-element 1-d tensor as ``dim``.
Each case runs the same code on both libraries."""
import warnings

import pytest
import torch

import functorch_lite as ft

from _parity import run, same_rounded

X = [[1., 2.], [3., 4.]]
V = [[1., -2., 3.], [4., 5., -6.]]


def _same(fn):
    """Same values (rounded) or the same error type and message."""
    return same_rounded(fn, torch, ft)


def _same_type(fn):
    """Both raise, the same exception type (functorch_lite words a parser error with one overload's message where
    torch lists every overload)."""
    (t_out, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    assert t_err is not None and f_err is not None, (t_out, t_err, f_out, f_err)
    assert type(f_err) is type(t_err), (t_err, f_err)


# ---- a 0-d tensor as a Scalar ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda L: L.addmm(L.tensor(X), L.tensor(X), L.tensor(X), alpha=L.tensor(2.)),
    lambda L: L.addmm(L.tensor(X), L.tensor(X), L.tensor(X), beta=L.tensor(0), alpha=L.tensor(3)),
    lambda L: L.addmm(L.tensor(X).long(), L.tensor(X).long(), L.tensor(X).long(), alpha=L.tensor(2)),
    lambda L: L.addmm(L.tensor(X), L.tensor(X), L.tensor(X), alpha=L.tensor(True)),
    lambda L: L.tensor(X).addmm_(L.tensor(X), L.tensor(X), beta=L.tensor(2.), alpha=L.tensor(-1.)),
    lambda L: L.baddbmm(L.tensor([X]), L.tensor([X]), L.tensor([X]), beta=L.tensor(2.), alpha=L.tensor(3)),
    lambda L: L.tensor([X]).baddbmm_(L.tensor([X]), L.tensor([X]), beta=L.tensor(0.5)),
    lambda L: L.zeros(3).index_add(0, L.tensor([0, 2]), L.ones(2), alpha=L.tensor(2.)),
    lambda L: L.zeros(3).index_add_(0, L.tensor([0, 2]), L.ones(2), alpha=L.tensor(-3)),
    lambda L: L.tensor(V).var(1, correction=L.tensor(2)),
    lambda L: L.tensor(V).var(1, correction=L.tensor(2.5)),
    lambda L: L.tensor(V).std(correction=L.tensor(0)),
    lambda L: L.var_mean(L.tensor(V), 1, correction=L.tensor(1)),
    lambda L: L.std_mean(L.tensor(V), 0, correction=L.tensor(0.)),
    lambda L: L.linalg.vector_norm(L.tensor(V[0]), ord=L.tensor(2.)),
    lambda L: L.linalg.vector_norm(L.tensor(V[0]), ord=L.tensor(1)),
    lambda L: L.linalg.vector_norm(L.tensor(V[0]), ord=L.tensor(float("inf"))),
    lambda L: L.linalg.norm(L.tensor(V[0]), ord=L.tensor(3.)),
    lambda L: L.linalg.matrix_power(L.tensor(X), L.tensor(2)),
    lambda L: L.linalg.matrix_power(L.tensor([[2., 1.], [1., 3.]]), L.tensor(-1)),
    lambda L: L.allclose(L.tensor([1., 2.]), L.tensor([1., 2.1]), rtol=L.tensor(0.1)),
    lambda L: L.allclose(L.tensor([1., 2.]), L.tensor([1., 2.1]), atol=L.tensor(0.01)),
    lambda L: L.allclose(L.tensor([1., 2.]), L.tensor([1., 2.1]), atol=L.tensor(1)),
])
def test_zero_dim_tensor_scalar(case):
    _same(case)


@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3).index_add(0, L.tensor([0, 2]), L.ones(2), alpha=L.tensor([2.])),
    lambda L: L.zeros(3).index_add_(0, L.tensor([0, 2]), L.ones(2), alpha=L.tensor([2.])),
    lambda L: L.zeros(3).index_add(0, L.tensor([0, 2]), L.ones(2), alpha=L.tensor(2., requires_grad=True)),
    lambda L: L.allclose(L.tensor([1.]), L.tensor([1.]), atol=L.tensor([0.2])),
    lambda L: L.allclose(L.tensor([1.]), L.tensor([1.]), atol=L.tensor(0.2, requires_grad=True)),
])
def test_tensor_scalar_refused_message(case):
    """A tensor with dims (or one requiring grad) is torch's parser TypeError, in its words."""
    _same(case)


@pytest.mark.parametrize("case", [
    lambda L: L.addmm(L.tensor(X), L.tensor(X), L.tensor(X), alpha=L.tensor([2.])),
    lambda L: L.addmm(L.tensor(X), L.tensor(X), L.tensor(X), alpha=L.tensor(2., requires_grad=True)),
    lambda L: L.tensor(X).addmm_(L.tensor(X), L.tensor(X), beta=L.tensor([2.])),
    lambda L: L.baddbmm(L.tensor([X]), L.tensor([X]), L.tensor([X]), beta=L.tensor([2.])),
    lambda L: L.tensor(V).var(1, correction=L.tensor([2])),
    lambda L: L.tensor(V).std(1, correction=L.tensor(2., requires_grad=True)),
])
def test_tensor_scalar_refused_type(case):
    _same_type(case)


@pytest.mark.parametrize("op", ["vector_norm", "matrix_power"])
def test_zero_dim_accepted_others_refused(op):
    """A 0-d tensor is the number; a 1-d one, a float one for an int, one requiring grad stay torch's TypeError."""
    if op == "vector_norm":
        args = [(2.,), ([2.],), (2., True)]
        _same(lambda L: L.linalg.vector_norm(L.tensor(V[0]), ord=L.tensor(3.)))
        for a in args[1:]:
            _same(lambda L: L.linalg.vector_norm(L.tensor(V[0]), ord=L.tensor(a[0], requires_grad=len(a) > 1)))
        _same(lambda L: L.linalg.norm(L.tensor(X), ord=L.tensor(1)))  # (a matrix norm)
        _same(lambda L: L.linalg.matrix_norm(L.tensor(X), ord=L.tensor(-1.)))
        _same_type(lambda L: L.linalg.norm(L.tensor(V[0]), ord=L.tensor([2.])))
    else:
        _same(lambda L: L.linalg.matrix_power(L.tensor(X), L.tensor(3)))
        for a in ([2], 2.):
            _same(lambda L: L.linalg.matrix_power(L.tensor(X), L.tensor(a)))


def test_scalar_tensor_written_in_place_is_read_again():
    """The 0-d tensor's value, not the tensor, decides the kernel: a later in-place write to it is seen."""
    a = ft.tensor(2.)
    x = ft.tensor(X)
    r1 = ft.addmm(x, x, x, alpha=a).tolist()
    a.fill_(3.)
    r2 = ft.addmm(x, x, x, alpha=a).tolist()
    t = torch.tensor(X)
    assert r1 == torch.addmm(t, t, t, alpha=2.).tolist() and r2 == torch.addmm(t, t, t, alpha=3.).tolist()


def test_traced_scalar_tensor_keeps_graph_break():
    """Under compile the 0-d tensor's value is traced: the call breaks the graph and runs eagerly (correct)."""
    f = ft.compile(lambda x, a: ft.addmm(x, x, x, alpha=a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = f(ft.tensor(X), ft.tensor(2.))
    t = torch.tensor(X)
    assert r.tolist() == torch.addmm(t, t, t, alpha=2.).tolist()


# ---- legacy autograd API ---------------------------------------------------------------------------------------------
def _saved_variables(L):
    class Double(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_variables
            return g * x

    x = L.tensor([1., 2.], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        Double.apply(x).sum().backward()
    return x.grad.tolist(), [(c.category.__name__, str(c.message)) for c in w]


def test_saved_variables():
    assert _saved_variables(ft) == _saved_variables(torch)


def _inplace_function(L):
    class Twice(L.autograd.function.InplaceFunction):
        @staticmethod
        def forward(ctx, x, inplace=False):
            return x.mul_(2) if inplace else x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    x = L.tensor([1., 2.], requires_grad=True)
    y = Twice.apply(x)
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst = Twice(True)
    base = issubclass(L.autograd.function.InplaceFunction, L.autograd.Function)
    return y.tolist(), x.grad.tolist(), inst.inplace, base


def test_inplace_function():
    assert _inplace_function(ft) == _inplace_function(torch)


# ---- a Python number where a Tensor goes -----------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3).scatter_add_(0, L.tensor([0, 2]), 1.),
    lambda L: L.zeros(3).scatter_reduce_(0, L.tensor([0, 2]), 1., "sum"),
    lambda L: L.zeros(3).scatter_add(0, L.tensor([0, 2]), src=1),
    lambda L: L.zeros(3).index_add_(0, L.tensor([0]), 1.),
    lambda L: L.zeros(3).index_copy_(0, L.tensor([0]), 1.),
    lambda L: L.cdist(L.ones(2, 2), L.zeros(2, 2), p=float("nan")),
    lambda L: L.cdist(L.ones(2, 2), L.ones(2, 2), p="fro"),
])
def test_tensor_argument_message(case):
    _same(case)


def test_scatter_value_stays_legal():
    """scatter_add refuses a number as src, while scatter(_)'s value overload takes one."""
    _same(lambda L: L.zeros(3).scatter_add_(0, L.tensor([0, 2]), 2.))
    _same(lambda L: L.zeros(3).scatter_(0, L.tensor([0, 2]), 1.))
    _same(lambda L: L.zeros(3).scatter(0, L.tensor([0, 2]), 1.5))


@pytest.mark.parametrize("case", [
    lambda L: L.zeros(3).scatter_add(0, L.tensor([0, 2]), 1.),
    lambda L: L.scatter_add(L.zeros(3), 0, L.tensor([0, 2]), 1.),
    lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0, 2]), 1., "sum"),
    lambda L: L.scatter_reduce(L.zeros(3), 0, L.tensor([0, 2]), 1., "amax"),
    lambda L: L.zeros(3).index_add(0, L.tensor([0]), 1.),
    lambda L: L.index_add(L.zeros(3), 0, L.tensor([0]), 1.),
    lambda L: L.zeros(3).index_copy(0, L.tensor([0]), 1.),
    lambda L: L.arange(3.).gather(0, 1),
    lambda L: L.gather(L.arange(3.), 0, 1),
])
def test_tensor_argument_type(case):
    """torch's TypeError (its message numbers the argument by how it was passed: method or call)."""
    _same_type(case)


# ---- logsumexp(dim=()) -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda L: L.logsumexp(L.tensor(X), dim=()),
    lambda L: L.logsumexp(L.tensor(X), dim=[]),
    lambda L: L.logsumexp(L.tensor([1., 2.]), dim=()),
])
def test_logsumexp_empty_dims(case):
    _same(case)


def test_empty_dims_elsewhere_unchanged():
    """keepdim=True and a 0-d input keep logsumexp's result; sum / mean / amax still reduce all over ``()``."""
    _same(lambda L: L.logsumexp(L.tensor(X), dim=()))
    for case in (lambda L: L.logsumexp(L.tensor(X), dim=(), keepdim=True), lambda L: L.logsumexp(L.tensor(3.), dim=()),
                 lambda L: L.tensor(X).sum(dim=()), lambda L: L.tensor(X).mean(dim=()),
                 lambda L: L.tensor(X).amax(dim=())):
        _same(case)


# ---- a one-element 1-d tensor as dim ---------------------------------------------------------------------------------
_DIM_OPS = {
    "argmax": lambda x, d: x.argmax(d), "argmin": lambda x, d: x.argmin(d), "cumsum": lambda x, d: x.cumsum(d),
    "cumprod": lambda x, d: x.cumprod(d), "topk": lambda x, d: x.topk(1, d), "sort": lambda x, d: x.sort(d),
    "argsort": lambda x, d: x.argsort(d), "prod": lambda x, d: x.prod(d),
    "gather": lambda x, d: x.gather(d, x.new_zeros(2, 1).long()),
    "index_select": lambda x, d: x.index_select(d, x.new_zeros(1).long()),
    "scatter_add": lambda x, d: x.scatter_add(d, x.new_zeros(2, 1).long(), x),
    "index_add": lambda x, d: x.index_add(d, x.new_zeros(1).long(), x[:, :1]),
}


@pytest.mark.parametrize("name", sorted(_DIM_OPS))
def test_tensor_dim(name):
    """A one-element 1-d tensor is torch's TypeError; a 0-d integer tensor stays an int dim."""
    op = _DIM_OPS[name]
    _same_type(lambda L: op(L.tensor(V), L.tensor([1])))
    _same(lambda L: op(L.tensor(V), L.tensor(1)))


_A2 = [[2.0, 0.0], [0.0, 2.0]]
_X24 = [[1.0, 2.0, 0.5, -1.0], [0.0, 1.0, 3.0, 2.0]]
LEFTOVERS = {  # (the ops whose definitions live beside the ones above: the same Scalar / p reading)
    "cond_p_0d": lambda m: m.linalg.cond(m.tensor(_A2), p=m.tensor(2)),
    "pdist_p_nan": lambda m: m.pdist(m.ones(3, 2), p=float("nan")),
    "pdist_p_str": lambda m: m.pdist(m.ones(3, 2), p="fro"),
    "cov_correction_0d": lambda m: m.cov(m.tensor(_X24), correction=m.tensor(0)),
    "cov_correction_1d": lambda m: m.cov(m.tensor(_X24), correction=m.tensor([1])),
    "addmv_0d": lambda m: m.addmv(m.ones(2), m.tensor(_A2), m.ones(2), alpha=m.tensor(2.0), beta=m.tensor(0)),
    "addr_0d": lambda m: m.addr(m.ones(2, 2), m.ones(2), m.ones(2), alpha=m.tensor(3.0)),
    "addbmm_0d": lambda m: m.addbmm(m.ones(2, 2), m.tensor([_A2]), m.tensor([_A2]), beta=m.tensor(2.0)),
    "addmv__0d": lambda m: m.ones(2).addmv_(m.tensor(_A2), m.ones(2), alpha=m.tensor(2.0)),
    "addr_1d": lambda m: m.addr(m.ones(2, 2), m.ones(2), m.ones(2), alpha=m.tensor([3.0])),
}


@pytest.mark.parametrize("name", sorted(LEFTOVERS))
def test_scalar_and_p_arguments_of_the_remaining_ops_as_torch(name):
    res = []
    for m in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (cov's spurious copy-construct warning)
            try:
                res.append(("ok", [round(v, 5) for v in LEFTOVERS[name](m).flatten().tolist()]))
            except (TypeError, RuntimeError) as e:
                res.append((type(e).__name__,))
    assert res[1] == res[0]


def _x3(m):  # (the same 3 x 3 logits for either library)
    return m.tensor([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [0.0, 0.0, 1.0]])


ELEMENTWISE_SCALARS = {  # (the elementwise ops' Scalar parameters: the same reading)
    "nan_to_num": lambda m: m.nan_to_num(m.tensor([float("nan"), float("inf")]), nan=m.tensor(2.0),
                                         posinf=m.tensor(3.0)),
    "isclose": lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.1]), rtol=m.tensor(0.2)),
    "round_decimals": lambda m: m.round(m.tensor([1.2345]), decimals=m.tensor(2)),
    "cross_entropy_label_smoothing": lambda m: m.nn.functional.cross_entropy(
        m.tensor([[1.0, 2.0]]), m.tensor([0]), label_smoothing=m.tensor(0.1)),
    "add_alpha_1d": lambda m: m.add(m.ones(2), m.ones(2), alpha=m.tensor([2.0])),
    # (a 0-d tensor ignore_index was checked, then the tensor itself reached the kernel: nothing was ignored)
    "cross_entropy_ignore_index": lambda m: m.nn.functional.cross_entropy(_x3(m), m.tensor([0, 1, 2]),
                                                                          ignore_index=m.tensor(1)),
    "nll_loss_ignore_index": lambda m: m.nn.functional.nll_loss(_x3(m), m.tensor([0, 1, 2]), ignore_index=m.tensor(2)),
    "CrossEntropyLoss_ignore_index": lambda m: m.nn.CrossEntropyLoss(ignore_index=m.tensor(0))(
        _x3(m), m.tensor([0, 1, 2])),
    "vector_norm_int_keepdim": lambda m: m.linalg.vector_norm(m.ones(2, 2), 2, 1, 1),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_SCALARS))
def test_elementwise_scalar_arguments_as_torch(name):
    res = []
    for m in (torch, ft):
        try:
            res.append(("ok", [round(v, 5) for v in ELEMENTWISE_SCALARS[name](m).flatten().tolist()]))
        except (TypeError, RuntimeError) as e:
            res.append((type(e).__name__,))
    assert res[1] == res[0]


def test_add_alpha_tensor_written_in_place_is_read_again_as_torch():
    """A 0-d tensor alpha was kept in the kernel's cache key: after ``t.fill_(5.)`` the next add reused 2."""
    for m in (torch, ft):
        x, t = m.ones(2), m.tensor(2.0)
        assert m.add(x, x, alpha=t).tolist() == [3.0, 3.0]
        t.fill_(5.0)
        assert m.add(x, x, alpha=t).tolist() == [6.0, 6.0]


def test_compiled_vector_norm_with_a_tensor_ord_runs_eagerly_as_a_graph_break():
    """A traced 0-d ord picks the kernel by its value: the call breaks the graph (eager's result, a warning) where
    it raised TypeError."""
    f = ft.compile(lambda v, o: ft.linalg.vector_norm(v, ord=o))
    with pytest.warns(UserWarning):
        r = f(ft.tensor([3.0, 4.0]), ft.tensor(2.0))
    assert r.item() == 5.0
