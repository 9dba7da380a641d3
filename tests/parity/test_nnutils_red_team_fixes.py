"""Fixes from the nn.utils red team (gradient clipping, rnn packing utilities, argument-parser messages, grad_fn names
of in-place random fills): each against real torch 2.13."""
import numpy as np
import pytest
import torch

import functorch_lite as ft
from _parity import same_rounded


# ---- clip_grad: a gradient listed twice is scaled twice ---------------------------------------------------------
def _tied(t, how, foreach, n=2):
    """``n`` entries for one gradient: a tied weight's parameter listed ``n`` times, or ``n`` parameters sharing
    one ``.grad`` tensor."""
    nn = t.nn
    g = t.tensor([3., 4.])
    if how == "param":
        p = nn.Parameter(t.zeros(2))
        p.grad = g
        params = [p] * n
    else:
        params = [nn.Parameter(t.zeros(2)) for _ in range(n)]
        for p in params:
            p.grad = g
    q = nn.Parameter(t.zeros(1))
    q.grad = t.tensor([1.])
    params.append(q)
    total = nn.utils.clip_grad_norm_(params, 1.0, foreach=foreach)
    g2 = t.tensor([3., 4.])
    p2 = nn.Parameter(t.zeros(2))
    p2.grad = g2
    nn.utils.clip_grads_with_norm_([p2] * n, 1.0, t.tensor(5.), foreach=foreach)
    return total, g, q.grad, g2


@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize("how", ["param", "grad"])
@pytest.mark.parametrize("n", [2, 3])
def test_clip_grad_duplicates_scaled_per_entry(foreach, how, n):
    """torch's mul_ (foreach or not) scales a gradient once per entry of the list: coef ** n for one listed n
    times; the norm counts it n times."""
    same_rounded(lambda t: _tied(t, how, foreach, n), torch, ft)


def _tied_modules(t, foreach):
    nn = t.nn
    t.manual_seed(0)
    emb = nn.Embedding(4, 2)
    enc, dec = nn.Sequential(emb, nn.Linear(2, 2)), nn.Sequential(emb, nn.Linear(2, 2))
    params = list(enc.parameters()) + list(dec.parameters())  # (emb.weight twice)
    for p in params:
        p.grad = t.full(p.shape, 1.0)
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0, foreach=foreach)
    return total, emb.weight.grad, enc[1].bias.grad, dec[1].weight.grad


@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_tied_modules(foreach):
    same_rounded(lambda t: _tied_modules(t, foreach), torch, ft)


def test_clip_grad_no_duplicates_single_pass():
    """The common path (every gradient listed once) makes no further pass."""
    from functorch_lite.nn.utils.clip_grad import _repeats
    gs = [ft.ones(2), ft.ones(3)]
    assert _repeats(gs) == []
    assert [len(p) for p in _repeats(gs + gs[:1] + gs[:1])] == [1, 1]


# ---- clip_grad: complex gradients have a real norm; integer tensors are refused ------------------------------------
_NORMS = [2.0, 1.0, float("inf"), 0.0, 3.0, float("-inf"), 0.5]


def _complex_norm(t, norm_type, foreach, dtypes):
    ts = [t.tensor([3 + 4j, 0j, 1 - 2j]).to(dtypes[0])] + [t.tensor([2., 1.], dtype=d) for d in dtypes[1:]]
    r = t.nn.utils.get_total_norm(ts, norm_type, foreach=foreach)
    return r, str(r.dtype)


@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize("norm_type", _NORMS)
@pytest.mark.parametrize("dtypes", [("complex64",), ("complex64", "float16"), ("complex64", "float64"),
                                    ("complex128", "float32")])
def test_total_norm_of_complex_is_real(norm_type, foreach, dtypes):
    same_rounded(lambda t: _complex_norm(t, norm_type, foreach, [getattr(t, d) for d in dtypes]), torch, ft)


def _complex_clip(t, norm_type, foreach, dtypes):
    nn = t.nn
    ps = []
    for d in dtypes:
        p = nn.Parameter(t.zeros(2, dtype=d))
        p.grad = (t.tensor([3 + 4j, 1j]) if d.is_complex else t.tensor([3., 4.])).to(d)
        ps.append(p)
    r = nn.utils.clip_grad_norm_(ps, 1.0, norm_type, foreach=foreach)
    return r, str(r.dtype), [t.view_as_real(p.grad.to(t.complex128)) for p in ps], [str(p.grad.dtype) for p in ps]


