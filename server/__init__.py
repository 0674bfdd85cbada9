"""MineDuel's realtime server: Starlette edge, room service on Redis, per-process pub/sub hub.

Start it with ``python -m server`` (or the ``mineduel`` console script); see docs/ARCHITECTURE.md.
"""
