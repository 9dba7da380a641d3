"""Parity of functorch_lite's numpy tensor printer with real PyTorch ``repr``."""
from __future__ import annotations

import math

import pytest
import torch

from functorch_lite._tensor.printing import format_tensor

_UPCAST = {torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}


def _ours(t: torch.Tensor, **kwargs) -> str:
    d = t.detach()
    values = d.float().numpy() if d.dtype in _UPCAST else d.numpy()
    suffixes = []
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return format_tensor(values, str(t.dtype).removeprefix("torch."),
                         default_dtype_name=str(torch.get_default_dtype()).removeprefix("torch."),
                         suffixes=suffixes, **kwargs)


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


nan, inf = math.nan, math.inf

CASES = {
    # floats: fixed, integer-valued, scientific
    "f32_int_valued": lambda: torch.tensor([1.0, 2.0, 3.0]),
    "f32_scalar": lambda: torch.tensor(6.0),
    "f32_scalar_frac": lambda: torch.tensor(-2.5),
    "f32_scalar_tiny": lambda: torch.tensor(1e-9),
    "f32_scalar_nan": lambda: torch.tensor(nan),
    "f32_scalar_neg_zero": lambda: torch.tensor(-0.0),
    "f32_fixed": lambda: torch.tensor([1.0, 2.5]),
    "f32_sci_range": lambda: torch.tensor([1e-8, 1e5]),
    "f32_sci_large": lambda: torch.tensor([1e9, 2e9]),
    "f32_sci_small": lambda: torch.tensor([1e-5, 3e-5]),
    "f32_ratio_edge": lambda: torch.tensor([1.0, 1000.0]),
    "f32_ratio_over": lambda: torch.tensor([1.0, 1001.0]),
    "f32_big_ints": lambda: torch.tensor([1e8, -3.0]),
    "f32_neg": lambda: torch.tensor([-1.5, 2.25, -0.125]),
    "f32_neg_zero": lambda: torch.tensor([-0.0, 0.0, 1.0]),
    "f32_zeros": lambda: torch.zeros(4),
    "f32_nan_inf_only": lambda: torch.tensor([nan, inf, -inf]),
    "f32_nan_inf_int": lambda: torch.tensor([nan, inf, -inf, 2.0, -0.0]),
    "f32_nan_inf_frac": lambda: torch.tensor([nan, 1.5, -inf]),
    "f32_nan_inf_sci": lambda: torch.tensor([nan, 1e-7, inf, 12.0]),
    "f32_randn": lambda: torch.randn(7, generator=_gen()),
    "f32_round": lambda: torch.tensor([0.00005, 0.12345, 9.99995]),
    "f32_2d": lambda: torch.arange(6.0).reshape(2, 3),
    "f32_2d_randn": lambda: torch.randn(4, 5, generator=_gen(1)) * 100,
    "f32_3d": lambda: torch.randn(2, 3, 4, generator=_gen(2)),
    "f32_4d": lambda: torch.arange(24.0).reshape(2, 3, 2, 2) / 7,
    "f32_wrap": lambda: torch.randn(40, generator=_gen(3)),
    "f32_wrap_2d": lambda: torch.randn(3, 25, generator=_gen(4)) * 1e-6,
    "f32_col": lambda: torch.randn(5, 1, generator=_gen(5)),
    "f32_summarized": lambda: torch.randn(2000, generator=_gen(6)),
    "f32_summarized_2d": lambda: torch.randn(100, 100, generator=_gen(7)),
    "f32_summarized_3d": lambda: torch.arange(2 * 30 * 30.0).reshape(2, 30, 30),
    "f32_summarized_sci": lambda: torch.cat([torch.full((1500,), 1e-6), torch.tensor([1e6])]),
    "f32_summarized_hidden_big": lambda: torch.cat([torch.ones(10), torch.full((1000,), 1e9),
                                                    torch.ones(10)]),
    "f64_frac": lambda: torch.tensor([0.1, 0.2, 1 / 3], dtype=torch.float64),
    "f64_scalar": lambda: torch.tensor(3.0, dtype=torch.float64),
    "f64_sci": lambda: torch.tensor([1e-300, 1e300], dtype=torch.float64),
    "f16_round": lambda: torch.tensor([0.1, 0.2, 1 / 3, 1000.1], dtype=torch.float16),
    "f16_int": lambda: torch.tensor([1.0, 2048.0, 65504.0], dtype=torch.float16),
    "f16_2d": lambda: torch.randn(3, 3, generator=_gen(8)).half(),
    "bf16_round": lambda: torch.tensor([0.1, 1 / 3, 3.14159, 100.7], dtype=torch.bfloat16),
    "bf16_sci": lambda: torch.tensor([1e-6, 1e30, -2.0], dtype=torch.bfloat16),
    "bf16_scalar": lambda: torch.tensor(1.1, dtype=torch.bfloat16),
    "bf16_2d": lambda: torch.randn(4, 6, generator=_gen(9)).bfloat16(),
    "f8e4m3_vals": lambda: torch.tensor([0.1, 1.0, 448.0, -3.3], dtype=torch.float8_e4m3fn),
    "f8e4m3_nan": lambda: torch.tensor([nan, 0.5, 2.0], dtype=torch.float8_e4m3fn),
    "f8e5m2_vals": lambda: torch.tensor([1e-4, 57344.0, 0.3, -0.0], dtype=torch.float8_e5m2),
    "f8e4m3_2d": lambda: (torch.randn(3, 4, generator=_gen(10)) * 10).to(torch.float8_e4m3fn),
    # integers and bool
    "i64": lambda: torch.tensor([1, 2, 3]),
    "i64_neg": lambda: torch.tensor([-100, 5, 12345]),
    "i64_scalar": lambda: torch.tensor(7),
    "i32": lambda: torch.tensor([1, 2], dtype=torch.int32),
    "i32_scalar": lambda: torch.tensor(-3, dtype=torch.int32),
    "u8": lambda: torch.tensor([0, 255, 17], dtype=torch.uint8),
    "i8_2d": lambda: torch.tensor([[-128, 0], [5, 127]], dtype=torch.int8),
    "i16": lambda: torch.arange(5, dtype=torch.int16),
    "i64_2d": lambda: torch.arange(12).reshape(3, 4),
    "i64_3d": lambda: torch.arange(24).reshape(2, 3, 4) - 10,
    "i64_wrap": lambda: torch.arange(0, 10 ** 6, 25_000),
    "i64_summarized": lambda: torch.arange(2000),
    "i32_summarized_2d": lambda: torch.arange(10_000, dtype=torch.int32).reshape(100, 100),
    "i64_extreme": lambda: torch.tensor([2 ** 63 - 1, -(2 ** 63)]),
    "bool": lambda: torch.tensor([True, False]),
    "bool_scalar": lambda: torch.tensor(False),
    "bool_2d": lambda: torch.tensor([[True, True], [False, True]]),
    "bool_all_true": lambda: torch.ones(3, dtype=torch.bool),
    "bool_summarized": lambda: torch.arange(1500) % 3 == 0,
    # complex
    "c64": lambda: torch.tensor([1 + 2j, -3.5 - 0.25j]),
    "c64_int": lambda: torch.tensor([1 + 2j, 3 - 4j]),
    "c64_scalar": lambda: torch.tensor(1 - 1j),
    "c64_neg_zero_imag": lambda: torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([-0.0, 0.0])),
    "c64_sci": lambda: torch.tensor([1e-8 + 1j, 1e5 - 2j]),
    "c64_nan": lambda: torch.tensor([complex(nan, 1.0), complex(1.5, inf)]),
    "c64_2d": lambda: torch.randn(3, 3, dtype=torch.complex64, generator=_gen(11)),
    "c64_summarized": lambda: torch.randn(1200, dtype=torch.complex64, generator=_gen(12)),
    "c128": lambda: torch.tensor([0.1 + 0.2j, 3j], dtype=torch.complex128),
    # empty
    "empty_f32": lambda: torch.tensor([]),
    "empty_2d": lambda: torch.empty(0, 3),
    "empty_3d": lambda: torch.empty(2, 0, 4),
    "empty_i64": lambda: torch.tensor([], dtype=torch.int64),
    "empty_bool": lambda: torch.empty(0, dtype=torch.bool),
    "empty_i32_2d": lambda: torch.empty(3, 0, dtype=torch.int32),
    "empty_f16": lambda: torch.empty(0, dtype=torch.float16),
    "empty_c64": lambda: torch.empty(0, dtype=torch.complex64),
    # autograd suffixes
    "requires_grad": lambda: torch.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad_scalar": lambda: torch.tensor(2.5, requires_grad=True),
    "grad_fn_mul": lambda: torch.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_add_f64": lambda: torch.tensor([1.5], dtype=torch.float64, requires_grad=True) + 1,
    "grad_fn_wrapped_suffix": lambda: torch.randn(12, dtype=torch.float64, generator=_gen(13),
                                                  requires_grad=True) * 3,
    "grad_fn_2d": lambda: (torch.randn(3, 3, generator=_gen(14), requires_grad=True) * 2).sum(0),
    "requires_grad_bf16": lambda: torch.tensor([0.1, 7.0], dtype=torch.bfloat16,
                                               requires_grad=True),
    "requires_grad_empty": lambda: torch.empty(0, 2, dtype=torch.float16, requires_grad=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name: str) -> None:
    t = CASES[name]()
    assert _ours(t) == repr(t)


