"""`python -m pipeline` runs the handaudit command line."""

from pipeline.cli import main

main()
