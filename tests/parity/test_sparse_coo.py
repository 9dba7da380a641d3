"""Sparse COO tensors (functorch_lite/sparse): construction, printing, products, sums, softmax, arithmetic and
gradients, each against real torch 2.13; and a pygcn-style graph convolution network trained with both."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _val(r):
    """A result's structure (exact) and its floating values (compared with a tolerance: ``_same``)."""
    if getattr(r, "is_sparse", False):
        return ("sparse", r._indices().tolist(), tuple(r.shape), r.is_coalesced(), str(r.dtype)), \
            np.asarray(r._values().detach().tolist(), np.float64)
    if hasattr(r, "tolist"):
        return ("dense", str(r.dtype), tuple(r.shape)), np.asarray(r.detach().tolist(), np.float64)
    return r, None


def _outcome(fn, m):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = ("ok",) + _val(fn(m))
        except Exception as e:  # noqa: BLE001 (the outcome compared is the exception)
            out = (type(e).__name__, str(e).split(". This could")[0], None)
    return out, sorted({(x.category.__name__, str(x.message)) for x in w
                   if "invariant" not in str(x.message) and "beta state" not in str(x.message)})  # (torch: once)


def _same(a, b):
    (oa, wa), (ob, wb) = a, b
    assert oa[:2] == ob[:2] and wa == wb
    if oa[2] is not None or ob[2] is not None:
        np.testing.assert_allclose(oa[2], ob[2], rtol=1e-5, atol=1e-6)


def _s(m, coalesced=False, **kw):
    i = m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    s = m.sparse_coo_tensor(i, m.tensor([3.0, 4.0, 5.0, 1.0]), (2, 3), **kw)
    return s.coalesce() if coalesced else s


def _t(m):  # (another pattern, coalesced)
    return m.sparse_coo_tensor(m.tensor([[0, 1, 1], [0, 1, 2]]), m.tensor([2.0, -1.0, 0.5]), (2, 3)).coalesce()


_D32 = np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.3


