"""The learned topic signal's bench tools: `train` (fits memory/topic/models/topic-v1.json)
and `cost` (CPU per turn of the learned decision against the rules, one run)."""
