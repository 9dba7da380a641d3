"""``Module``'s state-dict protocol, PyTorch's: ``state_dict`` and ``load_state_dict`` walk the module tree and
call each module's ``_save_to_state_dict`` / ``_load_from_state_dict`` (which subclasses override, e.g. to read
checkpoints with old key names), record each module's ``_version`` in ``state_dict()._metadata``, save
``get_extra_state()`` under ``_extra_state``, and run the state-dict and load hooks around each module."""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from typing import TYPE_CHECKING, Any, Callable

from ..._tensor.tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, is_lazy as _is_lazy
from ..._warn import user_stacklevel as _user_stacklevel

if TYPE_CHECKING:
    from ..._hooks import RemovableHandle

_EXTRA_STATE = "_extra_state"  # the key of a module's get_extra_state() in its state dict
_NO_HOOKS: dict = {}  # (read-only: what a module without a hook table iterates)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class StateDictMixin:
    """What ``Module`` inherits for its state dict (it provides ``_parameters``, ``_buffers``, ``_modules``,
    ``_non_persistent_buffers_set`` and ``_new_hook``)."""

    _version: int = 1  # saved in ``state_dict()._metadata``; a module's _load_from_state_dict reads it back

    def _table(self, name: str, make: bool = False):
        """One of the state-dict hook tables; made when a hook is first registered (``make``), so a module that
        never has one keeps none."""
        t = self.__dict__.get(name)
        if t is None:
            if not make:
                return _NO_HOOKS
            t = self.__dict__[name] = OrderedDict()
        return t

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        """This module's own entries (not its children's): parameters, persistent buffers, extra state."""
        for k, p in self._parameters.items():
            if p is not None:
                destination[prefix + k] = p if keep_vars else p.detach()
        for k, b in self._buffers.items():
            if b is not None and k not in self._non_persistent_buffers_set:
                destination[prefix + k] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters, persistent buffers and extra state by qualified name, detached unless ``keep_vars``;
        ``_metadata`` holds each module's ``_version``. State-dict pre- and post-hooks run around each module."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                          " for details.", FutureWarning, stacklevel=_user_stacklevel())
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._table("_state_dict_pre_hooks").values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for k, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + k + ".", keep_vars=keep_vars)
        for hook in self._table("_state_dict_hooks").values():
            out = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if out is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif out is not None:
                destination = out
        return destination

    def _load_from_state_dict(self, state_dict, prefix: str, local_metadata: dict, strict: bool, missing_keys: list,
                              unexpected_keys: list, error_msgs: list) -> None:
        """Copy this module's own entries from ``state_dict`` (its load pre-hooks first), noting missing and
        unexpected keys and errors as PyTorch words them."""
        for hook in self._table("_load_state_dict_pre_hooks").values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            v = state_dict[key]
            if not isinstance(v, Tensor) and hasattr(v, "__dlpack__"):
                from ...utils.dlpack import is_foreign_array, import_foreign
                if is_foreign_array(v):  # real torch's (or JAX's) state dict: its values, copied (a facade extension)
                    v = import_foreign(v)
            if not isinstance(v, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(v)}")
                continue
            lazy = _is_lazy(param)
            if not lazy and len(param.shape) == 0 and len(v.shape) == 1:  # (a 0.3-era 1-element checkpoint)
                v = v[0]
            if not lazy and tuple(v.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {v.shape} from checkpoint, "
                                  f"the shape in current model is {param.shape}.")
                continue
            if not lazy and not assign and param.device.type == "meta" and v.device.type != "meta":
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
                              "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign "
                              "items in the state dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=2)
                continue  # (a meta tensor has no values to copy into)
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(v, Parameter):
                                v = Parameter(v, requires_grad=param.requires_grad)
                            else:
                                v.requires_grad_(param.requires_grad)
                        setattr(self, name, v)
                    else:
                        param.copy_(v)
            except Exception as ex:  # noqa: BLE001  (PyTorch reports any failure of the copy this way)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {v.size()}, an "
                                  f"exception occurred : {ex.args}.")
        extra = prefix + _EXTRA_STATE
        if type(self).set_extra_state is not StateDictMixin.set_extra_state:
            if extra in state_dict:
                self.set_extra_state(state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        elif strict and extra in state_dict:
            unexpected_keys.append(extra)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra:
                    head, dot, _ = key[len(prefix):].partition(".")
                    if (head not in self._modules) if dot else (head not in local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict`` into parameters/buffers (``assign``: take its tensors instead), module by module
        through ``_load_from_state_dict``; PyTorch's errors and returned key lists, its load hooks."""
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    p = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(p)}, p)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._table("_load_state_dict_post_hooks").values():
                if hook(module, keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")
        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def get_extra_state(self) -> Any:
        """What a module saves beside its tensors (under ``_extra_state``) when a subclass defines it."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Restores what ``get_extra_state`` saved, when a subclass defines it."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module's entries."""
        return self._new_hook(self._table("_state_dict_pre_hooks", True), hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after this module's subtree is saved (returns
        None; it may edit ``state_dict`` in place)."""
        hook._from_public_api = True
        return self._new_hook(self._table("_state_dict_hooks", True), hook)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """The older post hook: a non-None result replaces the state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return self._new_hook(self._table("_state_dict_hooks", True), hook)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` before
        this module's entries load (``with_module``: the module first)."""
        if with_module:
            hook = functools.partial(hook, self)
        return self._new_hook(self._table("_load_state_dict_pre_hooks", True), hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module's entries load."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after this module's subtree loaded (edits the key lists in place)."""
        return self._new_hook(self._table("_load_state_dict_post_hooks", True), hook)
