"""The context mixer as a bank of components (see ``kernel.pyx``'s docstring), one .pxd per
concern, all inline C: ``component``: the one C-level interface of the bit-level experts, and
the experts behind it (``hashed``: the context models; ``match``; ``experts``: symbol experts;
``rows``: the row maps; ``floats``: float samples); what they share (``tables``: bit
histories and the StateMap rule; ``slots``: the hash table and its journal; ``context``: the
per-symbol trackers; ``kinds``: the hashed context kinds; ``field``: named state); the mixer
(``mixer``: weight sets and optimisers; ``gate``: the gated set; ``selectors``) and ``apm``;
run by ``kernel.CMKernel``.  ``checks``: the one set of bounds and the checks of a state;
``names``: the state's named scalars; ``probes``: the components on their own, for the
tests."""
from .checks import CONFIG_BOUNDS, MIN_MATCH, post_bytes, sse_stages
from .kernel import KINDS, LIMITS, OPTIMIZERS, SELECTORS, CMKernel, simd_path
from .probes import (bit_history_states, py_context_hashes, py_float_codec, py_m68k_states,
                     py_mixer_sets_step, py_mixer_step, py_net_context, py_row_length,
                     py_run_nogil, py_selector_row, py_squash, py_state_map, py_stretch, py_x86_states)

__all__ = ["CONFIG_BOUNDS", "KINDS", "LIMITS", "MIN_MATCH", "OPTIMIZERS", "SELECTORS",
           "CMKernel", "bit_history_states", "post_bytes", "py_context_hashes", "py_float_codec",
           "py_m68k_states",
           "py_mixer_sets_step", "py_mixer_step", "py_net_context", "py_run_nogil", "py_row_length", "py_selector_row", "py_squash",
           "py_state_map", "py_stretch", "py_x86_states", "simd_path", "sse_stages"]
