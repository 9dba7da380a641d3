"""Sparse COO tensors (functorch_lite/sparse) against real torch 2.13: the red-team findings fixed (silent wrong
values, inputs torch rejects, crashes on valid input, exception types)."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _num(x):
    return str(np.round(np.asarray(x, np.complex128), 4).tolist())  # (NaN compares equal as text)


def _val(r):
    """A result's structure (exact) and values (rounded), or the exception's type and first line."""
    if getattr(r, "is_sparse", False):
        return ("sparse", r._indices().tolist(), tuple(r.shape), r.is_coalesced(), str(r.dtype),
                _num(r._values().detach().tolist()))
    if hasattr(r, "tolist"):
        return ("dense", str(r.dtype), tuple(r.shape), _num(r.detach().tolist()))
    return r


def _run(fn, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _val(fn(m))
        except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
            msg = str(e).split(". This could")[0].split("\n")[0]
            if msg.startswith("Could not run 'aten::"):  # (the op, its overload's name aside: pow_.Scalar / pow_)
                msg = msg.split("'")[1].split(".")[0].rstrip("_")
            return type(e).__name__, msg


def _same(fn):
    t, f = _run(fn, torch), _run(fn, ft)
    assert t == f, (t, f)


def _s(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), m.tensor([3., -4., 5., -6.]), (2, 3))


def _leaf(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), m.tensor([3., -4., 5., -6.]), (2, 3),
                               requires_grad=True)


def _v1(m, idx, vals, n=3):
    return m.sparse_coo_tensor(m.tensor([idx]), m.tensor(vals), (n,))


# ---- A: silent wrong values -------------------------------------------------------------------------------------
SILENT = {
    "addmm_beta0_nan": lambda m: m.addmm(m.full((2, 4), float("nan")), _s(m), m.ones(3, 4), beta=0),
    "sparse_addmm_beta0_inf": lambda m: m.sparse.addmm(m.full((2, 1), float("inf")), m.eye(2).to_sparse(),
                                                       m.ones(2, 1), beta=0),
    "div_floor_uncoalesced": lambda m: m.div(_v1(m, [0, 0], [3., 5.], 2), 2, rounding_mode="floor"),
    "div_trunc_uncoalesced": lambda m: m.div(_v1(m, [0, 0], [-3., -5.], 2), 2, rounding_mode="trunc"),
    "legacy_double": lambda m: m.sparse.FloatTensor(m.tensor([[0, 1]]), m.tensor([1., 2.]).double(), m.Size([2])),
    "legacy_long": lambda m: m.sparse.DoubleTensor(m.tensor([[0, 1]]), m.tensor([1, 2]), m.Size([2])),
    "index_select_oob": lambda m: _s(m).index_select(0, m.tensor([5])),
    "index_select_neg_oob": lambda m: _s(m).index_select(1, m.tensor([-4])),
    "index_select_int32": lambda m: _s(m).index_select(0, m.tensor([1], dtype=m.int32)),
    "index_select_2d": lambda m: _s(m).index_select(0, m.tensor([[1]])),
    "index_select_one": lambda m: _s(m).coalesce().index_select(0, m.tensor([0])),
    "select_one_entry": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([1., 2., 3.]),
                                                      (3, 3)).select(0, 0),
    "sum_bool_dups": lambda m: m.sparse.sum(_v1(m, [0, 0], [True, True], 2)),
    "sum_bool": lambda m: m.sparse.sum(_s(m).bool()),
    "invariants_coalesced_claim": lambda m: m.sparse_coo_tensor(m.tensor([[1, 0], [1, 1]]), m.tensor([1., 2.]),
                                                                (2, 3), is_coalesced=True, check_invariants=True),
    "invariants_dup_claim": lambda m: m.sparse_coo_tensor(m.tensor([[1, 1], [1, 1]]), m.tensor([1., 2.]),
                                                          (2, 3), is_coalesced=True, check_invariants=True),
    "mul_uu_fewer_second": lambda m: _v1(m, [0, 1, 0, 1, 1], [1., 2, 3, 4, 5], 2) * _v1(m, [1, 0, 1], [1., 2, 3], 2),
    "mul_uu_tie": lambda m: _v1(m, [1, 0, 1], [1., 2, 3]) * _v1(m, [0, 1, 0], [4., 5, 6]),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent_values(name):
    _same(SILENT[name])


def test_invariants_context_verifies_coalesced_claim():
    for m in (torch, ft):
        with m.sparse.check_sparse_tensor_invariants():
            with pytest.raises(RuntimeError, match="cannot set is_coalesced to true"):
                m.sparse_coo_tensor(m.tensor([[1, 0]]), m.tensor([1., 2.]), (2,), is_coalesced=True)


def test_legacy_constructor_warns_once():
    """torch's deprecation of ``torch.sparse.FloatTensor(indices, values)`` is a TORCH_WARN_ONCE: none the second
    time (whichever test called it first)."""
    for m in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.sparse.ShortTensor(m.tensor([[0, 1]]), m.tensor([1., 2.]))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.sparse.ShortTensor(m.tensor([[0, 1]]), m.tensor([1., 2.]))
        assert not [x for x in w if "deprecated" in str(x.message)]


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_inplace_operator_with_sparse_operand(op):
    """``x += sparse`` writes ``x`` in place (an alias sees it), as ``x.add_(sparse)``."""
    out = []
    for m in (torch, ft):
        x = m.tensor([float("nan"), 1., 1.]) if op == "mul" else m.ones(3)
        y = x
        sp = _v1(m, [1, 0, 1], [1., 2., 3.])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = getattr(x, f"__i{op}__")(sp)
        assert x is y
        out.append(str(y.tolist()))
    assert out[0] == out[1]


def test_inplace_operator_int_target_refuses_float_sparse():
    for m in (torch, ft):
        x = m.ones(3, dtype=m.int64)
        with pytest.raises(RuntimeError):
            x += _v1(m, [1], [1.5])


def _grad_of(fn, m):
    a = _leaf(m)
    fn(m, a).backward()
    return _val(a.grad)


@pytest.mark.parametrize("name, fn", [
    ("dense_plus_sparse", lambda m, a: (m.arange(6.).reshape(2, 3) + a).sum()),
    ("dense_plus_sparse_squared", lambda m, a: ((m.ones(2, 3) + a) ** 2).sum()),
    ("dense_minus_sparse_alpha", lambda m, a: m.sub(m.ones(2, 3), a, alpha=2).sum()),
    ("dense_at_sparse", lambda m, a: (m.ones(2, 2) @ a).sum()),
    ("mm_dense_sparse", lambda m, a: m.mm(m.arange(4.).reshape(2, 2), a).sum()),
    ("mm_plus_sparse_mm", lambda m, a: m.mm(m.ones(2, 2), a).sum() + m.sparse.mm(a, m.ones(3, 1)).sum()),
])
def test_sparse_leaf_dense_gradient(name, fn):
    assert _grad_of(fn, torch) == _grad_of(fn, ft)


# ---- B: accepted where torch raises -----------------------------------------------------------------------------
REJECTED = {
    "to_dense_dtype": lambda m: _s(m).to_dense(dtype=m.float64),
    "clamp_min": lambda m: m.clamp(_s(m), min=0),
    "clamp_both": lambda m: m.clamp(_s(m), -1, 1),
    "leaky_relu": lambda m: m.nn.functional.leaky_relu(_s(m)),
    "angle": lambda m: m.angle(_s(m)),
    "long_pow_float": lambda m: _s(m).long().pow(2.0),
    "spsp_dtype_mismatch": lambda m: _s(m) @ _s(m).t().double(),
    "addmm_input_dtype": lambda m: m.addmm(m.ones(2, 1, dtype=m.float64), _s(m), m.ones(3, 1)),
    "sparse_addmm_input_dtype": lambda m: m.sparse.addmm(m.ones(2, 1, dtype=m.float64), _s(m), m.ones(3, 1)),
    "spsp_long": lambda m: m.sparse.mm(_s(m).long(), _s(m).t().long()),
    "spsp_half": lambda m: m.sparse.mm(_s(m).half(), _s(m).t().half()),
    "spsp_bool": lambda m: m.sparse.mm(_s(m).bool(), _s(m).t().bool()),
    "spmm_bool": lambda m: m.mm(_s(m).bool(), m.ones(3, 1).bool()),
    "softmax_half": lambda m: m.sparse.softmax(_s(m).half(), 1),
    "log_softmax_bf16": lambda m: m.sparse.log_softmax(_s(m).bfloat16(), 1),
    "softmax_long": lambda m: m.sparse.softmax(_s(m).long(), 1),
    "sum_repeated_dims": lambda m: m.sparse.sum(_s(m), (0, 0)),
    "sum_repeated_wrapped_dims": lambda m: m.sparse.sum(_s(m), (1, -1)),
    "negative_size": lambda m: m.sparse_coo_tensor(m.tensor([[0]]), m.tensor([1.]), (-1,)),
    "sparse_sum_dense": lambda m: m.sparse.sum(m.ones(2)),
    "sparse_sum_dense_dim": lambda m: m.sparse.sum(m.ones(2), 0),
    "sparse_softmax_dense": lambda m: m.sparse.softmax(m.ones(2), 0),
    "sparse_log_softmax_dense": lambda m: m.sparse.log_softmax(m.ones(2), 0),
    "half_add": lambda m: _s(m).half() + _s(m).half(),
    "bool_mul_coalesced": lambda m: _s(m).bool().coalesce() * _s(m).bool().coalesce(),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_inputs(name):
    _same(REJECTED[name])


# unary ops that map 0 to 0 but have no sparse kernel in torch (its "Could not run 'aten::<op>'", the aten name
# aside: special_i1 / i1): functorch_lite computed them on the values
NO_KERNEL = ["angle", "i1", "bessel_j1", "modified_bessel_i1", "entr", "gelu", "silu", "mish", "hardshrink",
             "hardswish", "hardtanh", "leaky_relu", "elu", "softshrink", "relu6", "selu", "celu"]


@pytest.mark.parametrize("name", NO_KERNEL)
def test_pointwise_without_sparse_kernel(name):
    for m in (torch, ft):
        fn = next(f for f in (getattr(mod, name, None) for mod in (m, m.special, m.nn.functional)) if f)
        with pytest.raises(NotImplementedError, match="Could not run 'aten::"):
            fn(m.sparse_coo_tensor(m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([0.3, -0.4, 0.5]), (2, 3)))


# ---- C: crashes on valid input -----------------------------------------------------------------------------------
def _h(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1, 0]]), m.arange(6.).reshape(3, 2), (2, 2))


def _s3(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1, 1], [1, 0, 1], [2, 2, 0]]), m.tensor([1., 2, 3]), (2, 2, 3))


def _h3(m):
    return m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]), m.arange(10.).reshape(5, 2), (3, 3, 2))


def _fresh(m):  # (values not shared with another test's tensor: in-place ops write them)
    return m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), m.tensor([3., -4., 5., -6.]), (2, 3))


VALID = {
    "size_only": lambda m: m.sparse_coo_tensor((2, 3)),
    "size_kw": lambda m: m.sparse_coo_tensor(size=(2, 3), dtype=m.float64),
    "size_list": lambda m: m.sparse_coo_tensor([2, 3]),
    "values_0d": lambda m: m.sparse_coo_tensor(m.tensor([[0], [1]]), m.tensor(2.), (2, 3)),
    "values_0d_inferred": lambda m: m.sparse_coo_tensor(m.tensor([[0], [1]]), m.tensor(2.)),
    "values_0d_nnz2": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1], [1, 1]]), m.tensor(2.), (2, 3)),
    "to_sparse_0d": lambda m: m.tensor(3.).to_sparse(),
    "to_sparse_0d_zero": lambda m: m.tensor(0.).to_sparse(),
    "to_sparse_0": lambda m: m.ones(2, 2).to_sparse(0),
    "floordiv": lambda m: _s(m) // 2,
    "floordiv_0d": lambda m: _s(m) // m.tensor(2.),
    "floordiv_dense": lambda m: _s(m) // m.ones(2, 3),
    "pow_neg": lambda m: _s(m).pow(-1),
    "pow_zero": lambda m: _s(m) ** 0,
    "select_dim1": lambda m: _s(m).select(1, 2),
    "select_dim1_neg": lambda m: _s(m).coalesce().select(-1, -1),
    "select_oob": lambda m: _s(m).select(1, 5),
    "select_3d": lambda m: _s3(m).select(2, 2),
    "select_hybrid_dense": lambda m: _h(m).select(1, 1),
    "torch_t": lambda m: m.t(_s(m)),
    "torch_transpose": lambda m: m.transpose(_s(m), -1, -2),
    "T": lambda m: _s(m).T,
    "mT": lambda m: _s(m).coalesce().mT,
    "permute": lambda m: m.permute(_s(m), (1, 0)),
    "permute_identity": lambda m: _s(m).coalesce().permute(0, 1),
    "permute_3d": lambda m: _s3(m).permute(2, 0, 1),
    "permute_hybrid_mix": lambda m: _h(m).permute(1, 0),
    "permute_dup": lambda m: _s(m).permute(0, 0),
    "transpose_hybrid_mix": lambda m: _h(m).transpose(0, 1),
    "unsqueeze0": lambda m: _s(m).coalesce().unsqueeze(0),
    "unsqueeze_last": lambda m: m.unsqueeze(_s(m), -1),
    "unsqueeze_hybrid": lambda m: _h(m).unsqueeze(2),
    "sum_keepdim": lambda m: _s(m).sum(0, keepdim=True),
    "sum_keepdim_all": lambda m: _s(m).sum((0, 1), keepdim=True),
    "sum_keepdim_hybrid": lambda m: _h(m).sum(1, keepdim=True),
    "vec_at_sparse": lambda m: m.tensor([1., 2.]) @ _s(m),
    "batched_at_sparse": lambda m: m.matmul(m.arange(12.).reshape(3, 2, 2), _s(m)),
    "sparse_mm_dense_dense": lambda m: m.sparse.mm(m.ones(2, 2), m.ones(2, 3)),
    "conj": lambda m: m.conj(_s(m)),
    "smm": lambda m: _s(m).smm(m.ones(3, 2)),
    "type_sparse_str": lambda m: _s(m).type("torch.sparse.DoubleTensor"),
    "type_dense_str": lambda m: _s(m).type("torch.DoubleTensor"),
    "type_legacy_cls": lambda m: _s(m).type(m.sparse.DoubleTensor),
    "new_zeros": lambda m: _s(m).new_zeros(2, 2),
    "data": lambda m: _leaf(m).data,
    # hybrid tensors (dense dims)
    "softmax_hybrid_sparse_dim": lambda m: m.sparse.softmax(_h3(m), 0),
    "log_softmax_hybrid_sparse_dim": lambda m: m.sparse.log_softmax(_h3(m), 1),
    "softmax_hybrid_dense_dim": lambda m: m.sparse.softmax(_h3(m), 2),
    "index_select_hybrid_dense_dim": lambda m: _h3(m).index_select(2, m.tensor([1])),
    "cat_hybrid_dense_dim": lambda m: m.cat([_h3(m), _h3(m)], 2),
    "stack_hybrid_dense_dim": lambda m: m.stack([_h(m), _h(m)], 2),
    "cat_dense_mix": lambda m: m.cat([_s(m), m.ones(2, 3)]),
    "stack_dense_mix": lambda m: m.stack([_s(m), m.ones(2, 3)]),
    "cat_size_mismatch": lambda m: m.cat([_s(m), m.sparse_coo_tensor(m.tensor([[0], [0]]), m.tensor([1.]), (2, 4))]),
    # in-place ops
    "relu_uncoalesced": lambda m: _fresh(m).relu_(),
    "relu_": lambda m: _fresh(m).coalesce().relu_(),
    "abs_": lambda m: _fresh(m).coalesce().abs_(),
    "sqrt_uncoalesced": lambda m: _fresh(m).sqrt_(),
    "neg_": lambda m: _fresh(m).neg_(),
    "exp_": lambda m: _fresh(m).coalesce().exp_(),
    "add_": lambda m: _fresh(m).add_(_fresh(m)),
    "add_coalesced": lambda m: _fresh(m).coalesce().add_(_fresh(m).coalesce()),
    "add_dense": lambda m: _fresh(m).add_(m.ones(2, 3)),
    "sub_": lambda m: _fresh(m).sub_(_fresh(m).coalesce()),
    "mul_": lambda m: _fresh(m).mul_(2),
    "mul_sparse": lambda m: _fresh(m).mul_(_fresh(m)),
    "div_": lambda m: _fresh(m).div_(2),
    "div_long": lambda m: _fresh(m).long().div_(2),
    "floor_divide_": lambda m: _fresh(m).floor_divide_(2),
    "zero_": lambda m: _fresh(m).zero_(),
    "leaf_mul_": lambda m: _leaf(m).mul_(2),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_input(name):
    _same(VALID[name])


def test_hspmm():
    """``torch.hspmm`` (functorch_lite.sparse.hspmm: the package does not export it as ``torch.hspmm`` yet)."""
    args = [(m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), m.tensor([3., -4., 5., -6.]), (2, 3)),
             m.arange(6.).reshape(3, 2)) for m in (torch, ft)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _val(torch.hspmm(*args[0])) == _val(ft.sparse.hspmm(*args[1]))


def test_inplace_returns_self_and_writes_values():
    out = []
    for m in (torch, ft):
        v = m.tensor([3., -4., 5., -6.])
        s = m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), v, (2, 3))
        assert s.mul_(2) is s and s.add_(s) is s
        out.append((v.tolist(), _val(s)))
    assert out[0] == out[1]


def test_zero_and_detach_inplace():
    for m in (torch, ft):
        w = m.tensor([1., 2., 3., 4.], requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), w * 2, (2, 3))
        assert s.detach_() is s and not s.requires_grad and s.is_leaf
        assert s.zero_() is s and s._nnz() == 0 and s.is_coalesced() and tuple(s.shape) == (2, 3)


# ---- D: exception types ------------------------------------------------------------------------------------------
ERRORS = {
    "div_dense": lambda m: _s(m) / m.ones(2, 3),
    "dense_div_sparse": lambda m: m.ones(2, 3) / _s(m),
    "number_div_sparse": lambda m: 2 / _s(m),
    "gt": lambda m: _s(m) > 0,
    "rpow": lambda m: 2 ** _s(m),
    "radd": lambda m: 1 + _s(m),
    "rsub": lambda m: 1 - _s(m),
    "sub_dense": lambda m: _s(m) - m.ones(2, 3),
    "idiv_sparse": lambda m: m.ones(3).__itruediv__(_v1(m, [1], [2.])),
    "ifloordiv_sparse": lambda m: m.ones(3).__ifloordiv__(_v1(m, [1], [2.])),
    "dense_floordiv_sparse": lambda m: m.ones(3) // _v1(m, [1], [2.]),
    "mm_1d": lambda m: m.mm(_s(m), m.ones(3)),
    "add_size_mismatch": lambda m: _s(m) + m.sparse_coo_tensor(m.tensor([[0], [0]]), m.tensor([1.]), (3, 3)),
    "mul_size_mismatch": lambda m: _s(m) * m.sparse_coo_tensor(m.tensor([[0], [0]]), m.tensor([1.]), (3, 3)),
    "mv_size": lambda m: m.mv(_s(m), m.ones(4)),
    "mv_2d": lambda m: _s(m).mv(m.ones(3, 1)),
    "to_sparse_dim_range": lambda m: m.ones(2, 2).to_sparse(3),
    "dense_1d_mm": lambda m: m.mm(m.ones(2), _s(m)),
    "mm_reduce": lambda m: m.sparse.mm(_s(m), m.ones(3, 1), "sum"),
    "numpy": lambda m: _s(m).numpy(),
    "item": lambda m: _s(m).item(),
    "tolist": lambda m: _s(m).tolist(),
    "contiguous": lambda m: _s(m).contiguous(),
    "is_contiguous": lambda m: _s(m).is_contiguous(),
    "stride": lambda m: _s(m).stride(),
    "reshape": lambda m: _s(m).reshape(6),
    "flatten": lambda m: _s(m).flatten(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_exception_types(name):
    _same(ERRORS[name])
