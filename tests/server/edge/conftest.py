"""The store's in-process fixtures (a hub and room service on the real Valkey, and the same with
its pub/sub messages held at a gate), for the edge pieces that work with them."""

from tests.server.store.conftest import gated, parts  # noqa: F401 - fixtures
