"""Op-table sweep cases for the fft ops; merged into _op_cases.py.

``CASES[name] = (input arrays (each requires grad), fn(mod, *tensors))`` for differentiable ops, ``FORWARD_ONLY``
likewise for ops without a gradient; ``mod`` is torch or functorch_lite.

The three kernels (``_fft_r2c``, ``_fft_c2c``, ``_fft_c2r``) are reached through the public ``torch.fft``
functions (integer and bool inputs are promoted to float32 there; float16, bfloat16 and float8 raise
``Unsupported dtype``); each case returns a real tensor (``view_as_real`` of the complex results). Sizes are
small powers of two where integer inputs must give exact results. Detailed parity: test_fft.py.
"""
import numpy as np

R = np.random.default_rng(17)


def rnd(*s):
    return R.standard_normal(s)


def _vr(m, y):
    return m.view_as_real(y.resolve_conj()).flatten()


CASES = {
    # rfft2: onesided r2c over two dims; fft of a real input: two-sided r2c with zero-padding (n=6)
    "_fft_r2c": ([rnd(3, 4)], lambda m, a: m.cat([_vr(m, m.fft.rfft2(a, norm="ortho")),
                                                  _vr(m, m.fft.fft(a, n=6, dim=0))])),
    # fftn promotes the real input to complex (c2c forward, cropped/padded by s); ifft: c2c inverse
    "_fft_c2c": ([rnd(3, 4)], lambda m, a: _vr(m, m.fft.ifft(m.fft.fftn(a, s=(4, 2)) * 1.5, dim=0,
                                                               norm="forward"))),
    # irfftn of a real input (promoted to complex), hfft with an explicit odd n
    "_fft_c2r": ([rnd(3, 4)], lambda m, a: m.cat([m.fft.irfftn(a, s=(2, 6)).flatten(),
                                                  m.fft.hfft(a, n=5).flatten()])),
}

FORWARD_ONLY = {
}
