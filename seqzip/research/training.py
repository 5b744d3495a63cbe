"""Offline training of GLNN, GNN and RNN (000 Sect. 2) within a CPU budget; model files.

``fit`` scans network sizes as the paper did (4 units upwards by factors of sqrt 2; d = 3 and
the semi-sparse d = sqrt(2 #A) for GLNN/GNN, #A for the RNN) unless a size is given.  The
paper gave every setting its own time; here one budget covers the scan, spent by successive
halving: every setting trains for a slice, the better half (by best validation bits so far)
trains on, and so on.  Each setting keeps its network of best validation score (early stop).
With ``max_steps`` a setting trains at most that many steps in all (the rounds share them
out), and a scan that ends by steps rather than by its budget gives the same network every
time.  With ``scheduler`` (a Dask scheduler's address or a ``distributed.Client``) each
setting's slice of a round is a Dask task (the training sequence is sent to the workers once);
the budget is then the CPU seconds of all the tasks, and a scan that ends by steps picks the
same winner with the same network as a local one (for hmm-em, whose EM sums run in BLAS and
follow its thread count, when BLAS runs one thread here too, as it does on dask's workers:
``OPENBLAS_NUM_THREADS=1``).

    >>> x = np.array([0, 1, 2, 1] * 40, dtype=np.int64)
    >>> model = fit("glnn-qdh-rbpm", x, x[:40], 3, budget=1.0, sizes=[4])
    >>> bool(model.validation_bits < 40 * np.log2(3))
    True
"""
from __future__ import annotations

import copy
import hashlib
import io
import json
import math
import os
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .glnn import FastNetwork, TrainConfig, Trainer, score_bits
from .hf import KINDS as RECURRENT_KINDS, Recurrent
from .hmm import HMM, EMTrainer

METHODS = {  # name: (model, writing method, transition method)
    "glnn-qdh-rbpm": ("glnn", "qdh", "rbpm"),
    "glnn-qdh-ruop": ("glnn", "qdh", "ruop"),
    "glnn-qdh-qdrbpm": ("glnn", "qdh", "qdrbpm"),
    "glnn-qdh-qdruop": ("glnn", "qdh", "qdruop"),
    "gnn-qdh-ruop": ("gnn", "qdh", "ruop"),
    "gnn-qdh-rbpm": ("gnn", "qdh", "rbpm"),
    "rnn-qdh-qdruop": ("rnn", "qdh", "qdruop"),
    "rnn-qdh-qdrbpm": ("rnn", "qdh", "qdrbpm"),
    "rnn-dh-fb": ("rnn", "dh", "fb"),
    "rnn-dh-rms": ("rnn", "dh", "rms"),
    "gnn-dh-fb": ("gnn", "dh", "fb"),
    "glnn-dh-fb": ("glnn", "dh", "fb"),
    "hmm-em": ("hmm", "em", "em"),  # 000 footnote 16: HMM by EM, edges per state = #A
}
MODEL_FILE_MAGIC = "seqzip-model-1"


def encode(data: bytes, alphabet: list[int]) -> np.ndarray:
    """Bytes to indices into ``alphabet`` (a sorted list of byte values).

        >>> encode(b"cab", [97, 98, 99]).tolist()
        [2, 0, 1]
    """
    lut = np.full(256, -1, dtype=np.int64)
    lut[alphabet] = np.arange(len(alphabet))
    x = lut[np.frombuffer(data, dtype=np.uint8)]
    if (x < 0).any():
        raise ValueError("data holds bytes outside the model's alphabet")
    return x


def network_sizes(max_units: int) -> list[int]:
    """4, 6, 8, 11, 16, 23, 32, ... up to ``max_units`` (factors of sqrt 2, rounded).

        >>> network_sizes(16)
        [4, 6, 8, 11, 16]
    """
    sizes, n = [], 4.0
    while round(n) <= max_units:
        if round(n) not in sizes:
            sizes.append(int(round(n)))
        n *= math.sqrt(2)
    return sizes


