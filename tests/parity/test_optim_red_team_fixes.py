"""Parity with torch 2.13 for optimizer discrepancies found by red-teams: the state dict of a parameter emptied or
an entry deleted between steps, a parameter listed twice in a group, a loaded ``step`` of another dtype, and
``clip_grads_with_norm_`` given a number for ``total_norm``. Each case runs the same code on both libraries."""
import warnings

import numpy as np
import pytest
import torch

import functorch_lite as ftl
from functorch_lite import _config

LIBS = (torch, ftl)


@pytest.fixture(autouse=True)
def _exact(monkeypatch):
    monkeypatch.setattr(_config, "OPTIM_ROUNDING", "exact")  # (torch's float32 results bit for bit)


def _np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _run(lib, make, edit, steps=4, at=2):
    """``steps`` steps of ``make(lib, w)``'s optimizer over a fixed loss, ``edit(opt, w)`` before step ``at``;
    returns each step's (parameter, its state as {name: values}) or the error as (type name, message)."""
    w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    c = lib.tensor([1.0, 2.0, 3.0])
    opt = make(lib, w)
    out = []
    for i in range(steps):
        opt.zero_grad()
        (w * w * c).sum().backward()
        if i == at:
            edit(opt, w)
        try:
            opt.step()
        except Exception as e:  # noqa: BLE001  (compared with torch's)
            out.append((type(e).__name__, str(e)))
            continue
        out.append((_np(w), {k: (str(v.dtype).split(".")[-1], _np(v)) for k, v in opt.state[w].items()}))
    return out


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x[0], str):
            assert x == y
            continue
        np.testing.assert_array_equal(x[0], y[0])
        assert list(x[1]) == list(y[1])  # (the same entries, in the same order)
        for k in x[1]:
            assert x[1][k][0] == y[1][k][0]
            np.testing.assert_array_equal(x[1][k][1], y[1][k][1])


SGD = lambda lib, w: lib.optim.SGD([w], lr=0.1, momentum=0.9)  # noqa: E731
ADAM = lambda lib, w: lib.optim.Adam([w], lr=0.1)  # noqa: E731
AMSGRAD = lambda lib, w: lib.optim.AdamW([w], lr=0.1, amsgrad=True)  # noqa: E731


def _del(*names):
    def edit(opt, w):
        for n in names:
            del opt.state[w][n]
    return edit


def _clear(opt, w):
    opt.state[w].clear()


@pytest.mark.parametrize("make,edit", [
    (SGD, _del("momentum_buffer")),
    (SGD, _clear),
    (ADAM, _clear),
    (AMSGRAD, _clear),
    (ADAM, _del("exp_avg")),
    (ADAM, _del("exp_avg_sq")),
    (ADAM, _del("step")),
    (ADAM, _del("step", "exp_avg_sq")),
    (AMSGRAD, _del("max_exp_avg_sq")),
    (lambda lib, w: lib.optim.RMSprop([w], lr=0.01, momentum=0.9), _del("momentum_buffer")),
    (lambda lib, w: lib.optim.RMSprop([w], lr=0.01), _clear),
    (lambda lib, w: lib.optim.NAdam([w], lr=0.01), _del("mu_product")),
    (lambda lib, w: lib.optim.ASGD([w], lr=0.01), _del("step", "eta")),
    (lambda lib, w: lib.optim.Adagrad([w], lr=0.1), _clear),
], ids=["sgd-del-buf", "sgd-clear", "adam-clear", "amsgrad-clear", "adam-del-exp_avg", "adam-del-exp_avg_sq",
        "adam-del-step", "adam-del-two", "amsgrad-del-max", "rmsprop-del-buf", "rmsprop-clear", "nadam-del-mu",
        "asgd-del-two", "adagrad-clear"])
def test_state_emptied_or_entry_deleted_between_steps(make, edit):
    """torch: an emptied ``state[p]`` starts afresh (``len(state) == 0``: step 1, zero moments); a deleted entry
    is a ``KeyError`` (the first torch's step reads), nothing updated, except SGD's momentum buffer (read with
    ``state.get``: restarted from the gradient and put back). Before, the old state went on silently."""
    _same(*(_run(lib, make, edit) for lib in LIBS))