@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("dtypes", [("complex64",), ("complex64", "float64"), ("complex128", "float32")])
def test_clip_grad_norm_complex(norm_type, foreach, dtypes):
    same_rounded(lambda t: _complex_clip(t, norm_type, foreach, [getattr(t, d) for d in dtypes]), torch, ft)


_INT_CASES = {
    "long": lambda t: t.nn.utils.get_total_norm([t.tensor([3, 4])]),
    "after_float": lambda t: t.nn.utils.get_total_norm([t.ones(2), t.tensor([3, 4])]),
    "bool": lambda t: t.nn.utils.get_total_norm([t.tensor([True])]),
    "int32_inf": lambda t: t.nn.utils.get_total_norm(t.tensor([3, 4], dtype=t.int32), "inf"),
    "foreach": lambda t: t.nn.utils.get_total_norm([t.tensor([3, 4])], foreach=True),
}


@pytest.mark.parametrize("case", sorted(_INT_CASES))
def test_total_norm_refuses_integers(case):
    kind, _ = same_rounded(_INT_CASES[case], torch, ft)
    assert kind == "RuntimeError"


def _int_grads(t, fn, total_dtype):
    x = t.tensor([3, 4])
    x.grad = t.tensor([1, 2])
    if fn == "norm":
        return t.nn.utils.clip_grad_norm_([x], 1.0)
    return t.nn.utils.clip_grads_with_norm_([x], 1.0, t.tensor(5, dtype=getattr(t, total_dtype)))


@pytest.mark.parametrize("fn,total_dtype", [("norm", None), ("with", "float32"), ("with", "float64"),
                                            ("with", "int64")])
def test_clip_integer_grads(fn, total_dtype):
    kind, _ = same_rounded(lambda t: _int_grads(t, fn, total_dtype), torch, ft)
    assert kind == "RuntimeError"


# ---- rnn utilities ----------------------------------------------------------------------------------------------
def _packed(t):
    return t.nn.utils.rnn.pack_sequence([t.tensor([1., 2, 3]), t.tensor([4.])])


_TO_CASES = {
    "kw_copy": lambda t: _packed(t).to(dtype=t.bfloat16, copy=True),
    "kw_copy_false": lambda t: _packed(t).to(dtype=t.bfloat16, copy=False),
    "pos_copy": lambda t: _packed(t).to(t.float64, False, True),
    "pos_copy_device": lambda t: _packed(t).to("cpu", t.float64, False, True),
    "pos_copy_tensor": lambda t: _packed(t).to(t.ones(1, dtype=t.float64), False, False),
    "cpu_copy_dtype": lambda t: _packed(t).cpu(dtype=t.float64, copy=True),
    "same_kw_copy_false": lambda t: str(_packed(t).to(t.float32, copy=False).data.dtype),
    "pos_non_blocking": lambda t: str(_packed(t).to(t.float64, True).data.dtype),
}


@pytest.mark.parametrize("case", sorted(_TO_CASES))
def test_packed_sequence_to_refuses_copy(case):
    """PackedSequence.to parses its arguments again (torch's _parse_to) once the data changed: a copy argument
    (keyword or positional, True or False) is refused."""
    same_rounded(_TO_CASES[case], torch, ft)


_PAD_CASES = {
    "first_0d": lambda t: t.nn.utils.rnn.pad_sequence([t.tensor(1.), t.tensor(2.)]),
    "single_0d_bf": lambda t: t.nn.utils.rnn.pad_sequence([t.tensor(1.)], batch_first=True),
    "single_0d_left": lambda t: t.nn.utils.rnn.pad_sequence([t.tensor(1.)], padding_side="left"),
    "later_0d": lambda t: t.nn.utils.rnn.pad_sequence([t.ones(2), t.tensor(2.)]),
    "later_0d_2d": lambda t: t.nn.utils.rnn.pad_sequence([t.ones(2, 3), t.ones(1), t.tensor(2.)]),
    "0d_after_bad_trailing": lambda t: t.nn.utils.rnn.pad_sequence([t.ones(2, 3), t.ones(2, 4), t.tensor(2.)]),
}


@pytest.mark.parametrize("case", sorted(_PAD_CASES))
def test_pad_sequence_zero_dim(case):
    kind, _ = same_rounded(_PAD_CASES[case], torch, ft)
    assert kind != "ok"


def _pack_lengths(t, lengths, enforce_sorted, batch_first):
    padded = t.ones(3, 3, 2)
    lens = lengths(t)
    pk = t.nn.utils.rnn.pack_padded_sequence(padded, lens, batch_first=batch_first, enforce_sorted=enforce_sorted)
    return pk.batch_sizes


