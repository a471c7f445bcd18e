"""A small client of Prolific's API v1 (documented shapes), on ``httpx``.

- Base URL: setting ``PROLIFIC_API_BASE_URL`` (default ``https://api.prolific.com/api/v1``).
- Token: environment variable ``PROLIFIC_API_TOKEN`` (never stored in settings or the database),
  sent as ``Authorization: Token <token>``.
- Timeout: setting ``PROLIFIC_API_TIMEOUT_SECONDS`` (default 20).

Every failure (no token, network error, non-2xx answer, an answer that is not JSON) raises
:class:`ProlificError` with a message a researcher can act on and the HTTP status (0 when no
answer came).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from core.lazy import lazy_module

httpx = lazy_module("httpx")  # imported on the first call (core.lazy)

DEFAULT_BASE_URL = "https://api.prolific.com/api/v1"
TOKEN_ENV = "PROLIFIC_API_TOKEN"

# Prolific's rejection categories (a rejection must name one and carry a message).
REJECTION_CATEGORIES = {
    "TOO_QUICKLY": "Completed too quickly",
    "TOO_SLOWLY": "Completed too slowly",
    "FAILED_INSTRUCTIONS": "Did not follow the instructions",
    "INCOMP_LONGITUDINAL": "Did not complete all parts (longitudinal)",
    "FAILED_CHECK": "Failed attention or comprehension checks",
    "LOW_EFFORT": "Low effort",
    "MALINGERING": "Malingering",
    "NO_CODE": "No completion code",
    "BAD_CODE": "Wrong completion code",
    "NO_DATA": "No data",
    "UNSUPP_DEVICE": "Unsupported device",
    "OTHER": "Other",
}
# Prolific refuses shorter rejection messages.
MIN_REJECTION_MESSAGE = 100


class ProlificError(Exception):
    def __init__(self, message: str, *, status: int = 0):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Bonus:
    participant_id: str
    amount: str  # in the study's currency, two decimals ("1.25")


def base_url() -> str:
    return str(getattr(settings, "PROLIFIC_API_BASE_URL", DEFAULT_BASE_URL)).rstrip("/")


def _error_text(response: httpx.Response) -> str:
    """Prolific answers errors as ``{"error": {"title", "detail", ...}}``; fall back to the body."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        detail = err.get("detail") or err.get("title") or err
        if isinstance(detail, dict):
            detail = "; ".join(f"{k}: {v}" for k, v in detail.items())
        elif isinstance(detail, list):
            detail = "; ".join(str(d) for d in detail)
        return str(detail)[:300]
    return str(err)[:300]


