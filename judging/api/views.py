"""Judging API: judges, runs and judgments for researchers; launch, cancel and resume for
admins. A service's refusal (a ``ValidationError``) is answered 400 by the one API error
handler (:func:`core.errors.exception_handler`); no view catches it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.generics import get_object_or_404  # a non-numeric id: 404, not a 500
from rest_framework.response import Response

from benchmarks.models import Generator
from core.permissions import IsAdminRole, IsResearcherOrAdmin
from judging.api import serializers
from judging.models import Judge, JudgeRun, JudgeRunEstimate
from judging.selectors import judgments as selectors
from judging.services import estimates
from judging.services import runs as services


class JudgeViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = serializers.JudgeSerializer
    filterset_fields = ("name", "backend", "model")
    search_fields = ("name", "model")
    ordering_fields = ("name", "created_at")

    def get_queryset(self):
        return selectors.judge_list()

    @extend_schema(parameters=[OpenApiParameter("generator", str, description="generator name")])
    @action(detail=True, methods=["get"])
    def how2score(self, request, pk=None):
        judge = self.get_object()
        generator = None
        if request.query_params.get("generator"):
            generator = Generator.objects.filter(name=request.query_params["generator"]).first()
            if generator is None:
                raise ValidationError(
                    {"generator": f"no generator named {request.query_params['generator']!r}"}
                )
        return Response(selectors.how2score_report(judge=judge, generator=generator))


class JudgeRunViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = serializers.JudgeRunSerializer
    filterset_fields = ("status", "judge")
    ordering_fields = ("created_at", "status")

    def get_queryset(self):
        return selectors.judge_run_list()

    def get_permissions(self):
        if self.action in (
            "create",
            "cancel",
            "resume",
            "estimate",
            "estimate_detail",
            "rerun_failures",
        ):
            return [IsAdminRole()]
        return [IsResearcherOrAdmin()]

    @extend_schema(
        request=serializers.JudgeRunLaunchSerializer, responses=serializers.JudgeRunSerializer
    )
    def create(self, request):
        data = serializers.JudgeRunLaunchSerializer(data=request.data)
        data.is_valid(raise_exception=True)  # the selection validated, once
        run = services.judge_run_create(
            judge=data.validated_data["judge"],
            selection=data.validated_data["selection"],
            user=request.user,
            n_samples=data.validated_data["samples"],
            sample_seed=data.validated_data["sample_seed"],
        )
        return Response(serializers.JudgeRunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=serializers.JudgeRunLaunchSerializer,
        responses={202: serializers.JudgeRunEstimateSerializer},
    )
    @action(detail=False, methods=["post"])
    def estimate(self, request):
        """Ask for a cost estimate: answered at once with 202 and the estimate's ``url``, which
        a worker fills in (items, reused, requests, tokens, cost); poll it until ``status`` is
        done or failed."""
        data = serializers.JudgeRunLaunchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        est = estimates.judge_run_estimate_request(
            judge=data.validated_data["judge"],
            selection=data.validated_data["selection"],
            user=request.user,
        )
        body = serializers.JudgeRunEstimateSerializer(est).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})

    @extend_schema(responses=serializers.JudgeRunEstimateSerializer)
    @action(detail=False, methods=["get"], url_path=r"estimates/(?P<estimate_id>[0-9]+)")
    def estimate_detail(self, request, estimate_id=None):
        """One estimate (one query): ``status`` queued or running until a worker is done."""
        est = get_object_or_404(JudgeRunEstimate.objects.select_related("judge"), pk=estimate_id)
        return Response(serializers.JudgeRunEstimateSerializer(est).data)

    @extend_schema(request=None, responses=serializers.JudgeRunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = services.judge_run_cancel(run=get_object_or_404(JudgeRun, pk=pk))
        return Response(serializers.JudgeRunSerializer(run).data)

    @extend_schema(
        request=serializers.JudgeRunResumeSerializer, responses=serializers.JudgeRunSerializer
    )
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        data = serializers.JudgeRunResumeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = services.judge_run_resume(
            run=get_object_or_404(JudgeRun, pk=pk), force=data.validated_data["force"]
        )
        return Response(serializers.JudgeRunSerializer(run).data)

    @extend_schema(request=None, responses=serializers.JudgeRunSerializer)
    @action(detail=True, methods=["post"], url_path="rerun-failures")
    def rerun_failures(self, request, pk=None):
        """Work again only the items a done or failed run could not judge (requests that
        failed for good, replies that failed to parse)."""
        run = services.judge_run_rerun_failures(run=get_object_or_404(JudgeRun, pk=pk))
        return Response(serializers.JudgeRunSerializer(run).data)


class JudgmentViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = serializers.JudgmentSerializer
    filterset_fields = ("has_failure", "parse_failed", "source_example_id")
    ordering_fields = ("id", "created_at")

    def get_queryset(self):
        params = self.request.query_params
        judge = run = None
        if params.get("judge"):
            judge = Judge.objects.filter(name=params["judge"]).first()
            if judge is None:
                raise ValidationError({"judge": f"no judge named {params['judge']!r}"})
        if params.get("run"):
            if not str(params["run"]).isdigit():
                raise ValidationError({"run": "must be an integer id"})
            run = get_object_or_404(JudgeRun, pk=params["run"])
        return selectors.judgment_list(judge=judge, run=run).order_by("id")
