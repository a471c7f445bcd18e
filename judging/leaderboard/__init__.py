"""The judge leaderboard: its reads (:mod:`.reads`), page (:mod:`.page`, :mod:`.views`) and API
(:mod:`.api`); its rows and CIs are pure math in :mod:`judging.stats.leaderboard`, its
background recomputation a run (:mod:`judging.services.leaderboard`)."""
