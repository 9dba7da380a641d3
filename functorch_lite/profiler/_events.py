"""The profiler's events and their summaries, with ``torch.autograd.profiler_util``'s names: ``FunctionEvent``
(one recorded range: an op, a ``record_function`` block, a backward pass), ``FunctionEventAvg`` (the events of
one key summed), ``EventList`` (``table()``, ``key_averages()``, ``export_chrome_trace()``).

Times are in microseconds, as PyTorch's. There is no device time: every device column is 0 (the ops' events
wait for their results, so a CPU op's time is its computation, as PyTorch's synchronous CPU kernels')."""
from __future__ import annotations

import json


def _format_time(us: float) -> str:
    """PyTorch's ``_format_time``."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class FunctionEvent:
    """One recorded range. ``cpu_time_total``: its wall time; ``self_cpu_time_total``: less its children's."""
    __slots__ = ("id", "name", "trace_name", "start_us", "end_us", "thread", "input_shapes", "cpu_children",
                 "cpu_parent", "is_user_annotation")

    def __init__(self, id, name, start_us, thread, input_shapes=None, parent=None, user=False):
        self.id, self.start_us, self.end_us, self.thread = id, start_us, start_us, thread
        # (as PyTorch's: the steps of a schedule are one key, ``ProfilerStep*``; the trace keeps each one's number)
        self.trace_name = name
        self.name = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.cpu_children: list = []
        self.cpu_parent = parent
        self.is_user_annotation = user
        if parent is not None:
            parent.cpu_children.append(self)

    key = property(lambda self: self.name)
    count = property(lambda self: 1)
    cpu_time_total = property(lambda self: self.end_us - self.start_us)
    cpu_time = cpu_time_total
    self_cpu_time_total = property(lambda self: self.cpu_time_total - sum(c.cpu_time_total
                                                                          for c in self.cpu_children))
    device_time_total = self_device_time_total = cuda_time_total = self_cuda_time_total = property(lambda self: 0.0)
    cpu_memory_usage = self_cpu_memory_usage = property(lambda self: 0)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key (name, and input shapes when grouped by them) summed."""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cuda_time_total = self.self_cuda_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.is_user_annotation = False

    def add(self, ev) -> "FunctionEventAvg":
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.is_user_annotation = ev.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


_COLUMNS = [("Self CPU %", None), ("Self CPU", "self_cpu_time_total"), ("CPU total %", None),
            ("CPU total", "cpu_time_total"), ("CPU time avg", "cpu_time"), ("# of Calls", "count")]


class EventList(list):
    """A list of events (``prof.events()``) or of averages (``prof.key_averages()``)."""

    def key_averages(self, group_by_input_shapes: bool = False) -> "EventList":
        groups: dict = {}
        for ev in self:
            k = (ev.key, str(ev.input_shapes)) if group_by_input_shapes else ev.key
            if k not in groups:
                groups[k] = FunctionEventAvg(ev.key, ev.input_shapes if group_by_input_shapes else None)
            groups[k].add(ev)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        tot = FunctionEventAvg("Total")
        for ev in self:
            tot.add(ev)
        return tot

    def self_cpu_time_total(self) -> float:
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """PyTorch's summary table (its CPU columns; no device ones: no device time is measured)."""
        rows = list(self)
        if sort_by is not None:
            if rows and not hasattr(rows[0], sort_by):
                raise AttributeError(f"'{type(rows[0]).__name__}' object has no attribute '{sort_by}'")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        rows = rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows
        total = sum(e.self_cpu_time_total for e in self) or 1.0
        shapes = any(e.input_shapes for e in self)  # (PyTorch's rule: a column when any event has shapes)
        name_w = min(max_name_column_width, max([len(e.key) for e in rows] + [4]) + 4)
        widths = [name_w] + [12] * len(_COLUMNS) + ([min(max_shapes_column_width, 40)] if shapes else [])
        heads = ["Name"] + [c for c, _ in _COLUMNS] + (["Input Shapes"] if shapes else [])
        line = "  ".join("-" * w for w in widths) + "  "

        def fmt(cells):
            return "  ".join(c.rjust(w) if i < len(_COLUMNS) + 1 else c.ljust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))) + "  "
        out = [line] if header is None else [header, line]
        out += [fmt(heads), line]
        for e in rows:
            name = e.key if len(e.key) <= name_w - 4 else e.key[:name_w - 7] + "..."
            cells = [name, f"{e.self_cpu_time_total / total * 100:.2f}%", _format_time(e.self_cpu_time_total),
                     f"{e.cpu_time_total / total * 100:.2f}%", _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time), str(e.count)]
            if shapes:
                cells.append(str(e.input_shapes)[:widths[-1]])
            out.append(fmt(cells))
        out += [line, f"Self CPU time total: {_format_time(sum(e.self_cpu_time_total for e in self))}", ""]
        return "\n".join(out)

    def export_chrome_trace(self, path: str) -> None:
        """Chrome's trace-event JSON (chrome://tracing, Perfetto, TensorBoard's trace viewer)."""
        events = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.trace_name,
                   "pid": 0, "tid": e.thread, "ts": e.start_us, "dur": e.cpu_time_total,
                   "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                  for e in self if isinstance(e, FunctionEvent)]
        opener = open
        if path.endswith(".gz"):
            import gzip
            opener = gzip.open
        with opener(path, "wt") as fh:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, fh)
