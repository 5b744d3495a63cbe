"""GLNN, GNN and RNN trained offline, backed by the Cython kernels of :mod:`seqzip._kernels.glnn`.

:class:`FastNetwork` is a :class:`seqzip.reference.glnn.Network` whose forward pass, BPTT,
moduli and metric statistics run in Cython (with seqzip's deterministic exp/log/tanh); the
step rules and the training loop are the reference's own, so there is one algorithm and two
implementations of its inner loops, held equal by the tests.

    >>> import numpy as np
    >>> x = np.array([0, 1, 2, 0, 1, 2, 0, 1] * 4, dtype=np.int64)
    >>> net = FastNetwork.initial("glnn", n_units=4, d=2, x=x, alphabet_size=3, seed=0)
    >>> result = train(net, x, TrainConfig(iterations=5))
    >>> result.history[-1] > result.history[0]
    True
"""
from __future__ import annotations

import numpy as np

from .._kernels import glnn as _glnn
from ..reference.glnn import (KINDS, Gradients, Network, Run, TrainConfig, Trainer, TrainResult,
                             score_bits, train)

__all__ = ["FastNetwork", "TrainConfig", "Trainer", "TrainResult", "train", "score_bits",
           "KINDS"]


class FastNetwork(Network):
    """A :class:`Network` whose inner loops run in Cython.

        >>> x = np.array([0, 1, 2, 0, 1, 2], dtype=np.int64)
        >>> fast = FastNetwork.initial("gnn", n_units=3, d=2, x=x, alphabet_size=3, seed=1)
        >>> slow = Network(fast.kind, fast.sources, fast.w, fast.tau, fast.V0, fast.rho)
        >>> bool(abs(fast.forward(x).log_likelihood - slow.forward(x).log_likelihood) < 1e-9)
        True
    """

    def _layout(self):
        incoming = np.ascontiguousarray(
            np.concatenate([np.zeros((self.n_units + 1, 1), np.int64), self.sources], axis=1))
        tau = self.tau if self.kind != "rnn" else self.tau[:, :, None]
        rho = self.rho if self.rho is not None else np.zeros((1, 1))
        return (KINDS.index(self.kind), int(self.activation == "logistic"), incoming,
                np.ascontiguousarray(self.w), np.ascontiguousarray(tau),
                np.ascontiguousarray(rho))

    @staticmethod
    def _chi(x, chi):
        return np.ones(len(x)) if chi is None else np.ascontiguousarray(chi, dtype=np.float64)

    def forward(self, x: np.ndarray, chi: np.ndarray | None = None) -> Run:
        kind, logistic, incoming, w, tau, rho = self._layout()
        x = np.ascontiguousarray(x, dtype=np.int64)
        T, N = len(x), self.n_units
        V, a = np.zeros((T + 1, N + 1)), np.zeros((T + 1, N + 1))
        pi = np.zeros((T, self.alphabet_size))
        loglik = _glnn.forward(kind, logistic, incoming, w, tau, rho,
                               np.ascontiguousarray(self.V0), x, self._chi(x, chi), V, a, pi)
        return Run(V, a, pi, loglik)

    def backward(self, x: np.ndarray, run: Run, chi: np.ndarray | None = None) -> Gradients:
        kind, logistic, incoming, w, tau, rho = self._layout()
        x = np.ascontiguousarray(x, dtype=np.int64)
        T, N, A = len(x), self.n_units, self.alphabet_size
        B, W = np.zeros((T + 1, N + 1)), np.zeros((N + 1, A))
        G_tau = np.zeros(tau.shape)
        G_rho = np.zeros((N + 1, A))
        _glnn.backward(kind, logistic, incoming, w, tau, x, self._chi(x, chi), run.a, run.pi,
                       B, W, G_tau, G_rho)
        return Gradients(B, W, G_tau if self.kind != "rnn" else G_tau[:, :, 0],
                         G_rho if self.kind == "rnn" else None, B[0].copy())

    def modulus(self, x: np.ndarray, run: Run, grads: Gradients, method: str,
                chi: np.ndarray | None = None) -> np.ndarray:
        if method == "ruop":
            return grads.B ** 2
        if method != "rbpm":
            raise ValueError("method must be 'ruop' or 'rbpm'")
        kind, logistic, incoming, w, tau, rho = self._layout()
        x = np.ascontiguousarray(x, dtype=np.int64)
        m = np.zeros((len(x) + 1, self.n_units + 1))
        _glnn.modulus_rbpm(kind, logistic, incoming, w, tau, x, self._chi(x, chi), run.a,
                           run.pi, m)
        return m

    def writing_stats(self, x, run, chi, eps):
        h_diag = np.zeros((self.n_units + 1, self.alphabet_size))
        h_cross = np.zeros_like(h_diag)
        _glnn.writing_hessian(run.a, run.pi, self._chi(x, chi),
                              np.ascontiguousarray(eps, dtype=np.float64), h_diag, h_cross)
        return h_diag, h_cross

    def transition_stats(self, x, run, m, eps):
        kind, _, incoming, _, _, _ = self._layout()
        x = np.ascontiguousarray(x, dtype=np.int64)
        N, A, K = self.n_units, self.alphabet_size, incoming.shape[1]
        if self.kind != "rnn":
            M = np.zeros((N + 1, A, K, K))
            _glnn.transition_metrics(kind, incoming, x, run.a, np.ascontiguousarray(m), eps, M)
            return M, None
        diag, cross = np.zeros((N + 1, K + A)), np.zeros((N + 1, K + A))
        _glnn.rnn_quasi_diagonal_metric(incoming, x, run.a, np.ascontiguousarray(m), eps,
                                        diag, cross)
        return diag, cross
