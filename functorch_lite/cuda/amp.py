"""``torch.cuda.amp`` (deprecated in PyTorch in favour of ``torch.amp``)."""
from ..amp.autocast_mode import cuda_autocast as autocast  # noqa: F401
from ..amp.autocast_mode import cuda_custom_bwd as custom_bwd, cuda_custom_fwd as custom_fwd  # noqa: F401
from ..amp.grad_scaler import CudaGradScaler as GradScaler  # noqa: F401
