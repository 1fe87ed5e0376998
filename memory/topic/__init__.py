"""The topic decision: continue the episode or reset it (see `decide`)."""
