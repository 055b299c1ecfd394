"""The hand-written docs pages (docs/*.md, docs/tutorials/*.md): every Python block runs as
pasted and every C++ block is an excerpt of a file the build compiles (snippets.py). The API
pages are generated (tools/gen_docs.py) and `make docs` builds the site with --strict."""
import glob
import os

import pytest

import snippets

PAGES = sorted(glob.glob(os.path.join(snippets.ROOT, "docs", "*.md"))
               + glob.glob(os.path.join(snippets.ROOT, "docs", "tutorials", "*.md")))
BLOCKS = [b for page in PAGES for b in snippets.blocks(page)]


def _id(block):
    return f"{os.path.basename(block['file'])}:{block['line']}"


def test_the_tutorials_are_there():
    names = {os.path.basename(p) for p in PAGES}
    assert {"numpy-operators.md", "cpp-operators.md", "custom-op.md", "operator-libraries.md",
            "ffi.md", "hybridize.md", "index.md"} <= names


@pytest.mark.parametrize("block", BLOCKS, ids=_id)
def test_every_block_is_checked(block):
    snippets.check_kind(block)
    if block["lang"] == "python":
        snippets.run_python(block)
    elif snippets.kind(block) == "excerpt":
        snippets.check_excerpt(block)
    elif block["lang"] == "sh":
        snippets.check_make_commands(block)
    else:
        assert block["lang"] == "text", block
