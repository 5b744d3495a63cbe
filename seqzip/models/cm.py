"""Context mixing: a bank of experts under a learned mixer gated by an online network.

The kernel is :class:`seqzip._kernels.cm.CMKernel` (bit mode: each symbol is coded as its
binary decisions).  This module builds the model from its config (``cm_config``; the
presets and levels are ``cm_presets``, and both are exported here): the symbol experts (CTW,
order2) and the gating network (an online GLNN or mLSTM trained on its own log-loss, whose
state gates one of the mixer's weight sets and whose prediction is one more input).

    >>> m = CMModel(CMConfig.for_level(1), alphabet=b"ab", seed=0)
    >>> for s in [0, 1] * 200:
    ...     m.update(s)
    >>> m.kernel.predict_bit() < 2000   # after "...a b" comes "a" (bit 0)
    True
"""
from __future__ import annotations

from .._kernels.cm import KINDS, SELECTORS, CMKernel  # noqa: F401 (KINDS, SELECTORS: as before)
from .base import Model
from .cm_config import (BITMAP_CHANGES, MAX_ORDER, NETWORKS, SPARSE_CONTEXTS,  # noqa: F401
                        WORD_CONTEXTS, CMConfig, CMSpec, _network_class, network_config)
from .cm_presets import (DATA_VARIANTS, FIRST_PRESETS, LEVEL_IDS, LEVELS,  # noqa: F401
                         PRESETS, VARIANTS)
from .detect import (ELF_RISC, ELF_X86, M68K_WORDS, RISC_WORDS, X86_WORDS,  # noqa: F401
                     code_kind, data_kinds, elf_machine, looks_like_68000, looks_like_bitmap)
from .experts import make_experts


class CMModel(Model):
    """Context mixing over ``alphabet``; deterministic given the config and the seed (the
    seed only reaches the network's initial weights).

        >>> m = CMModel(CMConfig.for_level(1), alphabet=b"abc", seed=0)
        >>> m.kernel.mode, m.kernel.bits
        (1, 2)
    """

    config_class = CMConfig

    def make_kernel(self) -> CMKernel:
        c = self.config
        network = None
        if c.network:
            model_class = _network_class(c.network)[1]
            network = model_class(c.network_model_config(), self.alphabet, self.seed).kernel
        return CMKernel(c.spec_for(self.size_hint), self.alphabet,
                        make_experts(c.experts, self.alphabet, self.seed), network,
                        self.size_hint)
