"""The pure room core: what a room is (:mod:`.room`) and how it changes (:mod:`.decide`).

No awaits, no Redis, no HTTP, no clock reads: plain values in, plain values out. The shell
(:mod:`server.store.service`) loads a room, asks :func:`.decide.decide`, and commits what it
returns; each edge maps a :class:`.commands.Refusal` code to its own status or frame.
"""
