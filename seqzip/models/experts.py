"""Experts: context models whose log-probabilities join an online network's logits.

An online network (GLNN, LSTM, mLSTM, mRNN) predicts ``softmax(a . w + sum_e beta_e log p_e)``
with gates beta_e = a . U[:, e] learned per symbol (``seqzip._kernels.online``).  The experts
are symbol-mode kernels that the network's kernel advances through their C interface.  This
module parses the config's ``experts`` string and builds them; adding an expert is one entry of
``EXPERTS``.

    >>> parse_experts("ctw8+order2")
    [('ctw', 8), ('order2', 2)]
    >>> parse_experts("ctw8@64")   # a CTW of depth 8 with a 64 MiB budget (default 512)
    [('ctw', 8, 64)]
    >>> [type(k).__name__ for k in make_experts("ctw8+order2", b"abc", seed=0)]
    ['CTWKernel', 'Order2Kernel']
"""
from __future__ import annotations

from typing import Callable

from .base import CTW_MAX_DEPTH, CTW_MAX_MEMORY_MB

MAX_EXPERTS = 8


def _ctw(depth: int, alphabet: bytes, seed: int, memory_mb: int | None = None):
    from .ctw import CTWConfig, CTWModel
    config = CTWConfig(depth=depth) if memory_mb is None else \
        CTWConfig(depth=depth, memory_mb=memory_mb)
    return CTWModel(config, alphabet, seed).kernel


def _order2(order: int, alphabet: bytes, seed: int, *unused):
    from .order2 import Order2Config, Order2Model
    return Order2Model(Order2Config(order=order), alphabet, seed).kernel


# name -> (default parameter, largest parameter, builder(parameter, alphabet, seed))
EXPERTS: dict[str, tuple[int | None, int, Callable]] = {
    "ctw": (None, CTW_MAX_DEPTH, _ctw),      # "ctwD": CTW of depth D
    "order": (None, 2, _order2),  # "order1", "order2"
}


def parse_experts(text: str) -> list[tuple]:
    """``"ctw8+order2"`` -> ``[("ctw", 8), ("order2", 2)]`` (``"ctw8@64"``: a CTW budget of
    64 MiB instead of its default); ValueError on anything else.

        >>> parse_experts("order1+ctw4")
        [('order1', 1), ('ctw', 4)]
    """
    out = []
    for token in text.split("+") if text else []:
        token, _, memory = token.partition("@")
        name = token.rstrip("0123456789")
        digits = token[len(name):]
        if name not in EXPERTS or not digits or len(digits) > 2 or \
                int(digits) > EXPERTS[name][1] or \
                (memory and (name != "ctw" or not memory.isdigit() or len(memory) > 4
                             or not 1 <= int(memory) <= CTW_MAX_MEMORY_MB)):
            raise ValueError(f"unknown expert {token + ('@' + memory if memory else '')!r} "
                             f"(use ctwD with D <= {CTW_MAX_DEPTH}, optionally @MiB up to "
                             f"{CTW_MAX_MEMORY_MB}, order1 or order2)")
        item = (token if name == "order" else name, int(digits))
        out.append(item + (int(memory),) if memory else item)
    if len(out) > MAX_EXPERTS:
        raise ValueError(f"at most {MAX_EXPERTS} experts")
    return out


def make_experts(text: str, alphabet: bytes, seed: int) -> list:
    """The kernels of the experts named by ``text``, over ``alphabet``.

        >>> [k.alphabet_size for k in make_experts("order1", b"abc", seed=0)]
        [3]
    """
    out = []
    for token, parameter, *memory in parse_experts(text):
        name = "order" if token.startswith("order") else token
        out.append(EXPERTS[name][2](parameter, alphabet, seed, *memory))
    return out


def experts_memory(text: str, alphabet_size: int) -> int:
    """Bytes the experts named by ``text`` may allocate (their configs' bounds).

        >>> experts_memory("", 256), experts_memory("order2", 4) > 0
        (0, True)
    """
    from .ctw import CTWConfig
    from .order2 import Order2Config
    total = 0
    for token, parameter, *memory in parse_experts(text):
        if token == "ctw":
            config = CTWConfig(depth=parameter, memory_mb=memory[0]) if memory else \
                CTWConfig(depth=parameter)
            total += config.memory_bytes(alphabet_size)
        else:
            total += Order2Config(order=parameter).memory_bytes(alphabet_size)
    return total
