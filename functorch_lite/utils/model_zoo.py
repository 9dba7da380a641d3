"""``torch.utils.model_zoo``: the older name of ``hub.load_state_dict_from_url``."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401

__all__ = ["load_url"]
