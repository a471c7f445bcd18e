"""Stop a study when its interval is narrow enough, and resume it.

A study with a target half-width (``Study.target_half_width``) has its corrected How2Score's
interval (:func:`validation.active.reads.study_interval`) checked after labels arrive: a task
(:mod:`validation.stopping.tasks`), enqueued once a participant's label is committed
(:mod:`validation.stopping.hooks`, at most one per study every few seconds), calls
:func:`validation.stopping.services.study_check_target`. Once the interval's half-width is at
most the target, with enough labels (:func:`validation.active.stats.target_reached`: the
width and the count, never the estimate), the study is paused — no new items are handed out,
people finish the item they hold — and recruitment on Prolific is paused for a published study. An admin resumes it from the
note on the study page (:mod:`validation.stopping.views`)."""
