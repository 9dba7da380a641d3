"""The seed's rule of thumb for training memory, beside XLA's real figure (issue 5 item 9).

Rule of thumb: parameters + gradients + optimizer state (+ activations). ``training_memory`` counts the first
three from the model and optimizer (the optimizer's actual state tensors once it has stepped; before that,
what its type keeps per parameter: Adam/AdamW two moments, SGD with momentum one buffer...). ``compare`` puts
that beside ``memory_analysis`` of a compiled training step: XLA's argument/output/temp bytes, whose peak
includes the activations the rule leaves out.
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


def _state_per_param(optimizer) -> float:
    """Optimizer state as a multiple of the parameter bytes, by type and options (before the first step)."""
    name = type(optimizer).__name__
    g = optimizer.param_groups[0]
    if name in ("Adam", "AdamW"):
        return 3.0 if g.get("amsgrad") else 2.0
    if name == "SGD":
        return 1.0 if g.get("momentum", 0) else 0.0
    if name == "RMSprop":
        return 1.0 + (1.0 if g.get("momentum", 0) else 0.0) + (1.0 if g.get("centered") else 0.0)
    if name == "Adagrad":
        return 1.0
    raise ValueError(f"training_memory: no rule for optimizer {name}")


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
        k = _state_per_param(optimizer) if optimizer is not None else 0.0
        out = {"params": n * pb, "grads": n_grad * gb, "optimizer_state": int(k * n * ob),
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
            o_bytes = int(_state_per_param(optimizer) * sum(_bytes(p) for g in optimizer.param_groups
                                                            for p in g["params"]))
    total = p_bytes + g_bytes + o_bytes + int(activations_bytes)
    return {"params": p_bytes, "grads": g_bytes, "optimizer_state": o_bytes, "activations": int(activations_bytes),
            "total": total}


def compare(compiled_step, *args, model, optimizer=None, **kwargs) -> dict:
    """The rule of thumb beside XLA's memory analysis of ``compiled_step(*args, **kwargs)`` (a function from
    ``functorch_lite.compile``). ``activations_estimate`` = XLA's peak minus the rule's total: what the rule
    of thumb leaves out (activations, workspace)."""
    rule = training_memory(model, optimizer)
    xla = compiled_step.memory_analysis(*args, **kwargs)
    return {"rule_of_thumb": rule, "xla": xla, "activations_estimate": max(0, xla["peak_bytes"] - rule["total"]),
            "ratio": xla["peak_bytes"] / rule["total"] if rule["total"] else float("inf")}
