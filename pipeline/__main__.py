"""`python -m pipeline` runs the handaudit command line."""

from pipeline.entry import main

main()
