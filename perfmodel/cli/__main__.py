"""`python -m perfmodel.cli` runs the CLI."""

from perfmodel.cli.main import main

main()
