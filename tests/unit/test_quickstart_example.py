"""The quickstart example (examples/quickstart.py) runs to the end and prints the device it chose."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import functorch_lite as torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "quickstart.py"


def expected_device() -> str:
    """The device the example's selection line should pick on this machine."""
    tpu = getattr(torch, "tpu", None)
    if torch.cuda.is_available():
        return "cuda"
    if tpu is not None and tpu.is_available():
        return "tpu"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def run_example() -> subprocess.CompletedProcess:
    """Run the example in a fresh interpreter with the repository root importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, str(EXAMPLE)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_quickstart_runs_and_prints_device() -> None:
    """The example exits 0, first prints the device it chose, and ends with 'done'."""
    proc = run_example()
    assert proc.returncode == 0, f"quickstart failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Using device: {expected_device()}"
    assert lines[-1] == "done"


def test_quickstart_is_plain_pytorch_code() -> None:
    """Apart from its import line the example uses only PyTorch's API (no functorch_lite names)."""
    src = EXAMPLE.read_text()
    code = [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    imports = [ln for ln in code if ln.startswith(("import ", "from "))]
    assert imports == ["import functorch_lite as torch"]
    body = src.replace("import functorch_lite as torch", "", 1)
    assert "functorch_lite" not in body.split('"""', 2)[2]
