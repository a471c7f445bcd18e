"""The task that checks a study's interval against its target (thin: an id in, one service
call). Enqueued by :mod:`validation.stopping.hooks` after labels arrive."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="validation.study_check_target", acks_late=True, ignore_result=True)
def study_check_target(study_id: int) -> str:
    from annotation.models import Study
    from validation.stopping.services import study_check_target as check

    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return f"study {study_id} is gone"
    return check(study=study)