_LENGTHS = {
    "2d": lambda t: t.tensor([[2, 3, 1]]),
    "2d_sorted": lambda t: t.tensor([[3, 2, 1]]),
    "column": lambda t: t.tensor([[3], [2], [1]]),
    "0d": lambda t: t.tensor(3),
    "float_2d": lambda t: t.tensor([[3., 2., 1.]]),
    "nested_list": lambda t: [[3, 2, 1]],
    "float_1d": lambda t: t.tensor([3., 2., 1.]),
    "list_with_0d": lambda t: [3, 2, t.tensor(1)],
}


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("lengths", sorted(_LENGTHS))
def test_pack_padded_sequence_lengths_shape(lengths, enforce_sorted, batch_first):
    """Lengths of the wrong dimension: torch sorts them (enforce_sorted=False) and index_select's 2-D order is
    its IndexError; else _pack_padded_sequence's RuntimeError, naming them as the int64 tensor it made."""
    same_rounded(lambda t: _pack_lengths(t, _LENGTHS[lengths], enforce_sorted, batch_first), torch, ft)


# ---- "must be Tensor": position given only for a positional argument ---------------------------------------------
_X = {"torch": torch.ones(2, 2), "ft": ft.ones(2, 2)}


def _x(t):
    return _X["torch" if t is torch else "ft"]


_MUST_BE_TENSOR = {
    "linear_pos": lambda t: t.nn.functional.linear([1., 2.], _x(t)),
    "linear_obj": lambda t: t.nn.functional.linear(object(), _x(t)),
    "linear_weight_pos": lambda t: t.nn.functional.linear(_x(t), "a"),
    "linear_bias_pos": lambda t: t.nn.functional.linear(_x(t), _x(t), "b"),
    "linear_kw": lambda t: t.nn.functional.linear(input=[1., 2.], weight=_x(t)),
    "linear_weight_kw": lambda t: t.nn.functional.linear(_x(t), weight="a"),
    "linear_bias_kw": lambda t: t.nn.functional.linear(_x(t), _x(t), bias="b"),
    "module_linear": lambda t: t.nn.Linear(2, 2)((1, 2)),
    "module_linear_packed": lambda t: t.nn.Linear(2, 2)(_packed(t)),
    "F_relu": lambda t: t.nn.functional.relu([1.]),
    "F_relu_kw": lambda t: t.nn.functional.relu(input=[1.]),
    "relu": lambda t: t.relu([1.]),
    "relu_kw": lambda t: t.relu(input=[1.]),
    "exp": lambda t: t.exp([1.]),
    "exp_kw": lambda t: t.exp(input=[1.]),
    "tanh_kw_tuple": lambda t: t.tanh(input=(1,)),
    "matmul": lambda t: t.matmul(_x(t), [1.]),
    "matmul_kw": lambda t: t.matmul(_x(t), other=[1.]),
    "mm_first": lambda t: t.mm([1.], _x(t)),
    "add_first": lambda t: t.add([1.], _x(t)),
    "add_str": lambda t: t.add(_x(t), "a"),
    "add_kw": lambda t: t.add(_x(t), other=[1.]),
    "mul_object": lambda t: t.mul(_x(t), object()),
    "bmm": lambda t: t.bmm(_x(t), [1.]),
    "method_add": lambda t: _x(t).add([1.]),
    "method_add_kw": lambda t: _x(t).add(other=[1.]),
    "method_matmul": lambda t: _x(t).matmul([1.]),
    "method_mm": lambda t: _x(t).mm("s"),
    "method_maximum": lambda t: _x(t).maximum([1.]),
    "maximum": lambda t: t.maximum(_x(t), [1.]),
    "maximum_kw": lambda t: t.maximum(_x(t), other=[1.]),
    "dot": lambda t: t.dot(t.ones(2), [1., 1.]),
    "method_dot": lambda t: t.ones(2).dot([1., 1.]),
    "outer_first": lambda t: t.outer([1.], t.ones(2)),
    "addcmul_method": lambda t: t.ones(2).addcmul(t.ones(2), [1.]),
    "addcmul_method_value": lambda t: t.ones(2).addcmul(t.ones(2), [1.], value=2),
    "addcmul": lambda t: t.addcmul(t.ones(2), t.ones(2), [1.]),
    "inplace_add": lambda t: t.ones(2).add_([1.]),
    "inplace_add_kw": lambda t: t.ones(2).add_(other=[1.]),
    "inplace_mul_str": lambda t: t.ones(2).mul_("a"),
    "Tensor_add": lambda t: t.Tensor.add(t.ones(2), [1.]),
    "star_args": lambda t: t.add(*[t.ones(2), [1.]]),
    "F_silu": lambda t: t.nn.functional.silu([1.]),
    "F_gelu": lambda t: t.nn.functional.gelu([1.]),
    "F_layer_norm": lambda t: t.nn.functional.layer_norm([1.], (1,)),
    "F_embedding": lambda t: t.nn.functional.embedding([1], _x(t)),
    "F_embedding_kw": lambda t: t.nn.functional.embedding(input=[1], weight=_x(t)),
    # (failing in the op's argument preparation or kernel build before: the parser's TypeError first)
    "sum": lambda t: t.sum([1.]),
    "mean": lambda t: t.mean([1.]),
    "softmax_kw": lambda t: t.softmax([1.], dim=0),
    "abs_float": lambda t: t.abs(3.0),
    "exp_int": lambda t: t.exp(2),
    "abs_ndarray": lambda t: t.abs(np.ones(2)),
    "abs_ndarray_0d": lambda t: t.abs(np.array(1.)),
    "abs_numpy_scalar": lambda t: t.abs(np.float32(1.)),
    "add_ndarray": lambda t: t.add(t.ones(2), np.array([1., 2.])),
    "add_ndarray_0d": lambda t: t.add(t.ones(2), np.array(1.)),
}


