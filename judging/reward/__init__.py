"""The RL reward service (seed 000 E.4): How2Score verdict + step-format verifier +
reference-calibrated length reward per completion.

- :mod:`~judging.reward.spec` — the request format, its validation (per-item errors) and the
  reward components and their combination (pure).
- :mod:`~judging.reward.batcher` — one process-wide micro-batcher per judge: judge requests of
  concurrent reward calls are gathered for a few milliseconds and sent to the backend together.
- :mod:`~judging.reward.service` — resolve items, reuse judgments by content, store new ones.
- :mod:`judging.api.reward` — the authenticated async endpoint ``POST /api/reward/``.
"""
