"""``torch.cuda.Event`` / ``Stream`` / ``stream``: timing and stream code of GPU scripts, on JAX.

JAX gives a program no user streams: XLA runs a device's work in order on its own. So every ``Stream`` of a device
stands for that one ordered queue. Work a script puts on a side stream runs in order with the rest (what the
script's ``wait_stream`` calls would have enforced anyway), and the ``wait``/``wait_stream`` calls have nothing
left to order. An ``Event`` records a host timestamp once the device's queued work is done (it waits for that
work), so ``start.elapsed_time(end)`` is the milliseconds of GPU work between the two records, as PyTorch's
timing pattern expects.

Without a GPU these raise PyTorch's errors for a CPU-only build.
"""
from __future__ import annotations

import time

from .. import _device as _dev
# (cuda/__init__.py imports this module after defining these)
from . import _device_index, _require, is_available, synchronize


class Event:
    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 external: bool = False):
        if not is_available():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.enable_timing, self.blocking, self.interprocess = enable_timing, blocking, interprocess
        self._time = None
        self._device = None

    def record(self, stream=None) -> None:
        """The time the device's work queued so far is done (this waits for it)."""
        self._device = (stream.device if stream is not None else _dev.canonical("cuda")).index
        synchronize(self._device)
        self._time = time.perf_counter()

    def query(self) -> bool:
        return True  # (recording waited for the work)

    def synchronize(self) -> None:
        """Nothing to wait for: ``record`` waited."""

    def wait(self, stream=None) -> None:
        """Nothing to order: a device's work runs in one queue."""

    def elapsed_time(self, end_event) -> float:
        """Milliseconds from this event's record to ``end_event``'s."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self):
        return f"<torch.cuda.Event {'recorded' if self._time is not None else 'uninitialized'}>"


class Stream:
    """A device's one ordered queue (see the module's note); every ``Stream`` of a device is equal to the others."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        if not is_available():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self = super().__new__(cls)
        self.device = _dev.canonical(f"cuda:{_device_index(device, optional=True)}")
        self.priority = priority
        return self

    def synchronize(self) -> None:
        synchronize(self.device.index)

    def query(self) -> bool:
        self.synchronize()
        return True

    def wait_stream(self, stream) -> None:
        """Nothing to order: both are the device's one queue."""

    def wait_event(self, event) -> None:
        """Nothing to order: the event's work is ahead in the same queue."""

    def record_event(self, event=None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self):
        return hash(("cuda stream", self.device))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream=0x0>"


def current_stream(device=None) -> Stream:
    _require()
    return Stream(device)


def default_stream(device=None) -> Stream:
    return current_stream(device)


def set_stream(stream) -> None:
    """Streams are the device's one queue: only the device changes, as with ``torch.cuda.stream``."""
    if stream is not None:
        from . import set_device
        set_device(stream.device.index)


class StreamContext:
    """``with torch.cuda.stream(s):`` runs the block on ``s``'s device (its work is in that device's one queue);
    ``stream(None)`` changes nothing."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is not None:
            self._prev = _dev.CURRENT_CUDA[0]
            set_stream(self.stream)
        return self.stream

    def __exit__(self, exc_type, exc_value, traceback):
        if self.stream is not None:
            _dev.CURRENT_CUDA[0] = self._prev
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)
