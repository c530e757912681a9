#!/usr/bin/env python3
"""Checks what the Kubernetes schemas cannot: the properties the chart promises.

Usage: check_rendered.py VALUES_NAME RENDERED.yaml
VALUES_NAME is the ci values file's base name (default-values, external-values, ...), which
selects the expectations specific to that file. Run by scripts/test.d/30-k8s.sh after
`helm template`; needs PyYAML (installed with kubernetes-validate).
"""
import base64
import re
import sys

import yaml

problems = []


def expect(cond, what):
    if not cond:
        problems.append(what)


def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}


def rules_allow(rules, group, resource, verbs):
    granted = set()
    for r in rules:
        if group in r["apiGroups"] and resource in r["resources"]:
            granted |= set(r["verbs"])
    return set(verbs) <= granted


def check_minio_setup(name, by_kind, statefulsets, setup_jobs):
    """The bucket-scoped services user on the bundled MinIO: a Job per release revision that runs
    files/minio-services-user.sh with MinIO's root credentials, which nothing else but MinIO gets."""
    bundled = any(n.endswith("-minio") for n in statefulsets)
    secret = next(iter(s for n, s in by_kind.get("Secret", {}).items() if n.endswith("-credentials")), None)
    generated = secret is not None  # not credentials.existingSecret
    expect(bool(setup_jobs) == (bundled and generated), f"a minio-setup Job exactly with the bundled MinIO's generated credentials ({list(setup_jobs)})")
    for jname, j in setup_jobs.items():
        pod = j["spec"]["template"]["spec"]
        c = pod["containers"][0]
        env = env_of(c)
        expect(c["command"] == ["/bin/sh", "/scripts/minio-services-user.sh"], f"{jname}: runs the script")
        expect(env["ROOT_USER"]["valueFrom"]["secretKeyRef"]["key"] != env["SERVICES_ACCESS_KEY"]["valueFrom"]["secretKeyRef"]["key"], f"{jname}: two identities")
        expect(c["securityContext"].get("readOnlyRootFilesystem") is True and pod["securityContext"].get("runAsNonRoot") is True, f"{jname}: non-root, read-only root")
        cm = by_kind.get("ConfigMap", {}).get(pod["volumes"][0]["configMap"]["name"], {})
        script = cm.get("data", {}).get("minio-services-user.sh", "")
        expect('"Resource": ["arn:aws:s3:::$BUCKET/*"]' in script and "s3:CreateBucket" not in script, f"{jname}: the policy reaches the bucket's objects only")
    if setup_jobs:
        expect(secret is not None and "services-access-key" in secret["data"], "the services' S3 identity is generated into the credentials Secret")


def check_operator(name, by_kind, operators, workers, config):
    pools = by_kind.get("ProverPool", {})
    if name == "existing-secret-values":
        # The operator's token from a Secret outside the chart (operator.existingTokenSecret):
        # none rendered, so every render is the same.
        expect(len(operators) == 1, "one operator Deployment")
        for dname, d in operators.items():
            ref = env_of(d["spec"]["template"]["spec"]["containers"][0]).get("PROVER_TOKEN", {}).get("valueFrom", {}).get("secretKeyRef", {})
            expect(ref == {"name": "prover-operator-token-external", "key": "operator"}, f"{dname}: PROVER_TOKEN from operator.existingTokenSecret, not {ref}")
        expect(not pools, "no ProverPool unless a pool has queueScaling")
        return
    if name != "operator-values":
        expect(not operators, "no operator unless operator.enabled")
        expect(not pools, "no ProverPool unless a pool has queueScaling")
        return
    expect(len(operators) == 1, "one operator Deployment")
    dname, d = next(iter(operators.items()))
    expect(d["spec"]["replicas"] == 1 and d["spec"]["strategy"]["type"] == "Recreate",
           f"{dname}: a single instance (no leader election)")
    pod = d["spec"]["template"]["spec"]
    c = pod["containers"][0]
    expect(c["command"] == ["/usr/local/bin/operator"] and c["args"] == ["run"], f"{dname}: command {c.get('command')} {c['args']}")
    expect(pod["automountServiceAccountToken"] is True, f"{dname}: needs its API token")
    expect(pod["securityContext"].get("runAsNonRoot") is True, f"{dname}: pod runAsNonRoot")
    expect(c["securityContext"].get("readOnlyRootFilesystem") is True, f"{dname}: readOnlyRootFilesystem")
    expect(c["livenessProbe"]["httpGet"]["path"] == "/healthz", f"{dname}: liveness /healthz")
    expect(c["readinessProbe"]["httpGet"]["path"] == "/readyz", f"{dname}: readiness /readyz")
    env = env_of(c)
    expect(env.get("PROVER_ENDPOINT", {}).get("value", "").endswith("-planner:50051"), f"{dname}: PROVER_ENDPOINT")
    # operator-values serves the planner over TLS: the operator must speak https with the CA.
    expect(env["PROVER_ENDPOINT"]["value"].startswith("https://"), f"{dname}: https:// to a TLS planner")
    expect(env.get("PROVER_CA", {}).get("value") == "/etc/prover/tls/ca.crt", f"{dname}: PROVER_CA")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    expect(vols.get("tls", {}).get("secret", {}).get("secretName") == "prover-planner-tls", f"{dname}: the TLS Secret mounted")
    expect("PROVER_REDIS_URL" in env or "PROVER_REDIS_URL" in config, f"{dname}: PROVER_REDIS_URL set")
    sa = pod["serviceAccountName"]
    expect(sa in by_kind.get("ServiceAccount", {}), f"{dname}: ServiceAccount {sa} rendered")
    # Its API token, from the Secret the chart generates (the planner reads the same one).
    ref = env.get("PROVER_TOKEN", {}).get("valueFrom", {}).get("secretKeyRef", {})
    expect(ref.get("name", "").endswith("-operator-token") and ref.get("key") == "operator", f"{dname}: PROVER_TOKEN from the operator-token Secret")
    token_secret = by_kind.get("Secret", {}).get(ref.get("name"), {})
    token = base64.b64decode(token_secret.get("data", {}).get("operator", "")).decode()
    expect(re.fullmatch(r"prv_[0-9a-f]{64}", token) is not None, f"{dname}: a well-formed generated token ({len(token)} chars)")
    role_kind = "ClusterRole"
    roles = by_kind.get(role_kind, {})
    bindings = by_kind.get("ClusterRoleBinding", {})
    expect(len(roles) == 1 and len(bindings) == 1, "watchAllNamespaces: a ClusterRole and its binding")
    for b in bindings.values():
        expect(any(s["name"] == sa for s in b["subjects"]), f"binding names {sa}")
        rules = roles.get(b["roleRef"]["name"], {}).get("rules", [])
        for res in ("proofjobs", "proverpools"):
            expect(rules_allow(rules, "prover.dev", res, ["get", "list", "watch", "patch"]), f"RBAC: {res}")
            expect(rules_allow(rules, "prover.dev", f"{res}/status", ["patch"]), f"RBAC: {res}/status")
        expect(rules_allow(rules, "apps", "deployments/scale", ["get", "patch"]), "RBAC: deployments/scale")
    expect(len(pools) == 1, f"one ProverPool (the pari pool): {sorted(pools)}")
    for pname, p in pools.items():
        target = p["spec"]["deployment"]
        expect(target in workers, f"ProverPool {pname}: Deployment {target} rendered")
        if target in workers:
            expect("replicas" not in workers[target]["spec"], f"{target}: replicas left to the operator")
        expect(p["spec"]["taskKinds"] == ["pari.setup", "pari.prove"], f"ProverPool {pname}: taskKinds")
        expect((p["spec"]["minReplicas"], p["spec"]["maxReplicas"]) == (1, 12), f"ProverPool {pname}: replicas bounds")
        expect(p["spec"]["targetBacklogSeconds"] == 120, f"ProverPool {pname}: targetBacklogSeconds")
    for wname, w in workers.items():
        if wname.endswith("-worker-reckle"):
            expect(w["spec"]["replicas"] == 2, f"{wname}: a pool without queueScaling keeps its replicas")