@dataclass
class Candidate:
    """See the module docstring.

        >>> x = np.array([0, 1] * 20)
        >>> fit("glnn-qdh-rbpm", x, x[:10], 2, budget=0.2, sizes=[4]).best.n_units
        4
    """
    n_units: int
    d: int
    trainer: Trainer | EMTrainer
    best_bits: float = math.inf
    best_network: FastNetwork | None = None
    best_step: int = 0
    seconds: float = 0.0  # CPU seconds of its training (in whatever process ran it)
    trajectory: list = field(default_factory=list)  # (step, validation bits)


@dataclass
class FitResult:
    """See the module docstring.

        >>> x = np.array([0, 1] * 20)
        >>> sorted(fit("glnn-qdh-rbpm", x, x[:10], 2, budget=0.2, sizes=[4]).summary())[:3]
        ['best_step', 'd', 'n_units']
    """
    method: str
    network: FastNetwork | HMM  # the best network found (by validation bits)
    validation_bits: float
    best: Candidate
    candidates: list
    seconds: float

    def summary(self) -> dict:
        return {"validation_bits": self.validation_bits, "n_units": self.best.n_units,
                "d": self.best.d, "steps": self.best.trainer.steps,
                "best_step": self.best.best_step, "seconds": self.seconds,
                "settings": [(c.n_units, c.d, c.trainer.steps, c.best_bits)
                             for c in self.candidates]}


