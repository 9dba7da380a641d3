"""``torch._logging.set_logs``: the switches scripts turn on to see what the compiler does.

What maps onto functorch_lite's compiler (``functorch_lite.compile``, logger ``"functorch_lite.compile"``):

- ``recompiles=True`` (or ``recompiles_verbose=True``): a log line per recompile naming what changed
  (``torch._dynamo.config.log_recompiles``);
- ``graph_breaks=True``: a log line per graph break with its reason and line (``config.log_graph_breaks``);
- a log level for ``all`` / ``dynamo`` / ``inductor`` / ``aot`` (``logging.INFO``...): the level of the
  ``"functorch_lite.compile"`` logger (the lowest one given).

Every other keyword of torch's is accepted, validated as torch validates it, and has no effect (there is no
Dynamo bytecode, FX graph, AOT graph, guard tree or Inductor kernel to show). As in torch, each call sets every
switch: one not passed goes back to its default (``set_logs()`` turns everything off).

>>> import logging
>>> set_logs(recompiles=True, dynamo=logging.INFO)
>>> set_logs()
"""
from __future__ import annotations

import logging

__all__ = ["set_logs"]

_LEVELS = ("all", "dynamo", "aot", "autograd", "dynamic", "inductor", "distributed", "c10d", "ddp", "fsdp",
           "dtensor", "onnx", "export")
_VALID_LEVELS = (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG, logging.NOTSET)
_COMPILER_LEVELS = ("all", "dynamo", "inductor", "aot")   # the logs whose level is our compiler logger's


def set_logs(*, all=None, dynamo=None, aot=None, autograd=None, dynamic=None, inductor=None, distributed=None,
             c10d=None, ddp=None, fsdp=None, dtensor=None, onnx=None, export=None, modules=None, bytecode=False,
             aot_graphs=False, aot_joint_graph=False, ddp_graphs=False, graph=False, graph_code=False,
             graph_code_verbose=False, graph_breaks=False, side_effects=False, graph_sizes=False, guards=False,
             recompiles=False, recompiles_verbose=False, trace_source=False, trace_call=False, trace_bytecode=False,
             output_code=False, kernel_code=False, schedule=False, perf_hints=False, pre_grad_graphs=False,
             post_grad_graphs=False, ir_pre_fusion=False, ir_post_fusion=False, onnx_diagnostics=False,
             fusion=False, overlap=False, cudagraphs=False, sym_node=False, compiled_autograd=False,
             compiled_autograd_verbose=False, cudagraph_static_inputs=False, benchmarking=False, autotuning=False,
             incremental=False, graph_region_expansion=False, inductor_metrics=False, hierarchical_compile=False,
             compute_dependencies=False, caching=False) -> None:
    """torch's ``set_logs`` (see the module docstring for what acts here)."""
    args = dict(locals())
    modules = args.pop("modules")
    levels = {}
    for name, val in args.items():
        if name in _LEVELS:
            if val is not None:
                if val not in _VALID_LEVELS or isinstance(val, bool):
                    raise ValueError(f"Unrecognized log level for log {name}: {val}, valid level values are: "
                                     f"{','.join(str(v) for v in _VALID_LEVELS)}")
                levels[name] = val
        elif not isinstance(val, bool):
            raise ValueError(f"Expected bool to enable artifact {name}, received {val}")
    for name, val in (modules or {}).items():
        if name not in args and "." not in name:
            raise ValueError(f"Unrecognized log or artifact name passed to set_logs: {name}")
    from ._compile.config import config
    config.log_recompiles = recompiles or recompiles_verbose
    config.log_graph_breaks = graph_breaks
    ours = [v for k, v in levels.items() if k in _COMPILER_LEVELS]
    logging.getLogger("functorch_lite.compile").setLevel(min(ours) if ours else logging.NOTSET)
