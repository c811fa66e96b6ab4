"""The README's Python example, run as it is written (in a temporary folder: it writes a file)."""
import os
import re


def test_readme_python_example(tmp_path, monkeypatch):
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    with open(readme) as f:
        text = f.read()
    section = text.split("## Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block is not None, "the README's Python section has no python block"
    monkeypatch.chdir(tmp_path)
    exec(compile(block.group(1), "README.md", "exec"), {})
