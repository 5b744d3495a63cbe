"""Model files for ``seqzip compress --dict``: a model of any family trained on some files.

A dictionary is a :class:`seqzip.predictor.Predictor`'s full state after training, over all
256 byte values (so that any file can be coded from it).  How the state is reached depends on
the family:

* every family ends with one online pass over the training files: the model learns them as
  it would while coding them (the mixing models, CTW and order2 do only this);
* ``glnn`` first fits its network offline with Ollivier's batch Riemannian training
  (:mod:`seqzip.research.training`, 000 Sect. 2), then the online GLNN starts from the fitted
  graph and weights and its experts and output layer learn in the pass;
* ``lstm``, ``mlstm`` and ``mrnn`` first fit their parameters by truncated BPTT epochs over
  minibatches of windows (:class:`RNNTrainer`), with Adam or another registered optimiser
  (``OPTIMIZERS``; the parameters are a dict in the layout of :mod:`seqzip.reference.lstm`,
  so a second-order optimiser plugs in as ``--optimizer NAME``), then the pass.

The pass keeps adapting what the offline fit found; so does coding from the dictionary.

    >>> p, summary = train_dictionary([b"abracadabra " * 40], model="order2", level=6)
    >>> p.alphabet_size, summary["pass_symbols"]
    (256, 480)
"""
from __future__ import annotations

import importlib
import math
import time
from typing import Callable

import numpy as np

from ..models import DEFAULT_LEVEL, DEFAULT_MODEL
from ..predictor import Predictor, file_hash, recipe_bytes
from ..reference import lstm as ref
from .unrolled import gate_backward

CELLS = ref.CELLS
CHUNK = 1 << 16
# The count-based models' counts are rescaled when a dictionary is made (each context's total
# halved down to this cap; CTW's weighting ratios also go back to 1), so that a file of another
# style costs little: the escape to lower orders (the shallower depths) keeps its weight.
# Measured with dictionaries trained on alice29.txt, level 6, whole streams against no
# dictionary: order2 on fields.c 3,401 -> 3,501 bytes (+2.9%; unscaled +32%); ctw on fields.c
# 2,817 -> 2,841 (+0.9%; +1.0% at cap 4, +1.3% at 16; unscaled +11.7%) and on asyoulik.txt
# 36,535 -> 34,771 (-4.8%).
RESCALE_CAPS = {"order2": 2, "ctw": 8}
COMPACT_ABOVE = 4 << 20  # a full-state file larger than this is written as a recipe


# ---------------------------------------------------------------- offline RNN training


def batch_forward(cell: str, p: dict, h0: np.ndarray, c0: np.ndarray, x: np.ndarray):
    """Forward pass over a minibatch of windows ``x`` (B, L) from states ``h0``, ``c0``
    (B, n): the summed log-likelihood (natural log), the cache for :func:`batch_backward`,
    and the states after the windows' last symbols (for the next windows).  Each row is
    :func:`seqzip.reference.lstm.forward` on that window (a test holds them equal).

        >>> rng = np.random.default_rng(0)
        >>> p = ref.initial_parameters("lstm", 3, 4, rng)
        >>> x = rng.integers(0, 4, (2, 5))
        >>> ll, cache, h, c = batch_forward("lstm", p, np.zeros((2, 3)), np.zeros((2, 3)), x)
        >>> bool(abs(ll - 2 * 5 * np.log(0.25)) < 1e-9)   # zero output weights: uniform
        True
    """
    B, L = x.shape
    h, c = h0, c0
    hs, steps, probs = [h0], [], []
    loglik = 0.0
    rows = np.arange(B)
    for j in range(L):
        logits = p["Wo"][0] + h @ p["Wo"][1:]
        logits = logits - logits.max(axis=1, keepdims=True)
        q = np.exp(logits)
        q /= q.sum(axis=1, keepdims=True)
        probs.append(q)
        loglik += float(np.log(q[rows, x[:, j]]).sum())
        s = ref.step(cell, p, h, c, x[:, j])
        if j + 1 < L:
            steps.append(s)
            hs.append(s["h"])
        h, c = s["h"], s["c"]
    return loglik, {"hs": hs, "steps": steps, "probs": probs, "x": x}, h, c


