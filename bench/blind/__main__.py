"""`python -m bench.blind`: run the blind bench, then its targets."""

from bench.blind import main

for target in main():
    print("  " + target.line())
