"""Shared helper of the parity tests: run the same program in torch and in functorch_lite."""
import warnings
from typing import Any, Callable


def run(fn: Callable[[Any], Any], lib: Any) -> tuple[Any, BaseException | None]:
    """Call ``fn(lib)`` with warnings silenced: (result, None) or (None, exception)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib), None
    except Exception as e:  # noqa: BLE001  (the exception itself is what is compared)
        return None, e
