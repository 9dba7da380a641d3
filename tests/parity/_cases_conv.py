"""Op-table sweep cases for the ops of functorch_lite/ops/conv.py; merged into _op_cases.py.

Every op there is differentiable, so all cases live in CASES (checked for gradients in float32/float64 and
for values or the raised exception type in float16/bfloat16/int64/bool)."""
import numpy as np

R = np.random.default_rng(11)


def rnd(*s):
    return R.standard_normal(s)


def _F(m):
    return m.nn.functional


CASES: dict = {
    "convolution": ([rnd(2, 3, 6, 5), rnd(4, 3, 3, 2), rnd(4)],
                    lambda m, x, w, b: _F(m).conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2))),
    "max_pool2d": ([rnd(2, 3, 7, 6)], lambda m, x: _F(m).max_pool2d(x, 3, 2, padding=1, ceil_mode=True)),
    "max_pool2d_with_indices": ([rnd(2, 3, 7, 6)],
                                lambda m, x: _F(m).max_pool2d(x, (2, 3), dilation=(2, 1), return_indices=True)[0]),
    "avg_pool2d": ([rnd(2, 3, 7, 6)],
                   lambda m, x: _F(m).avg_pool2d(x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False)),
    "adaptive_avg_pool2d": ([rnd(2, 3, 7, 6)], lambda m, x: _F(m).adaptive_avg_pool2d(x, (3, 4))),
    "max_pool3d": ([rnd(2, 2, 5, 4, 6)], lambda m, x: _F(m).max_pool3d(x, 3, 2, padding=1, ceil_mode=True)),
    "max_pool3d_with_indices": ([rnd(1, 2, 5, 4, 6)],
                                lambda m, x: _F(m).max_pool3d(x, 2, dilation=(1, 2, 1), return_indices=True)[0]),
    "avg_pool3d": ([rnd(2, 2, 5, 4, 6)],
                   lambda m, x: _F(m).avg_pool3d(x, 3, 2, padding=1, ceil_mode=True, count_include_pad=False)),
    "adaptive_avg_pool3d": ([rnd(2, 2, 5, 4, 7)], lambda m, x: _F(m).adaptive_avg_pool3d(x, (2, 3, 4))),
    "adaptive_max_pool2d": ([rnd(2, 3, 7, 6)], lambda m, x: _F(m).adaptive_max_pool2d(x, (3, 4))),
    "pad": ([rnd(2, 3, 4, 5)], lambda m, x: _F(m).pad(x, (1, 2, 3, 0), mode="reflect")),
    "_upsample": ([rnd(2, 3, 4, 5)],
                  lambda m, x: _F(m).interpolate(x, size=(7, 9), mode="bilinear", align_corners=False)),
    "_upsample_aa": ([rnd(2, 3, 8, 7)],
                     lambda m, x: _F(m).interpolate(x, size=(5, 3), mode="bilinear", antialias=True)),
}
FORWARD_ONLY: dict = {}
