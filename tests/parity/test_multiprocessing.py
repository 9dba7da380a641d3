"""``torch.multiprocessing`` against real PyTorch: ``spawn`` runs ``fn(i, *args)`` in each child (a tensor argument
arrives with its values), a child's exception comes back as ``ProcessRaisedException`` with its traceback, an exit
code as ``ProcessExitedException``, ``join=False`` gives a ``ProcessContext``; tensors travel through a queue by
value; the sharing-strategy switches; and Python's multiprocessing names are all there. Children are real processes
(each imports its library), so the cases are few."""
import multiprocessing as std_mp
import pickle

import pytest
import torch
import torch.multiprocessing

import functorch_lite as ft
import functorch_lite.multiprocessing as fmp

from _mp_workers import exit_with, raise_on, send_back, write_values

LIBS = [(torch, "torch", torch.multiprocessing), (ft, "functorch_lite", fmp)]


def test_multiprocessing_names_and_sharing_strategies():
    assert set(std_mp.__all__) <= set(fmp.__all__) and all(hasattr(fmp, n) for n in fmp.__all__)
    assert fmp.Queue is not None and fmp.get_context("spawn").Process is std_mp.get_context("spawn").Process
    assert fmp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert fmp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    for lib in (torch.multiprocessing, fmp):
        with pytest.raises(AssertionError) as e:
            lib.set_sharing_strategy("shm")
        msg = str(e.value)
        lib.set_sharing_strategy("file_system")
        assert lib.get_sharing_strategy() == "file_system"
        lib.set_sharing_strategy("file_descriptor")
    assert msg.startswith("invalid sharing strategy 'shm', expected one of {")
    assert ft.multiprocessing is fmp


@pytest.mark.parametrize("lib,name,mp", LIBS, ids=["torch", "functorch_lite"])
def test_spawn_runs_every_rank_with_its_arguments(tmp_path, lib, name, mp):
    out = tmp_path / name
    out.mkdir()
    assert mp.spawn(write_values, args=(name, str(out), lib.tensor([1.5, -2.0])), nprocs=2) is None
    assert [(out / f"{i}.txt").read_text() for i in range(2)] == ["[2.5, -1.0]", "[4.0, -3.0]"]


def _failure(mp, fn, args, nprocs):
    with pytest.raises((mp.ProcessRaisedException, mp.ProcessExitedException)) as e:
        mp.spawn(fn, args=args, nprocs=nprocs)
    return e.value


def test_a_child_exception_and_exit_code_are_raised_as_in_torch():
    got = []
    for _, _, mp in LIBS:
        raised = _failure(mp, raise_on, (1,), 2)
        exited = _failure(mp, exit_with, (3,), 1)
        got.append((type(raised).__name__, raised.error_index, raised.msg.splitlines()[:3], raised.msg.splitlines()[-1],
                    type(exited).__name__, str(exited), exited.exit_code, exited.signal_name, exited.error_index))
        # picklable (sent between processes, as PyTorch's)
        again = pickle.loads(pickle.dumps(exited))
        assert (type(again), again.msg, again.exit_code, again.error_pid) == \
            (type(exited), exited.msg, exited.exit_code, exited.error_pid)
    assert got[0] == got[1]
    assert got[1][:2] == ("ProcessRaisedException", 1) and got[1][3] == "ValueError: rank 1 refuses"
    assert got[1][2][:3] == ["", "", "-- Process 1 terminated with the following error:"]
    assert got[1][5] == "process 0 terminated with exit code 3"


def test_join_false_gives_a_process_context_and_tensors_travel_by_value():
    ctx = fmp.get_context("spawn")
    q = ctx.SimpleQueue()
    pc = fmp.spawn(send_back, args=("functorch_lite", q), nprocs=2, join=False)
    assert isinstance(pc, fmp.ProcessContext) and len(pc.pids()) == 2
    got = dict(q.get() for _ in range(2))
    while not pc.join(timeout=30):
        pass
    assert pc.join() is True
    assert {i: (type(t), t.tolist()) for i, t in got.items()} == \
        {0: (ft.Tensor, [0.0, 1.0, 2.0]), 1: (ft.Tensor, [0.0, 2.0, 4.0])}
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        assert fmp.spawn(raise_on, args=(5,), nprocs=0, start_method="fork") is None  # (no process to start)
    with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
        fmp.SpawnContext([], [])
