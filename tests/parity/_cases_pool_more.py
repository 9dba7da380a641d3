"""Op-table sweep cases for functorch_lite/ops/pool_more.py (adaptive_max_pool3d, max unpooling, rrelu, channel
shuffle); merged into _op_cases.py. ``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))``."""
import numpy as np

R = np.random.default_rng(23)


def rnd(*s):
    return R.standard_normal(s)


def _F(m):
    return m.nn.functional


def _window_indices(lead, out, k=2):
    """Distinct flat indices of one position inside each k-wide window (what max_pool*d(return_indices) gives)."""
    nd = len(out)
    size = [o * k for o in out]
    off = R.integers(0, k, lead + out + (nd,))
    flat = np.zeros(lead + out, np.int64)
    for d in range(nd):
        pos = np.arange(out[d]).reshape([-1 if i == d else 1 for i in range(nd)]) * k + off[..., d]
        flat = flat * size[d] + pos
    return flat


_I2 = _window_indices((2, 3), (2, 3))
_I3 = _window_indices((1, 2), (2, 2, 2))

CASES = {
    "adaptive_max_pool3d": ([rnd(1, 2, 5, 4, 6)], lambda m, x: _F(m).adaptive_max_pool3d(x, (2, 3, 4))),
    "max_unpool2d": ([rnd(2, 3, 2, 3)], lambda m, x: _F(m).max_unpool2d(x, m.tensor(_I2), 2)),
    "max_unpool3d": ([rnd(1, 2, 2, 2, 2)], lambda m, x: _F(m).max_unpool3d(x, m.tensor(_I3), 2)),
    "_rrelu": ([rnd(3, 5)], lambda m, x: _F(m).rrelu(x, 0.1, 0.4)),
    "channel_shuffle": ([rnd(2, 6, 3)], lambda m, x: _F(m).channel_shuffle(x, 3)),
    # native_channel_shuffle has no derivative (its grad_fn raises, as PyTorch's): its values reach x's gradient
    "native_channel_shuffle": ([rnd(2, 4, 3)], lambda m, x: x * m.native_channel_shuffle(x.detach(), 2)),
}

FORWARD_ONLY: dict = {}