OPTION_CASES = [
    (dict(precision=2), lambda: torch.tensor([1.12345, -2.5])),
    (dict(precision=8), lambda: torch.tensor([1e-6, 1.0], dtype=torch.float64)),
    (dict(threshold=5), lambda: torch.arange(10)),
    (dict(threshold=5, edgeitems=1), lambda: torch.arange(12.0).reshape(3, 4) / 3),
    (dict(threshold=5, edgeitems=0), lambda: torch.arange(12.0).reshape(3, 4)),
    (dict(threshold=5, edgeitems=0), lambda: torch.arange(12.0)),
    (dict(linewidth=30), lambda: torch.randn(20, generator=_gen(15))),
    (dict(linewidth=20), lambda: torch.tensor([1.0, 2.0], requires_grad=True) * 2),
    (dict(sci_mode=True), lambda: torch.tensor([1.0, 2.5])),
    (dict(sci_mode=False), lambda: torch.tensor([1e-8, 1e5])),
    (dict(sci_mode=True), lambda: torch.zeros(2)),
]


@pytest.mark.parametrize("opts,factory", OPTION_CASES,
                         ids=[str(i) for i in range(len(OPTION_CASES))])
def test_print_options_match_torch(opts: dict, factory) -> None:
    t = factory()
    torch.set_printoptions(**opts)
    try:
        expected = repr(t)
    finally:
        torch.set_printoptions(profile="default")
    assert _ours(t, **opts) == expected


