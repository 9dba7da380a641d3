"""``OptimizedModule``: what ``compile(model)`` returns, as torch's (``torch/_dynamo/eval_frame.py``).

The original module is ``_orig_mod`` (so ``state_dict`` keys carry the ``_orig_mod.`` prefix); calling the wrapper
runs the compiled forward. Attribute reads the wrapper lacks, writes and deletes go to ``_orig_mod`` (except the
names of ``_opt_mod_attributes`` and class attributes, kept on the wrapper), and ``training`` is ``_orig_mod``'s,
so ``cm.scale = 3.0`` / ``cm.training = False`` / ``cm.extra = nn.Linear(...)`` / ``del cm.attr`` change the
original module and the compiled forward sees the change (its guards, as for any attribute edit). The class lives at
module level, so ``pickle`` / ``torch.save`` / ``copy.deepcopy`` find it; as torch's, it reduces to
``(OptimizedModule, (orig_mod, options))``: a copy compiles afresh (no program is copied or pickled).
This module imports ``nn``, which imports ``_compile``: ``_compile`` imports it on first use.
"""
from __future__ import annotations

from collections.abc import Sized

from ..nn.modules.module import _LAZY_TABLES, Module
from .runner import CompiledFunction


class OptimizedModule(Module):
    """``torch._dynamo.eval_frame.OptimizedModule``: ``compile(model)``'s wrapper around ``_orig_mod``."""

    # the names kept on the wrapper (torch's set, and ours: the compiled forward and the options it was made with)
    _opt_mod_attributes = frozenset({
        "_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable", "_torchdynamo_wrapper_id", "get_compiler_config",
        "forward", "_forward", "__dict__", "named_children_walk", "_super_module_initialized",
        "_compiled", "_compile_options"})

    def __init__(self, mod, fullgraph=False, dynamic=None):
        object.__setattr__(self, "_orig_mod", mod)  # (first: attribute reads go through it)
        super().__init__()
        self.__dict__.pop("training", None)          # (the property reads _orig_mod's)
        self._orig_mod = mod                          # registered as the child module (``_orig_mod.`` keys)
        d = self.__dict__
        d["_compile_options"] = (fullgraph, dynamic)
        d["_compiled"] = CompiledFunction(mod.__call__, fullgraph=fullgraph, dynamic=dynamic)

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        self._orig_mod.training = value

    def __len__(self) -> int:
        mod = self._orig_mod
        if isinstance(mod, Sized):
            return len(mod)
        raise TypeError(f"{type(mod).__name__} does not support len()")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d["_forward_pre_hooks"] or d["_forward_hooks"] or "forward" in d:
            # hooks on the wrapper run around the program; a forward patched on the wrapper is called instead
            return self._call_impl(*args, **kwargs)
        return self._compiled(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def memory_analysis(self, *args, **kwargs) -> dict:
        """XLA's memory analysis of the compiled forward for these inputs (``CompiledFunction.memory_analysis``)."""
        return self._compiled.memory_analysis(*args, **kwargs)

    # ---- copy / pickle: the original module and the options; the copy compiles afresh ----
    def __reduce__(self):
        fullgraph, dynamic = self._compile_options
        return (type(self), (self._orig_mod, fullgraph, dynamic))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("forward", None)
        state.pop("__call__", None)
        state.pop("_compiled", None)
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        fullgraph, dynamic = self.__dict__.get("_compile_options", (False, None))
        self.__dict__["_compiled"] = CompiledFunction(self._orig_mod.__call__, fullgraph=fullgraph, dynamic=dynamic)

    # ---- attributes: the original module's, but for the wrapper's own names ----
    def __getattr__(self, name):
        if name == "_orig_mod":
            try:
                return self.__dict__["_modules"]["_orig_mod"]
            except KeyError:  # (not made yet: an instance being unpickled)
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '_orig_mod'") from None
        if name in _LAZY_TABLES:  # (the wrapper's own hook tables, made on first use)
            return super().__getattr__(name)
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value) -> None:
        if name == "training":  # (straight to the original: its own write, as its guards see it)
            setattr(self._orig_mod, name, value)
        elif hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name) -> None:
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def __dir__(self) -> list:
        orig = self._orig_mod.__dir__()
        return orig + [a for a in super().__dir__() if a not in orig]

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {repr(self._orig_mod).replace(chr(10), chr(10) + '  ')}\n)"
