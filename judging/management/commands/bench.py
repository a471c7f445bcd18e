"""python manage.py bench {validate|gen|judge|run} --config SUITE.yaml [--no-wait] [--inline]
python manage.py bench leaderboard --generations-root DIR [--judge J] [-o FILE] [--pretty]

The reference's ``h2e bench`` on how2review's runs (docs/guides/bench.md)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.llm import vllm_offline
from core.runs import dispatch
from judging.bench import outputs, pipeline
from judging.bench.config import load_suite_config

CONFIG_STAGES = ("validate", "gen", "judge", "run")


class Command(BaseCommand):
    help = "Suite configs like the reference's `h2e bench`: validate, gen, judge, run, leaderboard."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="stage", required=True)
        for stage in CONFIG_STAGES:
            p = sub.add_parser(stage, help=f"bench {stage} --config SUITE.yaml")
            p.add_argument("--config", required=True, help="the YAML suite config")
            if stage != "validate":
                p.add_argument(
                    "--wait",
                    action="store_true",
                    default=True,
                    help="wait for the runs with a progress bar, then write the outputs (default)",
                )
                p.add_argument(
                    "--no-wait",
                    dest="wait",
                    action="store_false",
                    help="launch the runs and return; run the command again to write the outputs",
                )
                p.add_argument(
                    "--inline",
                    action="store_true",
                    help="work the runs in this process instead of a Celery worker",
                )
        lb = sub.add_parser("leaderboard", help="How2Score of every generation run and judge")
        lb.add_argument("--generations-root", required=True)
        lb.add_argument("--judge", default=None, help="a judge dir: exact, _<hash> or substring")
        lb.add_argument("--output", "-o", default=None, help="CSV file (default: stdout)")
        lb.add_argument("--pretty", action="store_true", help="print a table")

    def handle(self, *args, **opts):
        stage = opts["stage"]
        try:
            if stage == "leaderboard":
                return self._leaderboard(opts)
            run_opts = pipeline.Options(
                wait=opts.get("wait", True), inline=opts.get("inline", False), stream=self.stdout
            )
            if stage == "validate":
                _, problems = pipeline.validate(opts["config"], run_opts)
                if problems:
                    raise CommandError("invalid:\n" + "\n".join(problems))
                self.stdout.write("valid")
                return None
            config = load_suite_config(opts["config"])
            for warning in config.warnings:
                self.stdout.write(f"warning: {warning}")
            results = []
            if stage == "gen":
                outcome = pipeline.stage_gen(config, run_opts)
            elif stage == "judge":
                outcome = pipeline.stage_judge(config, run_opts)
            else:
                outcome, results = pipeline.stage_run(config, run_opts)
        except (ValueError, FileNotFoundError, pipeline.BenchError) as exc:
            raise CommandError(str(exc)) from exc
        except (dispatch.NoWorker, dispatch.BrokerUnavailable) as exc:
            raise CommandError(
                f"{exc} (the runs launched stay queued: run the command again to follow them)"
            ) from None
        except KeyboardInterrupt:
            raise CommandError(
                "interrupted: the run waited on was cancelled; run the command again to resume",
                returncode=130,
            ) from None
        finally:
            # a vLLM engine this process loaded (--inline) is shut down, so the command exits
            vllm_offline.shutdown_engine()
        if results and not outcome.launched:
            self.stdout.write("\n=== how2bench results ===\n" + outputs.results_table(results))
        if outcome.problems:
            raise CommandError(
                "not finished (run the command again to resume):\n" + "\n".join(outcome.problems)
            )
        return None

    def _leaderboard(self, opts) -> None:
        root = Path(opts["generations_root"])
        rows = outputs.leaderboard_rows(root, judge=opts["judge"])
        if opts["pretty"]:
            numeric = {"how2score", "n_examples", "n_parse_failed", "ci_low", "ci_high"}
            self.stdout.write(outputs.box_table(rows, outputs.leaderboard_columns(rows), numeric))
        text = outputs.leaderboard_csv(rows)
        if opts["output"]:
            Path(opts["output"]).write_text(text, encoding="utf-8", newline="")
        elif not opts["pretty"]:
            self.stdout.write(text, ending="")
