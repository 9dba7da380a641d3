"""``torch.utils.data._utils.worker``: ``get_worker_info`` and ``WorkerInfo`` (implemented in
``functorch_lite.utils.data._worker``)."""
from .._worker import WorkerInfo, get_worker_info  # noqa: F401

__all__ = ["WorkerInfo", "get_worker_info"]
