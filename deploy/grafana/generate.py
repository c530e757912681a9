#!/usr/bin/env python3
"""Writes the Grafana dashboards of deploy/grafana/ (prover-overview.json, prover-storage.json).

Edit this file, not the JSON: `python3 deploy/grafana/generate.py` rewrites them, and
`python3 deploy/grafana/generate.py --check` (run by scripts/test.d/30-k8s.sh) fails when the
committed JSON differs from what this script writes; `--promql-rules` prints every panel query
as a Prometheus recording rule, for `promtool check rules` to parse.

Metric names: docs/service-contract.md fixes them; the services of this revision still emit a
few under other names (prover_queue_pending for prover_queue_depth, prover_blob_* for
prover_s3_*, no prover_proofs_total). Queries use the contract name and fall back to the
emitted one with `or`, so the dashboards work before and after the services are aligned.
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DS = {"type": "prometheus", "uid": "${datasource}"}
NS = 'namespace=~"$namespace"'
OK = 'outcome="ok"'
NOT_OK = 'outcome!="ok"'
DONE = 'outcome="done"'
GET_PUT = 'op=~"get|put"'
HEKATON_TASKS = 'kind=~"hekaton.*"'


def sel(extra=""):
    return "{" + NS + ("," + extra if extra else "") + "}"


def rate(metric, extra=""):
    return f"rate({metric}{sel(extra)}[$__rate_interval])"


class Layout:
    """Places panels left to right on Grafana's 24-column grid."""

    def __init__(self):
        self.x = self.y = self.row_h = 0
        self.next_id = 1

    def place(self, w, h):
        if self.x + w > 24:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        pos = {"x": self.x, "y": self.y, "w": w, "h": h}
        self.x += w
        self.row_h = max(self.row_h, h)
        return pos

    def row(self, title):
        if self.x:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        p = {"type": "row", "id": self.id(), "title": title, "collapsed": False, "panels": [],
             "gridPos": {"x": 0, "y": self.y, "w": 24, "h": 1}}
        self.y += 1
        return p

    def id(self):
        i = self.next_id
        self.next_id += 1
        return i


def target(expr, legend, ref):
    return {"datasource": DS, "refId": ref, "expr": expr, "legendFormat": legend, "range": True}


def timeseries(lay, title, desc, targets, unit, w=8, h=8, stack=False, minimum=0, maximum=None):
    defaults = {
        "unit": unit,
        "min": minimum,
        "custom": {
            "drawStyle": "line", "lineWidth": 1, "fillOpacity": 20 if stack else 10,
            "showPoints": "never", "spanNulls": False,
            "stacking": {"mode": "normal" if stack else "none", "group": "A"},
        },
    }
    if maximum is not None:
        defaults["max"] = maximum
    return {
        "type": "timeseries", "id": lay.id(), "title": title, "description": desc, "datasource": DS,
        "gridPos": lay.place(w, h),
        "targets": [target(e, l, chr(ord("A") + i)) for i, (e, l) in enumerate(targets)],
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True, "calcs": []},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
    }


def stat(lay, title, desc, expr, unit, thresholds, w=4, h=4, decimals=None):
    defaults = {
        "unit": unit,
        "thresholds": {"mode": "absolute",
                       "steps": [{"color": "green", "value": None}] +
                                [{"color": c, "value": v} for v, c in thresholds]},
        "color": {"mode": "thresholds"},
    }
    if decimals is not None:
        defaults["decimals"] = decimals
    return {
        "type": "stat", "id": lay.id(), "title": title, "description": desc, "datasource": DS,
        "gridPos": lay.place(w, h),
        "targets": [target(expr, "", "A")],
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "value", "graphMode": "area", "justifyMode": "auto",
                    "orientation": "auto", "textMode": "auto", "wideLayout": True,
                    "showPercentChange": False, "percentChangeColorMode": "standard"},
    }


def templating(var_metric):
    return {"list": [
        {"type": "datasource", "name": "datasource", "label": "Prometheus", "query": "prometheus",
         "hide": 0, "includeAll": False, "multi": False, "refresh": 1, "regex": "",
         "options": []},
        {"type": "query", "name": "namespace", "label": "Namespace", "datasource": DS,
         "query": {"query": f"label_values({var_metric}, namespace)", "refId": "namespace"},
         "hide": 0, "includeAll": True, "allValue": ".*", "multi": True,
         "refresh": 2, "regex": "", "sort": 1, "options": []},
    ]}


