"""WordNet for METEOR, laid out from Debian's packages by scripts/install_wordnet.py."""

from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import pytest

from dialeval.metrics.text import load_wordnet, meteor

ROOT = Path(__file__).resolve().parents[1]


def _installer():
    spec = importlib.util.spec_from_file_location("install_wordnet", ROOT / "scripts" / "install_wordnet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lexnames_table_is_read_from_the_manual_page(tmp_path):
    page = tmp_path / "lexnames.5WN.gz"
    rows = [f"{i:02d}\tnoun.{chr(97 + i // 26)}{chr(97 + i % 26)}\tnouns of some kind" for i in range(45)]
    rows[0] = "00\tadj.all\tall adjective clusters"
    rows[44] = "44\tadj.ppl\tparticipial adjectives"
    with gzip.open(page, "wt") as fh:
        fh.write(".TH LEXNAMES\nFile Number\tName\tContents\n" + "\n".join(rows) + "\n.SH SEE ALSO\n")
    table = _installer().lexnames_from_manpage(page).splitlines()
    assert len(table) == 45
    assert table[0] == "00\tadj.all\t3" and table[1] == "01\tnoun.ab\t1" and table[44] == "44\tadj.ppl\t3"


def test_meteor_credits_synonyms_when_wordnet_is_installed():
    wordnet, reason = load_wordnet()
    if wordnet is None:
        pytest.skip(reason)
    assert wordnet.get_version() == "3.0"
    # "sofa" and "couch" share a synset (and survive NLTK's stemming stage unchanged)
    with_synonyms = meteor(["she sat on the sofa"], ["she sat on the couch"]).value
    exact_only = meteor(["she sat on the sofa"], ["she sat on the couch"], wordnet=_NoSynonyms()).value
    assert with_synonyms == pytest.approx(0.996) and exact_only < 0.8


class _NoSynonyms:
    def synsets(self, *args, **kwargs):
        return []
