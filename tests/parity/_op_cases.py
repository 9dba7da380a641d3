"""Sample calls for every op of the op table, shared by the gradient sweep (test_grad_sweep.py)
and the dtype sweep (test_op_table_sweep.py). ``CASES[name] = (input arrays, fn(mod, *tensors))``
for differentiable ops; ``FORWARD_ONLY`` likewise for ops without a gradient."""
import numpy as np
import torch

R = np.random.default_rng(7)


def pos(*s):
    return R.uniform(0.5, 2.0, s)


def rnd(*s):
    return R.standard_normal(s)


def unit(*s):
    return R.uniform(-0.8, 0.8, s)


def idx(mod, v):
    return mod.tensor(np.asarray(v, dtype=np.int64))


def mask(mod, m):
    return mod.tensor(np.asarray(m, dtype=bool))


M = [[True, False, True, False], [False, True, True, False], [True, True, False, False]]

# name -> (input arrays (each requires grad), fn(mod, *tensors))
CASES = {
    "add": ([rnd(3, 4), rnd(4)], lambda m, a, b: m.add(a, b, alpha=2)),
    "sub": ([rnd(3, 4), rnd(3, 1)], lambda m, a, b: a - b),
    "rsub": ([rnd(3)], lambda m, a: 2.0 - a),
    "mul": ([rnd(3, 4), rnd(4)], lambda m, a, b: a * b),
    "div": ([rnd(3, 4), pos(4)], lambda m, a, b: a / b),
    "true_divide": ([rnd(3), pos(3)], lambda m, a, b: m.true_divide(a, b)),
    "remainder": ([pos(5) * 3, pos(5)], lambda m, a, b: m.remainder(a, b)),
    "fmod": ([pos(5) * 3, pos(5)], lambda m, a, b: m.fmod(a, b)),
    "pow": ([pos(3, 4), rnd(3, 4)], lambda m, a, b: a ** b),
    "maximum": ([rnd(6), rnd(6)], lambda m, a, b: m.maximum(a, b)),
    "minimum": ([rnd(6), rnd(6)], lambda m, a, b: m.minimum(a, b)),
    "fmax": ([rnd(6), rnd(6)], lambda m, a, b: m.fmax(a, b)),
    "fmin": ([rnd(6), rnd(6)], lambda m, a, b: m.fmin(a, b)),
    "atan2": ([rnd(5), pos(5)], lambda m, a, b: m.atan2(a, b)),
    "hypot": ([pos(5), pos(5)], lambda m, a, b: m.hypot(a, b)),
    "copysign": ([pos(5), rnd(5)], lambda m, a, b: m.copysign(a, b)),
    "lerp": ([rnd(5), rnd(5), unit(5)], lambda m, a, b, w: m.lerp(a, b, w)),
    "xlogy": ([pos(5), pos(5)], lambda m, a, b: m.xlogy(a, b)),
    "neg": ([rnd(4)], lambda m, a: -a),
    "abs": ([rnd(4)], lambda m, a: a.abs()),
    "sign": ([rnd(4)], lambda m, a: a.sign()),
    "sgn": ([rnd(4)], lambda m, a: a.sgn()),
    "positive": ([rnd(4)], lambda m, a: m.positive(a)),
    "exp2": ([rnd(4)], lambda m, a: a.exp2()),
    "expm1": ([rnd(4)], lambda m, a: a.expm1()),
    "log2": ([pos(4)], lambda m, a: a.log2()),
    "log10": ([pos(4)], lambda m, a: a.log10()),
    "log1p": ([pos(4)], lambda m, a: a.log1p()),
    "rsqrt": ([pos(4)], lambda m, a: a.rsqrt()),
    "tan": ([unit(4)], lambda m, a: a.tan()),
    "asin": ([unit(4)], lambda m, a: a.asin()),
    "acos": ([unit(4)], lambda m, a: a.acos()),
    "atan": ([rnd(4)], lambda m, a: a.atan()),
    "sinh": ([rnd(4)], lambda m, a: a.sinh()),
    "cosh": ([rnd(4)], lambda m, a: a.cosh()),
    "asinh": ([rnd(4)], lambda m, a: a.asinh()),
    "acosh": ([pos(4) + 1.0], lambda m, a: a.acosh()),
    "atanh": ([unit(4)], lambda m, a: a.atanh()),
    "erf": ([rnd(4)], lambda m, a: a.erf()),
    "erfc": ([rnd(4)], lambda m, a: a.erfc()),
    "erfinv": ([unit(4)], lambda m, a: a.erfinv()),
    "reciprocal": ([pos(4)], lambda m, a: a.reciprocal()),
    "lgamma": ([pos(4)], lambda m, a: a.lgamma()),
    "digamma": ([pos(4)], lambda m, a: a.digamma()),
    "floor": ([rnd(4)], lambda m, a: a.floor()),
    "ceil": ([rnd(4)], lambda m, a: a.ceil()),
    "trunc": ([rnd(4)], lambda m, a: a.trunc()),
    "frac": ([rnd(4)], lambda m, a: a.frac()),
    "round": ([rnd(4)], lambda m, a: a.round()),
    "square": ([rnd(4)], lambda m, a: a.square()),
    "gelu": ([rnd(6)], lambda m, a: m.nn.functional.gelu(a) if m is torch else m.gelu(a)),
    "silu": ([rnd(6)], lambda m, a: m.nn.functional.silu(a) if m is torch else m.silu(a)),
    "mish": ([rnd(6)], lambda m, a: m.nn.functional.mish(a) if m is torch else m.mish(a)),
    "nan_to_num": ([rnd(4)], lambda m, a: m.nan_to_num(a)),
    "clamp_min": ([rnd(6)], lambda m, a: m.clamp_min(a, 0.3)),
    "clamp_max": ([rnd(6)], lambda m, a: m.clamp_max(a, 0.3)),
    "where": ([rnd(3, 4), rnd(3, 4)], lambda m, a, b: m.where(mask(m, M), a, b)),
    "masked_fill": ([rnd(3, 4)], lambda m, a: a.masked_fill(mask(m, M), 0.5)),
    "view": ([rnd(3, 4)], lambda m, a: a.view(2, 6)),
    "reshape": ([rnd(3, 4)], lambda m, a: a.t().reshape(12)),
    "transpose": ([rnd(2, 3, 4)], lambda m, a: a.transpose(0, 2)),
    "t": ([rnd(3, 4)], lambda m, a: a.t()),
    "permute": ([rnd(2, 3, 4)], lambda m, a: a.permute(2, 0, 1)),
    "expand": ([rnd(3, 1)], lambda m, a: a.expand(2, 3, 4)),
    "unsqueeze": ([rnd(3, 4)], lambda m, a: a.unsqueeze(1)),
    "squeeze": ([rnd(3, 1, 4)], lambda m, a: a.squeeze(1)),
    "unflatten": ([rnd(3, 12)], lambda m, a: a.unflatten(1, (3, 4))),
    "slice": ([rnd(6, 4)], lambda m, a: a[1:5:2]),
    "narrow": ([rnd(6, 4)], lambda m, a: a.narrow(1, 1, 2)),
    "select": ([rnd(6, 4)], lambda m, a: a.select(1, 2)),
    # split / chunk / unbind: one multi-output op (views sharing one grad_fn)
    # (views of the pieces carry the gradient too: the attention-block pattern split -> view -> transpose)
    "split_with_sizes": ([rnd(6, 4)], lambda m, a: m.cat([p * (i + 1) for i, p in enumerate(a.split([1, 3, 2]))])
                         + m.stack(a.unbind(0)) + m.cat(a.chunk(2, 1), 1) * 0.5 + m.cat(a.split(4), 0)
                         + m.cat([p.view(-1).view(p.shape).t().t() for p in a.split(2, 0)], 0)
                         + m.stack([u.unsqueeze(0).squeeze(0) for u in a.unbind(1)], 1)),
    "diagonal": ([rnd(4, 5)], lambda m, a: a.diagonal(1)),
    "movedim": ([rnd(2, 3, 4)], lambda m, a: m.movedim(a, 0, 2)),
    "clone": ([rnd(3, 4)], lambda m, a: a.clone()),
    "flip": ([rnd(3, 4)], lambda m, a: a.flip(0, 1)),
    "roll": ([rnd(3, 4)], lambda m, a: a.roll(2, 1)),
    "repeat": ([rnd(2, 3)], lambda m, a: a.repeat(2, 1, 2)),
    "tile": ([rnd(2, 3)], lambda m, a: a.tile((2, 2))),
    "tril": ([rnd(4, 4)], lambda m, a: a.tril(-1)),
    "triu": ([rnd(4, 4)], lambda m, a: a.triu(1)),
    "cat": ([rnd(2, 3), rnd(4, 3)], lambda m, a, b: m.cat([a, b], 0)),
    "stack": ([rnd(2, 3), rnd(2, 3)], lambda m, a, b: m.stack([a, b], 1)),
    "broadcast_to": ([rnd(3, 1)], lambda m, a: m.broadcast_to(a, (2, 3, 4))),
    "matmul": ([rnd(2, 3, 4), rnd(4, 5)], lambda m, a, b: a @ b),
    "mm": ([rnd(3, 4), rnd(4, 5)], lambda m, a, b: m.mm(a, b)),
    "bmm": ([rnd(2, 3, 4), rnd(2, 4, 5)], lambda m, a, b: m.bmm(a, b)),
    "mv": ([rnd(3, 4), rnd(4)], lambda m, a, b: m.mv(a, b)),
    "dot": ([rnd(4), rnd(4)], lambda m, a, b: m.dot(a, b)),
    "outer": ([rnd(3), rnd(4)], lambda m, a, b: m.outer(a, b)),
    "inner": ([rnd(2, 3), rnd(4, 3)], lambda m, a, b: m.inner(a, b)),
    "addmm": ([rnd(5), rnd(3, 4), rnd(4, 5)], lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0)),
    "baddbmm": ([rnd(2, 3, 5), rnd(2, 3, 4), rnd(2, 4, 5)], lambda m, c, a, b: m.baddbmm(c, a, b, alpha=0.5)),
    "_einsum": ([rnd(2, 3), rnd(3, 4)], lambda m, a, b: m.einsum("ij,jk->ik", a, b)),
    "sum": ([rnd(3, 4)], lambda m, a: a.sum(1)),
    "mean": ([rnd(3, 4)], lambda m, a: a.mean((0, 1))),
    "prod": ([pos(3, 4)], lambda m, a: a.prod(1)),
    "max": ([rnd(3, 4)], lambda m, a: a.max()),
    "min": ([rnd(3, 4)], lambda m, a: a.min()),
    "max_dim": ([rnd(3, 4)], lambda m, a: a.max(dim=1).values),
    "min_dim": ([rnd(3, 4)], lambda m, a: a.min(dim=0).values),
    "amax": ([rnd(3, 4)], lambda m, a: a.amax(1)),
    "amin": ([rnd(3, 4)], lambda m, a: a.amin(0)),
    "aminmax": ([rnd(3, 4)], lambda m, a: m.aminmax(a, dim=1).max),
    "var": ([rnd(3, 4)], lambda m, a: a.var(1)),
    "std": ([rnd(3, 4)], lambda m, a: a.std(0, correction=0)),
    "var_mean": ([rnd(3, 4)], lambda m, a: m.var_mean(a, 1)[0]),
    "std_mean": ([rnd(3, 4)], lambda m, a: m.std_mean(a, 1)[1]),
    "norm": ([rnd(3, 4)], lambda m, a: a.norm(dim=1)),
    "frobenius_norm": ([rnd(2, 3, 4)], lambda m, a: m.frobenius_norm(a, (0, 2))),
    "logsumexp": ([rnd(3, 4)], lambda m, a: a.logsumexp(1)),
    "cumsum": ([rnd(3, 4)], lambda m, a: a.cumsum(1)),
    "cumprod": ([pos(3, 4)], lambda m, a: a.cumprod(1)),
    "softmax": ([rnd(3, 4)], lambda m, a: a.softmax(-1)),
    "log_softmax": ([rnd(3, 4)], lambda m, a: a.log_softmax(0)),
    "topk": ([rnd(3, 6)], lambda m, a: a.topk(2).values),
    "sort": ([rnd(3, 6)], lambda m, a: a.sort(1, descending=True).values),
    "median": ([rnd(3, 5)], lambda m, a: a.median()),
    "median_dim": ([rnd(3, 5)], lambda m, a: a.median(1).values),
    "index": ([rnd(5, 4)], lambda m, a: a[idx(m, [0, 3, 3])]),
    "index_put": ([rnd(5, 4), rnd(2, 4)], lambda m, a, v: a.index_put((idx(m, [1, 3]),), v)),
    "alias": ([rnd(3, 4)], lambda m, a: a[...]),
    "gather": ([rnd(3, 4)], lambda m, a: a.gather(1, idx(m, [[0, 1], [3, 3], [2, 0]]))),
    "scatter": ([rnd(3, 4), rnd(3, 2)], lambda m, a, s: a.scatter(1, idx(m, [[0, 1], [3, 2], [2, 0]]), s)),
    "scatter_reduce": ([rnd(3, 4), rnd(3, 2)],
                       lambda m, a, s: a.scatter_reduce(1, idx(m, [[0, 1], [3, 3], [2, 0]]), s, "sum")),
    "index_select": ([rnd(5, 4)], lambda m, a: a.index_select(0, idx(m, [4, 0, 4]))),
    "index_add": ([rnd(5, 4), rnd(2, 4)], lambda m, a, s: a.index_add(0, idx(m, [1, 1]), s, alpha=2.0)),
    "index_copy": ([rnd(5, 4), rnd(2, 4)], lambda m, a, s: a.index_copy(0, idx(m, [1, 3]), s)),
    "index_fill": ([rnd(5, 4)], lambda m, a: a.index_fill(1, idx(m, [0, 2]), -1.0)),
    "take": ([rnd(3, 4)], lambda m, a: m.take(a, idx(m, [0, 5, 11]))),
    "take_along_dim": ([rnd(3, 4)], lambda m, a: m.take_along_dim(a, idx(m, [[0], [3], [1]]), dim=1)),
    "masked_select": ([rnd(3, 4)], lambda m, a: a.masked_select(mask(m, M))),
    "masked_scatter": ([rnd(3, 4), rnd(12)], lambda m, a, s: a.masked_scatter(mask(m, M), s)),
    "_to_copy": ([rnd(3)], lambda m, a: a.to(m.float64) * a.to(m.float16).to(m.float64)),
    "copy": ([rnd(3, 4), rnd(4)], lambda m, a, s: (a * 1).copy_(s)),
    "fill": ([rnd(3, 4)], lambda m, a: (a * 2).fill_(3.0) + a),
    "zero": ([rnd(3, 4)], lambda m, a: (a * 2).zero_() + a),
    "linear": ([rnd(3, 4), rnd(5, 4), rnd(5)], lambda m, x, w, b: m.nn.functional.linear(x, w, b)),
    "mse_loss": ([rnd(3, 4), rnd(3, 4)], lambda m, a, b: m.nn.functional.mse_loss(a, b, reduction="none")),
    "cross_entropy": ([rnd(3, 4)], lambda m, a: m.nn.functional.cross_entropy(a, idx(m, [0, 3, 1]), reduction="none")),
    "_linear_cross_entropy_chunked": ([rnd(5, 3), rnd(4, 3), rnd(4)], lambda m, x, w, b: (
        m.nn.functional.linear_cross_entropy)(x, w, idx(m, [0, 3, 1, 2, 3]), linear_bias=b, reduction="none",
        options=m.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None))),
    "nll_loss": ([rnd(3, 4)], lambda m, a: m.nn.functional.nll_loss(a, idx(m, [0, 3, 1]), reduction="none")),
    # p tiny: both libraries keep every element (scale 1/(1-1e-12)), so the draw is deterministic
    "_dropout": ([rnd(3, 4)], lambda m, a: m.nn.functional.dropout(a, 1e-12)),
    "relu": ([rnd(6)], lambda m, a: a.relu()),
    "clamp": ([rnd(6)], lambda m, a: a.clamp(-0.5, 0.5)),
    # floor_divide has no derivative (its grad_fn raises, as PyTorch's): its values reach the gradient of a
    "floor_divide": ([pos(5) * 3, pos(5)], lambda m, a, b: a * (a.detach() // b.detach())),
}
SIMPLE_UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"]
for _n in SIMPLE_UNARY:
    CASES[_n] = ([pos(4)], (lambda name: lambda m, a: getattr(a, name)())(_n))


FORWARD_ONLY = {
    "eq": ([rnd(4), rnd(4)], lambda m, a, b: a == b),
    "ne": ([rnd(4), rnd(4)], lambda m, a, b: a != b),
    "lt": ([rnd(4), rnd(4)], lambda m, a, b: a < b),
    "le": ([rnd(4), rnd(4)], lambda m, a, b: a <= b),
    "gt": ([rnd(4), rnd(4)], lambda m, a, b: a > b),
    "ge": ([rnd(4), rnd(4)], lambda m, a, b: a >= b),
    "isclose": ([rnd(4), rnd(4)], lambda m, a, b: m.isclose(a, b, atol=0.5)),
    "logical_and": ([rnd(4), rnd(4)], lambda m, a, b: m.logical_and(a, b)),
    "logical_or": ([rnd(4), rnd(4)], lambda m, a, b: m.logical_or(a, b)),
    "logical_xor": ([rnd(4), rnd(4)], lambda m, a, b: m.logical_xor(a, b)),
    "logical_not": ([rnd(4)], lambda m, a: m.logical_not(a)),
    "bitwise_and": ([pos(4) * 9, pos(4) * 9], lambda m, a, b: a & b),
    "bitwise_or": ([pos(4) * 9, pos(4) * 9], lambda m, a, b: a | b),
    "bitwise_xor": ([pos(4) * 9, pos(4) * 9], lambda m, a, b: a ^ b),
    "bitwise_not": ([pos(4) * 9], lambda m, a: ~a),
    "bitwise_left_shift": ([pos(4) * 9, pos(4)], lambda m, a, b: a << b),
    "bitwise_right_shift": ([pos(4) * 9, pos(4)], lambda m, a, b: a >> b),
    "isnan": ([rnd(4)], lambda m, a: a.isnan()),
    "isinf": ([rnd(4)], lambda m, a: a.isinf()),
    "isfinite": ([rnd(4)], lambda m, a: a.isfinite()),
    "isposinf": ([rnd(4)], lambda m, a: a.isposinf()),
    "isneginf": ([rnd(4)], lambda m, a: a.isneginf()),
    "signbit": ([rnd(4)], lambda m, a: a.signbit()),
    "argmax": ([rnd(3, 4)], lambda m, a: a.argmax(1)),
    "argmin": ([rnd(3, 4)], lambda m, a: a.argmin()),
    "all": ([rnd(3, 4)], lambda m, a: a.all(1)),
    "any": ([rnd(3, 4)], lambda m, a: a.any()),
    "count_nonzero": ([rnd(3, 4)], lambda m, a: m.count_nonzero(a, 0)),
    "argsort": ([rnd(3, 4)], lambda m, a: a.argsort(1)),
    "nonzero": ([rnd(3, 4)], lambda m, a: (a > 0).nonzero()),
    "nonzero_static": ([rnd(3, 4)], lambda m, a: a.nonzero_static(size=9, fill_value=-5)),
}


def _merge():
    """Cases of the nn op files live beside their tests (one file per area)."""
    import _cases_attn, _cases_conv, _cases_loss, _cases_norm, _cases_quant, _cases_complex, _cases_added
    import _cases_rnn
    for m in (_cases_conv, _cases_norm, _cases_attn, _cases_loss, _cases_quant, _cases_complex, _cases_added,
              _cases_rnn):
        CASES.update(m.CASES)
        FORWARD_ONLY.update(m.FORWARD_ONLY)


_merge()

import _cases_quant  # noqa: E402  (the differentiable quantization ops besides NF4's: _scaled_mm, fake quantization)
CASES.update(_cases_quant.GRAD_CASES)

import _cases_linalg  # noqa: E402  (torch.linalg, unique / bincount / histc / quantile / searchsorted, cdist)
CASES.update(_cases_linalg.CASES)
FORWARD_ONLY.update(_cases_linalg.FORWARD_ONLY)

import _cases_linalg_more  # noqa: E402  (LU, triangular / Cholesky solves, matrix_exp, eig, Householder, LDL)
CASES.update(_cases_linalg_more.CASES)
FORWARD_ONLY.update(_cases_linalg_more.FORWARD_ONLY)

import _cases_dist  # noqa: E402  (the private ops of functorch_lite/distributions/_ops.py)
CASES.update(_cases_dist.CASES)
FORWARD_ONLY.update(_cases_dist.FORWARD_ONLY)

import _cases_shape, _cases_tensorops, _cases_special, _cases_fft, _cases_nnextra  # noqa: E402,E401  (later areas, one file each)
for _m in (_cases_shape, _cases_tensorops, _cases_special, _cases_fft, _cases_nnextra,):
    CASES.update(_m.CASES)
    FORWARD_ONLY.update(_m.FORWARD_ONLY)

import _cases_parametrize  # noqa: E402  (torch._weight_norm_interface)
CASES.update(_cases_parametrize.CASES)
FORWARD_ONLY.update(_cases_parametrize.FORWARD_ONLY)

import _cases_tensor_more  # noqa: E402  (tensor_more / tensor_math / random_fill: *_copy, scatters, random draws)
CASES.update(_cases_tensor_more.CASES)
FORWARD_ONLY.update(_cases_tensor_more.FORWARD_ONLY)

import _cases_pool_more  # noqa: E402  (adaptive_max_pool3d, max_unpool2d/3d, rrelu, channel_shuffle)
CASES.update(_cases_pool_more.CASES)
FORWARD_ONLY.update(_cases_pool_more.FORWARD_ONLY)

import _cases_pool_fractional  # noqa: E402  (fractional_max_pool2d/3d)
CASES.update(_cases_pool_fractional.CASES)
FORWARD_ONLY.update(_cases_pool_fractional.FORWARD_ONLY)

import _cases_nn_sampling  # noqa: E402  (grid_sampler, affine_grid_generator, embedding_bag, _ctc_loss)
CASES.update(_cases_nn_sampling.CASES)
FORWARD_ONLY.update(_cases_nn_sampling.FORWARD_ONLY)