def batch_backward(cell: str, p: dict, cache: dict) -> dict:
    """Gradient of the summed window log-likelihoods of :func:`batch_forward` with respect to
    every parameter (truncated at the windows' start states), as the reference's
    :func:`~seqzip.reference.lstm.backward` summed over the rows.

        >>> rng = np.random.default_rng(0)
        >>> p = ref.initial_parameters("mrnn", 2, 3, rng)
        >>> _, cache, _, _ = batch_forward("mrnn", p, np.zeros((1, 2)), np.zeros((1, 2)),
        ...                                np.array([[0, 1, 2]]))
        >>> g = batch_backward("mrnn", p, cache)
        >>> sorted(g) == sorted(p), g["Wo"][0].round(3).tolist()  # sum of one-hot - 1/3
        (True, [0.0, 0.0, 0.0])
    """
    grads = {name: np.zeros_like(value) for name, value in p.items()}
    hs, steps, probs, x = cache["hs"], cache["steps"], cache["probs"], cache["x"]
    B, L = x.shape
    rows = np.arange(B)
    dh_next = np.zeros_like(hs[0])
    dc_next = np.zeros_like(hs[0])
    for j in range(L - 1, -1, -1):
        err = -probs[j]
        err[rows, x[:, j]] += 1.0
        grads["Wo"][0] += err.sum(axis=0)
        grads["Wo"][1:] += hs[j].T @ err
        dh = err @ p["Wo"][1:].T + dh_next
        if j == 0:
            break
        dh_next, dc_next = _step_backward(cell, p, steps[j - 1], dh, dc_next, grads)
    return grads


def _step_backward(cell, p, s, dh, dc, grads):
    if cell == "mrnn":
        dz = dh * (1.0 - s["h"] ** 2)
        dc_prev = np.zeros_like(dh)
    else:
        dz, dc_prev = gate_backward(s, dh, dc)
    x = s["x"]
    grads["b"] += dz.sum(axis=0)
    np.add.at(grads["E"], x, dz)
    grads["R"] += s["r"].T @ dz
    dr = dz @ p["R"].T
    if ref.multiplicative(cell):
        du = dr * s["v"]
        np.add.at(grads["Wmi"], x, dr * s["u"])
        grads["Wmh"] += s["h_prev"].T @ du
        dh_prev = du @ p["Wmh"].T
    else:
        dh_prev = dr
    return dh_prev, dc_prev


class WindowObjective:
    """One minibatch of the offline RNN objective, what an optimiser's step sees: the mean
    negative log-likelihood (nats per symbol) of windows ``x`` (B, L) from start states
    ``h0``, ``c0``, with :meth:`loss_and_grad`.  A second-order optimiser can also use
    ``cell``, ``x``, ``h0``, ``c0`` with :mod:`seqzip.reference.lstm` (e.g. for
    curvature-vector products).

        >>> p = ref.initial_parameters("lstm", 2, 3, np.random.default_rng(0))
        >>> objective = WindowObjective("lstm", np.array([[0, 1, 2]]), np.zeros((1, 2)),
        ...                             np.zeros((1, 2)))
        >>> round(float(objective.loss(p) / np.log(3)), 6)   # zero output weights: uniform
        1.0
    """

    def __init__(self, cell: str, x: np.ndarray, h0: np.ndarray, c0: np.ndarray) -> None:
        self.cell, self.x, self.h0, self.c0 = cell, x, h0, c0
        self.h1 = self.c1 = None  # the states after the windows, once evaluated

    def loss_and_grad(self, params: dict) -> tuple[float, dict]:
        loglik, cache, self.h1, self.c1 = batch_forward(self.cell, params, self.h0, self.c0,
                                                        self.x)
        scale = -1.0 / self.x.size
        grads = batch_backward(self.cell, params, cache)
        return loglik * scale, {k: g * scale for k, g in grads.items()}

    def loss(self, params: dict) -> float:
        loglik, _, _, _ = batch_forward(self.cell, params, self.h0, self.c0, self.x)
        return -loglik / self.x.size


