"""``torch._dynamo.config`` / ``torch._inductor.config``: config modules as torch's ``install_config_module``
makes them.

Every knob torch 2.13 has reads as torch's default (``_knobs.py``); setting or reading a name torch does not
have raises torch's ``AttributeError: <module>.<name> does not exist``; ``config.patch(name=value)`` /
``config.patch({"name": value})`` / ``config.patch("name", value)`` is a context manager and a decorator that
restores the prior values; ``get_config_copy()``, ``save_config()``, ``load_config()`` as in torch. Sub-configs
(``torch._inductor.config.triton.cudagraphs``) read and write the dotted knob.

Which knobs act here (everything else is stored, readable and patchable, and has NO effect: the compiler is
``jax.jit`` and XLA, which has no Dynamo bytecode tracer, FX graph, Inductor or Triton to tune):

- ``torch._dynamo.config.recompile_limit`` / ``cache_size_limit`` (one setting, torch's alias): how many
  programs one compiled function keeps before it runs eagerly (warning once); read on every new program.
- ``torch._dynamo.config.log_recompiles`` (ours; ``torch._logging.set_logs(recompiles=True)`` sets it): a log
  line per recompile naming what changed.
- ``torch._dynamo.config.log_graph_breaks`` (ours; ``set_logs(graph_breaks=True)``): a log line per graph break.
- ``torch._dynamo.config.verify_discovery`` (ours): the self-check of reused state discovery (tests set it).
- ``torch._inductor.config.assert_indirect_indexing``: whether programs traced from then on check their indices
  (``ops/_deferred``; torch's switch for its kernels' bounds asserts).

Reads are plain attribute reads (values live in the module's ``__dict__``), so the compiled call path pays
nothing for them; only writes are checked.
"""
from __future__ import annotations

import collections
import contextlib
import copy
import os
import pickle
import sys
import types

from . import _knobs


class _SubConfig:
    """``config.triton`` etc.: reads and writes ``config.<prefix>.<name>``, as torch's ``SubConfigProxy``."""

    def __init__(self, config, prefix: str):
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return getattr(self._config, self._prefix + name)

    def __repr__(self):
        return f"<config {self._config.__name__}.{self._prefix[:-1]}>"

    def __setattr__(self, name, value):
        self._config.__setattr__(self._prefix + name, value)

    def __delattr__(self, name):
        self._config.__delattr__(self._prefix + name)


class ConfigModule(types.ModuleType):
    """A module whose attributes are the knobs of a torch config module (see the module docstring)."""

    def __init__(self, name: str, defaults: dict, aliases: dict, doc: str = ""):
        super().__init__(name, doc)
        d = self.__dict__
        d["_defaults"] = defaults
        d["_aliases"] = aliases                      # old name -> the name it stands for (both readable)
        d["_alias_of"] = {}
        for old, new in aliases.items():
            d["_alias_of"].setdefault(new, []).append(old)
        d["_knobs"] = frozenset(defaults) | frozenset(aliases)
        for k, v in copy.deepcopy(defaults).items():
            d[k] = v
        for old, new in aliases.items():
            d[old] = d[new]
        for prefix in {k.split(".", 1)[0] for k in defaults if "." in k}:
            if prefix not in defaults:
                d[prefix] = _SubConfig(self, prefix + ".")

    def __getattr__(self, name):             # only reached for a name that is not a knob
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __setattr__(self, name, value):
        d = self.__dict__
        if name not in d["_knobs"]:
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        name = d["_aliases"].get(name, name)
        d[name] = value
        for old in d["_alias_of"].get(name, ()):
            d[old] = value

    def __delattr__(self, name):             # torch: back to the default (unittest.mock.patch deletes)
        d = self.__dict__
        if name not in d["_knobs"]:
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        name = d["_aliases"].get(name, name)
        self.__setattr__(name, copy.deepcopy(d["_defaults"][name]))

    def __dir__(self):
        return sorted(self.__dict__["_knobs"]) + ["patch", "get_config_copy", "save_config", "load_config"]

    def get_config_copy(self) -> dict:
        """Every knob (aliases excluded) and its current value, as torch's ``get_config_copy``."""
        d = self.__dict__
        return {k: copy.deepcopy(d[k]) for k in d["_defaults"]}

    def save_config(self) -> bytes:
        """The knobs, pickled (``load_config`` restores them)."""
        return pickle.dumps(self.get_config_copy(), protocol=2)

    def load_config(self, maybe_pickled_config) -> None:
        """Restore from ``save_config()`` bytes or a ``get_config_copy()`` dict (unknown keys are skipped)."""
        cfg = maybe_pickled_config if isinstance(maybe_pickled_config, dict) else pickle.loads(maybe_pickled_config)
        for k, v in cfg.items():
            if k in self.__dict__["_knobs"]:
                setattr(self, k, v)

    def patch(self, arg1=None, arg2=None, **kwargs) -> "ConfigPatch":
        """Temporarily change knobs, as a context manager or a decorator (torch's ``config.patch``)::

            with functorch_lite._dynamo.config.patch(recompile_limit=1): ...
            @functorch_lite._dynamo.config.patch({"recompile_limit": 1})
            def f(): ...
        """
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError("first argument must be a string when passing 2 positional args to patch")
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError(
                        "first argument must be a dict when passing a single positional arg to patch")
                changes = arg1
            if kwargs:
                raise AssertionError("cannot pass both positional and keyword arguments to patch")
        else:
            changes = kwargs
            if arg2 is not None:
                raise AssertionError(
                    "second positional argument is only valid when first argument is a key string")
        return ConfigPatch(self, changes)


class ConfigPatch(contextlib.ContextDecorator):
    def __init__(self, config: ConfigModule, changes: dict):
        self.config, self.changes, self.prior = config, changes, []

    def __enter__(self) -> None:
        cfg = self.config
        prior = {k: getattr(cfg, k) for k in self.changes}
        self.prior.append(prior)
        try:
            for k, v in self.changes.items():
                setattr(cfg, k, v)
        except Exception:
            self.prior.pop()
            raise

    def __exit__(self, *exc) -> None:
        for k, v in self.prior.pop().items():
            setattr(self.config, k, v)


def make(name: str, defaults: dict, aliases: dict, doc: str = "") -> ConfigModule:
    """The config module ``name`` (also registered in ``sys.modules``, so ``import <name>`` finds it)."""
    mod = ConfigModule(name, defaults, aliases, doc)
    sys.modules[name] = mod
    return mod


# torch._dynamo.config, with our own switches added (they are not torch knobs)
_DYNAMO = dict(_knobs.DYNAMO)
_DYNAMO["recompile_limit"] = 8                       # torch's default, the one ``compile`` has always used
_DYNAMO["log_recompiles"] = bool(os.environ.get("FUNCTORCH_LITE_LOG_RECOMPILES"))
_DYNAMO["log_graph_breaks"] = False
# self-check of the reused discovery: every call also walks everything and compares (the test suite sets it)
_DYNAMO["verify_discovery"] = bool(os.environ.get("FUNCTORCH_LITE_VERIFY_DISCOVERY"))

config = make("functorch_lite._dynamo.config", _DYNAMO, _knobs.DYNAMO_ALIASES, __doc__)
# graph breaks by reason (``torch._dynamo.utils.counters["graph_break"]``; the compiler's graph-break path adds)
GRAPH_BREAKS: collections.Counter = collections.Counter()
