"""Parity with PyTorch for utils.data fixes: tensors inside DataLoader workers (PyTorch's semantics or a clear
error, never NumPy's meaning silently), tensor creation inside workers, random_split with a tensor of lengths,
StackDataset.__getitems__, abstract IterableDataset, Sampler's constructor, and error messages.

Worker tests run the same module-level (picklable) dataset under both libraries with num_workers=1 or 2.
"""
import importlib
import math

import numpy as np
import pytest
import torch

import functorch_lite as ft
from functorch_lite.utils import data as fud

tud = torch.utils.data
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
LIBS = {"torch": torch, "functorch_lite": ft}


def desc(v, lib):
    """A value from a DataLoader as comparable Python data (dtype names, shapes, values to 4 places)."""
    if isinstance(v, lib.Tensor):
        if v.dtype == lib.bool:
            vals = v.flatten().tolist()
        else:
            vals = [round(a, 4) if not math.isnan(a) else "nan" for a in v.double().flatten().tolist()]
        return ("T", str(v.dtype), tuple(v.shape), vals)
    if isinstance(v, (list, tuple)):
        return [desc(a, lib) for a in v]
    if isinstance(v, dict):
        return {k: desc(a, lib) for k, a in v.items()}
    if isinstance(v, lib.dtype):
        return str(v)
    if isinstance(v, float) and not math.isnan(v):
        return round(v, 4)
    return v


