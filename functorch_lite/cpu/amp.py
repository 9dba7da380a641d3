"""``torch.cpu.amp`` (deprecated in PyTorch in favour of ``torch.amp``)."""
from ..amp.autocast_mode import cpu_autocast as autocast  # noqa: F401
from ..amp.grad_scaler import CpuGradScaler as GradScaler  # noqa: F401,E402