_CASES = {
    "construct": lambda m: _s(m),
    "coalesce": lambda m: _s(m).coalesce(),
    "infer_size": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), m.tensor([3.0, 4, 5, 1])),
    "lists": lambda m: m.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2)),
    "dtype": lambda m: m.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], (2, 2), dtype=m.float64),
    "int_values": lambda m: m.sparse_coo_tensor([[0, 1]], m.tensor([5, 6]), (3,)),
    "hybrid": lambda m: m.sparse_coo_tensor(m.tensor([[0, 2]]), m.ones(2, 2), (3, 2)),
    "hybrid_coalesce": lambda m: m.sparse_coo_tensor(m.tensor([[2, 0, 2]]), m.arange(6.0).reshape(3, 2),
                                                     (3, 2)).coalesce(),
    "float_indices": lambda m: m.sparse_coo_tensor(m.tensor([[0.0, 1.0]]), m.tensor([1.0, 2.0])),
    "nnz_mismatch": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]]), m.ones(3), (2, 3)),
    "size_rank": lambda m: m.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 2)),
    "invariants": lambda m: m.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (2,), check_invariants=True),
    "invariants_negative": lambda m: m.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (2,), check_invariants=True),
    "indices_uncoalesced": lambda m: _s(m).indices(),
    "values_uncoalesced": lambda m: _s(m).values(),
    "indices": lambda m: _s(m, True).indices(),
    "values": lambda m: _s(m, True).values(),
    "meta": lambda m: (_s(m).is_sparse, _s(m)._nnz(), str(_s(m).layout), _s(m).sparse_dim(), _s(m).dense_dim(),
                       _s(m).is_coalesced(), _s(m, True).is_coalesced(), tuple(_s(m).shape), _s(m).size(1),
                       _s(m).dim(), _s(m).numel(), len(_s(m)), _s(m).type(), _s(m).double().type(),
                       _s(m).requires_grad, _s(m).is_leaf, _s(m).grad_fn),
    "to_dense": lambda m: _s(m).to_dense(),
    "to_dense_hybrid": lambda m: m.sparse_coo_tensor(m.tensor([[2, 0, 2]]), m.arange(6.0).reshape(3, 2),
                                                     (3, 2)).to_dense(),
    "to_sparse": lambda m: m.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse(),
    "to_sparse_coo": lambda m: m.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_coo(),
    "to_sparse_dim1": lambda m: m.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 1.0]]).to_sparse(1),
    "double": lambda m: _s(m).double(),
    "to_dtype": lambda m: _s(m).to(m.float64),
    "t": lambda m: _s(m, True).t(),
    "transpose": lambda m: _s(m).transpose(0, 1).to_dense(),
    "select": lambda m: _s(m)[0],
    "index_select": lambda m: _s(m).index_select(0, m.tensor([1])),
    "index_select_dim1": lambda m: _s(m).index_select(1, m.tensor([2, 0])),
    "cat": lambda m: m.cat([_s(m), _t(m)]),
    "cat_dim1": lambda m: m.cat([_s(m), _t(m)], 1),
    "stack": lambda m: m.stack([_s(m), _t(m)]),
    # products
    "spmm": lambda m: m.spmm(_s(m), m.tensor(_D32)),
    "mm": lambda m: m.mm(_s(m), m.tensor(_D32)),
    "matmul_op": lambda m: _s(m) @ m.tensor(_D32),
    "matmul_vec": lambda m: m.matmul(_s(m), m.tensor([1.0, 2.0, 3.0])),
    "mv": lambda m: m.mv(_s(m), m.tensor([1.0, 2.0, 3.0])),
    "dense_at_sparse": lambda m: m.ones(2, 2) @ _s(m),
    "dense_mm_sparse": lambda m: m.mm(m.tensor(_D32).t(), _s(m).t()),
    "sparse_mm": lambda m: m.sparse.mm(_s(m), m.tensor(_D32)),
    "sparse_mm_sparse": lambda m: m.sparse.mm(_s(m), _t(m).t()),
    "sparse_addmm": lambda m: m.sparse.addmm(m.ones(2, 2), _s(m), m.tensor(_D32), beta=0.5, alpha=2),
    "addmm": lambda m: m.addmm(m.ones(2, 2), _s(m), m.tensor(_D32)),
    "mm_dtype": lambda m: m.mm(_s(m), m.ones(3, 2, dtype=m.float64)),
    "mm_shape": lambda m: m.mm(_s(m), m.ones(4, 2)),
    # arithmetic
    "add_self": lambda m: (lambda s: s + s)(_s(m)),
    "add_uncoalesced_coalesced": lambda m: _s(m) + _s(m, True),
    "add_coalesced": lambda m: _s(m, True) + _t(m),
    "add_mixed": lambda m: _s(m) + _t(m),
    "add_alpha": lambda m: m.add(_s(m), _t(m), alpha=2),
    "sub_clone": lambda m: (lambda s: s - s.clone())(_s(m)),
    "dense_plus_sparse": lambda m: m.ones(2, 3) + _s(m),
    "sparse_plus_dense": lambda m: _s(m) + m.ones(2, 3),
    "dense_add_": lambda m: m.ones(2, 3).add_(_s(m)),
    "mul_number": lambda m: _s(m) * 2,
    "rmul_number": lambda m: 2 * _s(m),
    "mul_dense": lambda m: _s(m) * m.arange(6.0).reshape(2, 3),
    "dense_mul": lambda m: m.arange(6.0).reshape(2, 3) * _s(m),
    "mul_0d": lambda m: _s(m) * m.tensor(3.0),
    "mul_sparse": lambda m: _s(m, True) * _t(m),
    "mul_uncoalesced_sparse": lambda m: _s(m) * _t(m),
    "mul_sparse_uncoalesced": lambda m: _t(m) * _s(m),
    "div": lambda m: _s(m) / 2,
    "neg": lambda m: -_s(m),
    "pow": lambda m: _s(m) ** 2,
    "abs": lambda m: m.abs(_s(m) * -1),
    "sqrt": lambda m: _s(m).sqrt(),
    "relu": lambda m: m.relu(_s(m) - _t(m)),
    "tanh": lambda m: _s(m).tanh(),
    "exp": lambda m: m.exp(_s(m)),
    "sigmoid": lambda m: m.sigmoid(_s(m)),
    "view": lambda m: _s(m).view(6),
    "add_number": lambda m: _s(m) + 1,
    # sums and softmax
    "sparse_sum": lambda m: m.sparse.sum(_s(m)),
    "sparse_sum_0": lambda m: m.sparse.sum(_s(m), 0),
    "sparse_sum_1": lambda m: m.sparse.sum(_s(m), 1),
    "sparse_sum_both": lambda m: m.sparse.sum(_s(m), (0, 1)),
    "sparse_sum_hybrid": lambda m: m.sparse.sum(m.sparse_coo_tensor(m.tensor([[2, 0, 2]]),
                                                                    m.arange(6.0).reshape(3, 2), (3, 2)), 1),
    "sum_method": lambda m: _s(m).sum(),
    "softmax_1": lambda m: m.sparse.softmax(_s(m), 1),
    "softmax_0": lambda m: m.sparse.softmax(_s(m), 0),
    "log_softmax": lambda m: m.sparse.log_softmax(_s(m), 1),
    "softmax_dense_fn": lambda m: m.softmax(_s(m), 1),
    # legacy constructors
    "FloatTensor": lambda m: m.sparse.FloatTensor(m.tensor([[0, 1]]), m.tensor([1.0, 2.0]), m.Size([3])),
    "FloatTensor_nosize": lambda m: m.sparse.FloatTensor(m.tensor([[0, 1]]), m.tensor([1.0, 2.0])),
    "DoubleTensor_shape": lambda m: m.sparse.DoubleTensor(2, 3),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_sparse_coo_matches_torch(case):
    fn = _CASES[case]
    _same(_outcome(fn, ft), _outcome(fn, torch))


