"""``POST /api/reward/``: the RL reward endpoint (seed 000 E.4) for trainers.

Authentication: ``Authorization: Token <key>`` of a researcher or admin (``POST
/api/auth/token/`` or ``manage.py drf_create_token``); scripts only, so no session and no CSRF.
An **async view**: the judge call is awaited (``asyncio.wrap_future`` on the batcher's futures),
so under an ASGI server (``uvicorn config.asgi:application``) a worker's event loop keeps
serving other requests while the LLM answers; database work runs in threads
(``sync_to_async``). Under a sync WSGI worker the same view works but holds that worker for
the batch, so serve this path from ASGI in production (docs/guides/reward-service.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import json

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from core.roles import is_researcher
from judging.reward import service, spec
from judging.reward.batcher import batcher_for

MAX_BODY_BYTES = 32 * 1024 * 1024


def _token_user(header: str):
    from rest_framework.authtoken.models import Token

    kind, _, key = header.partition(" ")
    if kind != "Token" or not key.strip():
        return None
    token = Token.objects.select_related("user").filter(key=key.strip()).first()
    return token.user if token is not None and token.user.is_active else None


def _errors(status: int, errors: list[dict]) -> JsonResponse:
    return JsonResponse({"errors": errors}, status=status)


def _batcher(judge):
    config = judge.backend_config()
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()
    return batcher_for(f"{judge.pk}:{digest}", config)


@csrf_exempt
async def reward(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return JsonResponse({"detail": "use POST with a JSON body"}, status=405)
    header = request.headers.get("Authorization", "")
    if not header:
        return JsonResponse({"detail": "send Authorization: Token <key>"}, status=401)
    user = await sync_to_async(_token_user, thread_sensitive=False)(header)
    if user is None:
        return JsonResponse({"detail": "invalid token"}, status=401)
    if not await sync_to_async(is_researcher, thread_sensitive=False)(user):
        return JsonResponse({"detail": "This endpoint is for researchers and admins."}, status=403)
    if len(request.body) > MAX_BODY_BYTES:
        return _errors(413, [{"index": None, "field": "body", "message": "body too large"}])
    try:
        payload = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        return _errors(400, [{"index": None, "field": "body", "message": f"not JSON: {exc}"}])
    try:
        judge_name, items, weights = spec.parse_request(payload)
        prepared = await sync_to_async(service.prepare, thread_sensitive=False)(
            judge_name=judge_name, items=items, weights=weights
        )
    except spec.BatchError as exc:
        return _errors(400, exc.errors)
    results = []
    if prepared.misses:
        batcher = await sync_to_async(_batcher, thread_sensitive=False)(prepared.judge)
        futures = batcher.submit(service.requests_for(prepared))
        results = await asyncio.gather(*(asyncio.wrap_future(f) for f in futures))
    body = await sync_to_async(service.finish, thread_sensitive=False)(prepared, list(results))
    return JsonResponse(body)
