"""One module per ``mmrhub`` subcommand; each exposes ``register(subparsers)``."""