_REPRS = {
    "plain": lambda m: _s(m),
    "coalesced": lambda m: _s(m, True),
    "float64": lambda m: _s(m).double(),
    "int": lambda m: m.sparse_coo_tensor([[0, 1]], m.tensor([5, 6]), (3,)),
    "hybrid": lambda m: m.sparse_coo_tensor(m.tensor([[0, 2]]), m.ones(2, 2) / 3, (3, 2)),
    "empty": lambda m: m.sparse.FloatTensor(2, 3),
    "requires_grad": lambda m: _s(m, requires_grad=True),
    "grad_fn": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2, requires_grad=True) * 2, (2,)),
}


@pytest.mark.parametrize("case", sorted(_REPRS))
def test_sparse_repr_matches_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(_REPRS[case](ft)) == repr(_REPRS[case](torch))


def _grads(m, how):
    """Gradients of values that build a sparse matrix (learnable edge weights), of a dense operand, and of a
    sparse leaf (sparse from torch.sparse.mm, dense from torch.mm)."""
    w = m.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
    x = m.tensor(_D32, requires_grad=True)
    i = m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    a = m.sparse_coo_tensor(i, w * 2, (2, 3))
    if how == "mm":
        out = m.mm(a, x)
    elif how == "sparse_mm":
        out = m.sparse.mm(a, x)
    elif how == "to_dense":
        out = a.to_dense() * m.arange(6.0).reshape(2, 3)
    elif how == "softmax":
        out = m.sparse.softmax(a, 1).to_dense() * m.arange(6.0).reshape(2, 3)
    elif how == "sum":
        out = m.sparse.sum(a, 1).to_dense() * m.tensor([1.0, -1.0])
    elif how == "dense_at_sparse":
        out = x.t() @ a.t()
    elif how == "coalesce_relu":
        out = m.relu(a - _t(m)).to_dense() ** 2
    elif how == "leaf_sparse_mm":
        leaf = m.sparse_coo_tensor(i, m.tensor([1.0, -2.0, 0.5, 3.0]), (2, 3), requires_grad=True)
        (m.sparse.mm(leaf, x) ** 2).sum().backward()
        return _val(leaf.grad), x.grad
    elif how == "leaf_mm":
        leaf = m.sparse_coo_tensor(i, m.tensor([1.0, -2.0, 0.5, 3.0]), (2, 3), requires_grad=True)
        (m.mm(leaf, x) ** 2).sum().backward()
        return _val(leaf.grad), x.grad
    (out ** 2).sum().backward()
    return (a.requires_grad, a.is_leaf, type(a.grad_fn).__name__), w.grad, x.grad