def test_sgd_deleted_buffer_held_by_the_user_keeps_its_values():
    """The tensor a user holds after ``del state[p]['momentum_buffer']`` is theirs: the step's new buffer is
    another (before, the step donated its array: reading it failed)."""
    res = []
    for lib in LIBS:
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        held, d = None, None
        for i in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            if i == 2:
                d = opt.state[w]
                held = d.pop("momentum_buffer")
            opt.step()
        res.append((_np(held), _np(opt.state[w]["momentum_buffer"]), opt.state[w] is d,
                    opt.state[w]["momentum_buffer"] is held))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert res[0][2:] == res[1][2:] == (True, False)


def test_cleared_state_keeps_the_dict_object():
    """torch fills the emptied dict itself again (a reference taken before the clear sees the new state)."""
    for lib in LIBS:
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)
        for i in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            if i == 2:
                d = opt.state[w]
                d.clear()
            opt.step()
        assert opt.state[w] is d and list(d) == ["step", "exp_avg", "exp_avg_sq"] and float(d["step"]) == 1.0


def _dup_case(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    v = lib.tensor([3.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        opt = lib.optim.SGD([w, w, v], lr=0.1, momentum=0.9)
    msgs = [(r.category.__name__, str(r.message)) for r in rec]
    for _ in range(2):
        opt.zero_grad()
        ((w * w).sum() + v.sum()).backward()
        opt.step()
    sd = opt.state_dict()
    state = {k: {n: _np(t).tolist() for n, t in s.items()} for k, s in sd["state"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt2 = lib.optim.SGD([w, w, v], lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    loaded = [(_np(s["momentum_buffer"]).tolist()) for s in opt2.state.values()]
    return msgs, _np(w).tolist(), sd["param_groups"][0]["params"], list(state), state, loaded


def test_duplicate_parameter_warning_state_dict_indices_and_state():
    """``SGD([w, w, v])``: torch's UserWarning; its state_dict numbers each listing (``[1, 1, 2]``: a duplicate
    takes its last listing's index), and ``v``, listed once, keeps its buffer (before: ``[0, 0, 1]``, and ``v``'s
    state was dropped with the duplicate's)."""
    a, b = (_dup_case(lib) for lib in LIBS)
    assert a[0] == b[0] and len(a[0]) == 1 and "duplicate parameters" in a[0][0][1]
    assert a[1:] == b[1:]
    assert b[2] == [1, 1, 2] and b[3] == [1, 2]


def test_duplicate_parameter_across_added_group_indices():
    out = []
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = lib.optim.Adam([{"params": [v]}], lr=0.1)
            opt.add_param_group({"params": [w, w]})
        opt.zero_grad()
        ((w * w).sum() + v.sum()).backward()
        opt.step()
        sd = opt.state_dict()
        out.append(([g["params"] for g in sd["param_groups"]], list(sd["state"]), float(opt.state[w]["step"])))
    assert out[0] == out[1] == ([[0], [2, 2]], [0, 2], 2.0)


STEP_CASES = {"f64": lambda lib, s: lib.tensor(s, dtype=lib.float64), "i64": lambda lib, s: lib.tensor(int(s)),
              "float": lambda lib, s: s, "int": lambda lib, s: int(s)}


@pytest.mark.parametrize("kind", list(STEP_CASES))
@pytest.mark.parametrize("name,kw", [("Adam", {}), ("AdamW", {}), ("NAdam", {}), ("RAdam", {}), ("Adagrad", {}),
                                     ("RMSprop", {}), ("Rprop", {}), ("Adam", {"fused": True})],
                         ids=["adam", "adamw", "nadam", "radam", "adagrad", "rmsprop", "rprop", "adam-fused"])
def test_loaded_step_dtype_is_kept(name, kw, kind):
    """torch's ``load_state_dict`` keeps a ``step`` tensor as it is (float64, int64; float32 for a fused group)
    and the step increments it in place; a Python number becomes a float32 tensor (``__setstate__``). Before, a
    tensor one became float32."""
    res = []
    for lib in LIBS:
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.01, **kw)
        (w * w).sum().backward()
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["step"] = STEP_CASES[kind](lib, float(sd["state"][0]["step"]))
        w2 = lib.tensor([1.0, -2.0], requires_grad=True)
        o2 = getattr(lib.optim, name)([w2], lr=0.01, **kw)
        o2.load_state_dict(sd)
        row = [str(o2.state[w2]["step"].dtype).split(".")[-1]]
        for _ in range(2):
            w2.grad = lib.tensor([0.5, 0.25])
            o2.step()
            st = o2.state[w2]["step"]
            row += [str(st.dtype).split(".")[-1], float(st), _np(w2).tolist()]
        row.append(str(o2.state_dict()["state"][0]["step"].dtype).split(".")[-1])
        res.append(row)
    assert res[0] == res[1]


def test_hand_written_float64_step_is_kept():
    """``state[p]['step'] = torch.tensor(5., dtype=torch.float64)`` between steps: torch's step increments that
    tensor (float64), reading its value."""
    res = []
    for lib in LIBS:
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.01)
        for i in range(3):
            w.grad = lib.tensor([0.5, 0.25])
            if i == 1:
                opt.state[w]["step"] = lib.tensor(5.0, dtype=lib.float64)
            opt.step()
            st = opt.state[w]["step"]
            res.append((str(st.dtype).split(".")[-1], float(st), _np(w).tolist()))
    assert res[:3] == res[3:]


@pytest.mark.parametrize("total", [5.0, 5, np.float64(5.0), None, "x", [5.0]],
                         ids=["float", "int", "np-float64", "none", "str", "list"])
def test_clip_grads_with_norm_number_total(total):
    """``clip_grads_with_norm_(params, max_norm, total_norm)`` with ``total_norm`` not a tensor: torch's TypeError
    (``torch.clamp`` of the Python number ``max_norm / (total_norm + 1e-6)``, or Python's own for the sum), the
    gradients left as they were. Before: AttributeError."""
    out = []
    for lib in LIBS:
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        w.grad = lib.tensor([3.0, 4.0])
        with pytest.raises(TypeError) as e:
            lib.nn.utils.clip_grads_with_norm_([w], 1.0, total)
        out.append((str(e.value), _np(w.grad).tolist()))
    assert out[0] == out[1]


def test_clip_grads_with_norm_number_total_without_grads_returns():
    """torch returns before looking at ``total_norm`` where no parameter has a gradient."""
    for lib in LIBS:
        assert lib.nn.utils.clip_grads_with_norm_([lib.tensor([1.0], requires_grad=True)], 1.0, 5.0) is None
        assert lib.nn.utils.clip_grads_with_norm_([], 1.0, 5.0) is None


def _compiled_run(lib, kind, edit, compiled):
    """Six steps of a training step (compiled with ``lib.compile`` when ``compiled``), ``state[w]`` edited before the
    fourth: the losses (or the error), the parameter and the state's names."""
    w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32)))
    x = lib.tensor(np.linspace(0, 1, 6).reshape(3, 2).astype(np.float32))
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9) if kind == "sgd" else lib.optim.Adam([w], lr=0.1)

    def step():
        opt.zero_grad()
        loss = ((w @ x) ** 2).sum()
        loss.backward()
        opt.step()
        return loss.detach()
    f = lib.compile(step) if compiled else step
    out = []
    for i in range(6):
        if i == 3:
            if edit == "clear":
                opt.state[w].clear()
            else:
                del opt.state[w][edit]
        try:
            out.append(float(f()))
        except KeyError as e:
            out.append(f"KeyError {e}")
            break
    return out, _np(w), sorted(opt.state[w])


@pytest.mark.parametrize("kind,edit", [("sgd", "clear"), ("sgd", "momentum_buffer"), ("adam", "clear"),
                                       ("adam", "exp_avg"), ("adam", "step")])
def test_compiled_step_sees_a_cleared_state_or_a_deleted_entry(kind, edit):
    """A compiled step reads the edited state as the eager step does (it went on with the old state: the steady
    state's check passed an emptied dict, the slot read no deleted entry)."""
    ours, theirs = _compiled_run(ftl, kind, edit, True), _compiled_run(torch, kind, edit, False)
    assert [v if isinstance(v, str) else pytest.approx(v, rel=1e-5) for v in theirs[0]] == ours[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert ours[2] == theirs[2]
