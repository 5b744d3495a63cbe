"""Experts: context models whose log-probabilities join an online network's logits.

An online model (GLNN, LSTM, mLSTM, mRNN) predicts ``softmax(a . w + sum_e beta_e log p_e)``
with gates beta_e = a . U[:, e] learned per symbol (``seqzip._mixing``).  This module parses the
config's ``experts`` string, builds the experts, and drives them beside the network's kernel.

    >>> parse_experts("ctw8+order2")
    [('ctw', 8), ('order2', 2)]
"""
from __future__ import annotations

GATE_PRIOR = 64.0  # prior curvature of the gates, in samples of unit variance (format constant)


def parse_experts(text: str) -> list[tuple[str, int]]:
    """``"ctw8+order2"`` -> ``[("ctw", 8), ("order2", 2)]``; ValueError on anything else."""
    out = []
    for token in text.split("+") if text else []:
        if token == "order2":
            out.append(("order2", 2))
        elif token.startswith("ctw") and token[3:].isdigit() and int(token[3:]) <= 32:
            out.append(("ctw", int(token[3:])))
        else:
            raise ValueError(f"unknown expert {token!r} (use ctwD with D <= 32, or order2)")
    if len(out) > 8:
        raise ValueError("at most 8 experts")
    return out


def make_experts(text: str, alphabet_size: int, seed: int) -> list:
    from .ctw import CTWConfig, CTWModel
    from .order2 import Order2Config, Order2Model
    made = []
    for kind, depth in parse_experts(text):
        if kind == "ctw":
            made.append(CTWModel(CTWConfig(depth=depth), alphabet_size, seed))
        else:
            made.append(Order2Model(Order2Config(), alphabet_size, seed))
    return made


def initial_gates(experts: list) -> list[float]:
    """The mixture starts as the first expert alone: weight 1 on it, 0 on the others."""
    return [1.0 if e == 0 else 0.0 for e in range(len(experts))]


class ExpertMixed:
    """Binds ``predict``/``update`` of a kernel with ``set_expert`` to its experts."""

    def _bind(self, kernel, experts: list) -> None:
        self._kernel = kernel
        self._experts = experts
        if experts:
            self.predict = self._predict_with_experts
            self.update = self._update_with_experts
        else:
            self.predict = kernel.predict
            self.update = kernel.update

    def _predict_with_experts(self):
        set_expert = self._kernel.set_expert
        for e, expert in enumerate(self._experts):
            set_expert(e, expert.predict())
        return self._kernel.predict()

    def _update_with_experts(self, symbol: int) -> None:
        self._kernel.update(symbol)
        for expert in self._experts:
            expert.update(symbol)

    def expert_weights(self) -> list[float]:
        return self._kernel.expert_weights()[0].round(3).tolist()
