"""``torch.profiler`` over the facade: ``profile`` (context manager, ``schedule``, ``on_trace_ready``, ``step()``),
``record_function``, ``schedule``, ``ProfilerActivity``/``ProfilerAction``, ``tensorboard_trace_handler``,
``supported_activities``; the summary is ``prof.key_averages().table(...)`` and ``prof.export_chrome_trace``.

What is recorded while a profile records (one ``None`` check per op otherwise, in ``ops/_dispatch.py``):
- every op dispatch, as ``aten::<op>`` (the facade's op names: PyTorch's for the public ops; composite ops show
  their inner ops as children). Each op's event waits for its result, so its time is its computation, as
  PyTorch's synchronous CPU kernels' (this serialises JAX's asynchronous dispatch while recording);
- ``record_function(name)`` blocks, and ``ProfilerStep#N`` for each step when a ``schedule`` is given;
- a backward pass as one ``autograd::engine::backward`` event (the facade runs a graph's backward as one XLA
  program, not node by node: PyTorch's per-node ``autograd::engine::evaluate_function: ...`` events have no
  counterpart);
- a compiled function's call as ``Torch-Compiled Region: <name>`` (its ops are inside one XLA program).
There is no device time (the device columns are absent from the table, 0 on the events); ``record_shapes`` fills
``input_shapes``; ``profile_memory``, ``with_stack``, ``with_flops``, ``with_modules`` are accepted and record
nothing more. For XLA's own per-kernel trace, use ``jax.profiler``.

The schedule's state machine is PyTorch's (``torch/profiler/profiler.py``: its transitions, warnings and
``on_trace_ready`` calls), without the device-stopped state."""
from __future__ import annotations

import enum
import os
import threading
import time
from functools import partial
from typing import Any, Callable, Iterable
from warnings import warn

from .. import _stats
from ._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction", "ProfilerActivity", "profile",
           "record_function", "schedule", "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities recorded here: CPU (host ranges; no device kernels are traced)."""
    return {ProfilerActivity.CPU}


class _Recorder:
    """The events of one recording: a stack per thread of the open ranges."""

    def __init__(self, record_shapes: bool):
        self.record_shapes = record_shapes
        self.events: list = []
        self.local = threading.local()
        self.t0 = time.perf_counter_ns()

    def _now(self) -> float:
        return (time.perf_counter_ns() - self.t0) / 1e3

    def open(self, name: str, shapes=None, user=False) -> FunctionEvent:
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        ev = FunctionEvent(len(self.events), name, self._now(), threading.get_ident(), shapes,
                           stack[-1] if stack else None, user)
        self.events.append(ev)
        stack.append(ev)
        return ev

    def close(self, ev: FunctionEvent) -> None:
        ev.end_us = self._now()
        stack = self.local.stack
        if stack and stack[-1] is ev:
            stack.pop()

    def op(self, op, targs, sargs, run, name=None):
        """One op's dispatch (``run``: the dispatch itself; ``name``: the op's, or its in-place form's) as an
        event that ends when its result is ready. Not while a compiled function traces: its ops are parts of a
        program, recorded as the program's call."""
        if _tracing():
            return run()
        shapes = [list(t._shape) if hasattr(t, "_shape") else [] for t in targs] if self.record_shapes else None
        ev = self.open("aten::" + (name or op.name), shapes)
        try:
            r = run()
            _wait(r)
        finally:
            self.close(ev)
        return r


def _tracing() -> bool:
    from .._dynamo import is_compiling  # (imported here: the compile runner imports the autograd engine, this)
    return is_compiling()


def _wait(r) -> None:
    import jax
    for t in r if isinstance(r, (tuple, list)) else (r,):
        a = getattr(t, "_array", None)
        if isinstance(a, jax.Array) and not isinstance(a, jax.core.Tracer):
            a.block_until_ready()


class _Range:
    """A ``with`` block recorded as one event when a profile is recording (else nothing)."""
    __slots__ = ("name", "user", "ev", "rec")

    def __init__(self, name: str, user: bool = False):
        self.name, self.user, self.ev, self.rec = name, user, None, None

    def __enter__(self):
        rec = _stats.PROFILER[0]
        if rec is not None and not _tracing():  # (a compiled function's trace is recorded as its call)
            self.rec, self.ev = rec, rec.open(self.name, user=self.user)
        return self

    def __exit__(self, *exc):
        if self.ev is not None:
            self.rec.close(self.ev)
            self.ev = self.rec = None
        return False


def _range(name: str):
    """An internal range (a backward pass, a compiled call): recorded only while a profile records."""
    return _Range(name) if _stats.PROFILER[0] is not None else _NULL


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NULL = _Null()


