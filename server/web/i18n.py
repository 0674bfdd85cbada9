"""The words of the site in the reader's language: one gettext seam for templates and Python.

Templates use Jinja2's i18n extension (``{{ _("Your turn") }}``, ``{% trans %}``); Python view
models use :func:`gettext` / :func:`ngettext` / :func:`pgettext` from here. All of them read
the translations of the render in progress from a context variable, so a macro module loaded
once serves every language, and a websocket frame rendered for one reader cannot leak another's
language. :func:`using` sets it around a render; :func:`negotiate` picks a reader's language.

The catalogs are ``server/locale/<lang>/LC_MESSAGES/messages.po`` (Babel; see
:mod:`server.web.catalogs` for extracting and updating them). They are compiled in memory the
first time a language is used (``read_po`` + ``write_mo``): no build step to forget, and the
``.po`` under review is exactly what runs. English is the msgids themselves.

Labels kept in module-level tables are marked with :func:`N_` (extracted, not translated) and
translated where they are shown, never at import.

Numbers with a fraction, percentages and dates are written here too, in the same render's
language (:func:`number`, :func:`percent`, :func:`date_text`, Babel's rules): "2.20 s" in English
is "2,20 s" in German, "75%" is "75 %" (with a no-break space).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import gettext as _gettext
import io
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from babel.core import Locale, negotiate_locale
from babel.dates import format_date, format_time
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from jinja2 import Environment

from .weighted import weighted

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "messages"
DEFAULT = "en"
LANGS: tuple[str, ...] = ("en", "de")
"""The site's languages; the first is the default and the catalogs' source language."""
NAMES = {"en": "English", "de": "Deutsch"}
"""Each language in its own words (the switch in the site's header)."""
MINUS = "\u2212"
"""The real minus sign, in every negative number the site shows (never the ASCII hyphen)."""

_current: ContextVar[_gettext.NullTranslations] = ContextVar(
    "mineduel_translations", default=_gettext.NullTranslations())
_lang: ContextVar[str] = ContextVar("mineduel_lang", default=DEFAULT)


# ---------------------------------------------------------------------- the seam


def gettext(message: str) -> str:
    """``message`` in the language of the render in progress."""
    return _current.get().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message for ``n``, in the render's language."""
    return _current.get().ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the render's language, where the same English word needs different
    translations (``pgettext("move list", "mark")``)."""
    return _current.get().pgettext(context, message)


_ = gettext


def N_(message: str) -> str:
    """Mark ``message`` for extraction only: a label in a table built at import, translated
    (``_(label)``) where it is shown."""
    return message


def current() -> str:
    """The language of the render in progress (``<html lang>``)."""
    return _lang.get()


# ---------------------------------------------------------------------- numbers and dates


def number(x: float, places: int = 0, *, trim: bool = False, whole: int = 1) -> str:
    """``x`` rounded to ``places`` decimals as the render's language writes it: ``2.20`` in
    English, ``2,20`` in German (Babel's symbols for the language). The one way the site writes
    a number with a fraction (times, 3BV/s, odds, clocks, time controls), so no page mixes
    decimal points and commas. ``trim``: trailing zeros of the fraction go (``1.5``, ``3``);
    ``whole``: at least this many digits before it (``09.5`` in a clock). No grouping: every
    such number is short. A negative one gets the real minus sign (:data:`MINUS`), unless it
    rounds to zero."""
    pattern = "0" * max(1, whole) + ("." + ("#" if trim else "0") * places if places else "")
    text = format_decimal(abs(x), format=pattern, locale=current())
    return MINUS + text if x < 0 and any(ch in "123456789" for ch in text) else text


def percent(x: float, places: int = 0) -> str:
    """The fraction ``x`` (``0.75``) as a percentage with ``places`` decimals, as the render's
    language writes one (its own percent pattern, Babel's): ``75%``, ``23.4%`` in English;
    ``75\u00a0%``, ``23,4\u00a0%`` in German (a no-break space: the sign never wraps away from
    its number). The one way the site writes a percentage. A negative one gets the real minus
    sign (:data:`MINUS`), unless it rounds to zero."""
    pattern = _percent_pattern(current())
    digits = "0" + ("." + "0" * places if places else "")
    text = format_percent(abs(x), format=re.sub(r"[#0,.]+", digits, pattern, count=1), locale=current())
    return MINUS + text if x < 0 and any(ch in "123456789" for ch in text) else text


@functools.cache
def _percent_pattern(lang: str) -> str:
    """The positive part of ``lang``'s standard percent pattern (``#,##0%``, ``#,##0\u00a0%``)."""
    return Locale.parse(lang).percent_formats[None].pattern.split(";")[0]


def date_text(ms: int | None) -> str:
    """A UTC day (``ms`` since the epoch) in Babel's medium form of the render's language:
    ``29.11.2026`` in German, ``Nov 29, 2026`` in English (the month spelled out: no reader
    takes 11/12 for the wrong day). Empty for ``None``."""
    if ms is None:
        return ""
    day = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).date()
    return format_date(day, format="medium", locale=current())


def moment_text(ms: int) -> str:
    """A moment (``ms`` since the epoch) as the UTC day and time in the render's language, the
    zone said: ``Dec 2, 2026, 14:05 UTC`` (German ``02.12.2026, 14:05 UTC``)."""
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return f"{format_date(moment.date(), format='medium', locale=current())}, " \
           f"{format_time(moment.time(), format='short', locale=current())} UTC"


@contextlib.contextmanager
def using(lang: str) -> Iterator[None]:
    """Render in ``lang`` inside the block (pages, frames, everything Python words)."""
    lang = lang if lang in LANGS else DEFAULT
    tokens = (_current.set(translations(lang)), _lang.set(lang))
    try:
        yield
    finally:
        _lang.reset(tokens[1])
        _current.reset(tokens[0])


def install(env: Environment) -> None:
    """Give ``env``'s templates ``_``, ``gettext``, ``ngettext``, ``pgettext``, ``{% trans %}``
    (newstyle: autoescaped, ``%(name)s`` placeholders filled from keyword arguments, so a
    literal percent sign is written ``%%``), ``lang()``, ``number()``, ``percent()`` and ``moment()``."""
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext, ngettext, newstyle=True, pgettext=pgettext,
        npgettext=lambda c, s, p, n: _current.get().npgettext(c, s, p, n))
    env.globals["lang"] = current
    env.globals["number"] = number
    env.globals["percent"] = percent
    env.globals["moment"] = moment_text
    env.globals["lang_names"] = NAMES


# ---------------------------------------------------------------------- catalogs


@functools.cache
def translations(lang: str) -> _gettext.NullTranslations:
    """The compiled catalog of ``lang`` (English: the msgids themselves). Compiled once per
    process from the ``.po``; an entry marked fuzzy is left out (English shows instead)."""
    if lang == DEFAULT:
        return _gettext.NullTranslations()
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    with path.open("rb") as f:
        catalog = read_po(f, locale=lang, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def in_every_language(message: str) -> frozenset[str]:
    """``message`` in each of the site's languages (what a reader of any of them may see)."""
    return frozenset(translations(lang).gettext(message) for lang in LANGS)


# ---------------------------------------------------------------------- choosing


def negotiate(cookie: str | None, accept_language: str | None) -> str:
    """The reader's language: the ``lang`` cookie when it names one of :data:`LANGS`, else the
    best match of ``Accept-Language`` (Babel's :func:`~babel.core.negotiate_locale`: ``de-AT``
    finds ``de``), else English."""
    if cookie in LANGS:
        return cookie  # type: ignore[return-value]
    found = negotiate_locale(preferred(accept_language or ""), LANGS, sep="-")
    return found if found in LANGS else DEFAULT


def preferred(header: str) -> list[str]:
    """The language tags of an ``Accept-Language`` header, lower-cased, most wanted first (by
    ``q``, then in the order given; ``q=0`` means not wanted). Babel matches them; this only
    orders them. Tags are case-insensitive (BCP 47), but :func:`~babel.core.negotiate_locale`
    answers in the case it was given (``DE`` → ``DE``, ``DE-AT`` → ``DE``), which is not in
    :data:`LANGS`: lower-casing here makes ``DE-AT`` find ``de``."""
    ranked = [(-q, i, tag) for i, (tag, q) in enumerate(weighted(header)) if tag != "*" and q > 0]
    return [tag for _q, _i, tag in sorted(ranked)]