# ---- 1. worker tensors: PyTorch's semantics ---------------------------------------------------------------
EXPRS = """
x.std() | x.std(0) | x.std(1, keepdim=True) | x.std(unbiased=False) | x.std(0, False) | x.var(correction=0)
x.var(dim=1) | x.var(0) | x.mean() | x.mean(0) | x.mean((0, 1)) | i.mean() | x.sum() | i.sum() | b.sum()
x.sum(dim=1, keepdim=True) | u.sum() | h.sum() | h.mean() | x.max() | x.max(0) | x.max(0)[0] | x.max(1, keepdim=True)
x.min(dim=1) | x.argmax() | x.argmax(1) | x.amax(0) | x.transpose(0, 1) | x.t() | x.T | x.mT | x.permute(1, 0)
x.repeat(2, 1) | x.repeat(2) | x.repeat(2, 1, 1) | x.flatten() | x.reshape(3, 2) | x.view(-1) | x.view(torch.int32)
x.unsqueeze(0).shape | x.squeeze(0).shape | x.unsqueeze(-1).squeeze(-1).shape | x.expand(2, 2, 3) | x.size()
x.size(1) | x.size(-1) | x.shape | x.dim() | x.numel() | x.dtype | i.dtype | x.dtype == torch.float32
x.float() | i.float() | f.long() | f.int() | x.double() | i.to(torch.float32) | i.to(torch.float64)
x.type(torch.int64) | x.type() | i / 2 | i + 0.5 | i * 2 | i // 2 | i % 3 | -i | i ** 2 | i ** 0.5 | 2 ** i | x ** 2
x / i[0] | i / i | 1 / i | i == 1 | i > 0.5 | i < x[0, :2] | x + i[0] | x * True | b + b | b * b | b + 1 | b - b
b - 1 | -b | ~b | ~i | b & b | i & 3 | abs(-i) | abs(b) | u + 1 | u - 2 | u * 100 | u / 2 | h * 2 | h + 0.1 | h / 3
h + i[0] | d + x[0, 0] | x[0] + d[:1] | i // 0 | i % 0 | i ** -1 | x @ x.t() | i @ i | i @ x[0, :2] | x.abs()
x.sqrt() | i.sqrt() | i.exp() | f.round() | f.floor() | i.floor() | f.ceil() | f.trunc() | f.clamp(0, 1)
i.clamp(0.5) | i.clamp(min=1) | i.clamp() | f.clamp(max=0) | x.all() | b.any() | b.all(0) | x.any(1) | x.tolist()
x.item() | x[0, 0].item() | i[0].item() | h.tolist() | x.clone() | x.detach() | x.contiguous() | x.cumsum(1)
i.cumsum(0) | x.prod() | i.prod() | e.sort() | e.sort(descending=True) | e.argsort() | e.argsort(descending=True)
e.nonzero() | b.nonzero() | x.is_floating_point() | x.element_size() | x.new_zeros(2) | i.new_ones((2, 3))
x.new_tensor([1, 2]) | i.div(2, rounding_mode="floor") | (-i).div(3, rounding_mode="trunc")
f.div(2, rounding_mode="trunc") | x.add(1, alpha=2) | i.sub(1) | i.mul(0.5) | i.eq(1) | x.flip(0) | x.narrow(1, 1, 2)
x.maximum(x.flip(0)) | x[x > 2] | x[i[0]] | x[0, [0, 2]] | len(x) | float(x[0, 1]) | int(i[1]) | x == None
i.float().mean() | x.data | x.requires_grad | i.type(torch.float32) | torch.is_tensor(x) | x.max(dim=1).values
x.max(dim=1).indices | x.sort(1, descending=True).values | (x > 7).float().mean() | (x > 7).sum() | b.long()
x.clone().add_(1) | i.clone().add_(0.5) | i.clone().div_(2) | i.clone().__iadd__(2) | x.clone().__itruediv__(2)
x.clone().clamp_(7, 9) | x.clone().fill_(3) | x.clone().zero_() | np.float64(2) * i | np.float32(0.5) + i
np.sqrt(i).dtype | np.add(i, 0.5).dtype | np.maximum(x, 7) | 7. in x | max(x[0]).item() | sum(x[0]).item()
[v.item() for v in x[0]] | f"{x[0, 0]:.2f}" | x.t().reshape(-1) | x.unsqueeze(1).expand(2, 4, 3).shape
torch.tensor([float("nan"), 1.0]).max() | torch.tensor([float("nan"), 1.0]).max(0) | torch.tensor([5.]).var()
torch.tensor([3.0, float("nan")]).clamp(0, 1) | torch.tensor([float("nan"), 1.0]).long()
torch.tensor([1, 2], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8)
torch.tensor([1, 2], dtype=torch.float16) + torch.tensor([1], dtype=torch.bfloat16)
torch.tensor([0.1], dtype=torch.float64) + torch.tensor(0.3) | torch.tensor([1, 2], dtype=torch.int32) * 2.5
torch.tensor([1.5], dtype=torch.bfloat16) * 3 | x.exp() | x.log() | (x / 7).sin() | (x / 7).tanh() | i.log()
torch.sum(x, 0) | torch.max(x, 1) | torch.max(x, x.flip(0)) | torch.std(x, 0, keepdim=True) | torch.transpose(x, 0, 1)
torch.reshape(x, (3, 2)) | torch.permute(x, (1, 0)) | torch.div(i, 2, rounding_mode="floor") | torch.add(x, 1, alpha=2)
torch.round(f, decimals=1) | torch.numel(x) | torch.is_floating_point(i) | torch.argsort(e, descending=True)
torch.clamp(x, 0, 7) | torch.flip(x, [0]) | torch.exp(x) | torch.mean(x) | torch.get_default_dtype()
"""
EXPRS = [e.strip() for line in EXPRS.strip().splitlines() for e in line.split(" | ")]


class Evaluates:
    """Sample k is EXPRS[k] evaluated inside the worker on the dataset's tensors (or its error's type)."""

    def __init__(self, lib_name, exprs):
        torch = importlib.import_module(lib_name)
        self.lib_name, self.exprs = lib_name, exprs
        self.x = torch.arange(24.).reshape(4, 2, 3)
        self.i = torch.arange(8).reshape(4, 2)
        self.h = torch.tensor([1.5, -2.25, 3.0], dtype=torch.float16)
        self.b = torch.tensor([True, False, True])
        self.f = torch.tensor([1.7, -1.7, 0.5, -0.5, 2.5])
        self.u = torch.tensor([1, 200, 3], dtype=torch.uint8)
        self.d = torch.tensor([1.5, 2.5], dtype=torch.float64)
        self.e = torch.tensor([3, 1, 2, 1, 3])

    def __len__(self):
        return len(self.exprs)

    def __getitem__(self, k):
        import warnings
        names = dict(torch=importlib.import_module(self.lib_name), np=np, x=self.x[1], i=self.i[1], h=self.h,
                     b=self.b, f=self.f, u=self.u, d=self.d, e=self.e)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return ("OK", eval(self.exprs[k], names))
        except Exception as ex:
            return ("ERR", type(ex).__name__)