class ProlificClient:
    def __init__(self, *, token: str | None = None, url: str | None = None, timeout=None):
        self.token = token if token is not None else os.environ.get(TOKEN_ENV, "")
        self.url = (url or base_url()).rstrip("/")
        self.timeout = float(timeout or getattr(settings, "PROLIFIC_API_TIMEOUT_SECONDS", 20) or 20)

    def _request(self, method: str, path: str, *, json=None, params=None, headers=False) -> Any:
        """The answer's JSON (``{}`` when empty); with ``headers=True``: (JSON, headers)."""
        if not self.token:
            raise ProlificError(f"No Prolific API token: set the environment variable {TOKEN_ENV}.")
        url = path if path.startswith("http") else f"{self.url}{path}"
        try:
            response = httpx.request(
                method,
                url,
                json=json,
                params=params,
                headers={"Authorization": f"Token {self.token}"},
                timeout=self.timeout,
            )
        except httpx.HTTPError as exc:
            raise ProlificError(f"Prolific could not be reached ({type(exc).__name__}).") from exc
        if response.status_code >= 400:
            raise ProlificError(
                f"Prolific refused {method} {path} (HTTP {response.status_code}): "
                f"{_error_text(response)}",
                status=response.status_code,
            )
        if response.status_code == 204 or not response.content:
            body = {}
        else:
            try:
                body = response.json()
            except ValueError as exc:
                raise ProlificError(
                    f"Prolific answered {method} {path} with something that is not JSON.",
                    status=response.status_code,
                ) from exc
        return (body, response.headers) if headers else body

    # --- studies ------------------------------------------------------------------------------
    def get_study(self, study_id: str) -> dict:
        return self._request("GET", f"/studies/{study_id}/")

    def create_study(self, body: dict) -> dict:
        """A draft study (status UNPUBLISHED); publishing is a transition."""
        return self._request("POST", "/studies/", json=body)

    def update_study(self, study_id: str, changes: dict) -> dict:
        """PATCH: places (up only once published), reward, estimated time."""
        return self._request("PATCH", f"/studies/{study_id}/", json=changes)

    def transition_study(self, study_id: str, action: str) -> dict:
        """``PUBLISH``, ``PAUSE``, ``START`` (resume) or ``STOP``."""
        return self._request("POST", f"/studies/{study_id}/transition/", json={"action": action})

    # --- webhooks (hooks) ---------------------------------------------------------------------
    def list_secrets(self, workspace_id: str) -> list[dict]:
        page = self._request("GET", "/hooks/secrets/", params={"workspace_id": workspace_id})
        return list(page.get("results", []))

    def create_secret(self, workspace_id: str) -> dict:
        """Creates (or replaces: one per workspace) the secret that signs hook requests."""
        return self._request("POST", "/hooks/secrets/", json={"workspace_id": workspace_id})

    def list_subscriptions(self, workspace_id: str) -> list[dict]:
        page = self._request("GET", "/hooks/subscriptions/", params={"workspace_id": workspace_id})
        return list(page.get("results", []))

    def create_subscription(
        self, *, workspace_id: str, event_type: str, target_url: str
    ) -> tuple[dict, str]:
        """(the subscription, the ``X-Hook-Secret`` header that confirms it)."""
        body, headers = self._request(
            "POST",
            "/hooks/subscriptions/",
            json={"workspace_id": workspace_id, "event_type": event_type, "target_url": target_url},
            headers=True,
        )
        results = body.get("results") if isinstance(body, dict) else None
        detail = results[0] if results else body
        return detail, headers.get("X-Hook-Secret", "")

    def confirm_subscription(self, subscription_id: str, hook_secret: str) -> dict:
        return self._request(
            "POST", f"/hooks/subscriptions/{subscription_id}/", json={"secret": hook_secret}
        )

    def delete_subscription(self, subscription_id: str) -> dict:
        return self._request("DELETE", f"/hooks/subscriptions/{subscription_id}/")

    # --- submissions --------------------------------------------------------------------------
    def list_submissions(self, study_id: str, *, max_pages: int = 200) -> list[dict]:
        """Every submission of a study, following ``_links.next.href`` page by page."""
        out: list[dict] = []
        page = self._request("GET", f"/studies/{study_id}/submissions/")
        for _ in range(max_pages):
            out.extend(page.get("results", []))
            nxt = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not nxt:
                return out
            page = self._request("GET", nxt)
        raise ProlificError(f"Prolific listed more than {max_pages} pages of submissions.")

    def approve(self, submission_id: str) -> dict:
        return self._request(
            "POST", f"/submissions/{submission_id}/transition/", json={"action": "APPROVE"}
        )

    def reject(self, submission_id: str, *, category: str, message: str) -> dict:
        return self._request(
            "POST",
            f"/submissions/{submission_id}/transition/",
            json={"action": "REJECT", "message": message, "rejection_category": category},
        )

    def request_return(self, submission_id: str, *, reasons: list[str]) -> dict:
        return self._request(
            "POST",
            f"/submissions/{submission_id}/request-return/",
            json={"request_return_reasons": reasons},
        )

    # --- bonuses ------------------------------------------------------------------------------
    def create_bonuses(self, study_id: str, bonuses: Iterable[Bonus]) -> dict:
        csv = "\n".join(f"{b.participant_id},{b.amount}" for b in bonuses)
        return self._request(
            "POST", "/submissions/bonus-payments/", json={"study_id": study_id, "csv_bonuses": csv}
        )

    def pay_bonuses(self, bulk_id: str) -> dict:
        """Not idempotent on Prolific's side: call once per created bulk payment."""
        return self._request("POST", f"/bulk-bonus-payments/{bulk_id}/pay/")

    # --- participant groups -------------------------------------------------------------------
    def add_to_group(self, group_id: str, participant_ids: list[str]) -> dict:
        return self._request(
            "POST",
            f"/participant-groups/{group_id}/participants/",
            json={"participant_ids": participant_ids},
        )
