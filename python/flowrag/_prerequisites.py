"""What `import flowrag` needs besides this folder, checked first so that a
missing piece is one line naming it instead of a traceback from inside the
extension module: numpy (the module exchanges float32 arrays and imports it
when loaded) and the extension module itself (absent when the package is
imported from the source folder instead of an install)."""

from __future__ import annotations

import importlib.util
import sys


def check_prerequisites() -> None:
    """Raises ImportError with one line naming what is missing."""
    if importlib.util.find_spec("numpy") is None:
        raise ImportError(f"flowrag needs numpy, which {sys.executable} does not have: "
                          "pip install numpy (Debian: apt-get install python3-numpy and a venv "
                          "made with --system-site-packages)") from None
    if importlib.util.find_spec("flowrag._flowrag") is None:
        raise ImportError("flowrag's extension module flowrag._flowrag is missing: install the "
                          "package (python3 -m pip install ./python, doc/python.md) instead of "
                          "importing it from the source folder") from None
