"""Recurrent modules: RNN (tanh/relu), LSTM (with ``proj_size``), GRU and their cells.

Parameters, their names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0``...), registration order,
initialisation (U(-1/sqrt(hidden), 1/sqrt(hidden))), checks and error messages are PyTorch's, so a torch
``state_dict`` loads as is. A forward is one op for the whole stack (``ops/rnn.py``: every layer and
direction scanned inside one jitted kernel); ``batch_first`` returns the time-first result transposed (as in
PyTorch: a view for LSTM, in place for RNN and GRU), unbatched input is unsqueezed/squeezed around it, and a
PackedSequence input is run with per-sequence lengths (states freeze at each sequence's last step).

>>> lstm = functorch_lite.nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
>>> out, (h_n, c_n) = lstm(functorch_lite.randn(4, 10, 8))   # out (4, 10, 32); h_n, c_n (4, 4, 16)
"""
from __future__ import annotations

import math
import numbers
import warnings

from ..._tensor.tensor import Tensor
from ...ops import rnn as _ops
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _with_sizes, batch_sizes_of
from .module import Module
from ..._warn import user_stacklevel as _user_stacklevel

__all__: list = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _zeros(shape, like: Tensor) -> Tensor:
    from ... import zeros
    return zeros(shape, dtype=like.dtype, device=like.device)


def _dropout_key(like: Tensor) -> Tensor:
    """A fresh key from the default generator (as ``nn.Dropout`` draws one), as a uint32 tensor."""
    from ...ops.attention import _random_key
    return _random_key(like)


class RNNBase(Module):
    """Base of RNN, LSTM and GRU: parameters per (layer, direction) in PyTorch's order."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        from ... import empty
        fk = {"device": device, "dtype": dtype}
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=_user_stacklevel())
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                params = [Parameter(empty((gate_size, layer_input_size), **fk)),
                          Parameter(empty((gate_size, real_hidden_size), **fk))]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [Parameter(empty(gate_size, **fk)), Parameter(empty(gate_size, **fk))]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(Parameter(empty((proj_size, hidden_size), **fk)))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, param in zip(names, params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        """The current parameters in PyTorch's flat order (read at each call: swapped parameters are seen)."""
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self) -> None:
        """No-op: there is no cuDNN weight buffer to compact (kept for scripts that call it)."""

    def reset_parameters(self) -> None:
        from .. import init
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes) -> None:
        w0 = self._flat_weights[0]
        if input.dtype != w0.dtype:
            from ...amp import autocast_mode as _amp
            if not _amp.ANY[0]:
                raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). "
                                 f"Convert input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")
        if batch_sizes is None and input.size(1 if self.batch_first else 0) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch,
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- the shared forward ------------------------------------------------------------------------------
    def _prepare(self, input, hx):
        """(input, hx or None, batch_sizes or None, sorted, unsorted, batched) with PyTorch's checks; ``hx`` is
        a tensor (RNN/GRU) or a pair (LSTM), already permuted to the packed order."""
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            data, _, sorted_indices, unsorted_indices = input
            bs = batch_sizes_of(input)
            if hx is not None:
                if lstm:
                    self.check_forward_args(data, hx, bs)
                hx = self.permute_hidden(hx, sorted_indices)
                if not lstm:
                    self.check_forward_args(data, hx, bs)
            else:
                self.check_input(data, bs)
            return data, hx, bs, sorted_indices, unsorted_indices, True
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            if lstm:
                want = 3 if batched else 2
                if hx[0].dim() != want or hx[1].dim() != want:
                    kind = "batched 3-D" if batched else "unbatched 2-D"
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if not batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            else:
                if batched and hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
                if not batched:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                           "tensor")
                    hx = hx.unsqueeze(1)
            self.check_forward_args(input, hx, None)
        else:
            self.check_input(input, None)
        return input, hx, None, None, None, batched

    def _run(self, input, hx):
        data, hx, bs, sorted_indices, unsorted_indices, batched = self._prepare(input, hx)
        lstm = self.mode == "LSTM"
        drop = self.dropout > 0 and self.training and self.num_layers > 1
        # the op reads batch_first input itself and returns a time-first output (unbatched: a batch of one)
        batch_first = self.batch_first and bs is None
        res = _ops.rnn_stack(self.mode, data, hx, self._flat_weights, num_layers=self.num_layers,
                             bidirectional=self.bidirectional, bias=self.bias, proj=self.proj_size > 0,
                             batch_first=batch_first, batch_sizes=bs, dropout=self.dropout,
                             key=_dropout_key(data) if drop else None)
        out, hidden = res[0], (tuple(res[1:]) if lstm else res[1])
        if bs is not None:
            packed = _with_sizes(PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices), bs)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            out = out.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        elif batch_first:  # (PyTorch's LSTM returns a transposed view; its RNN and GRU transpose in place)
            out = out.transpose(0, 1) if lstm else out.transpose_(0, 1)
        return out, hidden


