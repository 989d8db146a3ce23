"""Give NLTK its WordNet 3.0 data (needed by METEOR) from Debian's WordNet packages.

NLTK fetches WordNet from its own servers, which this project never reaches. Debian ships
the same WordNet 3.0 database files (`wordnet-base`, plus `index.sense` in
`wordnet-sense-index`); this script lays them out as NLTK's
`corpora/wordnet` inside the virtualenv (`<venv>/nltk_data`, on NLTK's search path) and
writes the `lexnames` table NLTK also wants, read from the package's own lexnames(5)
manual page. Without WordNet, METEOR is reported as unavailable, never as 0.

Usage: python scripts/install_wordnet.py               (downloads the two .debs with apt-get)
       python scripts/install_wordnet.py A.deb B.deb   (uses .debs you already have)
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FILES = [
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev",
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb", "index.sense",
]
CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


PACKAGES = ["wordnet-base", "wordnet-sense-index"]


def fetch_debs(workdir: Path) -> list[Path]:
    subprocess.run(["apt-get", "download", *PACKAGES], cwd=workdir, check=True, capture_output=True)
    return sorted(workdir.glob("wordnet-*.deb"))


def lexnames_from_manpage(manpage: Path) -> str:
    rows = []
    for line in gzip.open(manpage, "rt", encoding="latin-1"):
        match = re.match(r"^(\d\d)\s+([a-z]+\.[A-Za-z]+)\s", line)
        if match:
            number, name = match.groups()
            rows.append(f"{number}\t{name}\t{CATEGORY[name.split('.')[0]]}")
    if len(rows) != 45:
        raise SystemExit(f"expected 45 lexicographer files in {manpage}, found {len(rows)}")
    return "\n".join(rows) + "\n"


def main() -> None:
    target = Path(sys.prefix) / "nltk_data" / "corpora" / "wordnet"
    if (target / "lexnames").exists():
        print(f"WordNet already installed in {target}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        debs = [Path(a) for a in sys.argv[1:]] or fetch_debs(work)
        for deb in debs:
            subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "x")], check=True)
        source = work / "x" / "usr" / "share" / "wordnet"
        target.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            if (source / name).exists():
                shutil.copy2(source / name, target / name)
        (target / "lexnames").write_text(lexnames_from_manpage(work / "x/usr/share/man/man5/lexnames.5WN.gz"))
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    # one lookup through NLTK reads the index and data files (building all 82,115 noun
    # synsets to count them took 25 s of CPU); the count comes from the data file's lines
    wordnet.synset("dog.n.01")
    nouns = sum(1 for line in (target / "data.noun").open(encoding="latin-1") if not line.startswith("  "))
    print(f"WordNet {wordnet.get_version()} installed in {target} ({nouns} noun synsets)")


if __name__ == "__main__":
    main()
