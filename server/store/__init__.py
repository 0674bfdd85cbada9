"""The imperative shell around the room core: Redis keys and scripts, the client seam, the
room service (load → decide → compare-and-set commit), the room cache, and the pub/sub hub
that fans each committed version out to local connections."""
