"""``python -m seqzip.cli``: the ``seqzip`` command."""
from .app import main

main()
