"""``print`` inside a compiled function prints on every call, as torch's (a graph break there: the print runs in
Python each call); here the trace records the formatted line and each call prints it after its program."""
import builtins
import sys

import numpy as np
import pytest
import torch

import functorch_lite as ft


def _run(lib, capsys, compiled=True):
    kw = {"backend": "eager"} if lib is torch else {}
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 1)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor([[0.1, -0.2, 0.3]]))
        lin.bias.fill_(0.5)
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)

    def step(x, tag):
        print("step", tag, x.shape, sep=":")
        opt.zero_grad()
        loss = lin(x).pow(2).mean()
        loss.backward()
        opt.step()
        print("done", end="|\n", file=sys.stdout, flush=True)
        print("to stderr", file=sys.stderr)
        return loss
    f = lib.compile(step, **kw) if compiled else step
    losses = [f(lib.ones(2, 3), "a").item() for _ in range(4)] + [f(lib.ones(4, 3), "b").item()]
    out = capsys.readouterr()
    return losses, out.out, out.err, f


def test_prints_inside_a_compiled_step_appear_on_every_call_as_torch(capsys):
    want_l, want_out, want_err, _ = _run(torch, capsys)
    got_l, got_out, got_err, f = _run(ft, capsys)
    assert got_out == want_out and got_err == want_err
    assert got_out.count("step:a:torch.Size([2, 3])\n") == 4 and got_out.count("done|") == 5
    # (the loss shrinks 25x per step: its last digits are the first step's rounding, which differs between CPUs'
    # kernels by an ulp or two; atol is a few ulps of the first loss)
    np.testing.assert_allclose(got_l, want_l, rtol=1e-6, atol=1e-7)
    assert f.stats["traces"] == 2 and f.stats["eager_calls"] == 0  # one program per shape, no graph break
    assert not hasattr(builtins.print, "__wrapped__")  # the real print is put back after each trace


def test_a_print_of_a_traced_tensor_is_still_a_graph_break(capsys):
    def f(x):
        y = x * 2
        print("y is", y)
        return y
    with pytest.raises(ft._compile.GraphBreak, match="print"):
        ft.compile(f, fullgraph=True)(ft.ones(2))
    with pytest.warns(UserWarning, match="graph break"):
        r = ft.compile(f)(ft.ones(2))
    assert r.tolist() == [2.0, 2.0]
    assert capsys.readouterr().out == "y is tensor([2., 2.])\n"  # the eager run's print, once


def _logs_and_warnings(lib):
    import io
    import logging
    import warnings
    stream = io.StringIO()
    lg = logging.getLogger(f"fl-test-{lib.__name__}")
    lg.handlers[:] = [logging.StreamHandler(stream)]
    lg.setLevel(logging.INFO)
    lg.propagate = False
    kw = {"backend": "eager"} if lib is torch else {}

    @lib.compile(**kw)
    def step(x):
        lg.info("step %s of %d", "a", 3)
        lg.debug("not shown")
        warnings.warn("from the step")
        return x + 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        outs = [step(lib.ones(1)).item() for _ in range(3)]
    return outs, stream.getvalue(), [(str(x.message), x.category, x.filename == __file__) for x in w], step


def test_logging_and_warnings_inside_a_compiled_function_happen_on_every_call_as_torch():
    want, got = _logs_and_warnings(torch), _logs_and_warnings(ft)
    assert got[0] == want[0] == [2.0, 2.0, 2.0]
    assert got[1] == want[1] == "step a of 3\n" * 3
    assert [x for x in got[2] if x[0] == "from the step"] == [x for x in want[2] if x[0] == "from the step"] == \
        [("from the step", UserWarning, True)] * 3
    assert got[3].stats["eager_calls"] == 0 and got[3].stats["traces"] == 1  # (a logger was a graph break: its cache)
