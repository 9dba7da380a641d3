"""``torch.utils.benchmark``'s Python timer: ``Timer`` (``timeit``, ``blocked_autorange``, ``adaptive_autorange``),
``Measurement`` (times, mean, median, IQR, significant figures, PyTorch's repr), ``TaskSpec``, ``Language``,
``timer``, ``select_unit``, ``trim_sigfig``, ``unit_to_english``, ``ordered_unique``; as PyTorch's
(``torch/utils/benchmark/utils/{timer,common}.py``), ``stmt`` and ``setup`` run by Python's ``timeit`` with
``torch`` in their globals (here: ``functorch_lite``).

JAX dispatches asynchronously on every backend (the CPU too), so ``timer`` -- read at the start and end of each
timed block -- first waits for the arrays alive then (a final expression's value is kept alive for it): a
block's time includes the work its statements queued, as PyTorch's ``timer`` synchronizes an accelerator. There is no C++ timer (``language="c++"``) and no Callgrind
(``collect_callgrind``): both raise, saying so. ``Compare``, ``Fuzzer`` and the other helpers are absent."""
from __future__ import annotations

import ast
import collections
import contextlib
import dataclasses
import enum
import math
import textwrap
import timeit
from typing import Any, Callable, Iterable

import numpy as np

from ... import _device as _dev

__all__ = ["Language", "Measurement", "TaskSpec", "Timer", "ordered_unique", "select_unit", "timer", "trim_sigfig",
           "unit_to_english"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def timer() -> float:
    """``timeit.default_timer`` once the queued device work is done (the arrays alive now are ready, on every
    device type: ``torch.cuda.synchronize``'s wait)."""
    for t in ("cpu", "cuda", "tpu"):
        _dev.synchronize(t)
    return timeit.default_timer()


@contextlib.contextmanager
def set_torch_threads(n: int):
    """PyTorch's: ``set_num_threads(n)`` for the block, the prior count restored after."""
    from ... import get_num_threads, set_num_threads
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def select_unit(t: float) -> tuple[str, float]:
    """The unit that scales ``t`` seconds to an O(1) number."""
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return time_unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` to ``n`` significant figures (3.14159, 2 -> 3.1), in float32 arithmetic as PyTorch's."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(math.log10(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


def ordered_unique(elements: Iterable[Any]) -> list:
    return list(dict.fromkeys(elements))


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer times (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        return ("" if (self.setup == "pass" or not self.setup)
                else f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup
                else f"setup: {self.setup}")

    def summarize(self) -> str:
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """One or more timed blocks of a statement: ``raw_times`` (seconds per block of ``number_per_run`` runs)."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """Significant figures the interquartile points support (z = 1.645)."""
        self._lazy_init()
        n_total = len(self._sorted_times)
        points = self._sorted_times[int(n_total // 4):int(math.ceil(3 * n_total / 4))]
        std = float(np.std(np.asarray(points, np.float32)))
        ci = max(1.645 * std / math.sqrt(len(points)), _MIN_CONFIDENCE_INTERVAL)
        return min(max(int(math.floor(math.log10(self._median / ci))), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            s = np.asarray(self._sorted_times, np.float64)
            self._median, self._mean = float(np.quantile(s, .5)), float(s.mean())
            self._p25, self._p75 = float(np.quantile(s, .25)), float(np.quantile(s, .75))

            def add_warning(msg: str) -> None:
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
                                   f"of the median measurement.\n           {msg}",)
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        skip_line, newline = "MEASUREMENT_REPR_SKIP_LINE", "\n"
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip_line
        threads = self.task_spec.num_threads
        repr_str = f"""
{object.__repr__(self)}
{self.task_spec.summarize()}
  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}
  {iqr_filter}IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to {self._p75 / scale:.2f})
  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}
{newline.join(self._warnings)}""".strip()  # noqa: E501
        return "\n".join(line for line in repr_str.splitlines() if skip_line not in line)

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> list:
        """Replicates of one task merged, extrapolated to ``number_per_run=1``."""
        grouped: collections.defaultdict = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        return [Measurement(1, [t for m in g for t in m.times], spec) for spec, g in grouped.items()]


def _keep_last_value(stmt: str) -> str:
    """``stmt`` with a final expression's value kept in a local until the block's closing ``timer()`` (which waits
    for the arrays alive: a discarded result would not be waited for, and its work would go untimed)."""
    try:
        tree = ast.parse(stmt)
    except SyntaxError:
        return stmt  # (timeit reports it)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(ast.Assign([ast.Name("_timer_last_value", ast.Store())], last.value),
                                          last)
        return ast.unparse(ast.fix_missing_locations(tree))
    return stmt


class Timer:
    """Times ``stmt`` (after ``setup``) with Python's ``timeit``; ``globals`` (with ``torch``: the facade)."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None, label: str | None = None,
                 sub_label: str | None = None, description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            import functorch_lite
            self._globals.setdefault("torch", functorch_lite)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                                 "be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise ValueError("functorch_lite.utils.benchmark.Timer: C++ statements (language='c++') are not "
                             "supported: there is no C++ API to time")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = timeit.Timer(stmt=_keep_last_value(stmt), setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def _threads(self):
        return set_torch_threads(self._task_spec.num_threads)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs, after a warm-up of ``number // 100`` (at least 2)."""
        with self._threads():
            self._timeit(number=max(int(number // 100), 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                               task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("functorch_lite.utils.benchmark.Timer.collect_callgrind: Callgrind instruction "
                                  "counts are not supported (they count PyTorch's C++ kernels)")

    def _measurement_loop(self, number, time_hook, stop_hook, min_run_time, max_run_time=None,
                          callback=None) -> list:
        total_time, can_stop, times = 0.0, False, []
        with self._threads():
            while total_time < min_run_time or not can_stop:
                time_spent = time_hook()
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: ten-fold until the timer's own overhead is negligible (or a block is long)."""
        with self._threads():
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                time_taken = self._timeit(number)
                if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of a size whose timer overhead is negligible, until ``min_run_time`` seconds are spent."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda: self._timeit(number), lambda times: True,
                                       min_run_time=min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> Measurement:
        """Blocks until the IQR is within ``threshold`` of the median (more than 3 blocks) or ``max_run_time``."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times) -> bool:
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        times = self._measurement_loop(number, lambda: self._timeit(number), stop_hook, min_run_time, max_run_time,
                                       callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
