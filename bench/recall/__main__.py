"""`python -m bench.recall`."""

from bench.recall import main

main()
