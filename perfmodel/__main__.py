"""`python -m perfmodel` runs the CLI."""

from perfmodel.cli.main import main

main()
