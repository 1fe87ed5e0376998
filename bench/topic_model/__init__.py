"""The learned topic signal's bench tools: `train` (fits memory/topic/models/topic-v4.json
and opening-v2.json, `opening`, `data`, `soft`, `scores` its parts) and `cost` (CPU per turn
of the learned decision against the rules, one run)."""
