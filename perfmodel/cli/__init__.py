"""Command-line interface. Subcommands live in their own modules and are imported lazily."""
