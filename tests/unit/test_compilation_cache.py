"""JAX's persistent compilation cache, which functorch_lite turns on at import (``_config.compilation_cache``):
a run's kernels and programs are written to the cache folder and read back by the next run, with the same
results; "0" turns it off; a cache folder the process set itself is left alone. Each case runs in a subprocess
(the suite runs with the cache off: conftest.py)."""
import json
import os
import subprocess
import sys

import pytest

PROG = r"""
import json, sys, jax
pre = sys.argv[1]
if pre != "-":
    jax.config.update("jax_compilation_cache_dir", pre)
import functorch_lite as torch
from functorch_lite import _config
x = torch.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()
w = torch.nn.Linear(4, 2)
with torch.no_grad():
    w.weight.copy_(torch.arange(8.).reshape(2, 4) / 8)
    w.bias.zero_()
loss = torch.nn.functional.gelu(w(x)).square().mean()
loss.backward()
step = torch.compile(lambda t: (t * 3).sin().sum())
print(json.dumps({"dir": _config.COMPILATION_CACHE, "jax_dir": jax.config.jax_compilation_cache_dir,
                  "loss": loss.item(), "grad": x.grad.tolist(), "compiled": step(x.detach()).item()}))
"""


def _run(setting, pre="-"):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    if setting is None:
        env.pop("FUNCTORCH_LITE_COMPILATION_CACHE", None)
    else:
        env["FUNCTORCH_LITE_COMPILATION_CACHE"] = setting
    out = subprocess.run([sys.executable, "-c", PROG, pre], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _files(folder):
    return sum(len(f) for _, _, f in os.walk(folder))


def test_a_run_fills_the_cache_and_the_next_reads_it(tmp_path):
    folder = str(tmp_path / "xla")
    first = _run(folder)
    assert first["dir"] == first["jax_dir"] == folder
    n = _files(folder)
    assert n > 5  # (the eager ops' kernels, their backward, the compiled program)
    again = _run(folder)
    assert {k: again[k] for k in ("loss", "grad", "compiled")} == {k: first[k] for k in ("loss", "grad", "compiled")}
    assert _files(folder) == n  # (every program read back: none compiled again)
    off = _run("0")
    assert off["dir"] is None and off["jax_dir"] is None
    assert {k: off[k] for k in ("loss", "grad", "compiled")} == {k: first[k] for k in ("loss", "grad", "compiled")}


def test_the_default_folder_is_under_the_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    got = _run(None)
    assert got["dir"] == os.path.join(str(tmp_path), "functorch_lite", "xla") and _files(got["dir"]) > 0


@pytest.mark.parametrize("setting", ["1", "0"])
def test_a_folder_the_process_set_is_left_alone(tmp_path, setting):
    mine = str(tmp_path / "mine")
    got = _run(setting, pre=mine)
    assert got["jax_dir"] == mine and got["dir"] == mine
