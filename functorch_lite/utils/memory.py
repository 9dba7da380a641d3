"""The seed's rule of thumb for training memory, beside XLA's real figure (issue 5 item 9).

Rule of thumb: parameters + gradients + optimizer state (+ activations). ``training_memory`` counts the first
three from the model and optimizer (the optimizer's actual state tensors once it has stepped; before that,
the full-size buffers its type keeps per parameter, group by group with each group's options: Adam/AdamW two
moments, SGD with momentum one buffer, Adafactor its factored row/column variances...; 0-d counters such as
``step`` are left out). ``compare`` puts that beside ``memory_analysis`` of a compiled training step (the
program that runs, with its donated buffers): XLA's argument/output/temp/alias bytes, whose peak includes the
activations the rule leaves out. A step that graph-breaks has no program: ``GraphBreak``.
"""
from __future__ import annotations

__all__ = ["training_memory", "compare", "POLICIES"]

# dtype policy -> bytes per element of (parameters, gradients, optimizer state). Mixed precision in PyTorch keeps
# float32 master weights, grads and optimizer state (autocast casts activations; GradScaler scales the loss);
# the seed's "7B in fp16" arithmetic is the pure-half policy (model.half(), the optimizer's state in fp16).
POLICIES = {"fp32": (4, 4, 4), "bf16-autocast": (4, 4, 4), "fp16-gradscaler": (4, 4, 4), "fp16": (2, 2, 2),
            "bf16": (2, 2, 2)}


def _bytes(t) -> int:
    return t.numel() * t.element_size()


# full-size state buffers per parameter (what each optimizer's ``state[p]`` holds after a step, beside 0-d scalars
# such as ``step``, which the rule leaves out): a number, or a function of the group's options
_BUFFERS = {
    "Adam": lambda g: 3 if g.get("amsgrad") else 2,          # exp_avg, exp_avg_sq (+ max_exp_avg_sq)
    "AdamW": lambda g: 3 if g.get("amsgrad") else 2,
    "NAdam": 2,                                                # exp_avg, exp_avg_sq (mu_product: 0-d)
    "RAdam": 2,                                                # exp_avg, exp_avg_sq
    "Adamax": 2,                                               # exp_avg, exp_inf
    "Adadelta": 2,                                             # square_avg, acc_delta
    "ASGD": 1,                                                 # ax (eta, mu: 0-d)
    "Rprop": 2,                                                # prev, step_size
    "Adagrad": 1,                                              # sum
    "SparseAdam": 2,                                           # exp_avg, exp_avg_sq
    "SGD": lambda g: 1 if g.get("momentum", 0) else 0,        # momentum_buffer
    "RMSprop": lambda g: 1 + (1 if g.get("momentum", 0) else 0) + (1 if g.get("centered") else 0),
}


def _state_elements(name: str, group: dict, shape) -> int:
    """Elements of the full-size state one parameter of ``shape`` gets in a group of optimizer ``name``."""
    numel = 1
    for n in shape:
        numel *= n
    if name == "Adafactor":  # factored second moment: row_var (..., r, 1) and col_var (..., 1, c); else variance
        if len(shape) < 2:
            return numel
        return numel // shape[-1] + numel // shape[-2] if shape[-1] and shape[-2] else 0
    k = _BUFFERS.get(name)
    if k is None:
        raise ValueError(f"training_memory: no rule for optimizer {name}")
    return numel * (k(group) if callable(k) else k)


def _state_bytes(optimizer, size=None) -> int:
    """The rule's optimizer-state bytes, group by group (each group's options), before the first step: elements
    in each parameter's own element size, or ``size`` bytes each."""
    name = type(optimizer).__name__
    total = 0
    for g in optimizer.param_groups:
        for p in g["params"]:
            total += _state_elements(name, g, tuple(p.shape)) * (p.element_size() if size is None else size)
    return total


def training_memory(model, optimizer=None, *, policy: str | None = None, activations_bytes: int = 0) -> dict:
    """Bytes of parameters, gradients (one per parameter that requires grad, in its dtype), optimizer state
    and the given activation estimate, with their ``total``. ``policy`` (a key of ``POLICIES``) counts elements
    at that policy's sizes instead of the tensors' own dtypes; works on ``device='meta'`` models (shapes only)."""
    params = list(model.parameters())
    if policy is not None:
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; one of {sorted(POLICIES)}")
        pb, gb, ob = POLICIES[policy]
        n = sum(p.numel() for p in params)
        n_grad = sum(p.numel() for p in params if p.requires_grad)
        out = {"params": n * pb, "grads": n_grad * gb,
               "optimizer_state": _state_bytes(optimizer, ob) if optimizer is not None else 0,
               "activations": int(activations_bytes)}
        out["total"] = sum(out.values())
        return out
    p_bytes = sum(_bytes(p) for p in params)
    g_bytes = sum(_bytes(p) for p in params if p.requires_grad)
    o_bytes = 0
    if optimizer is not None:
        measured = [t for st in optimizer.state.values() for t in st.values() if hasattr(t, "numel")]
        if measured:
            o_bytes = sum(_bytes(t) for t in measured)
        else:
            o_bytes = _state_bytes(optimizer)
    total = p_bytes + g_bytes + o_bytes + int(activations_bytes)
    return {"params": p_bytes, "grads": g_bytes, "optimizer_state": o_bytes, "activations": int(activations_bytes),
            "total": total}


def compare(compiled_step, *args, model, optimizer=None, **kwargs) -> dict:
    """The rule of thumb beside XLA's memory analysis of ``compiled_step(*args, **kwargs)`` (a function from
    ``functorch_lite.compile``). ``activations_estimate`` = XLA's peak minus the rule's total: what the rule
    of thumb leaves out (activations, workspace)."""
    analyse = getattr(compiled_step, "memory_analysis", None)
    if analyse is None:  # (``compile(model)``'s wrapper: its compiled forward)
        analyse = getattr(getattr(compiled_step, "__dict__", {}).get("_compiled"), "memory_analysis", None)
    if analyse is None:
        raise TypeError(f"compare: expected a function from functorch_lite.compile (or a compiled module), got "
                        f"{type(compiled_step).__name__}")
    rule = training_memory(model, optimizer)
    xla = analyse(*args, **kwargs)
    return {"rule_of_thumb": rule, "xla": xla, "activations_estimate": max(0, xla["peak_bytes"] - rule["total"]),
            "ratio": xla["peak_bytes"] / rule["total"] if rule["total"] else float("inf")}
