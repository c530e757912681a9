# An OpenTelemetry Collector for the trace test (PROVER_TEST_OTELCOL; platform_e2e's
# traces_of_a_job_reach_an_otlp_collector), built from the Go module proxy by
# scripts/otelcol.sh (about a minute the first time, cached after).
export PROVER_TEST_OTELCOL="$(bash scripts/otelcol.sh)"
echo "OpenTelemetry Collector: $PROVER_TEST_OTELCOL"