class RNN(RNNBase):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``, ``act`` tanh or relu.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx: Tensor | None = None):
        """-> (output, h_n); a PackedSequence input gives a PackedSequence output."""
        return self._run(input, hx)


class LSTM(RNNBase):
    """LSTM (gates i, f, g, o); ``proj_size > 0`` projects each hidden state with ``weight_hr_l{k}``.

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        """-> (output, (h_n, c_n)); a PackedSequence input gives a PackedSequence output."""
        return self._run(input, hx)


class GRU(RNNBase):
    """GRU (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``).

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)``."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx: Tensor | None = None):
        """-> (output, h_n); a PackedSequence input gives a PackedSequence output."""
        return self._run(input, hx)


# ---- cells -------------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Base of the cells: ``weight_ih``, ``weight_hh`` (and ``bias_ih``, ``bias_hh``), PyTorch's init."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        from ... import empty
        fk = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **fk))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **fk))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **fk))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        from .. import init
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input: Tensor, hs) -> None:
        """PyTorch's cell checks (input_size, then each hidden's batch size and hidden size)."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for i, h in enumerate(hs):
            if h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} batch size "
                                   f"{h.size(0)}")
            if h.dim() < 2 or h.size(1) != self.hidden_size:
                got = h.size(1) if h.dim() >= 2 else "none"
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {got}, expected "
                                   f"{self.hidden_size}")

    def _batch(self, name: str, input: Tensor, hx, n: int):
        """Unbatched handling: (input 2-D, hidden tuple 2-D, batched?)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            hs = tuple(hx) if n == 2 else (hx,)
            for i, h in enumerate(hs):
                if h.dim() not in (1, 2):
                    what = f"hx[{i}]" if n == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = _zeros((input.size(0), self.hidden_size), input)
            hs = (z,) * n
        elif not batched:
            hs = tuple(h.unsqueeze(0) for h in hs)
        return input, hs, batched


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, ``act`` tanh or relu."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), batched = self._batch("RNNCell", input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, (h,))
        ret = _ops.rnn_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                            self.nonlinearity)
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o) -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx=None):
        input, hs, batched = self._batch("LSTMCell", input, hx, 2)
        if hx is not None:  # (as torch's: unbatched, ``hx[0]`` and ``hx[1]`` are taken; batched, ``lstm_cell``'s
            if not batched:  # argument parser wants a tuple or list of exactly two)
                hs = hs[:2] if len(hs) >= 2 else (hx[0], hx[1])
            elif isinstance(hx, Tensor):
                raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not Tensor")
            elif len(hs) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
        h, c = hs
        self._check(input, (h, c))
        h2, c2 = _ops.lstm_cell(input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h2, c2) if batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), batched = self._batch("GRUCell", input, hx, 1)
        self._check(input, (h,))
        ret = _ops.gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)
