"""``torch.multiprocessing.spawn``: ``fn(i, *args)`` in ``nprocs`` new processes (``i`` = 0 .. nprocs-1). A
child's exception is written (as its formatted traceback) to a file of its own; ``ProcessContext.join`` waits,
and on the first child that exits non-zero stops the others (SIGTERM, then SIGKILL after a grace period) and raises
``ProcessRaisedException`` with that traceback, or ``ProcessExitedException`` with the exit code or signal, in
PyTorch's words."""
from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings
from .._warn import user_stacklevel as _user_stacklevel

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
log = logging.getLogger(__name__)


class ProcessException(Exception):
    __slots__ = ("error_index", "error_pid")

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code, or was killed by a signal."""
    __slots__ = ("exit_code",)

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent() -> None:
    """Linux: the child gets SIGINT when its parent dies (a non-daemonic child is not left running)."""
    if sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _run_child(fn, i, args, error_file):
    """A child's entry point: ``fn(i, *args)``; an exception's traceback goes to ``error_file``, exit code 1."""
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # (stopped by the parent)
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The started processes; :meth:`join` waits for them and raises the first failure."""

    def __init__(self, processes, error_files):
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list:
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: until one exits). True when every process has exited cleanly,
        False while some still run; the first that exits non-zero stops the others and raises."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        self._stop_others(grace_period)
        proc, path = self.processes[failed], self.error_files[failed]
        if not os.access(path, os.R_OK):
            code = proc.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {failed:d} terminated with signal {name}", failed, proc.pid,
                                             code, name)
            raise ProcessExitedException(f"process {failed:d} terminated with exit code {code:d}", failed, proc.pid,
                                         code)
        with open(path, "rb") as fh:
            trace = pickle.load(fh)
        raise ProcessRaisedException(f"\n\n-- Process {failed:d} terminated with the following error:\n{trace}",
                                     failed, proc.pid)

    def _stop_others(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", p.pid)
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL", p.pid)
                p.kill()
            p.join()


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=_user_stacklevel())
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn"):
    """Start ``nprocs`` processes of ``start_method`` running ``fn(i, *args)``; with ``join``, wait for them all
    (raising the first failure), else return their :class:`ProcessContext`."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="pytorch-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)  # (it exists again only if the child fails)
        p = ctx.Process(target=_run_child, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False, start_method: str = "spawn"):
    """``start_processes`` with the ``spawn`` start method (others warn, as PyTorch's, and are used)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=_user_stacklevel())
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
