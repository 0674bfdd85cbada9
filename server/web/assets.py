"""The static files of the browser pages, read once and served with long-lived caching.

htmx, its websocket extension and idiomorph's htmx extension (the ``morph`` swap of the live
pages' frames) come from ``web/node_modules`` (installed from the npm registry, pinned exactly,
never from a CDN); the rest from ``web/static``.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

from .template_env import WEB_DIR
from .weighted import weighted

IMMUTABLE = "public, max-age=31536000, immutable"
NODE_ASSETS = {
    "htmx.min.js": Path("node_modules/htmx.org/dist/htmx.min.js"),
    "ws.min.js": Path("node_modules/htmx-ext-ws/dist/ws.min.js"),
    "idiomorph-ext.min.js": Path("node_modules/idiomorph/dist/idiomorph-ext.min.js"),
}
_COMPRESSIBLE = (".js", ".css", ".svg")


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    gzipped: bytes | None
    media_type: str
    etag: str


class Assets:
    """The static files, read once: htmx and its extensions from ``web/node_modules``, the rest
    from ``web/static``.

    One version hash covers all of them, so relative URLs inside the CSS (icons) stay valid:
    ``/static/v/<version>/<path>``. A request for another version (a page from before a deploy)
    still gets the current file, but with ``no-cache`` instead of the one-year immutable cache.
    """

    def __init__(self, web_dir: Path = WEB_DIR) -> None:
        files: dict[str, Path] = {name: web_dir / rel for name, rel in NODE_ASSETS.items()}
        static = web_dir / "static"
        if static.is_dir():
            for path in sorted(static.rglob("*")):
                if path.is_file():
                    files[path.relative_to(static).as_posix()] = path
        self.files: dict[str, Asset] = {}
        self.missing: list[str] = []
        digest = hashlib.sha256()
        for name, path in sorted(files.items()):
            try:
                body = path.read_bytes()
            except OSError:
                self.missing.append(name)
                continue
            digest.update(name.encode() + b"\0" + body + b"\0")
            media = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if media.startswith("text/") or media in ("application/javascript", "image/svg+xml"):
                media += "; charset=utf-8"
            zipped = gzip.compress(body, 9, mtime=0) if name.endswith(_COMPRESSIBLE) else None
            tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            self.files[name] = Asset(body, zipped if zipped and len(zipped) < len(body) else None, media, tag)
        self.version = digest.hexdigest()[:12]

    def url(self, name: str) -> str:
        return f"/static/v/{self.version}/{name}"

    def response(self, request: Request, version: str, name: str) -> Response:
        asset = self.files.get(name)
        if asset is None:
            return Response("not found", status_code=404, media_type="text/plain")
        cache = IMMUTABLE if version == self.version else "no-cache"
        headers = {"cache-control": cache, "etag": asset.etag, "vary": "accept-encoding"}
        if names_etag(request.headers.get("if-none-match"), asset.etag):
            return Response(status_code=304, headers=headers)
        body = asset.body
        if asset.gzipped is not None and accepts_gzip(request.headers.get("accept-encoding")):
            body = asset.gzipped
            headers["content-encoding"] = "gzip"
        return Response(body, media_type=asset.media_type, headers=headers)


# ---------------------------------------------------------------------- request headers
# Starlette's ``StaticFiles.is_not_modified`` hangs off a class we do not use and answers ``*``
# only in recent releases (not in 1.3; ``pyproject`` allows 1.0).


def names_etag(if_none_match: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names this representation (RFC 9110 §13.1.2): ``*``, or a
    list holding the tag compared weakly (``W/"x"`` names ``"x"``), so a cache that keeps weak
    tags still gets its 304. Our tags are quoted hex, so splitting on commas is exact."""
    if if_none_match is None:
        return False
    if if_none_match.strip() == "*":
        return True
    return etag in (tag.strip().removeprefix("W/") for tag in if_none_match.split(","))


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether ``Accept-Encoding`` takes gzip (RFC 9110 §12.5.3): named ``gzip`` or ``x-gzip``
    with q > 0, or not named and covered by ``*`` with q > 0 (``gzip;q=0, *`` refuses it). No
    header: the plain file, as the substring test did, for clients too old to say."""
    named: list[float] = []
    star = 0.0
    for coding, q in weighted(accept_encoding or ""):
        if coding in ("gzip", "x-gzip"):
            named.append(q)
        elif coding == "*":
            star = q
    return max(named) > 0 if named else star > 0
