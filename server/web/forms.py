"""The browser's forms: where one may come from, and what it holds.

A state-changing form must come from our own pages (:func:`same_origin`, else
:func:`foreign_form`'s 403). A form is refused before it changes anything: a body that is not a
small urlencoded form (:func:`form_of`) or a value its page never offers (:func:`ticked`,
:func:`ruleset_of`, :func:`seed_of`, and each route's own fields) raises :class:`BadForm`,
which the route answers with its error page (:func:`refused_form`; the app does for routes
that do not, through :data:`exception_handlers`).
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from engine import RULESETS

from ..edge.origin import form_origin_ok
from .i18n import _
from .site import error_page_for, secured


def same_origin(request: Request) -> bool:
    """A state-changing form must come from our own pages (the cookie is SameSite=Lax too):
    ``Origin`` (else ``Referer``) is one of the allowed origins, by default our own host
    (:func:`server.edge.origin.form_origin_ok`)."""
    return form_origin_ok(request, request.app.state.settings)


async def foreign_form(request: Request) -> Response:
    """The answer to a form that :func:`same_origin` refused: 403, and why, in the reader's
    language."""
    return await error_page_for(request, 403, _("Forbidden"), _("That form came from another site."))


FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FORM = 4096
MAX_FIELDS = 32


class BadForm(Exception):
    """A form refused before it changed anything: ``status`` (400 a value or a body that cannot
    be read, 413 too large, 415 not urlencoded, 403 a test hook that is off) and why, in the
    reader's language. Raised where the form is read; answered by :func:`refused_form`."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


async def form_of(request: Request) -> dict[str, str]:
    """The fields of a small ``application/x-www-form-urlencoded`` body (first value wins).

    An empty body is an empty form whatever its type (a form of one button sends no field). Any
    other body that is not such a form raises :class:`BadForm` rather than reading as empty, so a
    form never runs on defaults it did not ask for. Parsed here rather than with
    ``request.form()``: our forms are tiny and urlencoded, and this needs no multipart parser.
    """
    body = await request.body()
    if not body:
        return {}
    if request.headers.get("content-type", "").split(";", 1)[0].strip().lower() != FORM_TYPE:
        raise BadForm(_("Our pages send forms URL-encoded; this one came in another format."), 415)
    if len(body) > MAX_FORM:
        raise BadForm(_("It is larger than %(most)d bytes.") % {"most": MAX_FORM}, 413)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS,
                          encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise BadForm(_("Its text is not valid UTF-8.")) from None
    except ValueError:
        raise BadForm(_("It has more than %(most)d fields.") % {"most": MAX_FIELDS}) from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        fields.setdefault(key, value)
    return fields


def ticked(form: dict[str, str], field: str, on: Collection[str] = ("on",), off: Collection[str] = ()) -> bool:
    """A checkbox: ``on`` (what the box sends), or absent or ``off`` (what a page's hidden field
    sends for an unticked box); any other value raises :class:`BadForm`."""
    value = form.get(field)
    if value is not None and value not in on and value not in off:
        raise BadForm(_("“%(field)s” is a box to tick or leave empty; the form said something else.")
                      % {"field": field})
    return value in on


def ruleset_of(form: dict[str, str]) -> str:
    """The form's rules (Brettspielnetz's when it names none); unknown ones raise :class:`BadForm`."""
    ruleset = form.get("ruleset", "brettspielnetz")
    if ruleset not in RULESETS:
        raise BadForm(_("There are no such rules."))
    return ruleset


def seed_of(request: Request, form: dict[str, str]) -> int | None:
    """The test-only layout hook: a ``seed`` is refused (403) unless the test hooks are on, as
    the JSON API refuses it (``test_hooks_off``); no page sends one."""
    seed = form.get("seed")
    if seed is None:
        return None
    if not request.app.state.settings.test_hooks:
        raise BadForm(_("The seed is a test-only hook, turned off on this server."), 403)
    if not (seed.isascii() and seed.isdigit() and len(seed) < 19):
        raise BadForm(_("A seed is a whole number."))
    return int(seed)


async def refused_form(request: Request, exc: BadForm, title: str | None = None) -> HTMLResponse:
    """The page of a :class:`BadForm`: ``title`` says what the form was for (else: it could not
    be read), the message why."""
    return await error_page_for(request, exc.status, title or _("Cannot read that form"), exc.message)


async def _bad_form(request: Request, exc: Exception) -> Response:
    """The app's answer to a :class:`BadForm` that its route did not answer itself; raised past
    the route's own middleware, so the page gets the security headers here."""
    assert isinstance(exc, BadForm)
    return secured(await refused_form(request, exc))


exception_handlers = {BadForm: _bad_form}
"""A form refused (installed with the pages: :data:`server.web.pages.exception_handlers`)."""