@pytest.mark.parametrize("factory", [
    lambda: torch.tensor([1.0, 2.5]),
    lambda: torch.tensor([1.0, 2.5], dtype=torch.float32),
    lambda: torch.tensor([1 + 1j]),
    lambda: torch.tensor([1 + 1j], dtype=torch.complex64),
    lambda: torch.tensor([], dtype=torch.float32),
    lambda: torch.tensor([], dtype=torch.float64),
    lambda: torch.tensor([1, 2]),
], ids=["f64", "f32", "c128", "c64", "empty_f32", "empty_f64", "i64"])
def test_default_dtype_float64(factory) -> None:
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        t = factory()
        expected = repr(t)
        ours = _ours(t)
    finally:
        torch.set_default_dtype(old)
    assert ours == expected


def test_device_suffix() -> None:
    out = format_tensor(torch.tensor([1.0, 2.0]).numpy(), "float32", device_str="cuda:0",
                        suffixes=["requires_grad=True"])
    assert out == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    out = format_tensor(torch.tensor([1, 2], dtype=torch.int32).numpy(), "int32",
                        device_str="cuda:0")
    assert out == "tensor([1, 2], device='cuda:0', dtype=torch.int32)"


def test_ml_dtypes_input_is_upcast() -> None:
    import ml_dtypes  # a dependency of jax, always installed with functorch_lite
    t = torch.tensor([0.1, 1 / 3, 300.0], dtype=torch.bfloat16)
    raw = t.float().numpy().astype(ml_dtypes.bfloat16)
    assert format_tensor(raw, "bfloat16") == repr(t)
