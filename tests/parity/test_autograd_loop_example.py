"""examples/autograd_loop.py (the seed's loop, unchanged but for the import) learns what real torch
learns from the same script (spec §6.1 CONV-30/31: torch prints [3., -1.999] and 4.999)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "autograd_loop.py"


def _run(source: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    w = re.search(r"Learned W: \[([^\]]*)\]", out.stdout).group(1)
    b = re.search(r"Learned b: (\S+)", out.stdout).group(1)
    return np.array([float(v) for v in w.split()]), float(b)


def test_example_learns_what_torch_learns():
    src = SCRIPT.read_text()
    assert "import functorch_lite as torch" in src
    ours_w, ours_b = _run(src)
    torch_w, torch_b = _run(src.replace("import functorch_lite as torch", "import torch"))
    np.testing.assert_allclose(torch_w, [3.0, -1.999], atol=1e-9)  # CONV-30 exactly as recorded
    assert torch_b == 4.999
    # different random data (JAX's PRNG), same problem: both recover y = 3x1 - 2x2 + 5 to 3 decimals
    np.testing.assert_allclose(ours_w, torch_w, atol=2e-3)
    assert abs(ours_b - torch_b) <= 2e-3
