"""The words of the site in the reader's language: one gettext seam for templates and Python.

Templates use Jinja2's i18n extension (``{{ _("Your turn") }}``, ``{% trans %}``); Python view
models use :func:`gettext` / :func:`ngettext` from here. Both read the translations of the
render in progress from a context variable, so a macro module loaded once serves every
language, and a websocket frame rendered for one reader cannot leak another's language.

Until catalogs are loaded every string is its English self (``NullTranslations``).
"""

from __future__ import annotations

import gettext as _gettext
from contextvars import ContextVar

from jinja2 import Environment

_current: ContextVar[_gettext.NullTranslations] = ContextVar(
    "mineduel_translations", default=_gettext.NullTranslations())


def gettext(message: str) -> str:
    """``message`` in the language of the render in progress."""
    return _current.get().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message for ``n``, in the render's language."""
    return _current.get().ngettext(singular, plural, n)


_ = gettext


def install(env: Environment) -> None:
    """Give ``env``'s templates ``_``, ``gettext``, ``ngettext`` and ``{% trans %}`` (newstyle:
    autoescaped, ``%(name)s`` placeholders filled from keyword arguments)."""
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(gettext, ngettext, newstyle=True)  # type: ignore[attr-defined]