def run_exprs(lib_name, exprs, num_workers=1):
    lib = LIBS[lib_name]
    out = []
    for r in lib.utils.data.DataLoader(Evaluates(lib_name, exprs), batch_size=None, num_workers=num_workers):
        out.append(desc(r, lib))
    return out


def test_worker_tensor_ops_match_torch():
    ours, theirs = run_exprs("functorch_lite", EXPRS), run_exprs("torch", EXPRS)
    assert len(ours) == len(theirs) == len(EXPRS)
    diffs = [(e, o, t) for e, o, t in zip(EXPRS, ours, theirs) if o != t]
    assert not diffs, diffs


class Repro(fud.Dataset):
    """The red-team repro: a dataset holding tensors, transformed in __getitem__ (run under both libraries)."""

    def __init__(self, lib_name):
        torch = importlib.import_module(lib_name)
        self.x = torch.arange(24.).reshape(4, 2, 3)
        self.i = torch.arange(8).reshape(4, 2)

    def __len__(self):
        return 4

    def __getitem__(self, k):
        x = self.x[k]
        return (x.std(), x.transpose(0, 1), x.repeat(2, 1), self.i[k] / 2, x.max(0)[0], self.i[k] + 0.5, x.var(0))


def test_red_team_repro_matches_torch():
    got = {}
    for name, lib in LIBS.items():
        batch = next(iter(lib.utils.data.DataLoader(Repro(name), batch_size=1, num_workers=1)))
        got[name] = desc(batch, lib)
    assert got["functorch_lite"] == got["torch"]
    std, tr, rep, half, mx, plus, var = got["torch"]
    assert std[3] == [1.8708] and tr[2] == (1, 3, 2) and rep[2] == (1, 4, 3) and mx[2] == (1, 3)
    assert half[1] == plus[1] == "torch.float32" and var[3] == [4.5, 4.5, 4.5]


# ---- never a silent wrong answer: PyTorch's value, or an error naming the method --------------------------
DIVERGENT = ["x.median()", "x.astype(np.int32)", "x.round(1)", "x.unflatten(0, (1, 2))", "x.masked_fill(x > 7, 0)",
             "x.norm()", "x.softmax(0)", "x.unique()", "x.take(torch.tensor([0]))", "x.diagonal()", "x.trace()",
             "x.compress([True, False])", "x.ptp()", "x.flat[0]", "x.strides", "x.base", "x.ravel()", "x.choose([0])",
             "x.searchsorted(7.)", "x.put([0], 1.)", "x.argpartition(0)", "x.dot(x.t())", "x.conj()", "x.topk(1)",
             "x.chunk(2)", "x.split(1)", "x.unbind(0)", "x.index_select(0, torch.tensor([0]))", "x.cumsum()",
             "torch.where(x > 7, x, 0)", "torch.nn.functional.one_hot(e)", "torch.nn.functional.pad(x, (1, 1))",
             "torch.nn.utils.rnn.pad_sequence([x[0], x[1, :2]])", "torch.result_type(x, 1)", "torch.median(x)"]


def test_worker_tensor_gives_torch_value_or_clear_error():
    """Methods whose NumPy meaning differs from PyTorch's (or that only NumPy has): PyTorch's value, else the clear
    error -- never another value."""
    from functorch_lite.utils.data._worker_tensor import WorkerTensorError
    assert issubclass(WorkerTensorError, AttributeError) and issubclass(WorkerTensorError, RuntimeError)
    ours, theirs = run_exprs("functorch_lite", DIVERGENT), run_exprs("torch", DIVERGENT)
    bad = [(e, o, t) for e, o, t in zip(DIVERGENT, ours, theirs) if o != t and o != ["ERR", "WorkerTensorError"]]
    assert not bad, bad
    assert sum(o == ["ERR", "WorkerTensorError"] for o in ours) >= 25


class CallsMedian(fud.Dataset):
    def __init__(self):
        self.x = ft.arange(6.).reshape(3, 2)

    def __len__(self):
        return 3

    def __getitem__(self, k):
        assert not hasattr(self.x[k], "median")  # (an AttributeError: hasattr is False)
        return self.x[k].median()


