"""The README's Python quickstart runs as written (in a scratch directory
holding a link to the repository's examples/)."""

import os
import re
import subprocess
import sys

from conftest import REPO


def python_blocks():
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Python"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_has_a_quickstart():
    blocks = python_blocks()
    assert blocks and "import flowrag" in blocks[0]


def test_readme_python_blocks_run(tmp_path):
    os.symlink(REPO / "examples", tmp_path / "examples")
    for i, block in enumerate(python_blocks()):
        script = tmp_path / f"block{i}.py"
        script.write_text(block)
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"README python block {i}:\n{block}\n{done.stderr}"
