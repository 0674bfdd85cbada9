# The two commands of README.md. Everything else is in scripts/setup.sh.
.PHONY: run test

run:
	scripts/setup.sh run
	.venv/bin/python -m server

test:
	scripts/setup.sh test
	.venv/bin/python -m pytest $(PYTEST_ARGS)
