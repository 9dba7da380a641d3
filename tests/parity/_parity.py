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


def assert_same_error(t_err: BaseException, f_err: BaseException | None, f_out: Any) -> None:
    """functorch_lite raised what torch raised: same exception type, same message."""
    assert f_err is not None, f"torch raised {t_err!r}; functorch_lite returned {f_out}"
    assert type(f_err) is type(t_err) and str(f_err) == str(t_err), (t_err, f_err)