def test_unsupported_method_message_names_it():
    with pytest.raises(RuntimeError, match=r"x\.median\(\) is not available on a tensor inside a DataLoader worker "
                                           r"process \(num_workers > 0\)") as info:
        list(fud.DataLoader(CallsMedian(), num_workers=1))
    assert "in the main process" in str(info.value) and "x.numpy()" in str(info.value)
    # in the main process the same tensor has the method
    assert CallsMedian().x[1].median().item() == 2.0


# ---- 2. creating tensors inside a worker ------------------------------------------------------------------
class Creates:
    def __init__(self, lib_name):
        self.lib_name = lib_name

    def __len__(self):
        return 4

    def __getitem__(self, i):
        torch = importlib.import_module(self.lib_name)
        return {"t": torch.tensor([float(i)]), "ti": torch.tensor(i), "mix": torch.tensor([i, 0.5]),
                "tb": torch.tensor(i > 1), "z": torch.zeros(2, dtype=torch.int32), "o": torch.ones(1, 2),
                "f": torch.full((2,), i), "ff": torch.full((1,), 1.5), "a": torch.arange(3),
                "af": torch.arange(0, 1, 0.25), "np": torch.from_numpy(np.arange(2, dtype=np.int16) + i),
                "as": torch.as_tensor([i, i]), "e": torch.empty(2, dtype=torch.float64).shape,
                "zl": torch.zeros_like(torch.tensor([1, 2])), "st": torch.stack([torch.tensor(i), torch.tensor(2.5)]),
                "cat": torch.cat([torch.tensor([i]), torch.tensor([0.5])]), "div": torch.tensor([i, 3]) / 2}


@pytest.mark.parametrize("batch_size", [2, None])
def test_tensor_creation_in_workers_matches_torch(batch_size):
    got = {}
    for name, lib in LIBS.items():
        batches = list(lib.utils.data.DataLoader(Creates(name), batch_size=batch_size, num_workers=2))
        for b in batches:  # proper tensors of the library in the main process
            assert all(isinstance(v, lib.Tensor) for k, v in b.items() if k != "e"), b
        got[name] = [{k: desc(v, lib) for k, v in b.items()} for b in batches]
    assert got["functorch_lite"] == got["torch"]


