"""``torch._inductor``: its ``config`` module (``torch._inductor.config.coordinate_descent_tuning = True`` and the
like, as gpt-fast / nanoGPT-style scripts set them), ``list_mode_options`` and ``list_options``. There is no
Inductor here: ``functorch_lite.compile`` hands the whole function to XLA through ``jax.jit``, so every knob is
readable with torch 2.13's default, settable and patchable, and has no effect but ``assert_indirect_indexing`` (the
compiled programs' index checks); a mode's options are listed as torch lists them, and have no effect either."""
import copy as _copy

from . import config  # noqa: F401

__all__ = ["config", "list_mode_options", "list_options"]


def list_mode_options(mode: "str | None" = None, dynamic: "bool | None" = None) -> dict:
    """The inductor options each ``torch.compile`` mode sets (``mode``: that mode's; None: every mode's), as
    torch 2.13 lists them; an unknown mode raises torch's RuntimeError."""
    from .._compile import MODE_OPTIONS
    try:
        return _copy.deepcopy(MODE_OPTIONS[mode] if mode else MODE_OPTIONS)
    except KeyError as e:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODE_OPTIONS)}") from e


def list_options() -> list:
    """The names of ``torch._inductor.config``'s knobs (``config.get_config_copy()``'s keys, but the one torch keeps
    in ``torch.compiler.config``)."""
    from .._compile import _knobs
    return [k for k in config.get_config_copy() if k not in _knobs.INDUCTOR_EXTERNAL]
