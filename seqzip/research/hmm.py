"""Hidden Markov model trained by expectation-maximisation: the third sanity check of 000
(Sect. 4, footnote 16).

The model: hidden states 1..N on an oriented random graph with ``edges`` edges out of every
state (its self-loop included, like the networks' graphs; 000 sets ``edges`` to the alphabet
size); state s emits symbol y with probability ``emission[s, y]`` and then moves along one of its
edges with probability ``transition[s, s']``.  Initialisation as in footnote 16: each row of
``transition`` is drawn from the Jeffreys prior Dirichlet(1/2, ..., 1/2) over the state's edges,
and ``emission[s, y]`` is the frequency of y in the training sequence times a uniform([0, 1])
draw, normalised.  Training is Baum-Welch (EM) with the scaled forward-backward recursions, so
each iteration costs O(T (N edges + N A)) and never lowers the training likelihood.

The prediction of x_t is ``pi_t = prior_t @ emission`` where ``prior_t`` is the state
distribution given x_0..x_{t-1}; :meth:`HMM.forward` returns these rows in a
:class:`~seqzip.reference.glnn.Run`, so :func:`seqzip.research.glnn.score_bits` scores an HMM
exactly as it scores the networks (with the uniform mixing of Sect. 4).

    >>> x = np.array([0, 1, 2, 1] * 30, dtype=np.int64)
    >>> hmm = HMM.initial(n_states=4, x=x, alphabet_size=3, seed=0)
    >>> trainer = EMTrainer(hmm, x)
    >>> before = trainer.log_likelihood
    >>> for _ in range(5):
    ...     trainer.step()
    >>> bool(trainer.log_likelihood > before)
    True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..reference.glnn import Run, random_graph


@dataclass
class HMM:
    """A discrete HMM: ``initial`` (N,), ``transition`` (N, N) with zeros off the graph,
    ``emission`` (N, A); rows sum to 1."""

    initial_distribution: np.ndarray
    transition: np.ndarray
    emission: np.ndarray
    kind: str = "hmm"

    @property
    def n_units(self) -> int:
        """Number of hidden states (named like the networks' size for the Table 1 driver)."""
        return self.transition.shape[0]

    @property
    def alphabet_size(self) -> int:
        return self.emission.shape[1]

    def copy(self) -> "HMM":
        return HMM(self.initial_distribution.copy(), self.transition.copy(),
                   self.emission.copy())

    @classmethod
    def initial(cls, n_states: int, x: np.ndarray, alphabet_size: int, seed: int = 0,
                edges: int | None = None) -> "HMM":
        """Footnote 16's initialisation on a random graph of ``edges`` (default: alphabet
        size, capped at N) edges per state, self-loops included.

        >>> hmm = HMM.initial(3, np.array([0, 0, 1]), 2, seed=1, edges=2)
        >>> bool(np.allclose(hmm.transition.sum(axis=1), 1.0)), int((hmm.transition > 0).sum())
        (True, 6)
        """
        if n_states < 1 or alphabet_size < 1:
            raise ValueError("an HMM needs at least one state and one symbol")
        rng = np.random.default_rng(seed)
        edges = min(alphabet_size if edges is None else edges, n_states)
        sources = random_graph(n_states, edges, rng)[1:] - 1  # (N, edges) 0-based
        transition = np.zeros((n_states, n_states))
        for s in range(n_states):
            transition[s, sources[s]] = rng.dirichlet(np.full(edges, 0.5))
        freq = np.bincount(np.asarray(x), minlength=alphabet_size)[:alphabet_size] / max(len(x), 1)
        emission = freq[None, :] * rng.uniform(0.0, 1.0, (n_states, alphabet_size))
        totals = emission.sum(axis=1, keepdims=True)
        emission = np.where(totals > 0, emission / np.where(totals > 0, totals, 1.0),
                            1.0 / alphabet_size)
        return cls(np.full(n_states, 1.0 / n_states), transition, emission)

    def forward(self, x: np.ndarray, chi: np.ndarray | None = None) -> Run:
        """Predictions pi_t of every x_t given x_<t (``Run.pi``) and the log-likelihood
        (natural log).  ``chi`` is accepted for the networks' interface and must be None.
        A symbol the model cannot produce (one absent from the training sequence) gets
        pi_t(x_t) = 0, leaves the state distribution as it was and makes the log-likelihood
        -inf; :func:`~seqzip.research.glnn.score_bits` still scores it through its mixing."""
        if chi is not None:
            raise ValueError("the HMM scores every symbol (chi must be None)")
        alpha, scale, prior = _forward(self, np.asarray(x, dtype=np.int64), strict=False)
        pi = prior @ self.emission
        empty = np.zeros((0, 0))
        with np.errstate(divide="ignore"):
            return Run(empty, empty, pi, float(np.log(scale).sum()))

    def log_likelihood(self, x: np.ndarray) -> float:
        """Natural-log likelihood of ``x`` by the scaled forward recursion."""
        return float(np.log(_forward(self, np.asarray(x, dtype=np.int64))[1]).sum())


def _forward(hmm: HMM, x: np.ndarray, strict: bool = True):
    """Scaled forward pass: alpha[t] = P(state_t | x_0..x_t), scale[t] = P(x_t | x_<t),
    prior[t] = P(state_t | x_<t).  An impossible symbol raises ValueError when ``strict``,
    else it is skipped (scale 0)."""
    T, N = len(x), hmm.n_units
    alpha, prior, scale = np.empty((T, N)), np.empty((T, N)), np.empty(T)
    emit_t = hmm.emission.T  # (A, N)
    p = hmm.initial_distribution
    for t in range(T):
        prior[t] = p
        joint = p * emit_t[x[t]]
        c = joint.sum()
        if not c > 0:
            if strict:
                raise ValueError(f"symbol {int(x[t])} at position {t} has probability 0")
            scale[t], alpha[t] = 0.0, p
        else:
            scale[t] = c
            alpha[t] = joint / c
        p = alpha[t] @ hmm.transition
    return alpha, scale, prior


def forward_backward(hmm: HMM, x: np.ndarray):
    """Posteriors gamma[t, s] = P(state_t = s | x), the expected transition counts
    xi[s, s'] = sum_t P(state_t = s, state_{t+1} = s' | x), and the log-likelihood.

    >>> hmm = HMM.initial(2, np.array([0, 1, 1]), 2, seed=0)
    >>> gamma, xi, loglik = forward_backward(hmm, np.array([0, 1, 1]))
    >>> bool(np.allclose(gamma.sum(axis=1), 1.0)), bool(np.isclose(xi.sum(), 2.0))
    (True, True)
    """
    x = np.asarray(x, dtype=np.int64)
    alpha, scale, _ = _forward(hmm, x)
    T, N = alpha.shape
    beta = np.empty((T, N))
    beta[-1] = 1.0
    emit_t = hmm.emission.T
    for t in range(T - 2, -1, -1):
        beta[t] = hmm.transition @ (emit_t[x[t + 1]] * beta[t + 1]) / scale[t + 1]
    gamma = alpha * beta
    if T > 1:
        right = emit_t[x[1:]] * beta[1:] / scale[1:, None]  # (T-1, N)
        xi = hmm.transition * (alpha[:-1].T @ right)
    else:
        xi = np.zeros((N, N))
    return gamma, xi, float(np.log(scale).sum())


def em_step(hmm: HMM, x: np.ndarray) -> tuple[HMM, float]:
    """One Baum-Welch iteration; returns the new model and the log-likelihood of the *old*
    one.  States never visited keep their rows (their expected counts are all zero)."""
    x = np.asarray(x, dtype=np.int64)
    gamma, xi, loglik = forward_backward(hmm, x)
    new = hmm.copy()
    new.initial_distribution = gamma[0] / gamma[0].sum()
    out = xi.sum(axis=1)
    visited = out > 0
    new.transition[visited] = xi[visited] / out[visited, None]
    counts = np.zeros((hmm.alphabet_size, hmm.n_units))
    np.add.at(counts, x, gamma)
    occupancy = counts.sum(axis=0)
    seen = occupancy > 0
    new.emission[seen] = counts.T[seen] / occupancy[seen, None]
    return new, loglik


class EMTrainer:
    """Resumable EM with the :class:`seqzip.research.glnn.Trainer` interface (``step``,
    ``steps``, ``net``) used by :func:`seqzip.research.training.fit`.

    >>> x = np.array([0, 1] * 20)
    >>> t = EMTrainer(HMM.initial(2, x, 2, seed=0), x)
    >>> t.step(); t.steps
    1
    """

    def __init__(self, hmm: HMM, x: np.ndarray, config=None, chi=None) -> None:
        if chi is not None:
            raise ValueError("the HMM trains on every symbol (chi must be None)")
        self.net, self.x = hmm, np.asarray(x, dtype=np.int64)
        self.history: list[float] = []  # training log-likelihood before each step
        self._loglik: float | None = None
        self.steps = 0

    @property
    def log_likelihood(self) -> float:
        """Training log-likelihood of the current model (computed once, on demand)."""
        if self._loglik is None:
            self._loglik = self.net.log_likelihood(self.x)
        return self._loglik

    def step(self) -> None:
        self.net, before = em_step(self.net, self.x)
        self.history.append(before)
        self._loglik = None
        self.steps += 1
