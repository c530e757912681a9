//! Traces: OpenTelemetry spans exported over OTLP/gRPC, off unless an endpoint is set.
//!
//! One trace per job. Submitting a job opens its root span (`job`); the plan task's message
//! carries that span's context as a W3C `traceparent` ([`queue::TaskMessage::trace`]), and every
//! message a task sends (the tasks it dispatches, its report to the executor) carries the
//! context of the task's own span. A task's span (`task`, in [`crate::roles`]) adopts the
//! context of its message, so the spans of a job on the planner, the executor, the workers and
//! the aggregator form one tree however many processes ran them. The JSON logs of a task carry
//! the span's `trace_id`.
//!
//! Without an endpoint no span is exported and no message carries a context: the functions
//! here then cost a field lookup.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Keeps the exporter alive; dropping it flushes the spans not yet sent (with a bounded wait).
/// Drop it inside, or while still holding, the tokio runtime it was made in.
pub struct Telemetry {
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Telemetry {
    /// No export.
    pub fn off() -> Self {
        Self { provider: None }
    }

    /// True when spans are exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(p) = self.provider.take() {
            if let Err(e) = p.shutdown() {
                eprintln!("traces: flushing the last spans failed: {e}");
            }
        }
    }
}

/// Where and as whom spans are exported.
pub struct TraceTarget<'a> {
    /// The collector's OTLP/gRPC endpoint (`http://collector:4317`); `None`: no export.
    pub endpoint: Option<&'a str>,
    /// `service.name`, unless `OTEL_SERVICE_NAME` names another.
    pub service: &'a str,
    /// `service.instance.id`: this process's name (as in leases and logs).
    pub instance: &'a str,
}

/// Builds the OTLP exporter for `target` (none without an endpoint). Must run inside a tokio
/// runtime (the gRPC client lives on it). The tracing layer comes from [`layer`].
pub fn exporter(target: &TraceTarget<'_>) -> Result<Telemetry, String> {
    let Some(endpoint) = target.endpoint.map(str::trim).filter(|e| !e.is_empty()) else {
        return Ok(Telemetry::off());
    };
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(format!("--otlp-endpoint {endpoint:?}: give an http:// or https:// URL (OTLP over gRPC, usually port 4317)"));
    }
    use opentelemetry_otlp::WithExportConfig;
    let span_exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| format!("--otlp-endpoint {endpoint:?}: {e}"))?;
    let mut resource = opentelemetry_sdk::Resource::builder()
        .with_attribute(opentelemetry::KeyValue::new("service.instance.id", target.instance.to_string()));
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(target.service.to_string());
    }
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(span_exporter)
        .with_resource(resource.build())
        .build();
    Ok(Telemetry { provider: Some(provider) })
}

/// The tracing layer that turns spans into OpenTelemetry spans of `t`'s provider, if any.
pub fn layer<S>(t: &Telemetry) -> Option<impl tracing_subscriber::Layer<S>>
where
    S: tracing::Subscriber + for<'s> tracing_subscriber::registry::LookupSpan<'s>,
{
    let provider = t.provider.as_ref()?;
    Some(tracing_opentelemetry::layer().with_tracer(provider.tracer("prover")))
}

/// The W3C `traceparent` of the current span, when it is being traced.
pub fn current() -> Option<String> {
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    carrier.remove("traceparent")
}

/// Makes `span` a child of the context in `traceparent` (a task message's), and records its
/// trace id in the span's `trace_id` field (declared empty by the caller) for the logs. A
/// missing or malformed context leaves `span` where it is.
pub fn adopt(span: &tracing::Span, traceparent: Option<&str>) {
    if let Some(tp) = traceparent {
        let carrier = HashMap::from([("traceparent".to_string(), tp.to_string())]);
        let cx = TraceContextPropagator::new().extract(&carrier);
        if cx.span().span_context().is_valid() {
            let _ = span.set_parent(cx);
        }
    }
    record_trace_id(span);
}

/// Records `span`'s trace id in its `trace_id` field, when it is being traced.
pub fn record_trace_id(span: &tracing::Span) {
    let sc = span.context().span().span_context().clone();
    if sc.is_valid() {
        span.record("trace_id", tracing::field::display(sc.trace_id()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    /// With a real (in-memory) provider: a context travels through a traceparent string, the
    /// adopting span is its child, and garbage is ignored.
    #[test]
    fn a_context_travels_through_a_traceparent() {
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("t")));
        tracing::subscriber::with_default(subscriber, || {
            assert_eq!(current(), None, "no span, no context");
            let job = tracing::info_span!("job", trace_id = tracing::field::Empty);
            let tp = job.in_scope(current).expect("a traced span has a context");
            let parts: Vec<&str> = tp.split('-').collect();
            assert_eq!(parts.len(), 4, "{tp}");
            let job_trace = job.context().span().span_context().trace_id();
            assert_eq!(parts[1], job_trace.to_string());

            let task = tracing::info_span!(parent: None, "task", trace_id = tracing::field::Empty);
            adopt(&task, Some(&tp));
            assert_eq!(task.context().span().span_context().trace_id(), job_trace, "the task joins the job's trace");

            let stray = tracing::info_span!(parent: None, "task", trace_id = tracing::field::Empty);
            adopt(&stray, Some("00-not-a-context"));
            assert_ne!(stray.context().span().span_context().trace_id(), job_trace, "garbage starts its own trace");
        });
    }
}
