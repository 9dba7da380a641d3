"""``torch.utils.hooks`` and ``torch.utils.model_zoo`` as code keeping hooks of its own imports them."""
from collections import OrderedDict

import torch
import torch.utils.hooks
import torch.utils.model_zoo

import functorch_lite as ft
import functorch_lite.utils.hooks


def _own_hooks(lib):
    """The pattern of a class holding its own hooks: ``RemovableHandle(table)`` gives the key to store under."""
    table = OrderedDict()
    calls = []
    handles = []
    for k in range(3):
        h = lib.utils.hooks.RemovableHandle(table)
        table[h.id] = (lambda k=k: calls.append(k))
        handles.append(h)
    handles[1].remove()
    for fn in table.values():
        fn()
    with handles[0]:
        pass
    ids = [h.id for h in handles]
    return calls, len(table), ids[1] - ids[0], ids[2] - ids[1]


def test_removable_handle_made_by_user_code():
    assert _own_hooks(ft) == _own_hooks(torch) == ([0, 2], 1, 1, 1)


def test_removable_handle_extra_dict_and_module_handles():
    for lib in (torch, ft):
        a, b = OrderedDict(), OrderedDict()
        h = lib.utils.hooks.RemovableHandle(a, extra_dict=b)
        a[h.id] = b[h.id] = print
        h.remove()
        assert not a and not b
        m = lib.nn.Linear(2, 2)
        assert isinstance(m.register_forward_hook(lambda *args: None), lib.utils.hooks.RemovableHandle)


def test_unserializable_hook_marks_the_function():
    for lib in (torch, ft):
        f = lib.utils.hooks.unserializable_hook(lambda g: g)
        assert f.__torch_unserializable__ is True


def test_model_zoo_load_url_is_the_hub_loader():
    assert ft.utils.model_zoo.load_url is ft.hub.load_state_dict_from_url
    assert torch.utils.model_zoo.load_url is torch.hub.load_state_dict_from_url
