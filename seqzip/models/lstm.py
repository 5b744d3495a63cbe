"""LSTM, multiplicative LSTM and multiplicative RNN trained online while coding.

The kernel is :class:`seqzip._kernels.lstm.OnlineRNN` (on the base of
:mod:`seqzip._kernels.online`; the cells and the window are defined by
:mod:`seqzip.reference.lstm`).  Initial weights come from a splitmix64 stream of the header's
seed: the thesis's N(0, 0.1) (001 Sect. 4.5), or with ``init="orthogonal"`` the recurrent n x n
blocks orthonormalised (002's starting point); biases and output weights start at zero, so that
the first prediction is the experts' (or uniform without experts).

    >>> m = MLSTMModel(MLSTMConfig(hidden=8, window=8, interval=8, experts=""), b"abc", seed=1)
    >>> for s in [0, 1, 2] * 300:
    ...     _ = m.predict(); m.update(s)
    >>> int(m.predict().argmax())   # after "... 1 2" comes 0
    0
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._kernels import lstm as kernels
from .._kernels.relu_rnn import oinit_matrix
from .._kernels.prng import normal_stream
from .base import Model, check_output_layer, check_range
from .experts import experts_memory, make_experts, parse_experts
from .relu_rnn import oinit_steps

CELLS = ("lstm", "mlstm", "mrnn")
OPTIMIZERS = ("adam", "riemannian")
INITS = ("normal", "orthogonal")


def kernel_module():
    """The build of the network kernels this CPU runs: ``lstm_avx2`` (lstm.pyx compiled for
    AVX2) where the CPU has AVX2, as the cm kernel finds (``seqzip._kernels.cm.simd_path()``;
    SEQZIP_SIMD=0 says no), else ``lstm``.  Both compute the same bits.

        >>> kernel_module().__name__ in ("seqzip._kernels.lstm", "seqzip._kernels.lstm_avx2")
        True
    """
    from .._kernels.cm import simd_path
    if simd_path() == "avx2":
        try:
            from .._kernels import lstm_avx2
        except ImportError:  # built without it (not x86-64)
            return kernels
        return lstm_avx2
    return kernels


# Hidden sizes by level, chosen per cell so that the three have about the same number of
# parameters at each level (within 2% for an alphabet of 90 symbols, as English text).
_HIDDEN = {
    "mlstm": {1: 16, 2: 24, 3: 32, 4: 48, 5: 64, 6: 80, 7: 96, 8: 128, 9: 160},
    "lstm": {1: 19, 2: 28, 3: 37, 4: 56, 5: 74, 6: 92, 7: 110, 8: 146, 9: 182},
    "mrnn": {1: 30, 2: 44, 3: 58, 4: 85, 5: 112, 6: 138, 7: 164, 8: 216, 9: 267},
}


@dataclass(frozen=True)
class RNNConfig:
    """See the module docstring.

        >>> RNNConfig.for_cell("mlstm", 1).hidden, RNNConfig(optimizer="sgd")
        Traceback (most recent call last):
        ...
        ValueError: optimizer must be one of ('adam', 'riemannian')
    """
    hidden: int = 80  # hidden units n
    window: int = 20  # symbols of truncated BPTT per training step
    interval: int = 20  # symbols between training steps
    optimizer: str = "adam"  # "adam", or "riemannian" (QD unitwise metric + QDH output layer)
    lr: float = 0.002  # Adam's rate, or the Riemannian step's (alice29.txt, mLSTM 80 units with
    # ctw8+order2: 0.001 -> 2.0415, 0.002 -> 2.0351, 0.005 -> 2.0389 bpc of log-loss)
    lr_decay: float = 0.0  # rate / sqrt(1 + steps * lr_decay)
    beta1: float = 0.9
    beta2: float = 0.999
    adam_eps: float = 1e-6
    clip: float = 4.0  # the window gradient's norm is clipped to this
    init: str = "normal"  # "normal" (the thesis's N(0, init_std)) or "orthogonal"
    init_std: float = 0.1
    decay: float = 0.999  # Riemannian: running metric kept across windows
    eps: float = 1.0  # Riemannian: damping of the metric
    rate_w: float = 0.1  # Riemannian: QDH rate of the output weights
    writing_memory: int = 2048  # symbols of memory of the output and gate Hessians
    writing_eps: float = 3.0
    writing_prior: float = 256.0
    experts: str = "ctw8+order2"  # as for the GLNN ("" for the network alone)
    rate_beta: float = 1.0
    beta_eps: float = 300.0
    oinit: bool = False  # OINIT (002 Sect. II-A): the recurrent n x n blocks pre-trained by
    # gradient descent on ||W W^T - I||_F^2 until below 1e-6 (after ``init``), in the kernel,
    # within a step budget per header (relu_rnn.oinit_steps: about 2.5 CPU s at most)
    oinit_rate: float = 0.1  # its rate alpha_p (the paper's)
    open_penalty: float = 0.0  # OPEN (002 eq. 31): lambda of the penalty on every block

    # Fields added after streams existed: left out of the header while at their defaults.
    ADDED_FIELDS: ClassVar[tuple[str, ...]] = ("oinit", "oinit_rate", "open_penalty")

    def __post_init__(self) -> None:
        # Ranges: what the levels use (up to 267 units, window = interval) with a margin of
        # 1.2x in width and 2x in training work.  A header is untrusted input: these bound the
        # memory and the work per symbol a stream can ask for (benchmarks/hostile.py).
        check_range("hidden", self.hidden, 1, 320)
        check_range("oinit_rate", self.oinit_rate, 1e-6, 1.0)
        check_range("open_penalty", self.open_penalty, 0.0, 1e6)
        if self.oinit and self.init_std == 0.0:
            raise ValueError("OINIT needs random initial weights (init_std > 0)")
        check_range("window", self.window, 2, 256)
        check_range("interval", self.interval, 1, 4096)
        if self.window > 2 * self.interval:
            raise ValueError("window must be at most twice the interval")
        check_range("lr", self.lr, 0.0, 100.0)
        check_range("lr_decay", self.lr_decay, 0.0, 1e6)
        check_range("beta1", self.beta1, 0.0, 0.999999)
        check_range("beta2", self.beta2, 0.0, 0.999999)
        check_range("adam_eps", self.adam_eps, 1e-300, 1.0)
        check_range("clip", self.clip, 1e-12, 1e12)
        check_range("init_std", self.init_std, 0.0, 10.0)
        check_range("decay", self.decay, 0.0, 1.0)
        check_range("eps", self.eps, 1e-12, 1e6)
        check_range("rate_w", self.rate_w, 0.0, 1e3)
        check_output_layer(self)
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}")
        parse_experts(self.experts)

    def memory_bytes(self, alphabet_size: int) -> int:
        """Bytes the kernel and its experts allocate for this config (a bound: the mLSTM's
        layout, the largest of the three cells at a given width)."""
        n, A, L = self.hidden, alphabet_size, self.window
        size = A * 4 * n + 4 * n + n * 4 * n + n * n + A * n + (n + 1) * A
        return 8 * (6 * size + L * (8 * n + 4 * n + A) + 6 * (n + 1) * A + 16 * n) + \
            experts_memory(self.experts, alphabet_size)

    @classmethod
    def for_cell(cls, cell: str, level: int) -> "RNNConfig":
        experts = {1: "order2", 2: "ctw3", 3: "ctw4+order2", 4: "ctw6+order2"}.get(
            level, {9: "ctw12+order2"}.get(level, "ctw8+order2"))
        return cls(hidden=_HIDDEN[cell][level], experts=experts)


def _config_class(cell: str) -> type:
    """A config class per family: same fields, levels sized for that cell."""
    return type(f"{cell.upper()}Config", (RNNConfig,), {
        "for_level": classmethod(lambda cls, level: cls(**vars(RNNConfig.for_cell(cell, level)))),
        "__doc__": f"Config of the online {cell} (fields of RNNConfig).\n\n"
                   f"    >>> {cell.upper()}Config.for_level(1).hidden\n"
                   f"    {_HIDDEN[cell][1]}\n"})


LSTMConfig = _config_class("lstm")
MLSTMConfig = _config_class("mlstm")
MRNNConfig = _config_class("mrnn")


def initial_theta(cell: str, config: RNNConfig, alphabet_size: int, seed: int) -> np.ndarray:
    """All parameters, flat in the kernel's order (``seqzip._kernels.lstm.layout``).

        >>> theta = initial_theta("lstm", RNNConfig(hidden=2), 3, seed=0)
        >>> theta.shape  # E (3, 8), b (8,), R (2, 8), Wo (3, 3): 24 + 8 + 16 + 9
        (57,)
    """
    n = config.hidden
    layout = kernels.layout(cell, n, alphabet_size)
    total = sum(int(np.prod(s)) for s in layout.values())
    theta = config.init_std * normal_stream(seed, total)
    blocks = sum(shape[1] // n for name, shape in layout.items() if name in ("R", "Wmh"))
    at = 0
    for name, shape in layout.items():
        size = int(np.prod(shape))
        block = theta[at:at + size].reshape(shape)
        if name in ("b", "Wo"):
            block[...] = 0.0
        elif name in ("R", "Wmh") and (config.init == "orthogonal" or config.oinit):
            for k in range(shape[1] // n):  # each n x n block of (n, P)
                square = np.ascontiguousarray(block[:, k * n:(k + 1) * n])
                if config.init == "orthogonal":
                    kernels.orthonormal_rows(square)
                if config.oinit:
                    oinit_matrix(square, config.oinit_rate, max_steps=oinit_steps(n, blocks),
                                 must_converge=False)
                block[:, k * n:(k + 1) * n] = square
        at += size
    return theta


class RNNModel(Model):
    """Online ``cell`` over ``alphabet``; the subclasses fix the cell.

        >>> m = MLSTMModel(MLSTMConfig.for_level(1), alphabet=b"ab", seed=0)
        >>> m.parameter_count() > 0, m.predict().shape
        (True, (2,))
    """

    cell = "mlstm"
    config_class = RNNConfig

    def make_kernel(self) -> kernels.OnlineRNN:
        c = self.config
        theta = initial_theta(self.cell, c, self.alphabet_size, self.seed)
        kernel = kernel_module().OnlineRNN(c, self.cell, theta, self.alphabet_size,
                                           make_experts(c.experts, self.alphabet, self.seed))
        self.initial_recurrent = recurrent_blocks(self.cell, kernel.parameters())
        return kernel

    def recurrent_matrices(self) -> dict[str, np.ndarray]:
        """The dense recurrent n x n matrices now (copies), by name."""
        return recurrent_blocks(self.cell, self.kernel.parameters())

    def parameter_count(self) -> int:
        return self.kernel.size

    def expert_weights(self) -> list[float]:
        return self.kernel.expert_weights()[0].round(3).tolist()

    def stats(self) -> dict:
        return {**super().stats(), "training_steps": self.kernel.steps,
                "parameters": self.kernel.size, "expert_weights": self.expert_weights()}


def recurrent_blocks(cell: str, params: dict) -> dict[str, np.ndarray]:
    """The n x n recurrent blocks: R's (one per pre-activation group) and the mLSTM's and
    mRNN's Wmh.

        >>> from seqzip.reference.lstm import initial_parameters
        >>> p = initial_parameters("mlstm", n=3, A=4, rng=np.random.default_rng(0))
        >>> {name: block.shape for name, block in recurrent_blocks("mlstm", p).items()}
        {'R[Hin]': (3, 3), 'R[i]': (3, 3), 'R[f]': (3, 3), 'R[o]': (3, 3), 'Wmh': (3, 3)}
    """
    R = params["R"]
    n = R.shape[0]
    groups = ("Hin", "i", "f", "o") if cell != "mrnn" else ("h",)
    out = {f"R[{g}]": R[:, k * n:(k + 1) * n].copy() for k, g in enumerate(groups)}
    if "Wmh" in params:
        out["Wmh"] = params["Wmh"].copy()
    return out


class LSTMModel(RNNModel):
    """See the module docstring.

        >>> LSTMModel(LSTMConfig.for_level(1), b"ab", 0).kernel.cell
        0
    """
    cell = "lstm"


class MLSTMModel(RNNModel):
    """See the module docstring.

        >>> MLSTMModel(MLSTMConfig.for_level(1), b"ab", 0).kernel.cell
        1
    """
    cell = "mlstm"


class MRNNModel(RNNModel):
    """See the module docstring.

        >>> MRNNModel(MRNNConfig.for_level(1), b"ab", 0).kernel.cell
        2
    """
    cell = "mrnn"


def model_for_cell(cell: str, config: RNNConfig, alphabet: bytes, seed: int) -> RNNModel:
    """The model of ``cell`` ("lstm", "mlstm", "mrnn") over ``alphabet``.

        >>> type(model_for_cell("mrnn", MRNNConfig.for_level(1), b"ab", 0)).__name__
        'MRNNModel'
    """
    return {"lstm": LSTMModel, "mlstm": MLSTMModel, "mrnn": MRNNModel}[cell](config, alphabet,
                                                                          seed)
