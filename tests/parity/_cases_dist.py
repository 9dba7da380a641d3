"""Op-table cases (gradient sweep, dtype sweep, autocast sweep) of the private ops of
functorch_lite/distributions/_ops.py, against their PyTorch counterparts: ``torch._standard_gamma``,
``torch.special.gammainc``, ``Dirichlet.rsample``; and ``torch.normal``'s op."""
import numpy as np
import torch

R = np.random.default_rng(11)


def _gamma(m, a):
    if m is torch:
        return torch._standard_gamma(a)
    return m.distributions._ops.standard_gamma(a)


def _gammainc(m, a, x):
    return torch.special.gammainc(a, x) if m is torch else m.distributions._ops.gammainc(a, x)


def _dirichlet(m, a):
    if m is torch:
        return torch.distributions.Dirichlet(a, validate_args=False).rsample()
    return m.distributions._ops.dirichlet_rsample(a)


CASES = {
    # the draws differ between the libraries (another random number generator): the case multiplies them by zero,
    # which keeps the dtype rules, the shape and a finite (zero) gradient through the draw
    "_dist_standard_gamma": ([R.uniform(0.5, 2.0, (3, 4))], lambda m, a: _gamma(m, a) * 0 + a),
    # PyTorch has no derivative of igamma in its first argument: detached in both
    "_dist_gammainc": ([R.uniform(0.5, 2.0, (5,)), R.uniform(0.2, 3.0, (5,))],
                       lambda m, a, x: _gammainc(m, a.detach(), x)),
    # (draws times zero, as _dist_standard_gamma's: a zero cotangent through torch's _DirichletBackward)
    "_dist_dirichlet": ([R.uniform(0.5, 2.0, (3, 4))], lambda m, a: _dirichlet(m, a) * 0 + a),
    # torch.normal(mean, std): no reparameterisation, zero gradients (NormalBackward3)
    "_normal": ([R.standard_normal((3, 4)), R.uniform(0.5, 2.0, (3, 4))], lambda m, a, b: m.normal(a, b) * 0 + a),
}
FORWARD_ONLY: dict = {}
