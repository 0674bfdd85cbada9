"""The browser edge's Jinja2 environment, and the room page's macros loaded from it.

One environment for pages and frames alike (autoescape on for every template), so a live page
and a reloaded one render with the same filters, globals and translations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from . import i18n
from .solo_view import mode_name, preset_name
from .status_view import time_control_text
from .view_model import display_name, score_pair_text, score_text

WEB_DIR = Path(__file__).resolve().parent.parent.parent / "web"
TEMPLATES_DIR = WEB_DIR / "templates"


def make_env(templates: Path = TEMPLATES_DIR) -> Environment:
    """The one Jinja2 environment of the browser edge (autoescape on for every template)."""
    env = Environment(
        loader=FileSystemLoader(str(templates)),
        autoescape=select_autoescape(["html", "xml"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.globals["asset"] = lambda path: f"/static/{path}"  # pages.py installs the versioned one
    env.filters["signed"] = score_text
    env.globals.update(time_control=time_control_text, preset_name=preset_name, mode_name=mode_name,
                       player_name=display_name, score_pair=score_pair_text)
    i18n.install(env)
    return env


class RoomMacros:
    """Whatever renders room-page elements: the environment, and the macros of its templates
    (each loaded on first use, then kept)."""

    def __init__(self, env: Environment | None = None) -> None:
        self.env = env or make_env()
        self._macros: dict[str, Any] = {}

    def macros(self, template: str) -> Any:
        """The macros of ``template`` (loaded once)."""
        module = self._macros.get(template)
        if module is None:
            module = self._macros[template] = self.env.get_template(template).module
        return module

    @property
    def m(self) -> Any:
        """The macros of ``_room.html``."""
        return self.macros("_room.html")
