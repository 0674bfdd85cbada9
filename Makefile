# The two commands of README.md. Everything else is in scripts/setup.sh.
.PHONY: run test

run:
	scripts/setup.sh run
	.venv/bin/python -m server

# The whole suite, then the server and security tests again with every speed bypass off
# (MINEDUEL_BYPASSES=off: redis-py, task sends, Starlette's send, CPython's GC), so the plain
# paths stay correct too.
test:
	scripts/setup.sh test
	.venv/bin/python -m pytest $(PYTEST_ARGS)
	MINEDUEL_BYPASSES=off .venv/bin/python -m pytest -m "not volume" tests/server tests/security $(PYTEST_ARGS)
