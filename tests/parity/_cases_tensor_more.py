"""Op-table sweep cases for functorch_lite/ops/tensor_more.py, tensor_math.py and random_fill.py (the *_copy ops,
scatter variants, index_reduce, put, renorm, ldexp, frexp, nextafter, histogram, poisson, binomial); merged into
_op_cases.py. ``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``; ``mod`` is torch or
functorch_lite. Random ops draw deterministically here (rate 0, probability 1)."""
import numpy as np

R = np.random.default_rng(23)


def _rnd(*s):
    return R.standard_normal(s)


def _idx(m, v):
    return m.tensor(np.asarray(v, dtype=np.int64))


_A = _rnd(4, 3)


def _splits(m, a):
    return (m.cat([p * (i + 1) for i, p in enumerate(m.split_copy(a, 2))]) + m.stack(m.unbind_copy(a, 0))
            + m.cat(m.unsafe_split_with_sizes(a, [1, 3])) + m.cat(m.unsafe_chunk(a, 2, 1), 1)
            + m.cat(m.split_with_sizes_copy(a, [3, 1])) * 0.5 + m.cat(m.unsafe_split(a, 3)))


CASES = {
    # (torch.segment_reduce over segments of lengths 2, 0, 3 along dim 0; sum / mean / max)
    "segment_reduce": ([_rnd(5, 3)], lambda m, a: m.segment_reduce(a, "sum", lengths=m.tensor([2, 0, 3])) +
                       m.segment_reduce(a, "max", lengths=m.tensor([2, 0, 3]), initial=0.0) +
                       m.segment_reduce(a, "mean", offsets=m.tensor([0, 2, 2, 5]), initial=1.0)),
    "view_copy": ([_A], lambda m, a: m.view_copy(a, (2, 6))),
    "permute_copy": ([_rnd(2, 3, 4)], lambda m, a: m.permute_copy(a, (2, 0, 1))),
    "transpose_copy": ([_A], lambda m, a: m.transpose_copy(a, 0, 1)),
    "t_copy": ([_A], lambda m, a: m.t_copy(a)),
    "squeeze_copy": ([_rnd(4, 1, 3)], lambda m, a: m.squeeze_copy(a, 1)),
    "unsqueeze_copy": ([_A], lambda m, a: m.unsqueeze_copy(a, -1)),
    "expand_copy": ([_rnd(4, 1)], lambda m, a: m.expand_copy(a, (2, 4, 3))),
    "select_copy": ([_A], lambda m, a: m.select_copy(a, 1, -1)),
    "slice_copy": ([_rnd(6, 3)], lambda m, a: m.slice_copy(a, 0, 1, None, 2)),
    "narrow_copy": ([_rnd(6, 3)], lambda m, a: m.narrow_copy(a, 0, -3, 2)),
    "as_strided_copy": ([_rnd(4, 3)], lambda m, a: m.as_strided_copy(a, (2, 2), (1, 3), 1)),
    # (input detached: torch 2.13's as_strided_scatter_backward gives the input the gradient of the positions src
    # overwrote, zeros elsewhere -- the reverse of the derivative, which functorch_lite computes)
    "as_strided_scatter": ([_rnd(4, 3), _rnd(2, 2)],
                           lambda m, a, s: m.as_strided_scatter(a.detach(), s, (2, 2), (1, 3), 1)),
    "diagonal_copy": ([_rnd(3, 4)], lambda m, a: m.diagonal_copy(a, -1)),
    "unfold_copy": ([_rnd(7)], lambda m, a: m.unfold_copy(a, 0, 3, 2)),
    "alias_copy": ([_A], lambda m, a: m.alias_copy(a)),
    "view_as_real_copy": ([_A, _A], lambda m, a, b: m.view_as_real_copy(m.complex(a.float(), b.float()))),
    "view_as_complex_copy": ([_A], lambda m, a: a * m.view_as_complex_copy(a.detach().float().view(2, 3, 2)).abs()
                             .view(6)[:1]),
    # detach_copy's grad_fn raises (NotImplemented, as PyTorch's): its values reach the gradient of a
    "detach_copy": ([_A], lambda m, a: a * m.detach_copy(a.detach())),
    "split_with_sizes_copy": ([_A], _splits),
    "slice_scatter": ([_rnd(5, 3), _rnd(2, 3)], lambda m, a, s: m.slice_scatter(a, s, 0, 1, None, 3)),
    "select_scatter": ([_A, _rnd(4)], lambda m, a, s: m.select_scatter(a, s, 1, -2)),
    "diagonal_scatter": ([_rnd(3, 4), _rnd(3)], lambda m, a, s: m.diagonal_scatter(a, s, 1)),
    "index_reduce": ([_rnd(4, 3), _rnd(3, 3)], lambda m, a, s: a.index_reduce(0, _idx(m, [0, 2, 0]), s, "prod")
                     + a.index_reduce(0, _idx(m, [3, 2, 3]), s, "amax", include_self=False)
                     + a.index_reduce(0, _idx(m, [1, 1, 0]), s, "mean") + a.index_reduce(0, _idx(m, [2, 0, 2]), s,
                                                                                         "amin")),
    "put": ([_A, _rnd(3)], lambda m, a, s: m.put(a, _idx(m, [0, 5, -1]), s) + a.put(_idx(m, [1, 1, 7]), s, True)),
    "renorm": ([_rnd(3, 4) * 2], lambda m, a: m.renorm(a, 2, 0, 1.5) + m.renorm(a, 1, 1, 2.0)),
    # (non-negative exponents: PyTorch's gradient for a negative integer exponent is 0, its integer pow(2, e))
    "ldexp": ([_A], lambda m, a: m.ldexp(a, _idx(m, [1, 0, 3]))),
    "frexp": ([_A], lambda m, a: m.frexp(a).mantissa + m.frexp(a).exponent),
    "nextafter": ([_A, _rnd(4, 3)], lambda m, a, b: m.nextafter(a, b)),
    "poisson": ([_A], lambda m, a: m.poisson(a * 0) + a),
    "binomial": ([_A], lambda m, a: a * m.binomial(a.detach().abs().ceil(), a.detach() * 0 + 1)),
}

def torch_edges(m, a):
    """Explicit bin edges for ``histogramdd`` (exact values: no linspace rounding in the comparison)."""
    return m.tensor([-2.0, -0.5, 0.0, 0.5, 2.0]).to(a.dtype)


FORWARD_ONLY = {
    "histogram": ([_rnd(20)], lambda m, a: m.cat(m.histogram(a, 4))),
    "histogramdd": ([_rnd(20)], lambda m, a: m.histogramdd(a.reshape(10, 2), [torch_edges(m, a)] * 2,
                                                           density=True).hist),
}
