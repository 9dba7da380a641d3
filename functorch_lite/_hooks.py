"""``torch.utils.hooks.RemovableHandle``: what every hook registration returns (module hooks, tensor and autograd
node hooks, optimizer and state-dict hooks); here, below ``nn`` and ``autograd``, so that both use this one class."""
from __future__ import annotations


class RemovableHandle:
    """Removes a registered hook (``handle.remove()``) from its table and from any ``extra`` tables (the global
    hooks' side tables). ``torch.utils.hooks.RemovableHandle`` too: made as torch's,
    ``RemovableHandle(hooks_dict, *, extra_dict=None)``, it takes the next ``id`` (the key the caller stores its
    hook under)."""

    next_id: int = 0

    def __init__(self, hooks: dict, key: int | None = None, *extra, extra_dict=None):
        if key is None:
            key = RemovableHandle.next_id
            RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra += (extra_dict,)
        elif isinstance(extra_dict, list):
            extra += tuple(extra_dict)
        self._hooks, self._key, self._extra = hooks, key, extra
        self.id = key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)
        for table in self._extra:
            table.pop(self._key, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(hooks: dict, fn) -> RemovableHandle:
    """``fn`` stored in ``hooks`` under a new handle's id: the handle that removes it."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle
