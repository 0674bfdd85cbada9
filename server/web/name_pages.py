"""A player's name, changed in the browser: ``GET /name`` (the form, with the name now) and
``POST /name`` (the rename, then back to "My games" under a cookie that carries the new name).

Why a page: a visitor who played the computer before picking a name is "Guest-…" for good
unless the site lets them change it (an outside probe found only the API could). A rename that
claims a name spends a guest creation of the address, as the API's does: a name given up stays
its player's (``server.store.scripts.players.NAME_CLAIM``), so renames claim names as new
guests do (taking one's own back claims nothing: :meth:`~server.edge.guests.Guests.claims_new`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..core.room import Player
from ..edge.auth import BadName, required_name
from ..edge.limits import Limited, guard_of
from ..store.players import NameTaken
from .forms import foreign_form, form_of, same_origin
from .i18n import _
from .site import limited_page, redirect, redirect_as, render_page, visitor_of


async def name_page(request: Request) -> Response:
    me = await visitor_of(request)
    if me is None:
        return redirect("/")  # nobody to rename: the home page's form makes a guest
    return render_page(request, "rename.html", me, value=me.name, error=None)


async def rename(request: Request) -> Response:
    if not same_origin(request):
        return await foreign_form(request)
    me = await visitor_of(request)
    if me is None:
        return redirect("/")
    form = await form_of(request)
    typed = form.get("name", "")
    guests = request.app.state.guests
    try:
        name = required_name(typed)
        if name == me.name:
            return redirect("/me")
        if await guests.claims_new(me, name):  # taking one's own name back claims nothing
            guard_of(request).new_guest(request)
        _player, token = await guests.rename(me, name)
    except BadName as exc:
        return _refused(request, me, typed, 400, _("That name won’t do: %(reason)s.") % {"reason": exc.said()})
    except Limited as exc:
        return await limited_page(request, exc)
    except NameTaken:
        return _refused(request, me, typed, 409,
                        _("Somebody is already called %(name)s. Please choose another name.") % {"name": name})
    return redirect_as(request, "/me", token)


def _refused(request: Request, me: Player, typed: str, status: int, message: str) -> Response:
    return render_page(request, "rename.html", me, status, value=typed, error=message)
