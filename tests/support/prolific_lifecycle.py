"""The study side of the local Prolific server (mixed into
:class:`tests.support.prolific_server.ProlificTestServer`), in the documented shapes (API
reference → Studies): ``POST /studies/`` creates a draft (``UNPUBLISHED``) after checking the
body (completion codes with known ``code_type`` and ``actions``, integer reward in minor units,
places, minutes, devices, filters); ``PATCH /studies/{id}/`` changes places, reward and time
(once published, places and reward only go up; more places reopen a study awaiting review);
``POST /studies/{id}/transition/`` with ``PUBLISH``, ``PAUSE``, ``START``, ``STOP`` from the
statuses Prolific allows.

Participants are simulated: :meth:`take_place` takes a place (an ``ACTIVE`` submission, its id the
``SESSION_ID``), :meth:`set_status` moves a submission (``RETURNED`` or ``TIMED-OUT`` give the
place back) and emits ``submission.status.change``; study status changes emit
``study.status.change``."""

from __future__ import annotations

import uuid

CODE_TYPES = {
    "COMPLETED",
    "FAILED_ATTENTION_CHECK",
    "FOLLOW_UP_STUDY",
    "GIVE_BONUS",
    "INCOMPATIBLE_DEVICE",
    "NO_CONSENT",
    "OTHER",
    "FIXED_SCREENOUT",
}
ACTIONS = {"AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW", "ADD_TO_PARTICIPANT_GROUP", "REQUEST_RETURN"}
FILTER_IDS = {"participant_group_allowlist", "participant_group_blocklist", "previous_studies"}
DEVICES = {"desktop", "tablet", "mobile"}
MOVES = {
    "PUBLISH": ({"UNPUBLISHED"}, "ACTIVE"),
    "PAUSE": ({"ACTIVE"}, "PAUSED"),
    "START": ({"PAUSED"}, "ACTIVE"),
    "STOP": ({"ACTIVE", "PAUSED"}, "AWAITING REVIEW"),
}
TAKING = {"ACTIVE", "AWAITING REVIEW", "APPROVED", "REJECTED"}  # statuses that hold a place


class LifecycleMixin:
    # --- routes --------------------------------------------------------------------------------
    def _route_studies(self, method, parts, body):
        """(status, payload) or None when not a study write handled here."""
        if method == "POST" and parts == ["studies"]:
            return self._create(body)
        if parts[:1] != ["studies"] or len(parts) < 2 or parts[1] not in self.studies:
            return None
        study = self.studies[parts[1]]
        if method == "PATCH" and len(parts) == 2:
            return self._update(study, body)
        if method == "POST" and parts[2:] == ["transition"]:
            move = MOVES.get(body.get("action"))
            if move is None:
                return 400, _err(400, {"action": ["Not a valid choice."]})
            if study["status"] not in move[0]:
                return 400, _err(400, f"Cannot {body['action']} a study that is {study['status']}.")
            self._set_study_status(study, move[1])
            return 200, study
        return None

    def _create(self, body):
        problems = {}
        for key in ("name", "description", "external_study_url", "prolific_id_option"):
            if not isinstance(body.get(key), str) or not body[key]:
                problems[key] = ["This field is required."]
        for key in ("reward", "estimated_completion_time", "total_available_places"):
            if not isinstance(body.get(key), int) or body[key] < 1:
                problems[key] = ["A positive integer is required."]
        codes = body.get("completion_codes")
        if not isinstance(codes, list) or not codes:
            problems["completion_codes"] = ["At least one code is required."]
        else:
            seen = set()
            for code in codes:
                actions = code.get("actions") or []
                if (
                    code.get("code_type") not in CODE_TYPES
                    or code.get("code") in seen
                    or any(a.get("action") not in ACTIONS for a in actions)
                ):
                    problems["completion_codes"] = [f"Invalid code {code}."]
                seen.add(code.get("code"))
        if not set(body.get("device_compatibility") or []) <= DEVICES:
            problems["device_compatibility"] = ["Not a valid choice."]
        for f in body.get("filters") or []:
            if f.get("filter_id") not in FILTER_IDS or not f.get("selected_values"):
                problems["filters"] = [f"Invalid filter {f}."]
        if problems:
            return 400, _err(400, problems)
        study_id = uuid.uuid4().hex[:24]
        self.studies[study_id] = {
            **body,
            "id": study_id,
            "status": "UNPUBLISHED",
            "places_taken": 0,
        }
        return 201, self.studies[study_id]

    def _update(self, study, body):
        live = study["status"] != "UNPUBLISHED"
        for key in ("total_available_places", "reward", "estimated_completion_time"):
            if key not in body:
                continue
            value = body[key]
            if not isinstance(value, int) or value < 1:
                return 400, _err(400, {key: ["A positive integer is required."]})
            if live and key != "estimated_completion_time" and value < study[key]:
                return 400, _err(400, {key: ["Can only be increased once published."]})
        study.update({k: body[k] for k in body if k in study or k == "estimated_completion_time"})
        if (
            study["status"] == "AWAITING REVIEW"
            and study["total_available_places"] > study["places_taken"]
        ):
            self._set_study_status(study, "ACTIVE")
        return 200, study

    # --- simulated participants ----------------------------------------------------------------
    def take_place(self, study_id: str, participant_id: str) -> str:
        """A participant takes a place; returns the submission id (their SESSION_ID)."""
        with self._lock:
            study = self.studies[study_id]
            if (
                study["status"] != "ACTIVE"
                or study["places_taken"] >= study["total_available_places"]
            ):
                raise AssertionError(f"no place to take in a study that is {study['status']}")
            study["places_taken"] += 1
            sub_id = self.add_submission(study_id, participant_id, status="ACTIVE")
        self._flush()
        return sub_id

    def set_status(self, sub_id: str, status: str) -> None:
        with self._lock:
            sub = self.submissions[sub_id]
            study = self.studies[sub["study_id"]]
            if sub["status"] in TAKING and status not in TAKING:
                study["places_taken"] -= 1
            sub["status"] = status
            self._queue("submission.status.change", _sub_event(sub))
            active = any(
                s["status"] == "ACTIVE"
                for s in self.submissions.values()
                if s["study_id"] == study["id"]
            )
            full = study["places_taken"] >= study.get("total_available_places", 0)
            if study["status"] == "ACTIVE" and full and not active:
                self._set_study_status(study, "AWAITING REVIEW")
        self._flush()

    # --- events (queued under the lock, sent after it) -----------------------------------------
    def _set_study_status(self, study, status):
        study["status"] = status
        self._queue(
            "study.status.change",
            {
                "resource_id": study["id"],
                "event_type": "study.status.change",
                "metadata": {},
                "status": status,
            },
        )

    def _queue(self, event_type, payload):
        self.outbox.append((event_type, payload))

    def _flush(self):
        outbox, self.outbox = self.outbox, []
        for event_type, payload in outbox:
            self.emit(event_type, payload)


def _sub_event(sub) -> dict:
    return {
        "resource_id": sub["id"],
        "event_type": "submission.status.change",
        "participant_id": sub["participant_id"],
        "status": sub["status"],
    }


def _err(status: int, detail) -> dict:
    return {
        "error": {"status": status, "error_code": status * 100, "title": "Error", "detail": detail}
    }
