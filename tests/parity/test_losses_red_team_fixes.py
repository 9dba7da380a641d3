"""Loss corners found different from torch 2.13 (red team), each against real torch: NaN / inf in rows whose
target is ignore_index (torch never reads them: no NaN, +0.0 losses and gradients), the deprecated
``reduction='elementwise_mean'`` (one validator, ``_Reduction.get_enum``'s), ``torch.nn._reduction`` /
``F._Reduction`` / ``_WeightedLoss``, BCE weights of more dims than the input, and ctc_loss's unbatched targets and
empty batch."""
import math

import pytest
import torch

import functorch_lite as ft
from _parity import close, describe, run, warnings_of

INF, NAN = float("inf"), float("nan")


def _same(fn, rel=1e-6, abs=1e-7):  # noqa: A002
    """``fn`` gives torch's describe()d outcome (floats to float32 ulps, signed zeros too) or its error."""
    (t_out, t_err), (f_out, f_err) = run(fn, torch), run(fn, ft)
    assert (t_err is None) == (f_err is None), (t_err, f_err)
    if t_err is not None:
        assert (type(f_err), str(f_err)) == (type(t_err), str(t_err))
        return
    a, b = describe(f_out), describe(t_out)
    assert close(a, b, rel=rel, abs=abs), (a, b)
    assert _signs(a) == _signs(b), (a, b)


def _signs(r):
    if isinstance(r, float):
        return None if math.isnan(r) else math.copysign(1.0, r)
    if isinstance(r, (tuple, list)):
        return [_signs(x) for x in r]
    return None


# ---- 1a: ignored rows are never read --------------------------------------------------------------------------------
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_ignored_row_inf(ls, reduction, weighted):
    def f(T):
        x = T.tensor([[-INF] * 3, [1., 2., 3.], [0.5, -1., 2.]], requires_grad=True)
        w = T.tensor([1., 2., 3.]) if weighted else None
        r = T.nn.functional.cross_entropy(x, T.tensor([-100, 2, 0]), weight=w, label_smoothing=ls,
                                          reduction=reduction)
        r.sum().backward()
        return r, x.grad
    _same(f)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_ignored_row_nan(reduction, weighted):
    def f(T):
        x = T.tensor([[NAN] * 3, [-1., -2., -3.]], requires_grad=True)
        w = T.tensor([1., 2., 3.]) if weighted else None
        r = T.nn.functional.nll_loss(x, T.tensor([-100, 2]), weight=w, reduction=reduction)
        r.sum().backward()
        return r, x.grad
    _same(f)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_kdim_ignored_nan(reduction):
    def f(T):
        x = T.tensor([[[NAN, 1.], [NAN, 2.], [INF, 3.]]], requires_grad=True)
        r = T.nn.functional.nll_loss(x, T.tensor([[-100, 1]]), weight=T.tensor([1., 2., 3.]), reduction=reduction)
        r.sum().backward()
        return r, x.grad
    _same(f)


def test_cross_entropy_label_smoothing_ignored_grad_is_plus_zero():
    def f(T):
        x = T.tensor([[1., 2., 3.], [0., 0., 0.], [3., 1., -2.]], requires_grad=True)
        T.nn.functional.cross_entropy(x, T.tensor([0, -100, 2]), label_smoothing=0.1).backward()
        return x.grad
    _same(f)


def test_cross_entropy_nan_logit_ignored():
    _same(lambda T: T.nn.functional.cross_entropy(T.tensor([[NAN, 0., 0.], [0., 0., 0.]]), T.tensor([-100, 1])))


# ---- 2a: reduction='elementwise_mean' ---------------------------------------------------------------------------------
_X = [[0.2, 0.6, 0.9], [0.5, 0.1, 0.3]]
_Y = [[0., 1, 0.5], [1, 0, 1]]
_EM = "elementwise_mean"


