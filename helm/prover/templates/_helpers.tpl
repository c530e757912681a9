{{/* Chart name. */}}
{{- define "prover.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: prefix of every resource. */}}
{{- define "prover.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "prover.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "prover.labels" -}}
helm.sh/chart: {{ include "prover.chart" . }}
app.kubernetes.io/name: {{ include "prover.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: prover
{{- end }}

{{/* Selector labels of the release (add app.kubernetes.io/component per workload). */}}
{{- define "prover.selectorLabels" -}}
app.kubernetes.io/name: {{ include "prover.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "prover.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "prover.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "prover.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Is the bundled Redis installed? "true" or "". */}}
{{- define "prover.redisBundled" -}}
{{- if and .Values.redis.enabled (not .Values.externalRedis.url) (not .Values.externalRedis.urlFromSecret) }}true{{ end }}
{{- end }}

{{/* PROVER_REDIS_DURABILITY: config.redisDurability, else `aof`, or `none` for a bundled
Redis without persistence (its data loss accepted: redis.acceptDataLoss). */}}
{{- define "prover.redisDurability" -}}
{{- $d := .Values.config.redisDurability -}}
{{- if and $d (not (has $d (list "none" "auto" "aof"))) }}
{{- fail (printf "config.redisDurability %q: expected none, auto or aof" $d) }}
{{- end }}
{{- if $d }}{{ $d }}{{ else if and (include "prover.redisBundled" .) (not .Values.redis.persistence.enabled) }}none{{ else }}aof{{ end }}
{{- end }}

{{/* Is the bundled MinIO installed? "true" or "". */}}
{{- define "prover.minioBundled" -}}
{{- if and .Values.minio.enabled (not .Values.externalS3.endpoint) }}true{{ end }}
{{- end }}

{{/*
Non-empty when the services get an S3 identity of their own, limited to the bucket: bundled
MinIO with credentials the chart generates (minio-setup.yaml makes the user). The MinIO root
credentials then stay with MinIO and that Job.
*/}}
{{- define "prover.scopedS3" -}}
{{- if and (include "prover.minioBundled" .) (not .Values.credentials.existingSecret) }}true{{ end }}
{{- end }}

{{/* The Secret holding the operator's API token (key `operator`). */}}
{{- define "prover.operatorTokenSecret" -}}
{{- default (printf "%s-operator-token" (include "prover.fullname" .)) .Values.operator.existingTokenSecret }}
{{- end }}

{{/*
Fails the render when a credential would be generated with credentials.generate false. Call
with (dict "root" $ "what" DESCRIPTION "set" VALUE-TO-SET).
*/}}
{{- define "prover.mustGenerate" -}}
{{- if not .root.Values.credentials.generate }}
{{- fail (printf "credentials.generate is false, and %s would be generated: set %s" .what .set) }}
{{- end }}
{{- end }}

{{- define "prover.secretName" -}}
{{- default (printf "%s-credentials" (include "prover.fullname" .)) .Values.credentials.existingSecret }}
{{- end }}

{{- define "prover.s3Endpoint" -}}
{{- if .Values.externalS3.endpoint }}
{{- .Values.externalS3.endpoint }}
{{- else }}
{{- printf "http://%s-minio:9000" (include "prover.fullname" .) }}
{{- end }}
{{- end }}

{{/* Fails rendering on settings that contradict each other (the schema checks each value alone). */}}
{{- define "prover.validate" -}}
{{- if not (or .Values.externalRedis.url .Values.externalRedis.urlFromSecret .Values.redis.enabled) }}
{{- fail "no Redis: set externalRedis.url, or externalRedis.urlFromSecret with credentials.existingSecret, or redis.enabled=true" }}
{{- end }}
{{- if and .Values.externalRedis.urlFromSecret (not .Values.credentials.existingSecret) }}
{{- fail "externalRedis.urlFromSecret needs credentials.existingSecret" }}
{{- end }}
{{- if and .Values.externalRedis.url .Values.credentials.existingSecret }}
{{- fail "externalRedis.url is written into the chart's Secret, which credentials.existingSecret replaces: put the URL into the existing Secret (key credentials.redisUrlKey) and set externalRedis.urlFromSecret=true instead" }}
{{- end }}
{{- if and (include "prover.redisBundled" .) (not .Values.redis.persistence.enabled) (not .Values.redis.acceptDataLoss) }}
{{- fail "redis.persistence.enabled=false keeps job state in an emptyDir: every job, token and queued task is lost when the Redis pod goes. Set redis.acceptDataLoss=true to run so" }}
{{- end }}
{{- if not (or .Values.externalS3.endpoint .Values.minio.enabled) }}
{{- fail "no object store: set externalS3.endpoint or minio.enabled=true" }}
{{- end }}
{{- if and .Values.externalS3.endpoint (not .Values.credentials.existingSecret) (not (and .Values.credentials.s3AccessKey .Values.credentials.s3SecretKey)) }}
{{- fail "external S3 needs credentials: set credentials.s3AccessKey and credentials.s3SecretKey, or credentials.existingSecret" }}
{{- end }}
{{- if and (ne .Values.planner.service.type "ClusterIP") (not (include "prover.plannerTlsSecret" .)) (not .Values.planner.service.allowPlaintext) }}
{{- fail (printf "planner.service.type=%s puts the gRPC API outside the cluster, and without planner.tls.secretName or planner.tls.certManager.issuerName it is plaintext: every API token would cross the network in the clear. Set planner.tls, or planner.service.allowPlaintext=true to accept that" .Values.planner.service.type) }}
{{- end }}
{{- $names := dict }}
{{- range .Values.workerPools }}
{{- if hasKey $names .name }}
{{- fail (printf "workerPools: the name %q is used twice" .name) }}
{{- end }}
{{- $_ := set $names .name true }}
{{- if and .autoscaling .autoscaling.enabled (gt (int .autoscaling.minReplicas) (int .autoscaling.maxReplicas)) }}
{{- fail (printf "workerPools[%s].autoscaling: minReplicas > maxReplicas" .name) }}
{{- end }}
{{- if and .queueScaling .queueScaling.enabled }}
{{- if not $.Values.operator.enabled }}
{{- fail (printf "workerPools[%s].queueScaling needs operator.enabled=true (the operator does the scaling)" .name) }}
{{- end }}
{{- if and .autoscaling .autoscaling.enabled }}
{{- fail (printf "workerPools[%s]: queueScaling and autoscaling both enabled; choose one" .name) }}
{{- end }}
{{- if not .kinds }}
{{- fail (printf "workerPools[%s].queueScaling needs the pool's kinds listed (their queues drive the scaling)" .name) }}
{{- end }}
{{- if gt (int (.queueScaling.minReplicas | default 0)) (int (.queueScaling.maxReplicas | default 8)) }}
{{- fail (printf "workerPools[%s].queueScaling: minReplicas > maxReplicas" .name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
PROVER_REDIS_URL of a container (a list of env entries); call with (dict "root" $ "role" ROLE).
The external URL from the Secret, or the bundled Redis's address as the role's own ACL user
(files/redis-acl.conf) with that user's password from the Secret (Kubernetes expands
$(REDIS_PASSWORD) from the entry before it).
*/}}
{{- define "prover.redisEnv" -}}
{{- $root := .root -}}
{{- if or $root.Values.externalRedis.url $root.Values.externalRedis.urlFromSecret }}
- name: PROVER_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "prover.secretName" $root }}
      key: {{ $root.Values.credentials.redisUrlKey }}
{{- else }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "prover.secretName" $root }}
      key: {{ include "prover.redisRoleKey" (dict "root" $root "role" .role) }}
- name: PROVER_REDIS_URL
  value: {{ printf "redis://%s:$(REDIS_PASSWORD)@%s-redis:6379/0" .role (include "prover.fullname" $root) | quote }}
{{- end }}
{{- end }}

{{/*
The Redis ACL users of the roles (files/redis-acl.conf): a list of (dict "user" NAME "rules"
LIST), in the file's order.
*/}}
{{- define "prover.redisUsers" -}}
{{- $users := list }}
{{- range $line := splitList "\n" (.Files.Get "files/redis-acl.conf") }}
{{- $words := splitList " " (trim $line) | compact }}
{{- if and $words (not (hasPrefix "#" (first $words))) }}
{{- $users = append $users (dict "user" (first $words) "rules" (rest $words)) }}
{{- end }}
{{- end }}
{{- toJson $users }}
{{- end }}

{{/*
The Secret key of a role's bundled-Redis password: credentials.redisPasswordKey, "_", the role
in capitals (REDIS_PASSWORD_WORKER). Call with (dict "root" $ "role" ROLE).
*/}}
{{- define "prover.redisRoleKey" -}}
{{- printf "%s_%s" .root.Values.credentials.redisPasswordKey (upper .role) -}}
{{- end }}

{{/*
Environment of every prover container: the ConfigMap, then the credentials from the Secret.
Call with (dict "root" $ "role" ROLE).
*/}}
{{- define "prover.env" -}}
{{- $role := .role }}
{{- with .root }}
envFrom:
  - configMapRef:
      name: {{ include "prover.fullname" . }}-config
env:
  {{- include "prover.redisEnv" (dict "root" . "role" $role) | nindent 2 }}
  - name: AWS_ACCESS_KEY_ID
    valueFrom:
      secretKeyRef:
        name: {{ include "prover.secretName" . }}
        key: {{ if include "prover.scopedS3" . }}services-access-key{{ else }}{{ .Values.credentials.accessKeyKey }}{{ end }}
  - name: AWS_SECRET_ACCESS_KEY
    valueFrom:
      secretKeyRef:
        name: {{ include "prover.secretName" . }}
        key: {{ if include "prover.scopedS3" . }}services-secret-key{{ else }}{{ .Values.credentials.secretKeyKey }}{{ end }}
  {{- with .Values.config.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
Pod template of a prover service. Call with (dict "root" $ "role" ROLE "component" NAME
"spec" VALUES-OF-THE-WORKLOAD "extraEnv" LIST "grpc" BOOL "worker" BOOL), and for a role that
drains "terminationGracePeriodSeconds" N (and, for a worker or the planner, "preStopSleepSeconds" N:
a preStop sleep, rendered when not 0).
*/}}
{{- define "prover.podTemplate" -}}
{{- $root := .root }}
{{- $spec := .spec -}}
metadata:
  labels:
    {{- include "prover.selectorLabels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
    app.kubernetes.io/part-of: prover
    prover.dev/metrics: "true"
    {{- with $root.Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
    checksum/credentials: {{ include "prover.credentialsChecksum" $root }}
    {{- with $root.Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "prover.serviceAccountName" $root }}
  automountServiceAccountToken: false
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $root.Values.podSecurityContext | nindent 4 }}
  {{- with .terminationGracePeriodSeconds }}
  terminationGracePeriodSeconds: {{ . }}
  {{- end }}
  containers:
    - name: {{ .role }}
      image: {{ include "prover.image" $root | quote }}
      imagePullPolicy: {{ $root.Values.image.pullPolicy }}
      args: ["serve", {{ .role | quote }}]
      {{- include "prover.env" (dict "root" $root "role" .role) | nindent 6 }}
      {{- with .extraEnv }}
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if .grpc }}
      {{- if not (($root.Values.auth).enabled) }}
        - name: PROVER_NO_AUTH
          value: "true"
      {{- else if include "prover.tokensDir" $root }}
        - name: PROVER_TOKENS_DIR
          value: /etc/prover/tokens
      {{- if $root.Values.operator.enabled }}
        # The operator acts for each namespace as a tenant of its own (x-prover-tenant).
        - name: PROVER_DELEGATING_TENANT
          value: operator
      {{- end }}
      {{- end }}
      {{- end }}
      {{- if ($root.Values.tracing).otlpEndpoint }}
        - name: OTEL_EXPORTER_OTLP_ENDPOINT
          value: {{ $root.Values.tracing.otlpEndpoint | quote }}
      {{- end }}
      {{- if ($root.Values.storeCA).secretName }}
        - name: SSL_CERT_FILE
          value: /etc/prover/store-ca/{{ $root.Values.storeCA.key | default "ca.crt" }}
      {{- end }}
      {{- if .tlsSecret }}
        - name: PROVER_TLS_CERT
          value: /etc/prover/tls/tls.crt
        - name: PROVER_TLS_KEY
          value: /etc/prover/tls/tls.key
      {{- end }}
      ports:
        {{- if .grpc }}
        - name: grpc
          containerPort: 50051
          protocol: TCP
        {{- end }}
        - name: metrics
          containerPort: 9090
          protocol: TCP
      # Until /healthz first answers (the process waits up to PROVER_BACKEND_WAIT_SECS for
      # Redis and S3 before it serves HTTP), the startup probe holds the liveness probe back.
      startupProbe:
        httpGet:
          path: /healthz
          port: metrics
        {{- toYaml $root.Values.probes.startup | nindent 8 }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: metrics
        {{- toYaml $root.Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet:
          path: /readyz
          port: metrics
        {{- toYaml $root.Values.probes.readiness | nindent 8 }}
      {{- if .preStopSleepSeconds }}
      lifecycle:
        preStop:
          sleep:
            seconds: {{ .preStopSleepSeconds }}
      {{- end }}
      resources:
        {{- toYaml .resources | nindent 8 }}
      securityContext:
        {{- toYaml $root.Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        {{- if .tlsSecret }}
        - name: tls
          mountPath: /etc/prover/tls
          readOnly: true
        {{- end }}
        {{- if ($root.Values.storeCA).secretName }}
        - name: store-ca
          mountPath: /etc/prover/store-ca
          readOnly: true
        {{- end }}
        {{- if and .grpc (include "prover.tokensDir" $root) }}
        - name: tokens
          mountPath: /etc/prover/tokens
          readOnly: true
        {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: 1Gi
    {{- if .tlsSecret }}
    - name: tls
      secret:
        secretName: {{ .tlsSecret }}
    {{- end }}
    {{- if ($root.Values.storeCA).secretName }}
    - name: store-ca
      secret:
        secretName: {{ $root.Values.storeCA.secretName }}
    {{- end }}
    {{- if and .grpc (include "prover.tokensDir" $root) }}
    # The planner's --tokens-dir: one file per tenant (Secret volumes follow edits, so a
    # token removed from a Secret stops working once the kubelet syncs it).
    - name: tokens
      projected:
        sources:
          {{- if $root.Values.operator.enabled }}
          - secret:
              name: {{ include "prover.operatorTokenSecret" $root }}
              items:
                - key: operator
                  path: operator
          {{- end }}
          {{- with ($root.Values.auth).tokensSecret }}
          - secret:
              name: {{ . }}
          {{- end }}
    {{- end }}
  {{- with $spec.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $spec.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $spec.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/*
PodDisruptionBudget for a component: (dict "root" $ "name" NAME "component" C "pdb" VALUES
"what" VALUES-PATH "replicas" MOST "fixed" BOOL), MOST the replicas it may run (its replicas,
or its autoscaler's maximum: "fixed" false). Rendered only from 2 replicas: over a single pod
maxUnavailable 1 protects nothing, and minAvailable 1 would block every node drain until
someone deletes the pod by hand. With fixed replicas, a maxUnavailable that leaves no pod
fails rendering.
*/}}
{{- define "prover.pdb" -}}
{{- $max := hasKey .pdb "maxUnavailable" | ternary .pdb.maxUnavailable 1 }}
{{- if and .fixed .pdb.enabled (not (kindIs "string" $max)) (ge (int .replicas) 2) (ge (int $max) (int .replicas)) }}
{{- fail (printf "%s.pdb.maxUnavailable (%d) lets all %d replicas (%s.replicas) be evicted at once: it protects nothing; lower it or set %s.pdb.enabled=false" .what (int $max) (int .replicas) .what .what) }}
{{- end }}
{{- if and .pdb.enabled (ge (int .replicas) 2) }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ .name }}
  labels:
    {{- include "prover.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
spec:
  maxUnavailable: {{ $max }}
  selector:
    matchLabels:
      {{- include "prover.selectorLabels" .root | nindent 6 }}
      app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}

{{/*
Non-empty when the planner reads API tokens from a directory: the operator's token (the
operator is on) and/or auth.tokensSecret, with authentication on.
*/}}
{{- define "prover.tokensDir" -}}
{{- if and ((.Values.auth).enabled) (or .Values.operator.enabled (.Values.auth).tokensSecret) -}}
true
{{- end -}}
{{- end }}

{{/*
The Secret the planner serves gRPC TLS from: planner.tls.secretName, or with a cert-manager
issuer and no name, <release>-planner-tls. Empty: plaintext.
*/}}
{{- define "prover.plannerTlsSecret" -}}
{{- $tls := .Values.planner.tls | default dict }}
{{- if $tls.secretName }}{{ $tls.secretName }}
{{- else if ($tls.certManager).issuerName }}{{ include "prover.fullname" . }}-planner-tls
{{- end }}
{{- end }}

{{/*
Checksum for the pods' checksum/credentials annotation: over what decides the chart's Secret
(the credentials values, the external Redis URL, which bundled servers run), not over the
rendered Secret. On a first install the generated credentials differ between renderings (each
rendering of secret.yaml draws new random values, as no Secret exists yet to read back), so a
checksum of the rendered Secret changed at the first `helm upgrade` and rolled every pod for
nothing. Generated credentials never change after install (read back on upgrade); given ones
are in the values, so changing them still rolls the pods.
*/}}
{{- define "prover.credentialsChecksum" -}}
{{- dict "credentials" .Values.credentials "externalRedis" .Values.externalRedis "redisBundled" (include "prover.redisBundled" .) "scopedS3" (include "prover.scopedS3" .) | toJson | sha256sum -}}
{{- end }}

{{/*
A NetworkPolicy peer (one list item): the release's pods of the given components. Call with
(dict "root" $ "components" LIST).
*/}}
{{- define "prover.componentPeer" -}}
- podSelector:
    matchLabels:
      {{- include "prover.selectorLabels" .root | nindent 6 }}
    matchExpressions:
      - key: app.kubernetes.io/component
        operator: In
        values: {{ toJson .components }}
{{- end }}

{{/*
The components of the worker pools (worker-<pool>), as JSON (a list).
*/}}
{{- define "prover.workerComponents" -}}
{{- $c := list }}
{{- range .Values.workerPools }}
{{- $c = append $c (printf "worker-%s" .name) }}
{{- end }}
{{- toJson $c }}
{{- end }}

{{/*
The TCP port of a URL: the one it names, else 443 for https, 80 for http, else the default.
Call with (dict "url" URL "default" PORT).
*/}}
{{- define "prover.urlPort" -}}
{{- $u := urlParse .url }}
{{- if regexMatch ":[0-9]+$" $u.host }}{{ regexFind "[0-9]+$" $u.host }}
{{- else if eq $u.scheme "https" }}443
{{- else if eq $u.scheme "http" }}80
{{- else }}{{ .default }}
{{- end }}
{{- end }}

{{/*
NetworkPolicy egress rules (list items) of a prover pod to a backend it must reach: "redis",
"s3" or "tracing". The bundled Redis and MinIO by their pods; an external one by the peers of
networkPolicy.externalRedis / externalS3 / tracing, which must then be given (rendering fails
otherwise: an egress policy cannot name a host, and allowing every address would let a
compromised worker reach the internet and the cloud metadata endpoint). Ports: the values', or
the URL's. Call with (dict "root" $ "backend" NAME).
*/}}
{{- define "prover.backendEgress" -}}
{{- $root := .root }}
{{- $np := $root.Values.networkPolicy }}
{{- if and (eq .backend "redis") (include "prover.redisBundled" $root) }}
- to:
    {{- include "prover.componentPeer" (dict "root" $root "components" (list "redis")) | nindent 4 }}
  ports:
    - port: 6379
      protocol: TCP
{{- else if and (eq .backend "s3") (include "prover.minioBundled" $root) }}
- to:
    {{- include "prover.componentPeer" (dict "root" $root "components" (list "minio")) | nindent 4 }}
  ports:
    - port: 9000
      protocol: TCP
{{- else }}
{{- $key := get (dict "redis" "externalRedis" "s3" "externalS3" "tracing" "tracing") .backend }}
{{- $redisAt := $root.Values.externalRedis.url | empty | ternary "externalRedis.urlFromSecret" (printf "externalRedis.url at %s" (urlParse ($root.Values.externalRedis.url | default "redis://x")).host) }}
{{- $what := get (dict "redis" (printf "the external Redis (%s)" $redisAt) "s3" (printf "the external S3 (externalS3.endpoint=%s)" $root.Values.externalS3.endpoint) "tracing" (printf "the trace collector (tracing.otlpEndpoint=%s)" ($root.Values.tracing).otlpEndpoint)) .backend }}
{{- $url := get (dict "redis" ($root.Values.externalRedis.url | default "redis://unknown") "s3" $root.Values.externalS3.endpoint "tracing" ($root.Values.tracing).otlpEndpoint) .backend }}
{{- $peers := (get $np $key | default dict).to }}
{{- if not $peers }}
{{- fail (printf "networkPolicy.enabled with %s needs networkPolicy.%s.to: the NetworkPolicy peers (ipBlocks, or namespace/pod selectors) the pods may reach it at, e.g. [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: data}}}] or [{ipBlock: {cidr: 10.0.0.0/8}}] ([{ipBlock: {cidr: 0.0.0.0/0, except: [169.254.169.254/32]}}] allows any address but the cloud metadata endpoint); or set networkPolicy.enabled=false" $what $key) }}
{{- end }}
{{- $ports := (get $np $key | default dict).ports }}
{{- if not $ports }}
{{- $ports = list (include "prover.urlPort" (dict "url" $url "default" 6379) | int) }}
{{- end }}
- to:
    {{- toYaml $peers | nindent 4 }}
  ports:
    {{- range $ports }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
{{- end }}
{{- end }}

{{/*
Seconds of a duration in `prover admin gc`'s syntax (a number, then s, m, h or d; a bare number
is seconds), which values.schema.json checks.
*/}}
{{- define "prover.durationSeconds" -}}
{{- $n := regexFind "^[0-9]+" . }}
{{- mul ($n | int64) (get (dict "" 1 "s" 1 "m" 60 "h" 3600 "d" 86400) (trimPrefix $n .)) }}
{{- end }}

{{/* The PriorityClass of the bundled Redis and MinIO ("" when none): values backendPriority. */}}
{{- define "prover.backendPriorityClass" -}}
{{- if .Values.backendPriority.create -}}
{{ include "prover.fullname" . }}-backend
{{- else -}}
{{ .Values.backendPriority.className }}
{{- end -}}
{{- end }}
