"""The levels every model family has and the defaults, written once (foundation: imports
nothing, so that the command line reads them without loading numpy or a model).

    >>> LEVELS[0], LEVELS[-1], DEFAULT_LEVEL, DEFAULT_MODEL
    (1, 9, 6, 'cm')
"""
MIN_LEVEL = 1  # -1: the fastest
MAX_LEVEL = 9  # -9: the strongest
LEVELS = range(MIN_LEVEL, MAX_LEVEL + 1)
DEFAULT_LEVEL = 6
DEFAULT_MODEL = "cm"
