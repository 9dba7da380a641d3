"""A bool parameter of an op takes a Python bool only, as PyTorch's argument parser: keepdim=1, descending='x',
a NumPy bool or a tensor are its TypeError (they were taken by truthiness: upper='x' computed as upper=True); an int
or float parameter refuses what torch's parser refuses (ignore_index='x' was compared against the targets)."""
import numpy as np
import pytest
import torch

import functorch_lite as ft

CALLS = {
    "sum_keepdim": lambda m, v: m.ones(2, 3).sum(0, keepdim=v),
    "mean_keepdim": lambda m, v: m.mean(m.ones(2, 3), 0, keepdim=v),
    "amax_keepdim": lambda m, v: m.amax(m.ones(2, 3), 0, keepdim=v),
    "sort_descending": lambda m, v: m.sort(m.ones(3), descending=v),
    "argsort_descending": lambda m, v: m.ones(3).argsort(descending=v),
    "any_keepdim": lambda m, v: m.ones(2, 3).any(0, keepdim=v),
    "logsumexp_keepdim": lambda m, v: m.logsumexp(m.ones(2, 3), 0, keepdim=v),
    "cumsum_ok": lambda m, v: m.ones(3).cumsum(0),
    "sort_stable": lambda m, v: m.sort(m.ones(3), stable=v),  # (bool?: None taken)
    "sort_method_stable": lambda m, v: m.ones(3).sort(stable=v),
    "topk_sorted": lambda m, v: m.topk(m.ones(3), 1, sorted=v),
    "isclose_equal_nan": lambda m, v: m.isclose(m.ones(1), m.ones(1), equal_nan=v),
}


