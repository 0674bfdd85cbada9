"""The browser's HTML routes: the route table of every page module, and the static assets.

Pages are server-rendered with the same Jinja2 macros as the websocket frames
(:mod:`server.web.html_codec`), so what a reload shows is exactly what the live page showed.
Forms are plain HTML forms (POST, then 303 to a page); the only script on any page is htmx
and its websocket extension, served from ``web/node_modules`` at a versioned URL with a
one-year immutable cache. State-changing forms check the ``Origin`` header. The pages:
:mod:`.home_pages` (home and its forms), :mod:`.room_pages` (a game), :mod:`.solo_pages`,
:mod:`.pair_pages`, :mod:`.player_pages`, :mod:`.name_pages`.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..edge.csp import SecurityHeaders
from . import forms, home_pages, language, name_pages, room_pages
from .pair_pages import routes as pair_routes
from .player_pages import routes as player_routes
from .site import missing_page, web_of
from .solo_pages import routes as solo_routes


async def static(request: Request) -> Response:
    web = web_of(request)
    return web.assets.response(request, request.path_params["version"], request.path_params["path"])


_headers = [Middleware(SecurityHeaders)]

routes = [
    Route("/", home_pages.home, middleware=_headers),
    Route("/rules", home_pages.rules, middleware=_headers),
    Route("/guest", home_pages.guest, methods=["POST"], middleware=_headers),
    Route("/name", name_pages.name_page, middleware=_headers),
    Route("/name", name_pages.rename, methods=["POST"], middleware=_headers),
    Route("/games", home_pages.create_game, methods=["POST"], middleware=_headers),
    Route("/join", home_pages.join_by_code, middleware=_headers),
    Route("/play/computer", home_pages.play_computer, methods=["POST"], middleware=_headers),
    Route("/g/{id}", room_pages.room_page, middleware=_headers),
    Route("/g/{id}/replay", room_pages.replay_step, middleware=_headers),
    Route("/g/{id}/odds", room_pages.odds_step, middleware=_headers),
    Route("/g/{id}/join", room_pages.join_room, methods=["POST"], middleware=_headers),
    Route("/g/{id}/join", room_pages.join_page, methods=["GET"], middleware=_headers),
    Route("/g/{id}/rematch", room_pages.rematch, methods=["POST"], middleware=_headers),
    Route("/g/{id}/rematch", room_pages.to_rematch, middleware=_headers),
    Route("/g/{id}/rematch/decline", room_pages.decline_rematch, methods=["POST"], middleware=_headers),
    Route("/g/{id}/cancel", room_pages.cancel_challenge, methods=["POST"], middleware=_headers),
    Route("/g/{id}/sound", room_pages.set_sound, methods=["POST"], middleware=_headers),
    Route("/static/v/{version}/{path:path}", static, middleware=_headers),
    *language.routes,
    *solo_routes,
    *pair_routes,
    *player_routes,
]


exception_handlers = {**forms.exception_handlers, HTTPException: missing_page}
"""The browser edge's exception handlers (``server.app`` installs them with the pages): a
form refused, an address or method no route serves."""