@pytest.mark.parametrize("how", ["mm", "sparse_mm", "to_dense", "softmax", "sum", "dense_at_sparse", "coalesce_relu",
                                 "leaf_sparse_mm", "leaf_mm"])
def test_sparse_gradients_match_torch(how):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gf, gt = _grads(ft, how), _grads(torch, how)
    if how.startswith("leaf"):
        assert gf[0][0] == gt[0][0]
        np.testing.assert_allclose(gf[0][1], gt[0][1], rtol=1e-5, atol=1e-6)
    else:
        assert gf[0] == gt[0]
    for a, b in zip(gf[1:], gt[1:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.asarray(a.tolist()), np.asarray(b.tolist()), rtol=1e-5, atol=1e-6)


def test_a_pygcn_style_model_trains_as_torch():
    # Kipf & Welling's GCN as pygcn writes it: a row-normalised adjacency built with torch.sparse.FloatTensor,
    # torch.spmm in each layer, dropout off, Adam with weight decay; 15 steps of full-batch training
    rng = np.random.default_rng(0)
    n, f, h, c = 30, 8, 16, 3
    edges = rng.integers(0, n, (2, 90))
    feats = rng.standard_normal((n, f)).astype(np.float32)
    labels = rng.integers(0, c, n)
    w1 = (rng.standard_normal((f, h)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((h, c)) * 0.3).astype(np.float32)

    def run(m):
        idx = m.tensor(np.concatenate([edges, np.stack([np.arange(n)] * 2)], 1))
        adj = m.sparse.FloatTensor(idx, m.ones(idx.shape[1]), m.Size([n, n])).coalesce()
        deg = m.sparse.sum(adj, 1).to_dense()
        adj = m.sparse.FloatTensor(adj._indices(), adj._values() / deg[adj._indices()[0]], m.Size([n, n]))

        class GraphConvolution(m.nn.Module):
            def __init__(self, weight):
                super().__init__()
                self.weight = m.nn.Parameter(m.tensor(weight))
                self.bias = m.nn.Parameter(m.zeros(weight.shape[1]))

            def forward(self, x, adj):
                return m.spmm(adj, m.mm(x, self.weight)) + self.bias

        gc1, gc2 = GraphConvolution(w1), GraphConvolution(w2)
        opt = m.optim.Adam(list(gc1.parameters()) + list(gc2.parameters()), lr=0.01, weight_decay=5e-4)
        x, y, losses = m.tensor(feats), m.tensor(labels), []
        for _ in range(15):
            opt.zero_grad()
            out = m.nn.functional.log_softmax(gc2(m.relu(gc1(x, adj)), adj), dim=1)
            loss = m.nn.functional.nll_loss(out, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, gc1.weight.detach().numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lf, wf = run(ft)
        lt, wt = run(torch)
    np.testing.assert_allclose(lf, lt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wf, wt, rtol=1e-4, atol=1e-6)


def test_invariant_checks_context_manager_and_the_one_time_warning():
    with ft.sparse.check_sparse_tensor_invariants():
        assert ft.sparse.check_sparse_tensor_invariants.is_enabled()
        with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 2 but found "
                                               "index 5"):
            ft.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (2,))
    assert not ft.sparse.check_sparse_tensor_invariants.is_enabled()


def test_dense_ops_meeting_a_sparse_tensor_name_the_unsupported_op():
    s = _s(ft)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments from the 'SparseCPU'"):
        s.exp()
    with pytest.raises(AttributeError, match="convert it with .to_dense()"):
        s._shape  # noqa: B018


def test_save_load_both_ways_deepcopy_and_pickle():
    import copy
    import io
    import pickle
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = _s(ft)
        buf = io.BytesIO()
        ft.save({"adj": s}, buf)
        buf.seek(0)
        back = torch.load(buf)["adj"]  # (torch reads the facade's file: torch's _rebuild_sparse_tensor)
        assert back.is_sparse and not back.is_coalesced() and back._indices().tolist() == s._indices().tolist()
        assert back._values().tolist() == s._values().tolist() and tuple(back.shape) == (2, 3)
        buf = io.BytesIO()
        torch.save({"adj": _s(torch, True)}, buf)
        buf.seek(0)
        mine = ft.load(buf)["adj"]
        assert repr(mine) == repr(_s(torch, True)) and mine.is_coalesced()
        for other in (copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
            assert other.to_dense().tolist() == s.to_dense().tolist() and other._i is not s._i


def test_a_sparse_tensor_in_a_compiled_function():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = _s(ft)
        f = ft.compile(lambda x: ft.sparse.mm(s, x).sum())
        assert f(ft.ones(3, 2)).item() == 26.0 == torch.sparse.mm(_s(torch), torch.ones(3, 2)).sum().item()
        assert f(ft.full((3, 2), 2.0)).item() == 52.0


def _edge_step(m, leaf, w, x):
    i = m.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    a = m.sparse_coo_tensor(i, w * 2, (2, 3))
    loss = (m.sparse.mm(a, x) ** 2).sum() + (m.mm(leaf, x) ** 2).sum() + (m.sparse.mm(leaf, x) ** 3).sum()
    loss.backward()
    return loss


def test_a_compiled_training_step_over_sparse_tensors_is_one_program_with_eager_gradients():
    # a sparse leaf in the closure (its values and dense-gradient tensor are the program's inputs) and a sparse
    # tensor built inside from weights: one program from the second call on (the first creates the leaf's
    # dense-gradient tensor eagerly), the gradients eager's and torch's
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = []
        for m in (ft, torch):
            leaf = _s(m, requires_grad=True)
            w = m.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
            x = m.tensor(_D32)
            step = (lambda: _edge_step(m, leaf, w, x))
            if m is ft:
                step = ft.compile(step)
            runs = []
            for _ in range(3):
                loss = step()
                runs.append((loss.item(), w.grad.numpy().copy(), leaf.grad.numpy().copy()))
                w.grad = None
                leaf.grad = None
            out.append(runs)
            if m is ft:
                assert step.stats["eager_calls"] == 1 and step.stats["cache_hits"] >= 1
    for (lf, wf, gf), (lt, wt, gt) in zip(*out):
        np.testing.assert_allclose(lf, lt, rtol=1e-5)
        np.testing.assert_allclose(wf, wt, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gf, gt, rtol=1e-5, atol=1e-6)


def test_a_host_read_of_sparse_indices_inside_compile_breaks_the_graph():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = _s(ft)
        f = ft.compile(lambda x: (s.coalesce() * x).to_dense().sum())
        assert f(ft.tensor(2.0)).item() == 26.0
        assert f.stats["eager_calls"] == 1
        g = ft.compile(lambda x: (s.coalesce() * x).to_dense().sum(), fullgraph=True)
        with pytest.raises(Exception, match="reads its indices on the host"):
            g(ft.tensor(2.0))


_ENTRY_POINTS = {
    "relu_function_inplace": lambda m: m.relu_(_s(m, True) * -1),
    "neg_function_inplace": lambda m: m.neg_(_s(m)),
    "add_unbound_method_alpha": lambda m: m.Tensor.add_(_s(m), _s(m), alpha=2),
    "zeros_like": lambda m: m.zeros_like(_s(m)),
    "smm": lambda m: m.smm(_s(m, True), m.tensor(_D32)),
    "hspmm": lambda m: m.hspmm(_s(m), m.tensor(_D32)),
    "smm_of_dense": lambda m: m.smm(m.ones(2, 3), m.ones(3, 2)),
}


@pytest.mark.parametrize("case", sorted(_ENTRY_POINTS))
def test_top_level_and_inplace_function_forms(case):
    fn = _ENTRY_POINTS[case]
    _same(_outcome(fn, ft), _outcome(fn, torch))
