"""The python blocks of docs/*.md run as tests through pytest-markdown-docs (`make test`: ``pytest
--markdown-docs README.md docs``): each block is a whole program and runs as written, as a script
would -- ``__name__ == "__main__"`` (the torchrl and RLlib blocks guard their worker processes with it)
and in a fresh temporary folder (what a block writes stays out of the repository). Here, not at the
repository's root: a root conftest.py would put the source tree on ``sys.path`` for the wheel's smoke
test too. (README.md's blocks write nothing and need neither.) The suite's own configuration is
tests/conftest.py."""

import pytest


@pytest.hookimpl(optionalhook=True)  # pytest-markdown-docs' hook; the wheel's test environment runs without it
def pytest_markdown_docs_globals():
    return {"__name__": "__main__"}


@pytest.fixture(autouse=True)
def _doc_blocks_run_in_a_temporary_folder(request, tmp_path, monkeypatch):
    if type(request.node).__name__ == "MarkdownInlinePythonItem":
        monkeypatch.chdir(tmp_path)