def dashboard(uid, title, desc, panels, var_metric, tags):
    return {
        "uid": uid, "title": title, "description": desc, "tags": tags,
        "editable": True, "graphTooltip": 1, "schemaVersion": 39, "version": 1,
        "time": {"from": "now-3h", "to": "now"}, "timezone": "browser", "refresh": "30s",
        "fiscalYearStartMonth": 0, "liveNow": False, "weekStart": "",
        "timepicker": {},
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
            "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts",
            "type": "dashboard"}]},
        "links": [],
        "templating": templating(var_metric),
        "panels": panels,
    }


def quantiles(metric, by, legend_prefix):
    return [(f"histogram_quantile({q}, sum by ({by}, le) ({rate(metric + '_bucket')}))",
             f"{legend_prefix}p{int(q * 100)}") for q in (0.5, 0.95, 0.99)]


def overview():
    L = Layout()
    p = []
    p.append(L.row("Now"))
    p.append(stat(L, "Jobs submitted / s", "All kinds, over the dashboard's rate interval.",
                  f"sum({rate('prover_jobs_submitted_total')})", "reqps", [], decimals=2))
    p.append(stat(L, "Tasks done / s", "Tasks that finished with outcome ok.",
                  f"sum({rate('prover_tasks_total', OK)})", "ops", [], decimals=2))
    p.append(stat(L, "Waiting tasks", "Tasks queued and not yet delivered, all kinds.",
                  f"sum(max by (kind) (prover_queue_depth{sel()}) or max by (kind) (prover_queue_pending{sel()}))",
                  "short", [(1000, "orange")]))
    p.append(stat(L, "Oldest waiting task", "Age of the oldest undelivered task of any kind.",
                  f"max(prover_queue_oldest_age_seconds{sel()})", "s", [(300, "orange"), (900, "red")]))
    p.append(stat(L, "Worker utilisation", "Busy workers / workers (prover_worker_busy is 1 while a worker executes a task).",
                  f"sum(prover_worker_busy{sel()}) / count(prover_worker_busy{sel()})", "percentunit",
                  [(0.9, "orange")], decimals=0))
    p.append(stat(L, "Job failure ratio (1h)", "Failed / (done + failed) jobs over the last hour.",
                  f"sum(increase(prover_jobs_total{{{NS},outcome=\"failed\"}}[1h])) / "
                  f"sum(increase(prover_jobs_total{{{NS},outcome=~\"done|failed\"}}[1h]))",
                  "percentunit", [(0.01, "orange"), (0.05, "red")], decimals=1))

    p.append(L.row("Throughput"))
    p.append(timeseries(L, "Jobs submitted / s by kind", "prover_jobs_submitted_total, per job kind.",
                        [(f"sum by (kind) ({rate('prover_jobs_submitted_total')})", "{{kind}}")], "reqps"))
    p.append(timeseries(L, "Jobs finished / s by outcome", "prover_jobs_total: done, failed, cancelled, rejected.",
                        [(f"sum by (kind, outcome) ({rate('prover_jobs_total')})", "{{kind}} {{outcome}}")], "reqps",
                        stack=True))
    p.append(timeseries(L, "Proofs / s by kind",
                        "prover_proofs_total per kind; where the services do not emit it yet, jobs done per second.",
                        [(f"sum by (kind) ({rate('prover_proofs_total')}) or "
                          f"sum by (kind) ({rate('prover_jobs_total', DONE)})", "{{kind}}")], "ops"))
    p.append(timeseries(L, "Tasks / s by kind and outcome", "prover_tasks_total.",
                        [(f"sum by (kind, outcome) ({rate('prover_tasks_total')})", "{{kind}} {{outcome}}")], "ops",
                        w=12, stack=True))
    p.append(timeseries(L, "Worker utilisation", "Busy workers / workers, in all and per component (worker pool).",
                        [(f"sum(prover_worker_busy{sel()}) / count(prover_worker_busy{sel()})", "all"),
                         (f"sum by (component) (prover_worker_busy{sel()}) / count by (component) (prover_worker_busy{sel()})",
                          "{{component}}")], "percentunit", w=12, maximum=1))

    p.append(L.row("Queues"))
    p.append(timeseries(L, "Waiting tasks by kind", "Queued, not yet delivered (max over the processes that sample it).",
                        [(f"max by (kind) (prover_queue_depth{sel()}) or max by (kind) (prover_queue_pending{sel()})",
                          "{{kind}}")], "short"))
    p.append(timeseries(L, "Running tasks by kind", "Delivered, lease held.",
                        [(f"max by (kind) (prover_queue_running{sel()})", "{{kind}}")], "short"))
    p.append(timeseries(L, "Oldest waiting task by kind", "prover_queue_oldest_age_seconds: rises while nothing drains the queue.",
                        [(f"max by (kind) (prover_queue_oldest_age_seconds{sel()})", "{{kind}}")], "s"))
    p.append(timeseries(L, "Delayed retries by kind", "Failed tasks waiting for their backoff.",
                        [(f"max by (kind) (prover_queue_delayed{sel()})", "{{kind}}")], "short", w=12))
    p.append(timeseries(L, "Dead-lettered tasks by kind", "Tasks that exhausted their attempts (their jobs failed).",
                        [(f"max by (kind) (prover_queue_dead{sel()})", "{{kind}}")], "short", w=12))

    p.append(L.row("Latency"))
    p.append(timeseries(L, "Task duration p50 / p95 / p99 by kind", "From the prover_task_duration_seconds histogram.",
                        quantiles("prover_task_duration_seconds", "kind", "{{kind}} "), "s", w=16, h=9))
    p.append(timeseries(L, "Mean task duration by kind", "sum / count of prover_task_duration_seconds.",
                        [(f"sum by (kind) ({rate('prover_task_duration_seconds_sum')}) / "
                          f"sum by (kind) ({rate('prover_task_duration_seconds_count')})", "{{kind}}")], "s", w=8, h=9))

    p.append(L.row("Planner API"))
    p.append(timeseries(L, "Request budget used by planner",
                        "prover_request_budget_used_bytes / prover_request_budget_bytes: what requests being received "
                        "and decoded hold of each planner's --request-budget-bytes. Near 1, calls are refused UNAVAILABLE.",
                        [(f"max by (instance) (prover_request_budget_used_bytes{sel()} / (prover_request_budget_bytes{sel()} > 0))",
                          "{{instance}}")], "percentunit", w=12, maximum=1))
    p.append(timeseries(L, "Calls refused by the request budget / s",
                        "prover_request_budget_refusals_total: busy (UNAVAILABLE, retried by clients) and too_large "
                        "(a message over the whole budget, RESOURCE_EXHAUSTED).",
                        [(f"sum by (reason) ({rate('prover_request_budget_refusals_total')})", "{{reason}}")], "ops", w=12))

    p.append(L.row("Proof systems"))
    p.append(timeseries(L, "Hekaton CPU by step",
                        "prover_hekaton_cpu_seconds: core-seconds per second inside the Hekaton proof system "
                        "(setup, traces, commit, challenge, prove, verify, key decoding), by step.",
                        [(f"sum by (step) ({rate('prover_hekaton_cpu_seconds_sum')})", "{{step}}")], "s", w=12,
                        stack=True))
    p.append(timeseries(L, "Hekaton tasks: platform share of task time",
                        "1 − proof-system CPU / task duration over the hekaton.* task kinds: the time tasks spend "
                        "in the queue client, object store and bookkeeping (issue target: ≤ 1% of a job).",
                        [(f"1 - sum({rate('prover_hekaton_cpu_seconds_sum')}) / "
                          f"sum({rate('prover_task_duration_seconds_sum', HEKATON_TASKS)})", "platform share")],
                        "percentunit", w=12, maximum=1))

    p.append(L.row("Redeliveries and failures"))
    p.append(timeseries(L, "Redeliveries / s by kind", "Tasks claimed again after a lease expired or a retry.",
                        [(f"sum by (kind) ({rate('prover_task_redeliveries_total')})", "{{kind}}")], "ops"))
    p.append(timeseries(L, "Failed tasks / s by kind and outcome", "prover_tasks_total with any outcome other than ok.",
                        [(f"sum by (kind, outcome) ({rate('prover_tasks_total', NOT_OK)})",
                          "{{kind}} {{outcome}}")], "ops", stack=True))
    p.append(timeseries(L, "Job failure ratio", "Failed / (done + failed), over 15 minutes.",
                        [(f"sum(increase(prover_jobs_total{{{NS},outcome=\"failed\"}}[15m])) / "
                          f"sum(increase(prover_jobs_total{{{NS},outcome=~\"done|failed\"}}[15m]))", "failed / finished")],
                        "percentunit", maximum=1))
    return dashboard("prover-overview", "Prover / Overview",
                     "Jobs, tasks, queues, latency, failures and worker utilisation of the proving platform.",
                     p, "prover_tasks_total", ["prover"])


