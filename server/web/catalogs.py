"""The message catalogs: extract the English strings, update the translations, check them.

One command after marking strings (``_("...")`` in templates and Python)::

    .venv/bin/python -m server.web.catalogs update

re-extracts every marked string of ``server/`` and ``web/templates/`` (as ``babel.cfg`` maps
them: Babel's Python extractor, Jinja2's ``babel_extract``) into ``server/locale/messages.pot``
and merges it into each language's ``messages.po`` (new strings come in empty, changed ones
fuzzy). Translate those, then ``check`` (also run by ``tests/web/test_i18n.py``) says what is
still missing. Nothing is compiled on disk: :func:`server.web.i18n.translations` compiles the
``.po`` in memory at start-up.

The ``.pot`` is written without source locations and sorted by msgid, so branches that add
strings merge without conflicts over line numbers.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

from .i18n import DOMAIN, LANGS, LOCALE_DIR

ROOT = LOCALE_DIR.parent.parent
CONFIG = ROOT / "babel.cfg"
POT = LOCALE_DIR / f"{DOMAIN}.pot"
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "N_": None}


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def extract() -> Catalog:
    """Every marked string of the sources, as ``babel.cfg`` maps them."""
    with CONFIG.open() as f:
        method_map, options_map = parse_mapping_cfg(f, str(CONFIG))
    catalog = Catalog(project="MineDuel", version="1", msgid_bugs_address="", charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords=KEYWORDS, strip_comment_tags=True):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def template_text(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, omit_header=False, no_location=True, sort_output=True, width=100)
    return out.getvalue()


def update() -> None:
    """Write the ``.pot`` and merge it into every translation."""
    template = extract()
    POT.parent.mkdir(parents=True, exist_ok=True)
    POT.write_bytes(template_text(template))
    for lang in LANGS[1:]:
        path = po_path(lang)
        if path.exists():
            with path.open("rb") as f:
                catalog = read_po(f, locale=lang, domain=DOMAIN)
        else:
            catalog = Catalog(locale=lang, domain=DOMAIN, project="MineDuel", version="1")
        catalog.update(template, update_header_comment=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as f:
            write_po(f, catalog, no_location=True, sort_output=True, width=100, ignore_obsolete=True)


def problems() -> list[str]:
    """What is wrong with the catalogs: the ``.pot`` behind the sources, a translation missing,
    empty or fuzzy (empty: every translation is complete and current)."""
    found: list[str] = []
    wanted = {m.id if isinstance(m.id, str) else m.id[0]: m.context for m in extract() if m.id}
    with POT.open("rb") as f:
        template = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(f) if m.id}
    found += [f"not in messages.pot (run: python -m server.web.catalogs update): {m!r}"
              for m in sorted(set(wanted) - template)]
    found += [f"in messages.pot but no longer in the sources: {m!r}" for m in sorted(template - set(wanted))]
    for lang in LANGS[1:]:
        with po_path(lang).open("rb") as f:
            catalog = read_po(f, locale=lang)
        ids = set()
        for m in catalog:
            if not m.id:
                continue
            key = m.id if isinstance(m.id, str) else m.id[0]
            ids.add(key)
            strings = m.string if isinstance(m.string, tuple) else (m.string,)
            if m.fuzzy or not all(strings):
                found.append(f"{lang}: {'fuzzy' if m.fuzzy else 'untranslated'}: {key!r}")
        found += [f"{lang}: missing: {m!r}" for m in sorted(set(wanted) - ids)]
    return found


def main(argv: list[str]) -> int:
    if argv[:1] == ["update"]:
        update()
        argv = ["check"]
    if argv[:1] == ["check"]:
        found = problems()
        print("\n".join(found) or "catalogs complete")
        return 1 if found else 0
    print("usage: python -m server.web.catalogs update|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
