"""The documentation's python blocks (README.md, docs/*.md) run as tests through pytest-markdown-docs
(`make test`: ``pytest --markdown-docs``): each block is a whole program and runs as written, as a
script would -- ``__name__ == "__main__"`` (the torchrl and RLlib blocks guard their worker processes
with it) and in a fresh temporary folder (what a block writes stays out of the repository). The
suite's own configuration is tests/conftest.py."""

import pytest


def pytest_markdown_docs_globals():
    return {"__name__": "__main__"}


@pytest.fixture(autouse=True)
def _doc_blocks_run_in_a_temporary_folder(request, tmp_path, monkeypatch):
    if type(request.node).__name__ == "MarkdownInlinePythonItem":
        monkeypatch.chdir(tmp_path)
