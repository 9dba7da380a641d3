"""``torch._inductor.config``: every knob of torch 2.13's (``triton.cudagraphs``, ``max_autotune``,
``coordinate_descent_tuning``, ``epilogue_fusion``, ``fx_graph_cache``...) with torch's default, settable,
``patch``-able; an unknown name raises torch's ``AttributeError``. One acts: ``assert_indirect_indexing`` (default
True; False leaves the index checks out of the programs traced after it, ``ops/_deferred``). The others have no
effect: the compiler here is ``jax.jit`` and XLA chooses its own fusion, tiling and autotuning (there is no
Inductor, Triton or CUDA graph to configure). This module object is replaced by the config module (as torch's
``install_config_module`` does), so ``import functorch_lite._inductor.config`` and
``functorch_lite._inductor.config.x = ...`` both work."""
from .._compile import _knobs
from .._compile.config import make

make(__name__, _knobs.INDUCTOR, _knobs.INDUCTOR_ALIASES, __doc__)