def _loss_cases():
    def F(T):
        return T.nn.functional

    def x(T):
        return T.tensor(_X, requires_grad=True)

    def y(T):
        return T.tensor(_Y)

    def lp(T):
        return T.tensor(_X).log_softmax(1).requires_grad_()

    def t(T):
        return T.tensor([0, 2])

    def pm(T):
        return T.tensor([[1., -1, 1], [-1, 1, 1]])
    return {
        "l1": lambda T, r: F(T).l1_loss(x(T), y(T), reduction=r),
        "mse": lambda T, r: F(T).mse_loss(x(T), y(T), reduction=r),
        "smooth_l1": lambda T, r: F(T).smooth_l1_loss(x(T), y(T), reduction=r),
        "huber": lambda T, r: F(T).huber_loss(x(T), y(T), reduction=r),
        "bce": lambda T, r: F(T).binary_cross_entropy(x(T), y(T), reduction=r),
        "bce_w": lambda T, r: F(T).binary_cross_entropy(x(T), y(T), weight=T.tensor([1., 2., 3.]), reduction=r),
        "bcel": lambda T, r: F(T).binary_cross_entropy_with_logits(x(T), y(T), reduction=r),
        "kl": lambda T, r: F(T).kl_div(lp(T), T.tensor(_Y).softmax(1), reduction=r),
        "nll": lambda T, r: F(T).nll_loss(lp(T), t(T), reduction=r),
        "ce": lambda T, r: F(T).cross_entropy(x(T), t(T), reduction=r),
        "ce_ls": lambda T, r: F(T).cross_entropy(x(T), t(T), reduction=r, label_smoothing=0.1),
        "multi_margin": lambda T, r: F(T).multi_margin_loss(x(T), t(T), reduction=r),
        "multilabel_margin": lambda T, r: F(T).multilabel_margin_loss(x(T), T.tensor([[0, 2, -1], [1, -1, 0]]),
                                                                       reduction=r),
        "soft_margin": lambda T, r: F(T).soft_margin_loss(x(T), pm(T), reduction=r),
        "hinge": lambda T, r: F(T).hinge_embedding_loss(x(T), pm(T), reduction=r),
        "margin_ranking": lambda T, r: F(T).margin_ranking_loss(x(T)[0], x(T)[1], pm(T)[0], reduction=r),
        "cosine_embedding": lambda T, r: F(T).cosine_embedding_loss(x(T), y(T) + 0.1, T.tensor([1., -1]),
                                                                     reduction=r),
        "triplet": lambda T, r: F(T).triplet_margin_loss(x(T), y(T), y(T).flip(0), reduction=r),
        "ctc": lambda T, r: F(T).ctc_loss(T.tensor([[[-1.0, -2.0, -0.5]]] * 4).log_softmax(2).requires_grad_(),
                                          T.tensor([[1, 2]]), (4,), (2,), reduction=r),
        "poisson_nll": lambda T, r: F(T).poisson_nll_loss(x(T), y(T), reduction=r),
        "multilabel_soft_margin": lambda T, r: F(T).multilabel_soft_margin_loss(x(T), y(T), reduction=r),
        "triplet_dist": lambda T, r: F(T).triplet_margin_with_distance_loss(x(T), y(T), y(T).flip(0), reduction=r),
        "gaussian_nll": lambda T, r: F(T).gaussian_nll_loss(x(T), y(T), T.ones(2, 3), reduction=r),
        "module_ce": lambda T, r: T.nn.CrossEntropyLoss(reduction=r)(x(T), t(T)),
        "module_bce": lambda T, r: T.nn.BCELoss(reduction=r)(x(T), y(T)),
        "module_mse": lambda T, r: T.nn.MSELoss(reduction=r)(x(T), y(T)),
        "module_kl": lambda T, r: T.nn.KLDivLoss(reduction=r)(lp(T), T.tensor(_Y).softmax(1)),
    }


_CASES = _loss_cases()


@pytest.mark.parametrize("name", sorted(_CASES))
def test_elementwise_mean(name):
    fn = _CASES[name]
    _same(lambda T: fn(T, _EM), rel=1e-5, abs=1e-6)
    _same(lambda T: fn(T, "bad"))
    (t_w, t_err), (f_w, f_err) = (run(lambda T: warnings_of(T, lambda L: fn(L, _EM)), lib) for lib in (torch, ft))
    assert (t_err is None) == (f_err is None)
    if t_err is None:
        assert sorted(f_w) == sorted(t_w), (f_w, t_w)


# ---- 2b: torch.nn._reduction, F._Reduction, _WeightedLoss ---------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "T.nn._reduction.get_enum('sum')", "T.nn._reduction.get_enum('none')", "T.nn._reduction.get_enum('mean')",
    "T.nn._reduction.get_enum('elementwise_mean')", "T.nn._reduction.get_enum('avg')",
    "T.nn._reduction.legacy_get_string(False, True)", "T.nn._reduction.legacy_get_string(None, None, False)",
    "T.nn._reduction.legacy_get_enum(None, False)", "T.nn._reduction.legacy_get_enum(True, True, False)",
    "T.nn.functional._Reduction.get_enum('mean')",
    "T.nn.modules.loss._Loss(reduction='sum').reduction",
    "T.nn.modules.loss._WeightedLoss(T.ones(2), reduction='none').weight",
    "T.nn.modules.loss._WeightedLoss(T.ones(2)).reduction",
    "list(T.nn.modules.loss._WeightedLoss(T.ones(2)).state_dict())",
    "T.nn.modules.loss._WeightedLoss(T.ones(2), size_average=False).reduction",
    "list(T.nn.modules.loss._WeightedLoss().state_dict())",
])
def test_reduction_module(expr):
    _same(lambda T: eval(expr, {"T": T}))
    f = (lambda T: eval(expr, {"T": T}))
    (t_w, _), (f_w, _) = (run(lambda T: warnings_of(T, f), lib) for lib in (torch, ft))
    assert f_w == t_w


@pytest.mark.parametrize("name", ["NLLLoss", "NLLLoss2d", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "L1Loss",
                                  "MSELoss", "KLDivLoss", "SmoothL1Loss", "HuberLoss"])
def test_loss_bases(name):
    def f(T):
        cls = getattr(T.nn, name)
        return ([k.__name__ for k in cls.__mro__][:3], getattr(cls, "__constants__", None),
                isinstance(cls(), T.nn.modules.loss._WeightedLoss))
    _same(f)  # (NLLLoss2d's FutureWarning silenced by run)