class Adam:
    """Adam (Kingma and Ba) on a dict of arrays, with the gradient's norm clipped to
    ``clip``; ``step(params, objective)`` updates ``params`` in place and returns the loss.

        >>> params = {"w": np.array([3.0])}
        >>> class Square:
        ...     def loss_and_grad(self, p):
        ...         return float(p["w"][0] ** 2), {"w": 2 * p["w"]}
        >>> opt = Adam(params, lr=0.1)
        >>> for _ in range(200):
        ...     _ = opt.step(params, Square())
        >>> bool(abs(params["w"][0]) < 0.05)
        True
    """

    def __init__(self, params: dict, lr: float = 3e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, clip: float = 5.0) -> None:
        self.lr, self.beta1, self.beta2, self.eps, self.clip = lr, beta1, beta2, eps, clip
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params: dict, objective) -> float:
        loss, grads = objective.loss_and_grad(params)
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
        scale = min(1.0, self.clip / norm) if norm > 0 else 1.0
        self.t += 1
        b1, b2 = 1.0 - self.beta1 ** self.t, 1.0 - self.beta2 ** self.t
        for k, g in grads.items():
            g = g * scale
            self.m[k] = self.beta1 * self.m[k] + (1.0 - self.beta1) * g
            self.v[k] = self.beta2 * self.v[k] + (1.0 - self.beta2) * g * g
            params[k] -= self.lr * (self.m[k] / b1) / (np.sqrt(self.v[k] / b2) + self.eps)
        return loss


# name -> factory(params) of an object with step(params, objective) -> loss.
OPTIMIZERS: dict[str, Callable] = {"adam": Adam}


def register_optimizer(name: str, factory: Callable) -> None:
    """Make ``factory(params)`` available as ``--optimizer NAME`` for the RNN families.

        >>> register_optimizer("adam-fast", lambda params: Adam(params, lr=1e-2))
        >>> optimizer_factory("adam-fast")({"w": np.zeros(1)}).lr
        0.01
    """
    OPTIMIZERS[name] = factory


def optimizer_factory(name: str) -> Callable:
    """The factory of optimiser ``name``: a registered one, or the ``dictionary_optimizer``
    function of the module ``seqzip.research.<name>`` (so ``seqzip/research/hf.py`` defining
    ``dictionary_optimizer(params)`` is ``--optimizer hf`` with no change here).

        >>> optimizer_factory("adam") is Adam
        True

    Raises:
        ValueError: no such optimiser.
    """
    if name not in OPTIMIZERS and name.isidentifier():
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except ImportError:
            module = None
        factory = getattr(module, "dictionary_optimizer", None)
        if factory is not None:
            OPTIMIZERS[name] = factory
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; choose from "
                         f"{', '.join(sorted(OPTIMIZERS))}")
    return OPTIMIZERS[name]


def rnn_bits(cell: str, params: dict, x: np.ndarray, window: int = 256) -> float:
    """Bits of ``x`` (alphabet indices) under the offline network, run from a zero state.

        >>> p = ref.initial_parameters("mrnn", 2, 4, np.random.default_rng(0))
        >>> rnn_bits("mrnn", p, np.array([0, 1, 2, 3]))
        8.0
    """
    n = params["R"].shape[0]
    h, c, total = np.zeros((1, n)), np.zeros((1, n)), 0.0
    for start in range(0, len(x), window):
        loglik, _, h, c = batch_forward(cell, params, h, c, x[None, start:start + window])
        total -= loglik
    return total / math.log(2)


