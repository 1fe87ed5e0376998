"""`python -m bench.profile`: see the package's docstring."""

from bench.profile import main

main()
