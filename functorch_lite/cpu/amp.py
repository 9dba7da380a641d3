"""``torch.cpu.amp`` (deprecated in PyTorch in favour of ``torch.amp``)."""
from ..amp.autocast_mode import cpu_autocast as autocast  # noqa: F401