class record_function:
    """``with record_function(name):`` / ``@record_function(name)``: a user range in the profile."""

    def __init__(self, name: str, args: str | None = None):
        self.name, self.args = name, args
        self._ranges: list = []

    def __enter__(self):
        r = _Range(self.name, user=True).__enter__()
        self._ranges.append(r)
        return self

    def __exit__(self, *exc):
        self._ranges.pop().__exit__(*exc)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **kw):
            with record_function(self.name, self.args):
                return fn(*a, **kw)
        return wrapper


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable:
    """PyTorch's: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup`` and ``active`` recorded
    steps (``repeat`` cycles; 0: until the profile ends); the last active step of a cycle saves."""
    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False):
    """An ``on_trace_ready`` that writes each saved cycle's trace to ``dir_name`` as
    ``<worker>.<ns>.pt.trace.json[.gz]`` (Chrome trace JSON)."""
    import socket

    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


class profile:
    """``torch.profiler.profile``: records while its schedule says RECORD (always, without one)."""

    def __init__(self, *, activities: Iterable | None = None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None, acc_events: bool = False,
                 use_cuda: bool | None = None, custom_trace_id_callback: Callable | None = None,
                 post_processing_timeout_s: float | None = None):
        self.activities = set(activities) if activities is not None else supported_activities()
        for a in self.activities:
            if not isinstance(a, (ProfilerActivity, dict)):
                raise TypeError(f"profile(): activities must be ProfilerActivity values, got {a!r}")
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules, self.acc_events = with_flops, with_modules, acc_events
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: record_function | None = None
        self.current_action = self.schedule(self.step_num)
        self._rec: _Recorder | None = None       # the recording being made or last made
        self._events: list = []                  # the stopped recordings' events (acc_events: every cycle's)
        A = ProfilerAction
        self.action_map = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [self.prepare_trace],
            (A.NONE, A.RECORD): [self.prepare_trace, self.start_trace],
            (A.NONE, A.RECORD_AND_SAVE): [self.prepare_trace, self.start_trace],
            (A.WARMUP, A.NONE): [partial(warn, "Incorrect schedule: WARMUP followed by NONE"), self.start_trace,
                                 self.stop_trace],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [self.start_trace],
            (A.WARMUP, A.RECORD_AND_SAVE): [self.start_trace],
            (A.RECORD, A.NONE): [partial(warn, "Incorrect schedule: RECORD followed by NONE"), self.stop_trace],
            (A.RECORD, A.WARMUP): [partial(warn, "Incorrect schedule: RECORD followed by WARMUP"), self.stop_trace],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [self.stop_trace, self._trace_ready, self.prepare_trace],
            (A.RECORD_AND_SAVE, A.RECORD): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                            self.start_trace],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [self.stop_trace, self._trace_ready, self.prepare_trace,
                                                     self.start_trace],
            (A.WARMUP, None): [self.start_trace, self.stop_trace],
            (A.RECORD, None): [self.stop_trace, self._trace_ready],
            (A.RECORD_AND_SAVE, None): [self.stop_trace, self._trace_ready],
        }

    # ---- the state machine's actions --------------------------------------------------------------------
    def prepare_trace(self) -> None:
        # (torch's autograd profiler, made here: CUDA asked for where there is none is dropped with a warning; with
        # nothing left, its error)
        if ProfilerActivity.CUDA in self.activities:
            from .. import cuda
            if not cuda.is_available():
                warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
                if not any(a is not ProfilerActivity.CUDA for a in self.activities):
                    raise AssertionError("No activities specified for the profiler")
        if not self.acc_events:
            self._events = []
        self._rec = _Recorder(self.record_shapes)

    def start_trace(self) -> None:
        if self._rec is None:
            raise AssertionError("Profiler must be initialized before starting trace")
        if _stats.PROFILER[0] is not None and _stats.PROFILER[0] is not self._rec:
            raise RuntimeError("Profiler is already enabled on this thread")
        _stats.PROFILER[0] = self._rec

    def stop_trace(self) -> None:
        if self._rec is None:
            raise AssertionError("Profiler must be initialized before stopping trace")
        if _stats.PROFILER[0] is self._rec:
            _stats.PROFILER[0] = None
        self._events.extend(self._rec.events)

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action) -> None:
        for action in self.action_map.get((prev_action, current_action), ()):
            action()

    # ---- the API ----------------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """The next profiling step starts."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev_action = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev_action, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def events(self) -> EventList:
        """The recorded events (of the last saved cycle; every cycle's with ``acc_events``)."""
        return EventList(self._events)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self.events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        self.events().export_chrome_trace(path)
