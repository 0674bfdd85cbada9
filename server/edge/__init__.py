"""The edges: HTTP routes and websockets. Each parses what arrives once (:mod:`.wire`), passes
typed commands to the room service, and maps refusals to its own status codes or frames.
Guards live one concern per module: :mod:`.peer` (who), :mod:`.origin` (from where),
:mod:`.limits` (how much), :mod:`.frames` (websocket frames within limits), :mod:`.admission`
(before the upgrade), :mod:`.body_limit` (HTTP bodies)."""