@pytest.mark.parametrize("value", [1, 0, None, "x", np.bool_(True), 1.0, True, False],
                         ids=["int1", "int0", "None", "str", "numpy_bool", "float", "True", "False"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_bool_parameters_as_torch(name, value):
    res = []
    for m in (torch, ft):
        try:
            r = CALLS[name](m, value)
            res.append(("ok", tuple((r[0] if isinstance(r, tuple) else r).shape)))
        except TypeError as e:
            res.append(("TypeError", str(e).split(" must be bool, not ")[-1] if "must be bool" in str(e) else None))
    if res[0][0] == "TypeError" and res[0][1] is None:  # (an overloaded op: torch's "invalid combination" text)
        assert res[1][0] == "TypeError"
    else:
        assert res[1] == res[0]


S = [[4., 1.], [1., 3.]]
LINALG = {
    "cholesky_solve": lambda m, v: m.cholesky_solve(m.tensor(S), m.linalg.cholesky(m.tensor(S)), upper=v),
    "cholesky_inverse": lambda m, v: m.cholesky_inverse(m.linalg.cholesky(m.tensor(S)), upper=v),
    "linalg_cholesky": lambda m, v: m.linalg.cholesky(m.tensor(S), upper=v),
    "linalg_cholesky_ex": lambda m, v: m.linalg.cholesky_ex(m.tensor(S), check_errors=v),
    "solve_triangular": lambda m, v: m.linalg.solve_triangular(m.tensor(S), m.tensor(S), upper=v),
    "solve_triangular_left": lambda m, v: m.linalg.solve_triangular(m.tensor(S), m.tensor(S), upper=False, left=v),
    "triangular_solve": lambda m, v: m.triangular_solve(m.tensor(S), m.tensor(S), upper=v),
    "pinv": lambda m, v: m.linalg.pinv(m.tensor(S), hermitian=v),
}


@pytest.mark.parametrize("value", [1, None, "x", True], ids=["int", "None", "str", "True"])
@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg_bool_parameters_as_torch(name, value):
    res = []
    for m in (torch, ft):
        try:
            r = LINALG[name](m, value)
            res.append(("ok", np.abs((r[0] if isinstance(r, tuple) else r).numpy()).round(4).tolist()))
        except TypeError as e:  # (pinv's overload set: torch's "invalid combination" text)
            res.append(("TypeError", str(e).split(" must be bool, not ")[-1] if "must be bool" in str(e) else None))
    assert res[1] == res[0] or res[0] == ("TypeError", None) and res[1][0] == "TypeError"


X = [[3., 1., 2.], [0., 5., 4.]]
WRAPPERS = {  # (hand-written functions: the same check)
    "unique_sorted": lambda m, v: m.unique(m.tensor(X), sorted=v),
    "unique_return_inverse": lambda m, v: m.unique(m.tensor(X), return_inverse=v),
    "median_keepdim": lambda m, v: m.median(m.tensor(X), 0, keepdim=v),
    "nanmedian_keepdim": lambda m, v: m.tensor(X).nanmedian(0, keepdim=v),
    "kthvalue_keepdim": lambda m, v: m.kthvalue(m.tensor(X), 1, 0, keepdim=v),
    "mode_keepdim": lambda m, v: m.mode(m.tensor(X), 0, keepdim=v),
    "searchsorted_right": lambda m, v: m.searchsorted(m.tensor([1., 2., 3.]), m.tensor(X), right=v),
    "bucketize_out_int32": lambda m, v: m.bucketize(m.tensor(X), m.tensor([1., 2., 3.]), out_int32=v),
    "dropout_training": lambda m, v: m.nn.functional.dropout(m.tensor(X), 0.0, training=v),
    "sdpa_is_causal": lambda m, v: m.nn.functional.scaled_dot_product_attention(
        m.tensor(X)[None], m.tensor(X)[None], m.tensor(X)[None], is_causal=v),
    "embedding_sparse": lambda m, v: m.nn.functional.embedding(m.tensor([0]), m.tensor(X), sparse=v),
    "max_keepdim": lambda m, v: m.max(m.tensor(X), 0, keepdim=v),
    "min_method_keepdim": lambda m, v: m.tensor(X).min(0, keepdim=v),
    "max_positional_keepdim": lambda m, v: m.tensor(X).max(0, v),
    "linalg_svd_full_matrices": lambda m, v: m.linalg.svd(m.tensor(S), full_matrices=v),
    "svd_some": lambda m, v: m.svd(m.tensor(S), some=v),
    "svd_compute_uv": lambda m, v: m.svd(m.tensor(S), compute_uv=v),
    "matrix_norm_keepdim": lambda m, v: m.linalg.matrix_norm(m.tensor(S), keepdim=v),
    "lu_factor_pivot": lambda m, v: m.linalg.lu_factor(m.tensor(S), pivot=v),
    "lu_factor_ex_check_errors": lambda m, v: m.linalg.lu_factor_ex(m.tensor(S), check_errors=v),
    "linalg_lu_pivot": lambda m, v: m.linalg.lu(m.tensor(S), pivot=v),
    "lu_unpack_unpack_data": lambda m, v: m.lu_unpack(*m.linalg.lu_factor(m.tensor(S)), unpack_data=v),
    "batch_norm_training": lambda m, v: m.nn.functional.batch_norm(m.tensor(X), m.zeros(3), m.ones(3), training=v),
    "requires_grad_": lambda m, v: m.ones(2).requires_grad_(v),
    "zeros_requires_grad": lambda m, v: m.zeros(2, requires_grad=v),
    "full_requires_grad": lambda m, v: m.full((2,), 1.0, requires_grad=v),
    "tensor_requires_grad": lambda m, v: m.tensor([1.0], requires_grad=v),
    "zeros_like_requires_grad": lambda m, v: m.zeros_like(m.tensor(X), requires_grad=v),
    "meta_empty_requires_grad": lambda m, v: m.empty(2, device="meta", requires_grad=v),
    "parameter_requires_grad": lambda m, v: m.nn.Parameter(m.ones(1), v),
    "nonzero_as_tuple": lambda m, v: m.nonzero(m.tensor(X), as_tuple=v),
    "to_copy": lambda m, v: m.tensor(X).to(m.float64, copy=v),
    "to_non_blocking": lambda m, v: m.tensor(X).to("cpu", non_blocking=v),
}
# (None is their default meaning "not given" / "the default": taken, as torch takes it)
OPTIONAL = {
    "interpolate_align_corners": lambda m, v: m.nn.functional.interpolate(m.tensor(X)[None], scale_factor=2.0,
                                                                          mode="linear", align_corners=v),
    "grid_sample_align_corners": lambda m, v: m.nn.functional.grid_sample(m.tensor(X)[None, None],
                                                                          m.zeros(1, 2, 2, 2), align_corners=v),
    "affine_grid_align_corners": lambda m, v: m.nn.functional.affine_grid(m.eye(2, 3)[None], [1, 1, 2, 2],
                                                                          align_corners=v),
    # (torch refuses unbiased=None; here None is the signature's "not given": left)
    "var_unbiased": lambda m, v: m.var(m.tensor(X), 0, unbiased=v),
    "var_positional_unbiased": lambda m, v: m.var(m.tensor(X), 0, v),
    "std_method_unbiased": lambda m, v: m.tensor(X).std(unbiased=v),
    "var_mean_unbiased": lambda m, v: m.var_mean(m.tensor(X), 1, unbiased=v),
    "std_mean_unbiased": lambda m, v: m.std_mean(m.tensor(X), unbiased=v),
}


@pytest.mark.parametrize("value", [1, None, np.bool_(True), True], ids=["int", "None", "numpy_bool", "True"])
@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_wrapper_bool_parameters_as_torch(name, value):
    res = []
    for m in (torch, ft):
        try:
            WRAPPERS[name](m, value)
            res.append("ok")
        except TypeError:
            res.append("TypeError")
    assert res[1] == res[0]


@pytest.mark.parametrize("value", [1, "x", np.bool_(True), 1.5, True, None],
                         ids=["int", "str", "numpy_bool", "float", "True", "None"])
@pytest.mark.parametrize("name", sorted(OPTIONAL))
def test_optional_bool_parameters_as_torch(name, value):
    res = []
    for m in (torch, ft):
        try:
            OPTIONAL[name](m, value)
            res.append("ok")
        except TypeError:
            res.append("TypeError")
    if value is None and name.startswith(("var", "std")):  # (unbiased=None: torch's TypeError, "not given" here)
        assert res == ["TypeError", "ok"]
    else:
        assert res[1] == res[0]


def test_requires_grad_setter_takes_a_bool_only_as_torch():
    for m in (torch, ft):
        t = m.ones(2)
        with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
            t.requires_grad = 1
        t.requires_grad = True
        assert t.requires_grad is True


NUMBERS = {  # (an int / float parameter: torch's parser refuses a str, a bool for an int, None)
    "nll_loss_ignore_index": lambda m, v: m.nn.functional.nll_loss(m.tensor(X), m.tensor([0, 1]), ignore_index=v),
    "cross_entropy_ignore_index": lambda m, v: m.nn.functional.cross_entropy(m.tensor(X), m.tensor([0, 1]),
                                                                            ignore_index=v),
    "layer_norm_eps": lambda m, v: m.nn.functional.layer_norm(m.tensor(X), (3,), eps=v),
    "group_norm_eps": lambda m, v: m.nn.functional.group_norm(m.tensor(X)[..., None], 1, eps=v),
    "rms_norm_eps": lambda m, v: m.nn.functional.rms_norm(m.tensor(X), (3,), eps=v),
}


@pytest.mark.parametrize("value", ["x", None, 1.5, True, 2], ids=["str", "None", "float", "bool", "int"])
@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_number_parameters_as_torch(name, value):
    res = []
    for m in (torch, ft):
        try:
            r = NUMBERS[name](m, value)
            res.append(("ok", np.round(r.numpy(), 4).tolist()))
        except TypeError as e:
            res.append(("TypeError", str(e).split("): ")[-1]))
    if name == "rms_norm_eps" and value is None:  # (rms_norm's eps is optional: None is the dtype's eps)
        assert res[0][0] == "ok"
    assert res[1] == res[0]


def test_dropout_inplace_read_by_truthiness_as_torch():
    """torch's Python F.dropout / nn.Dropout read ``inplace`` by truthiness (only ``training`` reaches its parser)."""
    for m in (torch, ft):
        assert m.nn.functional.dropout(m.ones(2), 0.0, True, 1).tolist() == [1.0, 1.0]
        assert m.nn.Dropout(0.0, inplace=1)(m.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name", ["dropout", "unique", "unique_dim"])
def test_bool_messages_name_torchs_kernel_argument(name):
    calls = {"dropout": lambda m: m.nn.functional.dropout(m.ones(2), 0.0, training=1),
             "unique": lambda m: m.unique(m.ones(2), sorted=1),
             "unique_dim": lambda m: m.unique(m.ones(2, 2), dim=0, sorted=1)}
    msgs = []
    for m in (torch, ft):
        with pytest.raises(TypeError) as e:
            calls[name](m)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]
