"""Tensors here are dense (strided) or sparse COO (functorch_lite/sparse). torch's other layouts exist as values to
compare with (library code tests ``t.layout == torch.sparse_csr``); a dense tensor's sparse / quantized accessors
raise torch's errors; a factory asked for another layout, or ``to_sparse_csr``, refuses clearly instead of silently
giving a dense tensor."""
import pytest
import torch

import functorch_lite as ft

LAYOUTS = ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"]


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_values_compare_and_print_as_torch(name):
    x = ft.ones(2, 2)
    assert repr(getattr(ft, name)) == repr(getattr(torch, name))
    assert (x.layout == getattr(ft, name)) is (torch.ones(2, 2).layout == getattr(torch, name)) is False
    assert x.layout == ft.strided


@pytest.mark.parametrize("method", ["coalesce", "indices", "values", "crow_indices", "col_indices", "ccol_indices",
                                    "row_indices", "is_coalesced", "_nnz", "_indices", "_values", "q_scale",
                                    "q_zero_point", "int_repr"])
def test_sparse_and_quantized_accessors_of_a_dense_tensor_raise_torchs_error(method):
    def outcome(T):
        try:
            getattr(T.ones(2, 2), method)()
        except Exception as e:  # noqa: BLE001 (the outcome compared)
            msg = str(e).split("\n")[0]
            return type(e).__name__, msg if type(e) is RuntimeError else msg.split(":")[0].split(" with ")[0]
        return None
    assert outcome(ft) == outcome(torch)


def test_dequantize_of_a_dense_tensor_is_the_tensor():
    x = ft.ones(2)
    assert x.dequantize() is x and ft.dequantize(x) is x
    assert ft.dequantize([x, x])[1] is x


@pytest.mark.parametrize("make", [lambda T, L: T.ones_like(T.ones(2), layout=L), lambda T, L: T.full((2,), 1., layout=L),
                                  lambda T, L: T.arange(3, layout=L), lambda T, L: T.eye(2, layout=L)])
def test_a_factory_refuses_a_layout_other_than_strided(make):
    assert make(ft, ft.strided).layout == ft.strided
    with pytest.raises(RuntimeError, match="only dense .torch.strided. tensors; layout=torch.sparse_coo"):
        make(ft, ft.sparse_coo)


@pytest.mark.parametrize("make", [lambda T, L: T.zeros(2, 3, layout=L), lambda T, L: T.empty((2,), layout=L),
                                  lambda T, L: T.zeros_like(T.ones(2, 2), layout=L),
                                  lambda T, L: T.zeros_like(T.ones(2, 2, dtype=T.float64), layout=L),
                                  lambda T, L: T.zeros(3, layout=L, dtype=T.int32, requires_grad=False)])
def test_zeros_and_empty_build_an_empty_sparse_tensor(make):
    # (sparse COO tensors exist here: functorch_lite/sparse; torch's zeros / empty with that layout give one)
    assert repr(make(ft, ft.sparse_coo)) == repr(make(torch, torch.sparse_coo))


def test_compressed_sparse_layouts_refuse():
    with pytest.raises(RuntimeError, match="dense and sparse COO tensors only: Tensor.to_sparse_csr"):
        ft.ones(2, 2).to_sparse_csr()