def storage():
    L = Layout()
    p = []
    bytes_expr = (f"sum by (direction) ({rate('prover_s3_bytes_total')}) or "
                  f"sum by (direction) (label_replace({rate('prover_blob_bytes_total', GET_PUT)}, "
                  f"\"direction\", \"$1\", \"op\", \"(.*)\"))")
    p.append(L.row("S3"))
    p.append(timeseries(L, "S3 bytes / s by direction", "Bytes read (get) and written (put) by the services.",
                        [(bytes_expr, "{{direction}}")], "Bps", w=12))
    p.append(timeseries(L, "S3 errors / s by operation", "Failed S3 requests (not-found answers excluded).",
                        [(f"sum by (op) ({rate('prover_s3_errors_total')}) or "
                          f"sum by (op) ({rate('prover_blob_errors_total')})", "{{op}}")], "ops", w=12))
    lat = []
    for (e1, leg), (e2, _) in zip(quantiles("prover_s3_request_duration_seconds", "op", "{{op}} "),
                                  quantiles("prover_blob_request_duration_seconds", "op", "{{op}} ")):
        lat.append((f"{e1} or {e2}", leg))
    p.append(timeseries(L, "S3 request latency p50 / p95 / p99 by operation",
                        "From the prover_s3_request_duration_seconds histogram.", lat, "s", w=24, h=9))
    p.append(L.row("Redis (redis_exporter)"))
    p.append(timeseries(L, "Redis memory", "Used memory against maxmemory. With noeviction, writes fail at the limit.",
                        [("sum by (instance) (redis_memory_used_bytes)", "used {{instance}}"),
                         ("sum by (instance) (redis_memory_max_bytes)", "max {{instance}}")], "bytes", w=12))
    p.append(timeseries(L, "Redis memory used / maxmemory", "The RedisMemoryNearLimit alert fires above 0.85.",
                        [("max by (instance) (redis_memory_used_bytes / (redis_memory_max_bytes > 0))", "{{instance}}")],
                        "percentunit", w=12, maximum=1))
    return dashboard("prover-storage", "Prover / Storage",
                     "Object storage traffic, latency and errors of the proving platform, and Redis memory.",
                     p, "prover_tasks_total", ["prover"])


def promql_rules(dashboards):
    """Every panel query as a recording rule (Grafana variables replaced), so that
    `promtool check rules` parses the dashboards' PromQL."""
    rules = []
    for d in dashboards:
        for p in d["panels"]:
            for t in p.get("targets", []):
                expr = t["expr"].replace("$__rate_interval", "5m").replace("$namespace", ".*")
                rules.append({"record": f"dashboard:{d['uid'].replace('-', '_')}:panel{p['id']}_{t['refId']}",
                              "expr": expr})
    return {"groups": [{"name": "dashboard-queries", "rules": rules}]}


def main():
    if sys.argv[1:2] == ["--promql-rules"]:
        # JSON is valid YAML, which promtool reads.
        print(json.dumps(promql_rules([overview(), storage()]), indent=1))
        return
    check = "--check" in sys.argv[1:]
    stale = []
    for name, d in (("prover-overview.json", overview()), ("prover-storage.json", storage())):
        text = json.dumps(d, indent=2) + "\n"
        path = HERE / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        sys.exit(f"out of date (run python3 deploy/grafana/generate.py): {', '.join(stale)}")


if __name__ == "__main__":
    main()
