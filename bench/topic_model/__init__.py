"""The learned topic signal's bench tools: `train` (fits memory/topic/models/topic-v2.json
and opening-v1.json, `opening`, `data`, `soft`, `scores` its parts) and `cost` (CPU per turn
of the learned decision against the rules, one run)."""
