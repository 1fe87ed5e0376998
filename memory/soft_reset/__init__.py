"""The soft reset: an automatic reset keeps the case it closed reachable, and undoes
itself when the next messages continue that case (DESIGN.md, "Reset and carry-over").

- `case`: what a reset keeps of the closed episode (`PreviousCase`: its hard facts, its
  distinctive terms, the bot's last question) and whether a text mentions one of them;
- `block`: whether the previous case is still in play for a message, and its labelled
  block of facts;
- `revert`: the pure rule that decides a reset reverts, and why.
"""