class CreatesOne(fud.Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        return ft.tensor([float(i)]), ft.tensor([i])


def test_brief_pattern_torch_tensor_in_getitem():
    out = list(fud.DataLoader(CreatesOne(), batch_size=3, num_workers=2))
    ref = list(tud.DataLoader([(torch.tensor([float(i)]), torch.tensor([i])) for i in range(3)], batch_size=3))
    assert [desc(b, ft) for b in out] == [desc(b, torch) for b in ref]
    assert out[0][0].dtype is ft.float32 and out[0][1].dtype is ft.int64


def test_real_facade_tensor_in_forked_worker_still_the_guard_error():
    xs = [ft.arange(3), ft.ones(3)]

    class Local(fud.Dataset):  # unpicklable: inherited by the forked worker with real (JAX) tensors
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return ft.stack(xs)
    with pytest.raises(RuntimeError, match="functorch_lite tensors cannot be created or used inside a DataLoader"):
        list(fud.DataLoader(Local(), num_workers=1))


# ---- 3. random_split with a tensor of lengths ----------------------------------------------------------------
@pytest.mark.parametrize("lengths", [[4, 2], [0.5, 0.5], [3, 0, 3]])
def test_random_split_tensor_lengths(lengths):
    for as_list in (False, True):
        ours = fud.random_split(range(6), ft.tensor(lengths) if not as_list else [ft.tensor(v) for v in lengths],
                                generator=ft.Generator().manual_seed(0))
        theirs = tud.random_split(range(6), torch.tensor(lengths) if not as_list else
                                  [torch.tensor(v) for v in lengths], generator=torch.Generator().manual_seed(0))
        assert [len(s) for s in ours] == [len(s) for s in theirs]
        assert sorted(i for s in ours for i in s) == list(range(6))
        assert all(type(i) is int for s in ours for i in s.indices)


# ---- 4. StackDataset.__getitems__ ---------------------------------------------------------------------------
class Batched:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i

    def __getitems__(self, idx):
        return [i * 100 for i in idx]


class Plain:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i


class Short(Batched):
    def __getitems__(self, idx):
        return [0]


@pytest.mark.parametrize("kind", ["two_batched", "mixed", "dict"])
def test_stack_dataset_getitems(kind):
    def make(D):
        G, H = type("G", (Batched, D.Dataset), {}), type("H", (Plain, D.Dataset), {})
        return {"two_batched": lambda: D.StackDataset(G(), G()), "mixed": lambda: D.StackDataset(G(), H()),
                "dict": lambda: D.StackDataset(a=G(), b=H())}[kind]()
    ours, theirs = make(fud), make(tud)
    assert ours.__getitems__([1, 2]) == theirs.__getitems__([1, 2])
    assert desc(list(fud.DataLoader(ours, batch_size=2)), ft) == desc(list(tud.DataLoader(theirs, batch_size=2)), torch)


def test_stack_dataset_getitems_size_mismatch():
    for D in (fud, tud):
        with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
            D.StackDataset(type("S", (Short, D.Dataset), {})(), Plain()).__getitems__([0, 1])


# ---- 5. IterableDataset is abstract ----------------------------------------------------------------------------
def test_iterable_dataset_is_abstract():
    msgs = []
    for D in (fud, tud):
        class I(D.IterableDataset):
            pass
        for cls in (I, D.IterableDataset):
            with pytest.raises(TypeError) as info:
                cls()
            msgs.append(str(info.value))

        class J(D.IterableDataset):
            def __iter__(self):
                return iter([1, 2])
        assert list(J()) == [1, 2]
    assert msgs[:2] == msgs[2:]
    assert msgs[0] == "Can't instantiate abstract class I with abstract method __iter__"


# ---- 6. Sampler takes no arguments ----------------------------------------------------------------------------
def test_sampler_constructor_matches_torch():
    def errors(D):
        class S(D.Sampler):
            def __init__(self, ds):
                super().__init__(ds)

            def __iter__(self):
                return iter([0])

        class Ok(D.Sampler):
            def __init__(self, ds):
                super().__init__()
                self.ds = ds

            def __iter__(self):
                return iter(range(len(self.ds)))
        out = []
        for f in (lambda: D.Sampler(range(3)), lambda: S(range(3)), lambda: D.Sampler(data_source=None)):
            with pytest.raises(TypeError) as info:
                f()
            out.append(str(info.value))
        D.Sampler()
        assert list(Ok(range(3))) == [0, 1, 2]
        return out
    assert errors(fud) == errors(tud)


# ---- 7. messages ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda L: (L.tensor(1.),), lambda L: (L.tensor([1.]), L.tensor(1.)),
                                  lambda L: (L.tensor(1.), L.tensor([1.]))])
def test_tensor_dataset_zero_dim_message(make):
    def err(L):
        with pytest.raises(IndexError) as info:
            L.utils.data.TensorDataset(*make(L))
        return str(info.value)
    assert err(ft) == err(torch) == "Dimension specified as 0 but tensor has no dimensions"


NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("w,n,rep", [([NAN, 1.], 2, True), ([INF, 1.], 2, True), ([-1., 1.], 2, True),
                                     ([1., NAN, -1], 2, True), ([1., INF, -1], 2, True), ([1., -1, INF], 2, True),
                                     ([INF, NAN], 2, True), ([0., 0.], 2, True), ([NAN, 1.], 3, False),
                                     ([1., NAN], 2, False), ([-1., 1.], 1, True), ([INF, 1.], 1, True),
                                     ([0., 0.], 2, False), ([1., 1.], 3, False)])
def test_weighted_random_sampler_messages(w, n, rep):
    def err(D):
        with pytest.raises(RuntimeError) as info:
            list(D.WeightedRandomSampler(w, n, replacement=rep))
        return str(info.value)
    assert err(fud) == err(tud)


def test_weighted_random_sampler_valid_weights_still_sample():
    out = list(fud.WeightedRandomSampler([0., 1., 2.], 50, generator=ft.Generator().manual_seed(1)))
    assert len(out) == 50 and set(out) <= {1, 2}
    out = list(fud.WeightedRandomSampler([0., 1., 2.], 2, replacement=False, generator=ft.Generator().manual_seed(1)))
    assert sorted(out) == [1, 2]