def fit(method: str, train_x: np.ndarray, valid_x: np.ndarray, alphabet_size: int,
        budget: float, sizes: list[int] | None = None, seed: int = 0,
        connectivity: list[int] | None = None, eval_every: int = 2,
        config_options: dict | None = None, max_steps: int | None = None,
        scheduler=None) -> FitResult:
    """Train ``method`` for ``budget`` CPU seconds; keep the network of best validation bits.

    ``config_options`` are extra :class:`TrainConfig` fields (the switches ``retry``,
    ``relative_eps``, ``tau_prior``); ``eval_every`` is the number of steps between
    validation points; ``max_steps`` and ``scheduler``: see the module docstring.

        >>> x = np.array([0, 1, 1] * 20)
        >>> result = fit("rnn-dh-fb", x, x[:12], 2, budget=0.3, sizes=[4])
        >>> result.method, result.validation_bits < 12
        ('rnn-dh-fb', True)
        >>> fit("rnn-dh-fb", x, x[:12], 2, budget=60, sizes=[4], max_steps=6).best.trainer.steps
        6
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    kind, writing, transition = METHODS[method]
    semi = max(3, round(math.sqrt(2 * alphabet_size))) if kind != "rnn" else alphabet_size
    sizes = sizes or network_sizes(64 if len(train_x) > 20_000 else 32)
    candidates = []
    for n in sizes:
        if kind == "hmm":  # one graph per size: #A edges per state (footnote 16)
            for d in sorted({min(c, n) for c in (connectivity or (alphabet_size,))}):
                hmm = HMM.initial(n, train_x, alphabet_size, seed=seed, edges=d)
                candidates.append(Candidate(n, d, EMTrainer(hmm, train_x)))
            continue
        config = TrainConfig(writing=writing, transition=transition, **(config_options or {}))
        for d in sorted({min(c, n) for c in (connectivity or (3, semi))}):
            net = FastNetwork.initial(kind, n_units=n, d=d, x=train_x,
                                      alphabet_size=alphabet_size, seed=seed)
            candidates.append(Candidate(n, d, Trainer(net, train_x, config)))
    with _Rounds(scheduler, train_x, valid_x, eval_every) as rounds_of:
        rounds = max(1, int(math.log2(len(candidates))) + 1)
        alive = list(range(len(candidates)))  # indices into candidates
        for r in range(rounds):
            remaining = budget - sum(c.seconds for c in candidates)
            if remaining <= 0:
                break
            share = remaining / len(alive) / (rounds - r)
            until = None if max_steps is None else max_steps * (r + 1) // rounds
            trained = rounds_of([candidates[i] for i in alive], share, until)
            for i, cand in zip(alive, trained):
                candidates[i] = cand
            alive.sort(key=lambda i: candidates[i].best_bits)  # stable: ties keep size order
            alive = alive[:max(1, len(alive) // 2)]
    best = min(candidates, key=lambda c: c.best_bits)
    return FitResult(method, best.best_network, best.best_bits, best, candidates,
                     sum(c.seconds for c in candidates))


class _Rounds:
    """Trains the live settings of one round for a slice each: in this process, one after
    another, or as Dask tasks (the training and validation sequences scattered to every
    worker once, under keys of this scan's own, so that a lost worker loses nothing the others
    need; each setting travels without them and without its forward run, which the worker
    computes again: the same bits, as the network and sequence are the same)."""

    def __init__(self, scheduler, train_x: np.ndarray, valid_x: np.ndarray,
                 eval_every: int) -> None:
        self.eval_every, self.valid_x, self.cluster = eval_every, valid_x, None
        if scheduler is not None:
            from ..cluster import Cluster

            self.cluster = Cluster(scheduler)
            try:
                self.shared = [self.cluster.client.scatter(a, broadcast=True, hash=False)
                               for a in (train_x, valid_x)]
            except BaseException:
                self.cluster.close()
                raise

    def __call__(self, alive: list[Candidate], seconds: float,
                 until: int | None) -> list[Candidate]:
        if self.cluster is None:
            for cand in alive:
                _train_for(cand, self.valid_x, seconds, self.eval_every, until)
            return alive
        jobs = [(_detached(cand), *self.shared, seconds, self.eval_every, until)
                for cand in alive]
        return list(self.cluster.map(_train_task, jobs, len(jobs)))

    def __enter__(self) -> "_Rounds":
        return self

    def __exit__(self, *exc) -> None:
        if self.cluster is not None:
            self.cluster.close()


def _detached(cand: Candidate) -> Candidate:
    """A shallow copy of ``cand`` without the training sequence or the forward run (sent to
    every worker once; computed again there)."""
    trainer = copy.copy(cand.trainer)
    trainer.x = None
    if isinstance(trainer, Trainer):
        trainer.run = None
    else:
        trainer._loglik = None
    return replace(cand, trainer=trainer)


def _train_task(cand: Candidate, train_x: np.ndarray, valid_x: np.ndarray, seconds: float,
                eval_every: int, until: int | None) -> Candidate:
    """One setting's slice of a round, as a Dask task: rebuilds what :func:`_detached` left
    out, trains, and returns the setting without them."""
    cand.trainer.x = train_x
    if isinstance(cand.trainer, Trainer):
        cand.trainer.run = cand.trainer.net.forward(train_x, cand.trainer.chi)
    _train_for(cand, valid_x, seconds, eval_every, until)
    return _detached(cand)


def _train_for(cand: Candidate, valid_x: np.ndarray, seconds: float, eval_every: int,
               until: int | None = None) -> None:
    """Train ``cand`` for ``seconds`` CPU seconds, or until its trainer has made ``until``
    steps, whichever comes first."""
    start = time.process_time()
    if not cand.trajectory:
        cand.best_bits = score_bits(cand.trainer.net, valid_x)
        cand.best_network = cand.trainer.net
        cand.trajectory.append((0, cand.best_bits))
    while time.process_time() - start < seconds and (until is None
                                                       or cand.trainer.steps < until):
        cand.trainer.step()
        if cand.trainer.steps % eval_every == 0:
            bits = score_bits(cand.trainer.net, valid_x)
            cand.trajectory.append((cand.trainer.steps, bits))
            if bits < cand.best_bits:  # early stopping: remember the best point
                cand.best_bits, cand.best_step = bits, cand.trainer.steps
                cand.best_network = cand.trainer.net
    cand.seconds += time.process_time() - start


def train_bytes(data: bytes, validation: bytes | None = None, *, method: str = "glnn-qdh-rbpm",
                budget: float = 60.0, units: int | None = None,
                connectivity: int | None = None, seed: int = 0, max_steps: int | None = None,
                scheduler=None) -> tuple[FitResult, list[int], int]:
    """The library call behind ``seqzip train``: fit ``method`` to ``data``.

    Without ``validation`` the last 10% of ``data`` is held out for early stopping.  Returns
    the fit, the alphabet (sorted byte values of both parts) and the validation length.
    ``max_steps`` and ``scheduler`` (the size scan as Dask tasks): see :func:`fit`.

    Raises:
        ValueError: unknown method, or too little data.

        >>> result, alphabet, n = train_bytes(b"abc" * 100, method="glnn-qdh-rbpm", budget=0.3,
        ...                                   units=4)
        >>> alphabet, n
        ([97, 98, 99], 30)
    """
    if validation is None:
        cut = len(data) - max(1, len(data) // 10)
        data, validation = data[:cut], data[cut:]
    if len(data) < 2 or not validation:
        raise ValueError("not enough data to train on")
    alphabet = sorted(set(data) | set(validation))
    result = fit(method, encode(data, alphabet), encode(validation, alphabet), len(alphabet),
                 budget, sizes=[units] if units else None, seed=seed,
                 connectivity=[connectivity] if connectivity else None, max_steps=max_steps,
                 scheduler=scheduler)
    return result, alphabet, len(validation)


# -- model files --------------------------------------------------------------------------------


def save_model(path, network: FastNetwork | HMM | Recurrent, alphabet: list[int],
               info: dict) -> str:
    """Write a .sqm model file (numpy .npz, no pickles) to a path or binary file object;
    return its SHA-256.

        >>> import tempfile
        >>> result, alphabet, _ = train_bytes(b"ab" * 50, budget=0.2, units=4)
        >>> path = os.path.join(tempfile.mkdtemp(), "net.sqm")
        >>> digest = save_model(path, result.network, alphabet, {"note": 1})
        >>> load_model(path)[1:], len(digest)
        (([97, 98], {'note': 1}), 64)
    """
    meta = {"magic": MODEL_FILE_MAGIC, "kind": network.kind,
            "activation": getattr(network, "activation", None),
            "alphabet": list(map(int, alphabet)), "info": info}
    if isinstance(network, Recurrent):  # "rnn" names Ollivier's RNN too
        meta["family"] = "recurrent"
    arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
    if isinstance(network, HMM):
        arrays.update(initial=network.initial_distribution, transition=network.transition,
                      emission=network.emission)
    elif isinstance(network, Recurrent):  # the reference layout of seqzip.reference.lstm
        arrays.update({f"p_{name}": value for name, value in network.params.items()})
    else:
        arrays.update(sources=network.sources, w=network.w, tau=network.tau, V0=network.V0)
        if network.rho is not None:
            arrays["rho"] = network.rho
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    if hasattr(path, "write"):
        path.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)
    return hashlib.sha256(data).hexdigest()


def load_model(path: str | os.PathLike) -> tuple[FastNetwork | HMM | Recurrent, list[int],
                                                 dict]:
    """Read a .sqm file; raises ValueError when it is not one.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "bad.sqm")
        >>> with open(path, "wb") as f: _ = f.write(b"nope")
        >>> load_model(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: ...
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            if meta.get("magic") != MODEL_FILE_MAGIC:
                raise ValueError("not a seqzip model file")
            if meta["kind"] == "hmm":
                net = HMM(z["initial"], z["transition"], z["emission"])
            elif meta.get("family") == "recurrent" and meta["kind"] in RECURRENT_KINDS:
                net = Recurrent(meta["kind"], {name[2:]: z[name] for name in z.files
                                               if name.startswith("p_")})
            else:
                net = FastNetwork(meta["kind"], z["sources"], z["w"], z["tau"], z["V0"],
                                  z["rho"] if "rho" in z.files else None, meta["activation"])
    except (OSError, KeyError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a seqzip model file: {exc}") from None
    return net, meta["alphabet"], meta["info"]
