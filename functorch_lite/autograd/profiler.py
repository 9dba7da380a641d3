"""``torch.autograd.profiler``: the older profiler API (``profile(enabled=...)`` recording for its whole block,
``function_events``, ``key_averages()``, ``table()``, ``str(prof)``), over ``functorch_lite.profiler``'s recorder;
and ``record_function``."""
from __future__ import annotations

from ..profiler import EventList, FunctionEvent, record_function
from ..profiler import profile as _profile

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]


class profile:
    """Records every op, ``record_function`` block, backward pass and compiled call of its ``with`` block."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True, experimental_config=None,
                 acc_events: bool = False, custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self._prof = None
        self.function_events: EventList | None = None

    def __enter__(self):
        if self.enabled:
            self._prof = _profile(record_shapes=self.record_shapes)
            self._prof.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self._prof is not None:
            self._prof.stop()
            self.function_events = self._prof.events()
        return False

    def _events(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._events().key_averages(group_by_input_shape)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False) -> str:
        return self._events().table(sort_by=sort_by, row_limit=row_limit, max_name_column_width=max_name_column_width,
                                    header=header, top_level_events_only=top_level_events_only)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total()

    def export_chrome_trace(self, path: str) -> None:
        self._events().export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()