# What each ci values file sets of gc.* (the rest are the chart's defaults).
GC_EXPECTED = {
    "gpu-values": None,  # gc.enabled: false
    "operator-values": {"schedule": "@hourly", "timeZone": "Etc/UTC", "olderThan": "30d", "grace": "5m", "dryRun": True},
}
GC_DEFAULTS = {"schedule": "17 3 * * *", "timeZone": None, "olderThan": "7d", "grace": "60s", "dryRun": False}


def check_gc(name, by_kind, services, setup_jobs):
    """gc.enabled: a CronJob running `prover admin gc` with the values' cut-off and grace, one
    run at a time, never with --allow-empty-index (a Redis that lost its data would make it
    delete every job's objects), bounded (deadlines, few retries), under the services' security
    context without a service account token, with the services' image and S3 identity; with the
    bundled Redis as its own `gc` ACL user. gc.enabled false: no CronJob."""
    crons = by_kind.get("CronJob", {})
    want = GC_EXPECTED.get(name, GC_DEFAULTS)
    if want is None:
        expect(not crons, f"no CronJob with gc.enabled false: {sorted(crons)}")
        return
    expect(list(crons) == ["prover-gc"], f"one gc CronJob: {sorted(crons)}")
    for cname, cj in crons.items():
        spec = cj["spec"]
        job = spec["jobTemplate"]["spec"]
        pod = job["template"]["spec"]
        c = pod["containers"][0]
        args = c.get("args", [])
        expect("--allow-empty-index" not in args and not any("allow-empty-index" in str(x) for x in c.get("command", []) + [e.get("value", "") for e in c.get("env", [])]),
               f"{cname}: never --allow-empty-index ({args})")
        expect(args[:2] == ["admin", "gc"], f"{cname}: runs prover admin gc ({args})")
        flag = lambda f: args[args.index(f) + 1] if f in args and args.index(f) + 1 < len(args) else None
        expect(flag("--older-than") == want["olderThan"], f"{cname}: --older-than {flag('--older-than')}, expected {want['olderThan']}")
        expect(flag("--grace") == want["grace"], f"{cname}: --grace {flag('--grace')}, expected {want['grace']}")
        expect(("--dry-run" in args) == want["dryRun"], f"{cname}: --dry-run {'--dry-run' in args}, expected {want['dryRun']}")
        expect(spec["schedule"] == want["schedule"], f"{cname}: schedule {spec['schedule']!r}, expected {want['schedule']!r}")
        expect(spec.get("timeZone") == want["timeZone"], f"{cname}: timeZone {spec.get('timeZone')!r}, expected {want['timeZone']!r}")
        expect(spec.get("concurrencyPolicy") == "Forbid", f"{cname}: concurrencyPolicy {spec.get('concurrencyPolicy')} (two runs would delete the same objects)")
        expect(isinstance(spec.get("startingDeadlineSeconds"), int), f"{cname}: startingDeadlineSeconds set")
        expect(isinstance(spec.get("successfulJobsHistoryLimit"), int) and isinstance(spec.get("failedJobsHistoryLimit"), int), f"{cname}: history limits set")
        expect(isinstance(job.get("activeDeadlineSeconds"), int), f"{cname}: activeDeadlineSeconds set")
        expect(isinstance(job.get("backoffLimit"), int) and job["backoffLimit"] <= 3, f"{cname}: backoffLimit {job.get('backoffLimit')} (a refusal fails again)")
        expect(pod.get("restartPolicy") == "Never", f"{cname}: restartPolicy {pod.get('restartPolicy')}")
        expect(pod.get("automountServiceAccountToken") is False, f"{cname}: no service account token")
        psc, sc = pod.get("securityContext", {}), c.get("securityContext", {})
        expect(psc.get("runAsNonRoot") is True and psc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{cname}: pod non-root, seccomp RuntimeDefault ({psc})")
        expect(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False and sc.get("capabilities", {}).get("drop") == ["ALL"],
               f"{cname}: read-only root, no privilege escalation, no capabilities ({sc})")
        expect(c.get("resources", {}).get("limits", {}).get("memory"), f"{cname}: a memory limit")
        tpl_labels = job["template"]["metadata"]["labels"]
        expect(tpl_labels.get("app.kubernetes.io/component") == "gc", f"{cname}: its pods' component is gc ({tpl_labels})")
        env = env_of(c)
        for svc_name, svc in services.items():
            sc_ = svc["spec"]["template"]["spec"]["containers"][0]
            expect(c["image"] == sc_["image"], f"{cname}: image {c['image']}, the services' is {sc_['image']}")
            svc_env = env_of(sc_)
            for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
                expect(env.get(key, {}).get("valueFrom") == svc_env.get(key, {}).get("valueFrom"), f"{cname}: {key} the services' ({env.get(key)})")
            expect(c.get("envFrom") == sc_.get("envFrom"), f"{cname}: the services' ConfigMap")
            break
        s3_key = env.get("AWS_ACCESS_KEY_ID", {}).get("valueFrom", {}).get("secretKeyRef", {}).get("key")
        expect((s3_key == "services-access-key") == bool(setup_jobs), f"{cname}: S3 identity {s3_key} (setup Jobs: {list(setup_jobs)})")
        redis_bundled = any(n.endswith("-redis") for n in by_kind.get("StatefulSet", {}))
        url = env.get("PROVER_REDIS_URL", {})
        if redis_bundled:
            expect(url.get("value", "").startswith("redis://gc:$(REDIS_PASSWORD)@"), f"{cname}: the bundled Redis as the gc ACL user: {url}")
            key = env.get("REDIS_PASSWORD", {}).get("valueFrom", {}).get("secretKeyRef", {}).get("key")
            expect(key == "REDIS_PASSWORD_GC", f"{cname}: the gc user's own Redis password, not {key}")
            expect("REDIS_PASSWORD" in env and list(env).index("REDIS_PASSWORD") < list(env).index("PROVER_REDIS_URL"), f"{cname}: REDIS_PASSWORD before the URL that expands it")
        else:
            expect("secretKeyRef" in url.get("valueFrom", {}), f"{cname}: the external Redis URL from the Secret ({url})")
        if name == "external-values":
            expect(env.get("SSL_CERT_FILE", {}).get("value") == "/etc/prover/store-ca/ca.crt", f"{cname}: SSL_CERT_FILE (storeCA)")
        expect("OTEL_EXPORTER_OTLP_ENDPOINT" not in env, f"{cname}: no traces (its NetworkPolicy allows Redis and S3 only)")


def check_redis_users(sts, secrets, role_urls):
    """Starts a real redis-server with the bundled Redis's rendered arguments (its `--user` lines
    from files/redis-acl.conf, each $(REDIS_PASSWORD_<ROLE>) from the rendered Secret) and
    checks that every role's URL authenticates, that the worker's user can neither write nor
    read a tenant's token while the planner's can read one, and that the gc user reads job
    records and the index but writes no token, runs no CONFIG and cannot expire the index."""
    import os
    import shutil
    import socket
    import subprocess
    import tempfile
    import time

    server = shutil.which("redis-server")
    cli = shutil.which("redis-cli")
    expect(server and cli, "redis-server and redis-cli on the PATH (scripts/test.d/10-services.sh installs them)")
    if not (server and cli):
        return
    data = {}
    for sec in secrets.values():
        data.update({k: base64.b64decode(v).decode() for k, v in sec.get("data", {}).items()})
    c = sts["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: data.get(e.get("valueFrom", {}).get("secretKeyRef", {}).get("key"), "") for e in c.get("env", [])}
    expand = lambda a: re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a)
    args = [expand(a) for a in c["args"]]
    users = [args[i + 1] for i, a in enumerate(args) if a == "--user"]
    expect(set(role_urls) <= set(users), f"bundled Redis users {users} include every rendered role's {sorted(role_urls)}")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tmp = tempfile.mkdtemp()
    args[args.index("--port") + 1] = str(port)
    args[args.index("--dir") + 1] = tmp
    proc = subprocess.Popen([server, *args, "--bind", "127.0.0.1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def ask(user, password, *cmd):
        r = subprocess.run([cli, "-p", str(port), "--user", user, "--pass", password, "--no-auth-warning", *cmd], capture_output=True, text=True)
        return (r.stdout + r.stderr).strip()

    try:
        admin = env.get("REDIS_PASSWORD", "")
        for _ in range(100):
            if ask("default", admin, "PING") == "PONG":
                break
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        if proc.poll() is not None:
            expect(False, f"bundled Redis with the rendered arguments exited: {proc.stdout.read().decode()[-2000:]}")
            return
        ask("default", admin, "HSET", "prover:token:" + "ab" * 32, "tenant", "t")
        for role, (url, key) in role_urls.items():
            expect(ask(role, data.get(key, ""), "PING") == "PONG", f"the {role}'s rendered user and Secret password authenticate")
        worker_pw = data.get(role_urls.get("worker", ("", ""))[1], "")
        for cmd in (["HSET", "prover:token:" + "cd" * 32, "tenant", "evil"], ["HGETALL", "prover:token:" + "ab" * 32], ["CONFIG", "GET", "*"]):
            out = ask("worker", worker_pw, *cmd)
            expect("NOPERM" in out, f"the worker's Redis user ran {cmd[0]} {cmd[1]} (answer not shown: it may hold secrets)")
        planner_pw = data.get(role_urls.get("planner", ("", ""))[1], "")
        expect("tenant" in ask("planner", planner_pw, "HGETALL", "prover:token:" + "ab" * 32), "the planner's Redis user reads tokens")
        # gc: reads job records and expires collected ones; nothing else (files/redis-acl.conf).
        gc_pw = data.get(role_urls.get("gc", ("", ""))[1], "")
        ask("default", admin, "HSET", "prover:job:gc-check", "state", "done")
        ask("default", admin, "ZADD", "prover:jobs", "1", "gc-check")
        expect(ask("gc", gc_pw, "HGETALL", "prover:job:gc-check") == "state\ndone", "the gc user reads a job record")
        expect(ask("gc", gc_pw, "ZREVRANGE", "prover:jobs", "0", "0") == "gc-check", "the gc user reads the job index")
        expect(ask("gc", gc_pw, "ZREM", "prover:jobs", "gc-gone") == "0", "the gc user drops an expired id from the job index")
        # What the job store's expire does: its script, loaded if the server lacks it, run by hash.
        sha = ask("gc", gc_pw, "SCRIPT", "LOAD", "for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end return 1")
        expect(ask("gc", gc_pw, "EVALSHA", sha, "1", "prover:job:gc-check", "600000") == "1", f"the gc user expires a job record by script ({sha})")
        expect(0 < int(ask("default", admin, "PTTL", "prover:job:gc-check") or 0) <= 600000, "the gc user's script gave the record a TTL")
        refused = [["HSET", "prover:token:x", "a", "b"], ["HGETALL", "prover:token:" + "ab" * 32], ["CONFIG", "GET", "*"],
                   ["PEXPIRE", "prover:jobs", "1"], ["DEL", "prover:job:gc-check"], ["HSET", "prover:job:gc-check", "state", "running"],
                   ["XADD", "prover:q:pari.prove", "*", "f", "v"], ["SCAN", "0"],
                   ["EVAL", "return redis.call('HSET', KEYS[1], 'a', 'b')", "1", "prover:token:x"]]
        for cmd in refused:
            out = ask("gc", gc_pw, *cmd)
            expect("NOPERM" in out, f"the gc Redis user ran {' '.join(cmd[:2])} (answer not shown: it may hold secrets)")
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


# --- NetworkPolicy model ------------------------------------------------------------------
# A small model of NetworkPolicy semantics (networking.k8s.io/v1), enough to ask whether a
# connection from one endpoint to another on (port, protocol) is allowed. An endpoint is a pod
# (namespace, its namespace's labels, pod labels, container ports, an IP) or a plain address.
# A pod's egress is free unless some policy with policyTypes Egress selects it, then one of
# their rules must allow it; likewise its ingress. Pods outside the release are not selected by
# the release's policies, so only the release side of a connection is constrained by them.
RELEASE_NS = "prover"


def endpoint(labels=None, ns=RELEASE_NS, ip="10.244.9.9", ports=None):
    return {"labels": labels, "ns": ns, "ns_labels": {"kubernetes.io/metadata.name": ns}, "ip": ip, "ports": ports or {}}


def selector_matches(sel, labels):
    if sel is None:
        return False
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def ip_in_block(ip, block):
    import ipaddress

    a = ipaddress.ip_address(ip)
    if a not in ipaddress.ip_network(block["cidr"]):
        return False
    return not any(a in ipaddress.ip_network(x) for x in block.get("except") or [])


def peer_matches(peer, ep, policy_ns):
    if "ipBlock" in peer:
        # Pod IPs may match an ipBlock too (CNI-dependent): counted, to be conservative.
        return ip_in_block(ep["ip"], peer["ipBlock"])
    if ep["labels"] is None:  # a plain address: only ipBlocks select it
        return False
    if "namespaceSelector" in peer:
        if not selector_matches(peer["namespaceSelector"], ep["ns_labels"]):
            return False
    elif ep["ns"] != policy_ns:
        return False
    return selector_matches(peer.get("podSelector", {}), ep["labels"])


def ports_match(ports, port, protocol, dst):
    if not ports:
        return True
    for p in ports:
        if p.get("protocol", "TCP") != protocol:
            continue
        if "port" not in p:
            return True
        want = p["port"]
        if isinstance(want, str):
            want = dst["ports"].get(want)
        if want == port or (want is not None and p.get("endPort") and want <= port <= p["endPort"]):
            return True
    return False


def side_allows(policies, pod, other, port, protocol, direction, dst):
    """Whether the policies selecting `pod` for `direction` (Ingress/Egress) allow the traffic."""
    selecting = [p for p in policies if selector_matches(p["spec"]["podSelector"], pod["labels"])
                 and direction in p["spec"].get("policyTypes", ["Ingress"])]
    if not selecting:
        return True
    key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    for p in selecting:
        for rule in p["spec"].get(key) or []:
            peers = rule.get(peers_key)
            if not ports_match(rule.get("ports"), port, protocol, dst):
                continue
            if not peers or any(peer_matches(peer, other, p["metadata"].get("namespace", RELEASE_NS)) for peer in peers):
                return True
    return False


def allowed(policies, src, dst, port, protocol="TCP"):
    ok = True
    if src["labels"] is not None and src["ns"] == RELEASE_NS:
        ok = side_allows(policies, src, dst, port, protocol, "Egress", dst)
    if ok and dst["labels"] is not None and dst["ns"] == RELEASE_NS:
        ok = side_allows(policies, dst, src, port, protocol, "Ingress", dst)
    return ok


# What outside the release the checks talk to: kube-dns, a Prometheus (the Prometheus
# Operator's pod label), the Kubernetes API (its Service address and an endpoint behind it), a
# client on the internet, the cloud metadata endpoint, and per values file the external stores.
KUBE_DNS = endpoint({"k8s-app": "kube-dns"}, ns="kube-system", ip="10.244.0.10")
PROMETHEUS = endpoint({"app.kubernetes.io/name": "prometheus"}, ns="monitoring", ip="10.244.0.20")
KUBE_API = [(endpoint(ip="10.96.0.1"), 443), (endpoint(ip="172.18.0.2"), 6443)]
INTERNET_CLIENT = endpoint(ip="203.0.113.7")
METADATA = endpoint(ip="169.254.169.254")
EXTERNAL_STORES = {
    # (Redis endpoint, port), (S3 endpoint, port): what the ci values file's peers describe.
    "external-values": ((endpoint({"app.kubernetes.io/name": "redis"}, ns="data", ip="10.244.5.5"), 6379),
                        (endpoint(ip="52.218.1.1"), 443)),
    "existing-secret-values": ((endpoint({"app.kubernetes.io/name": "redis"}, ns="data", ip="10.244.5.5"), 6379),
                               (endpoint({"app": "minio"}, ns="storage", ip="10.244.6.6"), 9000)),
}
TRACING = {"external-values": (endpoint({"app.kubernetes.io/name": "opentelemetry-collector"}, ns="observability", ip="10.244.7.7"), 4317)}


def describe(ep):
    if ep["labels"] is None:
        return ep["ip"]
    return f"{ep['ns']}/{ep['labels'].get('app.kubernetes.io/component') or ep['labels']}"


def check_network_policies(name, by_kind):
    """networkPolicy.enabled (every ci values file): a default-deny of ingress and egress over
    every pod of the release, and explicit allows for what each component must reach, and not
    more: a worker reaches neither the planner's gRPC port nor the Kubernetes API, a pod of the
    release's labels but no known component reaches neither Redis nor MinIO."""
    policies = list(by_kind.get("NetworkPolicy", {}).values())
    pods = {}  # workload name -> pod endpoint
    ip = 1
    for kind in ("Deployment", "StatefulSet", "Job", "CronJob"):
        for wname, w in by_kind.get(kind, {}).items():
            tpl = w["spec"]["jobTemplate"]["spec"]["template"] if kind == "CronJob" else w["spec"]["template"]
            ports = {p["name"]: p["containerPort"] for c in tpl["spec"]["containers"] for p in c.get("ports", []) if "name" in p}
            pods[wname] = endpoint(tpl["metadata"]["labels"], ip=f"10.244.1.{ip}", ports=ports)
            ip += 1
    deny = [p for p in policies if set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
            and not p["spec"].get("ingress") and not p["spec"].get("egress")]
    expect(deny, "a default-deny NetworkPolicy (Ingress and Egress, no rule)")
    for wname, pod in pods.items():
        expect(any(selector_matches(p["spec"]["podSelector"], pod["labels"]) for p in deny), f"{wname}: its pods are under the default-deny NetworkPolicy")

    def component(pod):
        c = pod["labels"].get("app.kubernetes.io/component", "")
        return "worker" if c.startswith("worker-") else c

    by_comp = {}
    for wname, pod in pods.items():
        by_comp.setdefault(component(pod), []).append((wname, pod))
    redis = (by_comp["redis"][0][1], 6379) if "redis" in by_comp else EXTERNAL_STORES[name][0]
    s3 = (by_comp["minio"][0][1], 9000) if "minio" in by_comp else EXTERNAL_STORES[name][1]
    prover_roles = {"planner", "executor", "aggregator", "worker"}
    # role -> the (endpoint, port) it must reach, besides DNS.
    needs = {r: [redis, s3] + ([TRACING[name]] if name in TRACING else []) for r in prover_roles}
    needs["operator"] = [redis] + [(p, 50051) for _, p in by_comp.get("planner", [])] + KUBE_API
    needs["minio-setup"] = [s3]
    needs["gc"] = [redis, s3]
    for comp, members in by_comp.items():
        for wname, pod in members:
            for proto in ("UDP", "TCP"):
                expect(allowed(policies, pod, KUBE_DNS, 53, proto), f"{wname}: DNS ({proto} 53 to kube-dns) allowed")
            for dst, port in needs.get(comp, []):
                expect(allowed(policies, pod, dst, port), f"{wname}: may reach {describe(dst)} port {port}")
            if comp in prover_roles | {"operator"}:
                expect(allowed(policies, PROMETHEUS, pod, 9090), f"{wname}: Prometheus may scrape port 9090")
                expect(not allowed(policies, INTERNET_CLIENT, pod, 9090), f"{wname}: metrics port closed to the internet")
                expect(not allowed(policies, pod, METADATA, 80), f"{wname}: the cloud metadata endpoint is out of reach")
            if comp == "planner" and name == "operator-values":
                # networkPolicy.plannerFrom: the clients' namespace (the operator is checked above).
                expect(allowed(policies, endpoint({"app": "cli"}, ns="clients"), pod, 50051), f"{wname}: gRPC port open to networkPolicy.plannerFrom")
                expect(not allowed(policies, INTERNET_CLIENT, pod, 50051), f"{wname}: gRPC port open beyond networkPolicy.plannerFrom")
            elif comp == "planner":
                expect(allowed(policies, INTERNET_CLIENT, pod, 50051), f"{wname}: gRPC port open to clients (networkPolicy.plannerFrom empty)")
            if "redis-metrics" in pod["ports"]:
                expect(allowed(policies, PROMETHEUS, pod, 9121), f"{wname}: Prometheus may scrape redis_exporter (9121)")
    # What must not be reachable.
    for wname, worker in by_comp.get("worker", []):
        for _, planner in by_comp.get("planner", []):
            expect(not allowed(policies, worker, planner, 50051), f"{wname}: a worker reaches the planner's gRPC port")
        for api, port in KUBE_API:
            expect(not allowed(policies, worker, api, port), f"{wname}: a worker reaches the Kubernetes API ({api['ip']}:{port})")
    # The gc CronJob's pods: Redis, S3 and DNS out, nothing else; nothing in.
    for wname, gc in by_comp.get("gc", []):
        for _, planner in by_comp.get("planner", []):
            expect(not allowed(policies, gc, planner, 50051), f"{wname}: gc reaches the planner's gRPC port")
        for api, port in KUBE_API:
            expect(not allowed(policies, gc, api, port), f"{wname}: gc reaches the Kubernetes API ({api['ip']}:{port})")
        expect(not allowed(policies, gc, METADATA, 80), f"{wname}: gc reaches the cloud metadata endpoint")
        if name in TRACING:
            expect(not allowed(policies, gc, *TRACING[name]), f"{wname}: gc reaches the trace collector")
        expect(not allowed(policies, PROMETHEUS, gc, 9090), f"{wname}: something reaches gc's pods (Prometheus on 9090)")
    impostor = endpoint({k: v for k, v in next(iter(pods.values()))["labels"].items() if k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")}
                        | {"app.kubernetes.io/component": "debug"}, ip="10.244.2.1")
    for comp, port in (("redis", 6379), ("minio", 9000)):
        for wname, pod in by_comp.get(comp, []):
            # Ingress side only: the impostor's own egress is the attacker's to choose.
            expect(not side_allows(policies, pod, impostor, port, "TCP", "Ingress", pod), f"{wname}: a pod with the release's labels but no component of it reaches port {port}")
            for _, client in by_comp.get("operator", []) if comp == "minio" else []:
                expect(not allowed(policies, client, pod, port), f"{wname}: the operator reaches MinIO")


def check_prometheus_rule(name, by_kind):
    """prometheusRule.enabled: with the monitoring.coreos.com/v1 API (the with-monitoring render),
    one PrometheusRule whose rules are those of helm/prover/files/prometheus-alerts.yaml, the
    file `promtool test rules deploy/prometheus/alerts_test.yaml` tests; without the API none."""
    import os

    rules = by_kind.get("PrometheusRule", {})
    if name != "with-monitoring":
        expect(not rules, f"no PrometheusRule without monitoring.coreos.com/v1: {sorted(rules)}")
        return
    expect(len(rules) == 1, f"one PrometheusRule with monitoring.coreos.com/v1: {sorted(rules)}")
    tested = os.path.join(os.path.dirname(os.path.abspath(__file__)), "prover", "files", "prometheus-alerts.yaml")
    with open(tested) as f:
        want = yaml.safe_load(f)
    # The docs' lists of alerts follow the rules: a row of docs/observability.md's table and a
    # runbook entry of docs/operations.md for each alert, and none for an alert that is gone.
    alerts = [r["alert"] for g in want["groups"] for r in g["rules"] if "alert" in r]
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs")
    with open(os.path.join(docs, "observability.md")) as f:
        rows = {m.group(1) for m in re.finditer(r"^\| `(\w+)` \| (?:warning|critical) \|", f.read(), re.M)}
    with open(os.path.join(docs, "operations.md")) as f:
        runbooks = {m.group(1) for m in re.finditer(r"^### (\w+) \((?:warning|critical)\)$", f.read(), re.M)}
    expect(rows == set(alerts), f"docs/observability.md's alert table differs from the rules: missing {sorted(set(alerts) - rows)}, extra {sorted(rows - set(alerts))}")
    expect(runbooks == set(alerts), f"docs/operations.md's runbooks differ from the rules: missing {sorted(set(alerts) - runbooks)}, extra {sorted(runbooks - set(alerts))}")
    for rname, r in rules.items():
        expect(r["apiVersion"] == "monitoring.coreos.com/v1", f"{rname}: apiVersion {r['apiVersion']}")
        expect(r["spec"] == want, f"{rname}: its spec differs from the tested rules in {tested}")
        expect(len(r["spec"].get("groups", [])) > 0, f"{rname}: no rule groups")


def check_pdbs(by_kind):
    """PodDisruptionBudgets that protect: one for each workload that may run two pods or more
    (its replicas, or the maximum of its HPA or ProverPool), leaving at least one pod when the
    replicas are fixed; none over a single replica, where maxUnavailable 1 protected nothing
    (and minAvailable 1 would block every node drain)."""
    pdbs = by_kind.get("PodDisruptionBudget", {})
    scaled = {h["spec"]["scaleTargetRef"]["name"]: h["spec"]["maxReplicas"] for h in by_kind.get("HorizontalPodAutoscaler", {}).values()}
    scaled.update({p["spec"]["deployment"]: p["spec"]["maxReplicas"] for p in by_kind.get("ProverPool", {}).values()})
    covered = set()
    for kind in ("Deployment", "StatefulSet"):
        for wname, w in by_kind.get(kind, {}).items():
            labels = w["spec"]["template"]["metadata"]["labels"]
            mine = [p for p in pdbs.values() if selector_matches(p["spec"]["selector"], labels)]
            fixed = w["spec"].get("replicas") if wname not in scaled else None
            most = scaled.get(wname, fixed if fixed is not None else 1)
            if wname.endswith("-operator"):
                # One instance by design (no leader election).
                expect(not mine, f"{wname}: no PodDisruptionBudget over the single operator")
                continue
            expect(len(mine) == (1 if most >= 2 else 0), f"{wname}: {len(mine)} PodDisruptionBudgets for at most {most} replicas (one exactly from 2 replicas)")
            for p in mine:
                covered.add(p["metadata"]["name"])
                spec = p["spec"]
                if fixed is not None and isinstance(spec.get("maxUnavailable"), int):
                    expect(spec["maxUnavailable"] < fixed, f"{p['metadata']['name']}: maxUnavailable {spec['maxUnavailable']} of {fixed} replicas protects nothing")
                if "minAvailable" in spec:
                    expect(spec["minAvailable"] not in (0, "0%"), f"{p['metadata']['name']}: minAvailable 0 protects nothing")
    expect(covered == set(pdbs), f"PodDisruptionBudgets selecting no workload: {sorted(set(pdbs) - covered)}")


def main():
    name, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    deployments = by_kind.get("Deployment", {})
    statefulsets = by_kind.get("StatefulSet", {})
    configmaps = by_kind.get("ConfigMap", {})
    config = next(iter(configmaps.values()))["data"]

    setup_jobs = {n: j for n, j in by_kind.get("Job", {}).items() if "-minio-setup-" in n}
    check_minio_setup(name, by_kind, statefulsets, setup_jobs)

    roles = {"planner", "executor", "aggregator", "worker"}
    seen_roles = set()
    operators = {n: d for n, d in deployments.items() if n.endswith("-operator")}
    deployments = {n: d for n, d in deployments.items() if n not in operators}
    for dname, d in deployments.items():
        pod = d["spec"]["template"]["spec"]
        c = pod["containers"][0]
        role = c["args"][1]
        seen_roles.add(role)
        expect(c["args"][0] == "serve" and role in roles, f"{dname}: args {c['args']}")
        expect(pod["securityContext"].get("runAsNonRoot") is True, f"{dname}: pod runAsNonRoot")
        sc = c["securityContext"]
        expect(sc.get("readOnlyRootFilesystem") is True, f"{dname}: readOnlyRootFilesystem")
        expect(sc.get("allowPrivilegeEscalation") is False, f"{dname}: allowPrivilegeEscalation")
        expect(c["livenessProbe"]["httpGet"]["path"] == "/healthz", f"{dname}: liveness /healthz")
        expect(c["readinessProbe"]["httpGet"]["path"] == "/readyz", f"{dname}: readiness /readyz")
        # The process serves HTTP only after waiting for its backends (PROVER_BACKEND_WAIT_SECS,
        # default 120 s): the startup probe must outlast that wait, or liveness kills the pod.
        sp = c.get("startupProbe", {})
        wait = int(env_of(c).get("PROVER_BACKEND_WAIT_SECS", {}).get("value", "120"))
        budget = sp.get("periodSeconds", 10) * sp.get("failureThreshold", 3) + sp.get("initialDelaySeconds", 0)
        expect(sp.get("httpGet", {}).get("path") == "/healthz" and budget > wait,
               f"{dname}: startup probe allows {budget}s, the backend wait is {wait}s")
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        expect(ports.get("metrics") == 9090, f"{dname}: metrics port 9090")
        if role == "planner":
            expect(ports.get("grpc") == 50051, f"{dname}: gRPC port 50051")
        env = env_of(c)
        if role == "planner":
            vols = {v["name"]: v for v in pod.get("volumes", [])}
            if name == "operator-values":
                expect(env.get("PROVER_TLS_CERT", {}).get("value") == "/etc/prover/tls/tls.crt", f"{dname}: PROVER_TLS_CERT")
                expect(env.get("PROVER_TLS_KEY", {}).get("value") == "/etc/prover/tls/tls.key", f"{dname}: PROVER_TLS_KEY")
                expect(vols.get("tls", {}).get("secret", {}).get("secretName") == "prover-planner-tls", f"{dname}: the TLS Secret mounted")
                mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
                expect(mounts.get("tls", {}).get("mountPath") == "/etc/prover/tls", f"{dname}: TLS mount")
            elif name == "external-values":
                # planner.tls.certManager: a Certificate into the default Secret, which the planner serves.
                cert = by_kind.get("Certificate", {}).get("prover-planner", {})
                spec = cert.get("spec", {})
                expect(spec.get("secretName") == "prover-planner-tls", f"Certificate into prover-planner-tls: {spec}")
                expect(spec.get("issuerRef") == {"name": "prover-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}, f"issuerRef {spec.get('issuerRef')}")
                expect({"prover-planner", "prover-planner.prover.svc"} <= set(spec.get("dnsNames", [])), f"dnsNames {spec.get('dnsNames')}")
                expect(vols.get("tls", {}).get("secret", {}).get("secretName") == "prover-planner-tls", f"{dname}: serves the Certificate's Secret")
                expect(env.get("PROVER_TLS_CERT", {}).get("value") == "/etc/prover/tls/tls.crt", f"{dname}: PROVER_TLS_CERT")
            else:
                expect("PROVER_TLS_CERT" not in env and "tls" not in vols, f"{dname}: no TLS unless planner.tls.secretName")
            # Authentication: on unless auth.enabled is false; a tokens directory from the
            # operator's token and auth.tokensSecret.
            sources = [src.get("secret", {}).get("name") for src in vols.get("tokens", {}).get("projected", {}).get("sources", [])]
            if name == "gpu-values":
                expect(env.get("PROVER_NO_AUTH", {}).get("value") == "true" and "tokens" not in vols, f"{dname}: auth.enabled false sets PROVER_NO_AUTH")
            else:
                expect("PROVER_NO_AUTH" not in env, f"{dname}: authentication on by default")
            expected = {"operator-values": ["prover-operator-token"], "existing-secret-values": ["prover-operator-token-external", "prover-api-tokens"]}.get(name, [])
            expect(sources == expected, f"{dname}: tokens from {sources}, expected {expected}")
            if expected:
                expect(env.get("PROVER_TOKENS_DIR", {}).get("value") == "/etc/prover/tokens", f"{dname}: PROVER_TOKENS_DIR")
            else:
                expect("PROVER_TOKENS_DIR" not in env, f"{dname}: no tokens directory without tokens")
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            expect("secretKeyRef" in env.get(key, {}).get("valueFrom", {}), f"{dname}: {key} from a Secret")
        # With the bundled MinIO's generated credentials the services use their bucket-scoped
        # user (made by the minio-setup Job), never MinIO's root credentials.
        s3_key = env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"]["key"]
        expect((s3_key == "services-access-key") == bool(setup_jobs), f"{dname}: S3 identity {s3_key} (setup Jobs: {list(setup_jobs)})")
        pod_vols = {v["name"]: v for v in pod.get("volumes", [])}
        if name == "external-values":
            mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
            expect(env.get("SSL_CERT_FILE", {}).get("value") == "/etc/prover/store-ca/ca.crt", f"{dname}: SSL_CERT_FILE")
            expect(pod_vols.get("store-ca", {}).get("secret", {}).get("secretName") == "store-ca-bundle", f"{dname}: the CA bundle mounted")
            expect(mounts.get("store-ca", {}).get("mountPath") == "/etc/prover/store-ca", f"{dname}: CA bundle mount")
        else:
            expect("SSL_CERT_FILE" not in env and "store-ca" not in pod_vols, f"{dname}: no CA bundle unless storeCA.secretName")
        if name == "external-values":
            expect(env.get("OTEL_EXPORTER_OTLP_ENDPOINT", {}).get("value") == "http://otel-collector.observability:4317", f"{dname}: traces exported")
        else:
            expect("OTEL_EXPORTER_OTLP_ENDPOINT" not in env, f"{dname}: no traces unless tracing.otlpEndpoint")
        expect("PROVER_REDIS_URL" in env or "PROVER_REDIS_URL" in config, f"{dname}: PROVER_REDIS_URL set")
        if role in ("worker", "executor", "aggregator"):
            # Every role that drains on SIGTERM (finishes the task in hand within the drain
            # timeout) is given the time: grace > drain + preStop (the Kubernetes default of 30 s
            # SIGKILLed an aggregator's 300 s drain).
            expect("PROVER_DRAIN_TIMEOUT_SECS" in env, f"{dname}: PROVER_DRAIN_TIMEOUT_SECS set (its grace period is derived from it)")
            drain = int(env.get("PROVER_DRAIN_TIMEOUT_SECS", {}).get("value", 300))
            sleep = c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
            grace = pod.get("terminationGracePeriodSeconds", 30)
            expect(grace > drain + sleep, f"{dname}: grace {grace} <= drain {drain} + preStop {sleep}")
            if role == "worker":
                expect(sleep > 0, f"{dname}: a preStop sleep (leave the endpoints before SIGTERM)")
            if role == "aggregator" and name == "reckle-wrap-values":
                expect((drain, grace) == (1800, 1830), f"{dname}: aggregator.drainTimeoutSecs 1800 and the grace derived from it, not {drain}, {grace}")
        if role == "executor" and name == "default-values":
            expect(d["spec"]["replicas"] == 2, f"{dname}: 2 executors by default")
    expect(seen_roles == roles, f"roles rendered: {sorted(seen_roles)}")
    expect(config["PROVER_METRICS_LISTEN"] == "0.0.0.0:9090", "PROVER_METRICS_LISTEN")

    redis = [s for n, s in statefulsets.items() if n.endswith("-redis")]
    minio = [s for n, s in statefulsets.items() if n.endswith("-minio")]
    for s in redis:
        args = s["spec"]["template"]["spec"]["containers"][0]["args"]
        i = args.index("--maxmemory-policy")
        expect(args[i + 1] == "noeviction", "bundled Redis runs with noeviction")
        k = args.index("--appendfsync")
        expect(args[k + 1] == "always" or name != "default-values", "bundled Redis fsyncs before acknowledging a write by default")
        j = args.index("--requirepass")
        expect(args[j + 1] == "$(REDIS_PASSWORD)", "bundled Redis requires the password")
        renv = {e["name"]: e for e in s["spec"]["template"]["spec"]["containers"][0].get("env", [])}
        expect("secretKeyRef" in renv.get("REDIS_PASSWORD", {}).get("valueFrom", {}), "bundled Redis password from a Secret")
    check_pdbs(by_kind)

    expect(bool(by_kind.get("Certificate")) == (name == "external-values"), "a Certificate only with planner.tls.certManager")
    check_operator(name, by_kind, operators, deployments, config)
    check_gc(name, by_kind, deployments, setup_jobs)
    check_network_policies(name, by_kind)
    check_prometheus_rule(name, by_kind)

    if name == "default-values":
        expect(len(redis) == 1 and len(minio) == 1, "bundled Redis and MinIO by default")
        expect("PROVER_REDIS_URL" not in config, "the bundled Redis URL (with its password) is not in the ConfigMap")
        role_urls = {}
        for dname, d in list(deployments.items()) + list(operators.items()):
            c = d["spec"]["template"]["spec"]["containers"][0]
            env = env_of(c)
            role = c["args"][1] if dname in deployments else "operator"
            url = env.get("PROVER_REDIS_URL", {}).get("value", "")
            expect(url.startswith(f"redis://{role}:$(REDIS_PASSWORD)@"), f"{dname}: bundled Redis URL as the {role}'s ACL user: {url}")
            key = env.get("REDIS_PASSWORD", {}).get("valueFrom", {}).get("secretKeyRef", {}).get("key")
            expect(key == f"REDIS_PASSWORD_{role.upper()}", f"{dname}: the {role}'s own Redis password, not {key}")
            expect(list(env).index("REDIS_PASSWORD") < list(env).index("PROVER_REDIS_URL"), f"{dname}: REDIS_PASSWORD before the URL that expands it")
            role_urls[role] = (url, key)
        for cj in by_kind.get("CronJob", {}).values():
            env = env_of(cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0])
            key = env.get("REDIS_PASSWORD", {}).get("valueFrom", {}).get("secretKeyRef", {}).get("key")
            role_urls["gc"] = (env.get("PROVER_REDIS_URL", {}).get("value", ""), key)
        expect("gc" in role_urls, "the gc CronJob's Redis URL (gc.enabled by default)")
        for s in redis:
            check_redis_users(s, by_kind["Secret"], role_urls)
    elif name in ("external-values", "existing-secret-values"):
        expect(not redis and not minio, "no bundled Redis or MinIO with external endpoints")
        expect("PROVER_REDIS_URL" not in config, "external Redis URL is not in the ConfigMap")
        expect(not config["PROVER_S3_ENDPOINT"].endswith("-minio:9000"), "external S3 endpoint")
    if name == "existing-secret-values":
        expect("Secret" not in by_kind, "no Secret is created with credentials.existingSecret")
    if name == "gpu-values":
        gpu = deployments[next(n for n in deployments if n.endswith("-worker-gpu"))]
        pod = gpu["spec"]["template"]["spec"]
        limits = pod["containers"][0]["resources"]["limits"]
        expect(limits.get("nvidia.com/gpu") == 1, "GPU pool: nvidia.com/gpu limit")
        expect(pod.get("nodeSelector") and pod.get("tolerations"), "GPU pool: nodeSelector and tolerations")
        hpas = by_kind.get("HorizontalPodAutoscaler", {})
        expect(any(n.endswith("-worker-cpu") for n in hpas), "CPU pool autoscaler")
        cpu = deployments[next(n for n in deployments if n.endswith("-worker-cpu"))]
        expect("replicas" not in cpu["spec"], "autoscaled pool leaves replicas to the HPA")

    if problems:
        for p in problems:
            print(f"{path}: {p}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
