"""The context mixer as a bank of components (see ``kernel.pyx``'s docstring): one .pxd per
concern (``tables``: bit histories and the StateMap rule; ``slots``: the hash table and its
journal; ``context``: the shared per-symbol trackers; ``kinds``: the hashed context kinds;
``match``; ``experts``: symbol experts; ``mixer``: weight sets and optimisers; ``apm``), all
inline C, assembled by ``kernel.CMKernel``; ``names``: the state's named scalars;
``probes``: the components on their own, for the tests."""
from .kernel import (KINDS, LIMITS, OPTIMIZERS, SELECTORS, CMKernel, bit_history_states,
                     py_squash, py_stretch)
from .probes import py_context_hashes, py_mixer_step, py_state_map

__all__ = ["KINDS", "LIMITS", "OPTIMIZERS", "SELECTORS", "CMKernel", "bit_history_states",
           "py_context_hashes", "py_mixer_step", "py_squash", "py_state_map", "py_stretch"]