def test_custom_weighted_loss():
    def f(T):
        class FocalLoss(T.nn.modules.loss._WeightedLoss):
            def __init__(self, weight=None, gamma=2.0, reduction="mean"):
                super().__init__(weight, reduction=reduction)
                self.gamma = gamma

            def forward(self, input, target):
                ce = T.nn.functional.cross_entropy(input, target, weight=self.weight, reduction="none")
                pt = T.exp(-ce)
                loss = (1 - pt) ** self.gamma * ce
                return loss.mean() if self.reduction == "mean" else loss.sum()
        m = FocalLoss(weight=T.tensor([1., 2., 0.5]))
        x = T.tensor(_X, requires_grad=True)
        r = m(x, T.tensor([0, 2]))
        r.backward()
        return r, x.grad, list(m.state_dict()), list(m.buffers())[0]
    _same(f)


# ---- 1c: BCE weights of more dims than the input ----------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("kw", ["w", "pw", "pw1", "both", "ok", "bad"])
def test_bce_with_logits_weight_dims(reduction, kw):
    args = {"w": dict(weight=(4, 2, 3)), "pw": dict(pos_weight=(4, 2, 3)), "pw1": dict(pos_weight=(4, 1, 3)),
            "both": dict(weight=(3,), pos_weight=(1, 2, 3)), "ok": dict(weight=(1, 3), pos_weight=(3,)),
            "bad": dict(weight=(4, 3))}[kw]

    def f(T):
        x = T.tensor([[0.2, -1., 3.], [0.5, 0.1, -0.3]], requires_grad=True)
        return T.nn.functional.binary_cross_entropy_with_logits(x, T.tensor(_Y), reduction=reduction,
                                                                **{k: T.ones(v) for k, v in args.items()})
    _same(f)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(4, 2, 3), (5, 1, 3), (1, 3), (4, 3)])
def test_bce_weight_dims(reduction, shape):
    _same(lambda T: T.nn.functional.binary_cross_entropy(T.tensor(_X), T.tensor(_Y), weight=T.ones(shape),
                                                         reduction=reduction))


def test_bce_modules_weight_dims():
    _same(lambda T: T.nn.BCEWithLogitsLoss(pos_weight=T.ones(2, 2, 3))(T.tensor(_X), T.tensor(_Y)))
    _same(lambda T: T.nn.BCELoss(weight=T.ones(2, 2, 3))(T.tensor(_X), T.tensor(_Y)))


# ---- 2c: ctc_loss, unbatched targets and the empty batch ------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", range(7))
def test_ctc_unbatched_targets(reduction, case):
    def f(T):
        tg, il, tl = [(T.tensor([1, 2, 3]), (6,), (3,)), (T.tensor([1, 2, 3, 4]), (6,), (3,)),
                      (T.tensor([1, 2]), (6,), (3,)), (T.tensor([[1, 2, 3]]), (6,), (3,)),
                      (T.tensor([[1, 2, 3, 4]]), (6,), (3,)), (T.tensor([[1, 2, 3]]), T.tensor(6), T.tensor(3)),
                      (T.tensor([1, 2, 3]), T.tensor([6]), T.tensor([3]))][case]
        lp = (T.arange(30, dtype=T.float32).reshape(6, 5) * 0.37).sin().log_softmax(1).requires_grad_()
        r = T.nn.functional.ctc_loss(lp, tg, il, tl, reduction=reduction)
        r.backward()
        return r, lp.grad
    _same(f, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("case", ["tensor", "tuple", "none", "empty_T", "aten"])
def test_ctc_empty(case):
    def f(T):
        z = T.zeros(0, dtype=T.long)
        if case == "empty_T":
            return T.nn.functional.ctc_loss(T.zeros(0, 2, 5), T.zeros(2, 3, dtype=T.long), T.zeros(2, dtype=T.long),
                                            T.zeros(2, dtype=T.long), reduction="none")
        if case == "aten":
            return T.ctc_loss(T.zeros(6, 0, 5), T.zeros(0, 3, dtype=T.long), z, z)
        il = () if case == "tuple" else z
        return T.nn.functional.ctc_loss(T.zeros(6, 0, 5), T.zeros(0, 3, dtype=T.long), il, il,
                                        reduction="none" if case == "none" else "mean")
    _same(f)


# ---- 1b: bce_with_logits, half logits and a float32 target ----------------------------------------------------------
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("kw", [{}, {"pos_weight": (1.5, 0.5, 2.0)}, {"weight": (1.0, 2.0, 0.5)}])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_with_logits_half_input_float_target(dt, kw, reduction):
    def f(T):
        x = (T.arange(12, dtype=T.float32).reshape(4, 3) * 0.731 - 3.3).sin().mul(4).to(getattr(T, dt))
        y = T.tensor([[0., 1, 0.5], [1, 0, 1], [0.25, 0.75, 0.], [1, 1, 0]])
        return T.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=reduction,
                                                                **{k: T.tensor(v) for k, v in kw.items()})
    _same(f)