class RNNTrainer:
    """Truncated BPTT over epochs: the training symbols are cut into ``batch`` parallel
    streams, each read in windows of ``window`` symbols whose start state is the previous
    window's end state; each minibatch of windows is one optimiser step.

        >>> x = np.array([0, 1, 2, 3] * 200)
        >>> t = RNNTrainer("mrnn", 8, 4, x, seed=0, batch=4, window=16)
        >>> before = rnn_bits("mrnn", t.params, x[:64])
        >>> t.train(budget=2.0, max_epochs=8)["epochs"]
        8
        >>> bool(rnn_bits("mrnn", t.params, x[:64]) < before / 2)
        True
    """

    def __init__(self, cell: str, hidden: int, alphabet_size: int, x: np.ndarray,
                 seed: int = 0, optimizer: str = "adam", batch: int = 32,
                 window: int = 64) -> None:
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {CELLS}")
        factory = optimizer_factory(optimizer)
        self.cell, self.hidden, self.A = cell, hidden, alphabet_size
        self.params = ref.initial_parameters(cell, hidden, alphabet_size,
                                             np.random.default_rng(seed))
        self.optimizer = factory(self.params)
        self.batch = max(1, min(batch, len(x) // (window + 1)))
        self.window = window
        span = len(x) // self.batch
        self.streams = np.asarray(x[:span * self.batch]).reshape(self.batch, span)
        self.epochs = 0
        self.steps = 0
        self.history: list = []  # (epoch, mean training loss in bits per symbol)

    def epoch(self, deadline: float) -> bool:
        """One pass over the streams (stops at the CPU-time ``deadline``); False if cut."""
        n = self.hidden
        h, c = np.zeros((self.batch, n)), np.zeros((self.batch, n))
        losses = []
        span = self.streams.shape[1]
        for start in range(0, span - 1, self.window):
            if time.process_time() > deadline:
                return False
            objective = WindowObjective(self.cell, self.streams[:, start:start + self.window],
                                        h, c)
            losses.append(self.optimizer.step(self.params, objective))
            if objective.h1 is None:  # an optimiser that never evaluated at the new point
                objective.loss_and_grad(self.params)
            h, c = objective.h1, objective.c1
            self.steps += 1
        self.epochs += 1
        self.history.append((self.epochs, float(np.mean(losses)) / math.log(2)))
        return True

    def train(self, budget: float, max_epochs: int = 1000,
              valid: np.ndarray | None = None) -> dict:
        """Epochs until ``budget`` CPU seconds or ``max_epochs``; with ``valid``, keep the
        parameters of best validation bits (early stopping)."""
        deadline = time.process_time() + budget
        best = (rnn_bits(self.cell, self.params, valid) if valid is not None else math.inf,
                {k: v.copy() for k, v in self.params.items()})
        while self.epochs < max_epochs and self.epoch(deadline):
            if valid is not None:
                bits = rnn_bits(self.cell, self.params, valid)
                if bits < best[0]:
                    best = (bits, {k: v.copy() for k, v in self.params.items()})
        if valid is not None:
            self.params.update(best[1])
        return {"epochs": self.epochs, "steps": self.steps,
                "validation_bits": None if valid is None else best[0]}

    def theta(self) -> np.ndarray:
        """The parameters flat, in the online kernel's order."""
        return np.concatenate([self.params[name].ravel()
                               for name in ref.shapes(self.cell, self.hidden, self.A)])


# ---------------------------------------------------------------- dictionaries


def train_dictionary(files: list[bytes], model: str = DEFAULT_MODEL,
                     level: int = DEFAULT_LEVEL, *, validation: bytes | None = None,
                     budget: float = 60.0,
                     optimizer: str = "adam", method: str = "glnn-qdh-rbpm", seed: int = 0,
                     progress: Callable[[int], None] | None = None,
                     max_epochs: int = 1000, compact: bool | None = None
                     ) -> tuple[Predictor, dict]:
    """Train a dictionary of ``model`` at ``level`` on ``files``; return it and a summary.

    ``budget`` bounds the offline fit (GLNN and the RNN families) in CPU seconds and, for the
    others, the pass itself (files past the budget are not read).  ``validation`` (bytes)
    drives early stopping of the offline fits and is scored by the finished dictionary
    (``validation_bpc``); without it the offline fits hold out the last 10% of the input.
    ``progress(n)`` is called with the bytes of each chunk the pass has learnt.
    ``max_epochs`` bounds the offline fit of the RNN families by work, not time.  The counts
    of the count-based models (ctw, order2) are rescaled after the pass
    (:meth:`~seqzip.predictor.Predictor.rescale_counts` to ``RESCALE_CAPS``), so that the
    dictionary costs little on data of another style.

    ``compact``: True makes the predictor's model file (``to_bytes``, ``save``) a *recipe*
    (:func:`~seqzip.predictor.recipe_bytes`: the state the pass starts from, fresh or fitted,
    and the text it learnt, LZMA-compressed), False the full state, None (the default) the
    recipe when the full state's file would be over 4 MiB.  A recipe is small (a cm -6
    dictionary of 300 KB of text: about 90 KB instead of 32 MB) and loading it holds one
    model, but costs the pass again at every load (cm -6: about 50 KB/s).

    Reproducible: the model file holds the model (its state and what it was trained on), not
    the timings (``fit_seconds``, ``pass_seconds`` are in the summary only), so two trainings
    that end by ``max_epochs`` (and read every file within ``budget``) give byte-identical
    files with one hash.  A fit that ends because its CPU-time budget ran out stops at a point
    that depends on the machine's speed and load, and is not reproducible.

    Raises:
        ValueError: unknown model, optimiser or method, no data.

        >>> p, s = train_dictionary([b"0101" * 100], "ctw", 1, validation=b"0101" * 10)
        >>> s["pass_symbols"], s["validation_bpc"] < 0.2, s["rescaled_to"]
        (400, True, 8)
    """
    data = b"".join(files)
    if not data:
        raise ValueError("no data to train on")
    if model in CELLS:
        if optimizer != "hf":
            optimizer_factory(optimizer)  # an unknown one fails before any work
    predictor = Predictor(model, level, seed=seed)
    summary: dict = {"model": model, "level": level, "files": len(files), "bytes": len(data)}
    start = time.process_time()
    if model in CELLS:
        summary.update(_fit_rnn(predictor, data, validation, budget, optimizer, seed,
                                max_epochs))
    elif model == "glnn":
        predictor, fitted = _fit_glnn(predictor, data, validation, budget, method, seed)
        summary.update(fitted)
    summary["fit_seconds"] = round(time.process_time() - start, 2)
    # the pass: the model learns the files as it would while coding them
    offline = model in CELLS or model == "glnn"
    base = predictor.copy() if offline else None  # what the pass starts from
    pass_start = time.process_time()
    learnt = 0
    replay = []
    for item in files:
        for at in range(0, len(item), CHUNK):
            if not offline and time.process_time() - start > budget:
                break
            chunk = item[at:at + CHUNK]
            predictor.feed(chunk)
            replay.append(chunk)
            learnt += len(chunk)
            if progress:
                progress(len(chunk))
    summary["pass_symbols"] = learnt
    summary["pass_seconds"] = round(time.process_time() - pass_start, 2)
    summary["pass_bpc"] = round(predictor.bits_per_symbol, 4)
    if model in RESCALE_CAPS:  # the file holds the rescaled state: coding starts from it
        predictor.rescale_counts(RESCALE_CAPS[model])
        summary["rescaled_to"] = RESCALE_CAPS[model]
    if validation:
        summary["validation_bpc"] = round(float(predictor.copy().feed(validation).mean()), 4)
    # the timings stay out of the model file: its bytes (and hash) depend on the model only
    predictor.info = {k: v for k, v in summary.items() if not k.endswith("_seconds")}
    if compact is not False:
        recipe = recipe_bytes(base if offline else predictor, b"".join(replay),
                              RESCALE_CAPS.get(model), predictor.info, fresh=not offline)
        if compact or len(predictor.to_bytes()) > COMPACT_ABOVE:
            predictor._recipe, predictor._file_hash = recipe, file_hash(recipe)
            summary["recipe"] = True
    return predictor, summary


def _indices(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8).astype(np.int64)


def _split(data: bytes, validation: bytes | None) -> tuple[bytes, bytes]:
    if validation:
        return data, validation
    cut = len(data) - max(1, len(data) // 10)
    return data[:cut], data[cut:]


def _fit_rnn(predictor: Predictor, data: bytes, validation: bytes | None, budget: float,
             optimizer: str, seed: int, max_epochs: int = 1000) -> dict:
    train, valid = _split(data, validation)
    cell, hidden = predictor.model_name, predictor.config.hidden
    if optimizer == "hf":  # Hessian-free (seqzip.research.hf) fits the same layout
        from . import hf

        fitted = hf.fit(cell, _indices(train), _indices(valid[:20_000]), alphabet_size=256,
                        n_units=hidden, budget=budget, seed=seed, optimizer="hf")
        state = predictor.kernel.get_state()
        state["theta"] = np.concatenate([np.asarray(fitted.params[name], dtype=np.float64).ravel()
                                         for name in ref.shapes(cell, hidden, 256)])
        predictor.kernel.set_state(state)
        return {"optimizer": "hf", "steps": fitted.steps,
                "offline_validation_bpc": round(float(fitted.validation_bpc), 4)}
    trainer = RNNTrainer(cell, hidden, 256, _indices(train), seed=seed, optimizer=optimizer)
    result = trainer.train(budget, max_epochs, valid=_indices(valid[:20_000]))
    state = predictor.kernel.get_state()
    state["theta"] = trainer.theta()
    predictor.kernel.set_state(state)
    bits = result["validation_bits"]
    return {"optimizer": optimizer, "epochs": result["epochs"], "steps": result["steps"],
            "offline_validation_bpc": None if bits is None else
            round(bits / min(len(valid), 20_000), 4)}


def _fit_glnn(predictor: Predictor, data: bytes, validation: bytes | None, budget: float,
              method: str, seed: int) -> tuple[Predictor, dict]:
    from dataclasses import replace

    from . import training

    if not method.startswith("glnn-"):
        raise ValueError("a GLNN dictionary is fitted with a glnn-* method (the online kernel "
                         "is a GLNN); gnn and rnn fits stay research model files")
    train, valid = _split(data, validation)
    alphabet = sorted(set(train) | set(valid))
    units = predictor.config.n_units
    result = training.fit(method, training.encode(train, alphabet),
                          training.encode(valid, alphabet), len(alphabet), budget,
                          sizes=[units], seed=seed,
                          connectivity=[predictor.config.connectivity])
    net = result.network
    if net.activation != "tanh":
        raise ValueError("only tanh GLNNs become online models")
    config = replace(predictor.config, n_units=net.n_units,
                     connectivity=net.sources.shape[1])
    fitted = Predictor("glnn", alphabet=predictor.alphabet, seed=predictor.seed, config=config)
    state = fitted.kernel.get_state()
    N, A = net.n_units, 256
    incoming = np.concatenate([np.zeros((N + 1, 1), np.int64), net.sources], axis=1)
    if state["incoming"].shape != incoming.shape:
        raise ValueError("the fitted graph does not fit the online GLNN")
    w = np.zeros((N + 1, A))
    w[0] = -12.0  # bytes the fit never saw start very unlikely; coding adapts
    tau = np.zeros((N + 1, incoming.shape[1], A))
    w[:, alphabet] = net.w
    tau[:, :, alphabet] = net.tau
    state.update(incoming=incoming, w=w, tau=tau, tau_saved=tau.copy(), V=net.V0.copy())
    feat = np.tanh(net.V0)
    feat[0] = 1.0
    state["feat"] = feat
    fitted.kernel.set_state(state)
    return fitted, {"method": method, "n_units": N, "d": int(net.sources.shape[1]),
            "offline_validation_bpc": round(result.validation_bits / len(valid), 4)}
