# The two commands of README.md. Everything else is in scripts/setup.sh.
.PHONY: run test

run:
	scripts/setup.sh run
	.venv/bin/python -m server

# The whole suite, then the server and security tests again with every speed bypass off
# (MINEDUEL_BYPASSES=off: redis-py, task sends, Starlette's send, CPython's GC), so the plain
# paths stay correct too. Two workers, a test file to a worker at a time (each worker has its
# own Valkey and servers; tests/conftest.py starts the files with long tests first): 8.5
# minutes from a clean clone on these 2-core machines, against 15-16 one test at a time.
WORKERS ?= -n 2 --dist loadfile

test:
	scripts/setup.sh test
	.venv/bin/python -m pytest $(WORKERS) $(PYTEST_ARGS)
	MINEDUEL_BYPASSES=off .venv/bin/python -m pytest $(WORKERS) -m "not volume" tests/server tests/security $(PYTEST_ARGS)
