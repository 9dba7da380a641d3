"""``torch.nn.utils.rnn``: PackedSequence and the pad / pack helpers.

A PackedSequence holds the rows of a batch of sequences in time-major order (``data``, shape (N, *)) with
``batch_sizes`` (int64, CPU): how many sequences are still running at each step, longest first. The
packing and unpacking are single ops (``ops/rnn.py``) with the batch sizes as static arguments, so the
lengths are read on the host once (as PyTorch reads its CPU ``lengths``); inside ``compile`` a traced
``lengths`` tensor is a data-dependent read (a graph break). Each PackedSequence made here also carries
its batch sizes as a Python tuple, so the RNN modules never read them back from the tensor.

>>> x = functorch_lite.randn(5, 3, 2)                      # (T, B, *) padded
>>> p = pack_padded_sequence(x, [5, 3, 1])                  # p.data: (9, 2), p.batch_sizes: [3, 2, 2, 1, 1]
>>> y, lengths = pad_packed_sequence(p)                     # y == x past each length zeroed, lengths [5, 3, 1]
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ... import dtypes as D
from ..._tensor.tensor import Tensor
from ...ops import rnn as _ops
from ...ops._dispatch import broadcast_shapes

__all__: list = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
                 "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    """The packed rows of variable-length sequences (``torch.nn.utils.rnn.PackedSequence``); make it with
    :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                    "manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def pin_memory(self) -> "PackedSequence":
        return _with_sizes(type(self)(self.data.pin_memory(), self.batch_sizes,
                                      bind(self.sorted_indices, lambda t: t.pin_memory()),
                                      bind(self.unsorted_indices, lambda t: t.pin_memory())), self)

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """Convert ``data`` (dtype and/or device); the indices follow its device, ``batch_sizes`` stays on CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        # (torch then parses the arguments again with ``_parse_to``, which refuses a ``copy`` one, positional too)
        if "copy" in kwargs or len(args) > (2 if args and isinstance(args[0], (Tensor, D.dtype)) else 3):
            raise RuntimeError(".to() does not accept copy argument")

        def call_to(t):
            return t.to(data.device)
        return _with_sizes(type(self)(data, self.batch_sizes, bind(self.sorted_indices, call_to),
                                      bind(self.unsorted_indices, call_to)), self)

    def cuda(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_dt("float64"))

    def float(self):
        return self.to(dtype=_dt("float32"))

    def half(self):
        return self.to(dtype=_dt("float16"))

    def long(self):
        return self.to(dtype=_dt("int64"))

    def int(self):
        return self.to(dtype=_dt("int32"))

    def short(self):
        return self.to(dtype=_dt("int16"))

    def char(self):
        return self.to(dtype=_dt("int8"))

    def byte(self):
        return self.to(dtype=_dt("uint8"))

    @property
    def is_cuda(self) -> bool:
        """True if ``data`` is on a GPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _dt(name):
    from ... import dtypes
    return getattr(dtypes, name)


def _with_sizes(ps: PackedSequence, sizes) -> PackedSequence:
    """Attach the batch sizes as a Python tuple (``sizes``: a tuple or a PackedSequence carrying one)."""
    if isinstance(sizes, PackedSequence):
        sizes = sizes.__dict__.get("_bs")
    if sizes is not None:
        ps._bs = sizes
    return ps


def batch_sizes_of(ps: PackedSequence) -> tuple:
    """The batch sizes of ``ps`` as Python ints (from the attached tuple, else read from the tensor)."""
    bs = ps.__dict__.get("_bs")
    if bs is None:
        bs = ps._bs = tuple(int(v) for v in ps.batch_sizes.tolist())
    return bs


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _int64_cpu(values) -> Tensor:
    from ... import tensor, int64
    return tensor(list(values), dtype=int64, device="cpu")


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences of lengths ``lengths``.

    ``enforce_sorted=True`` expects lengths in decreasing order; otherwise the batch is sorted here and the
    permutation kept in ``sorted_indices`` / ``unsorted_indices``."""
    if not isinstance(lengths, Tensor):
        try:
            lens = [int(v) for v in lengths]
        except TypeError:  # (nested: torch's ``as_tensor(lengths, dtype=int64)``, refused below by its dimension)
            from ... import as_tensor, int64
            lengths = as_tensor(lengths, dtype=int64)
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            if lengths.dim() > 1 and not enforce_sorted:  # (torch sorts them, then index_selects by that 2-D order)
                raise IndexError("index_select(): Index is supposed to be a vector")
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device} Long tensor")  # (torch has made them int64 by then)
        lens = [int(v) for v in lengths.tolist()]
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got 1)")
    sorted_indices = None
    if not enforce_sorted:  # sorted on the host (stable: ties keep their order), as the lengths are host values
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        lens = [lens[i] for i in order]
        sorted_indices = _int64_cpu(order).to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[0 if batch_first else 1]
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                           f"(batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    steps = input.shape[1 if batch_first else 0]
    if lens[0] > steps:  # PyTorch reads past the end of the input here
        raise RuntimeError(f"pack_padded_sequence: a length ({lens[0]}) is larger than the padded sequence "
                           f"length ({steps})")
    bs = tuple(sum(1 for n in lens if n > t) for t in range(lens[0]))
    data = _ops._pack_padded_sequence(input, bs, bool(batch_first))
    return _with_sizes(PackedSequence(data, _int64_cpu(bs), sorted_indices, None), bs)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`pack_padded_sequence`: (padded batch, lengths as int64 CPU tensor)."""
    bs = batch_sizes_of(sequence)
    steps = len(bs)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = int(total_length)
    out = _ops._pad_packed_sequence(sequence.data, bs, padding_value, steps)
    if batch_first:
        out = out.transpose(0, 1)
    lens = [sum(1 for n in bs if n > b) for b in range(bs[0])] if bs else []
    lengths = _int64_cpu(lens)
    if sequence.unsorted_indices is not None:
        out = out.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return out, lengths


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack variable-length tensors (lengths along dim 0, the same trailing dims) into (T, n, *) or (n, T, *),
    padded at the end (``padding_side='right'``) or the start (``'left'``) with ``padding_value``."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    if first.dim() == 0:  # (torch's ``sizes().slice(1)`` of the first, then ``size(0)`` of every one)
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    if any(s.dim() == 0 for s in sequences):
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    trailing = tuple(first.shape[1:])
    for s in sequences:
        dst = (s.shape[0],) + trailing
        got = broadcast_shapes(dst, tuple(s.shape))
        if got != dst:
            raise RuntimeError(f"output with shape {list(dst)} doesn't match the broadcast shape {list(got)}")
    return _ops._pad_sequence(list(sequences), bool(batch_first), padding_value, padding_side)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into a list of tensors of lengths ``lengths``.

    (PyTorch transposes a time-first ``padded_sequences`` in place here; this leaves it unchanged.)"""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    from ... import arange
    idx = arange(padded_sequences.shape[1], device=lengths.device)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of variable-length tensors (longest first unless ``enforce_sorted=False``)."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """Inverse of :func:`pack_sequence`: the list of tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
