"""BuildError: a build that cannot go on, said in one line.

The hooks (__init__.py) turn it into `sys.exit("flowrag: <message>")`, so
pip and `python -m build` show that line instead of a traceback.
"""


class BuildError(Exception):
    """A missing prerequisite or a failed step; the message names it."""
