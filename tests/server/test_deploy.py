"""docker-compose.yml cannot run here (no Docker); check its structure by reading it."""

from pathlib import Path

import yaml  # pyyaml is a test dependency (pyproject.toml): missing, this fails, never skips

ROOT = Path(__file__).resolve().parents[2]


def test_compose_topology():
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = doc["services"]
    assert set(services) == {"valkey", "app", "proxy"}

    valkey = services["valkey"]
    command = " ".join(valkey["command"])
    assert "--appendonly yes" in command
    assert any(v.endswith(":/data") for v in valkey["volumes"])

    app = services["app"]
    assert app["deploy"]["replicas"] == 2
    env = app["environment"]
    assert env["REDIS_URL"].startswith("redis://valkey:")
    assert env["MINEDUEL_TEST_HOOKS"] == "0"
    assert "SECRET_KEY" in env
    assert app["depends_on"]["valkey"]["condition"] == "service_healthy"
    assert (ROOT / app["build"]["context"] / app["build"]["dockerfile"]).is_file()
    assert "/healthz" in " ".join(app["healthcheck"]["test"])

    proxy = services["proxy"]
    host_path, _, container_path = proxy["volumes"][0].partition(":")
    caddyfile = (ROOT / host_path).read_text()
    assert container_path.startswith("/etc/caddy/Caddyfile")
    assert "reverse_proxy app:8000" in caddyfile
    assert caddyfile.count("{") == caddyfile.count("}")
    assert set(doc["volumes"]) == {"valkey-data"}