@pytest.mark.parametrize("case", sorted(_MUST_BE_TENSOR))
def test_must_be_tensor_message(case):
    """torch's argument parser: "<op>(): argument '<name>' (position <n>) must be Tensor, not <type>" with the
    position only for a positional argument (a method's self uncounted; an in-place form named op_)."""
    kind, msg = same_rounded(_MUST_BE_TENSOR[case], torch, ft)
    assert kind == "TypeError" and "must be Tensor" in msg


# ---- grad_fn names of in-place random fills (and fill) on a tensor in the graph ------------------------------------
_FILLS = ["uniform_()", "uniform_(-1, 1)", "normal_()", "normal_(1., 2.)", "bernoulli_()", "bernoulli_(0.5)",
          "bernoulli_(0.5, generator=t.Generator())", "bernoulli_(t.full((3, 3), 0.5))",
          "bernoulli_(t.tensor(0.5))", "exponential_()", "random_()"]


def _fill_graph(t, op):
    x = t.ones(3, 3, requires_grad=True)
    w = x * 1
    eval("w." + op, {"t": t, "w": w})
    (w * 2).sum().backward()
    node = w.grad_fn
    shown = [type(n).__name__ if n is not None else None for n, _ in node.next_functions]
    # (random_fill's exponential_ / random_ still show copy_'s second input: names only there)
    return type(node).__name__, (None if op in ("exponential_()", "random_()") else shown), x.grad


def _fill_view(t, op):
    x = t.ones(3, 3, requires_grad=True)
    w = x * 1
    v = w[0]
    eval("v." + op, {"t": t, "v": v})
    w.sum().backward()
    return type(w.grad_fn).__name__, type(v.grad_fn).__name__, x.grad


@pytest.mark.parametrize("op", _FILLS)
def test_random_fill_grad_fn(op):
    """torch's nodes: UniformBackward0, NormalBackward0, BernoulliBackward2 (float p) / 1 (tensor p), with self
    as their input (a tensor p too); the gradient through them is zero. Through a view: CopySlices."""
    same_rounded(lambda t: _fill_graph(t, op), torch, ft)
    if "full" not in op:
        same_rounded(lambda t: _fill_view(t, op), torch, ft)


def test_random_fill_plain_tensor():
    same_rounded(lambda t: [t.ones(3).uniform_().grad_fn, t.ones(3).normal_().requires_grad,
                            t.nn.init.uniform_(t.ones(3, requires_grad=True) * 1).grad_fn.name()], torch, ft)


@pytest.mark.parametrize("value", ["2.", "2", "t.tensor(2.)", "t.tensor(2., requires_grad=True)"])
def test_fill_out_of_place_grad_fn(value):
    """torch.fill: FillBackward0 for a number, FillBackward1 for a tensor."""
    def fn(t):
        x = t.ones(3, requires_grad=True)
        r = t.fill(x * 1, eval(value, {"t": t}))
        r.sum().backward()
        return type(r.grad_fn).__name__, x.grad
    same_rounded(fn, torch, ft)
