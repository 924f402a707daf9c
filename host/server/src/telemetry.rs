//! Logs, and traces over OpenTelemetry.
//!
//! Logs go to stderr as today (text or JSON lines, credentials redacted).
//! With `--otlp-endpoint` the host's own spans are also exported over OTLP
//! (HTTP, JSON) to that collector: per request `http.request` (every
//! request: MCP with its `mcp.method`, OAuth, the console; continuing a
//! W3C `traceparent` it carries), within a tool call `auth`, `tools/call`,
//! `policy`, `plan`, `sandbox` and `audit`, and `run.attempt` per attempt
//! of an exploration run. `--otlp-sample-ratio` keeps that share of the
//! traces a client did not decide (a `traceparent` it sent is followed).
//! Without an exporter the spans at `info` are not even made; `tools/call`
//! is at `warn`, so that every line logged within a call names its call id
//! at the default log level.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracerProvider,
};
use tracing::Instrument;
use tracing::Level;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterExt, Targets, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::log_redact;

/// Whether spans are exported (set once, by [`init`]).
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether [`init`] installed an exporter: only then is a request given
/// its span (`serve` layers [`request_span`] on this).
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// How long spans wait to be sent in a batch.
const EXPORT_DELAY: Duration = Duration::from_millis(500);

/// The installed exporter, flushed when dropped (at exit).
pub struct Telemetry(Option<SdkTracerProvider>);

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.0.take()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("toolhost: flushing traces: {e}");
        }
    }
}

/// `--otlp-sample-ratio`: a number from 0 to 1.
pub fn sample_ratio(text: &str) -> Result<f64, String> {
    let ratio: f64 = text.parse().map_err(|e| format!("not a number: {e}"))?;
    if !(0.0..=1.0).contains(&ratio) {
        return Err(format!("{ratio} is not between 0 and 1"));
    }
    Ok(ratio)
}

/// Installs the log output and, with `otlp`, the trace exporter keeping
/// `ratio` of the traces no client decided.
pub fn init(json: bool, directives: Option<&str>, otlp: Option<&str>, ratio: f64) -> Telemetry {
    let filter = match directives {
        Some(d) => tracing_subscriber::EnvFilter::new(d),
        None => tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
    };
    let text = (!json)
        .then(|| tracing_subscriber::fmt::layer().with_writer(log_redact::RedactedLine::default));
    let lines = json.then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .with_writer(log_redact::RedactedLine::default)
    });
    let logs = text
        .map(|l| l.boxed())
        .or(lines.map(|l| l.boxed()))
        .map(|l| l.with_filter(filter));
    let (provider, traces) = match otlp.map(|endpoint| exporter(endpoint, ratio)) {
        Some(Ok(provider)) => {
            let tracer = provider.tracer("toolhost");
            // The host's own spans only. `Targets` decides per callsite,
            // once, and both filters tell the level they need: without the
            // hint, the `log` records of other crates (Cranelift's `trace!`
            // while it compiles a component) would all be made and offered,
            // making compilation several times slower.
            let ours = Targets::new().with_target("toolhost", Level::INFO);
            let spans = filter_fn(|m| m.is_span()).with_max_level_hint(Level::INFO);
            let layer = tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(ours.and(spans));
            EXPORTING.store(true, Ordering::Relaxed);
            (Some(provider), Some(layer))
        }
        Some(Err(e)) => {
            eprintln!("toolhost: traces are not exported: {e}");
            (None, None)
        }
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(logs)
        .with(traces)
        .init();
    Telemetry(provider)
}

/// The OTLP/HTTP JSON exporter to `endpoint` (`…/v1/traces` added to a
/// bare collector URL), batched on its own thread, sampling `ratio` of the
/// root traces.
fn exporter(endpoint: &str, ratio: f64) -> Result<SdkTracerProvider, String> {
    let endpoint = endpoint.trim_end_matches('/');
    let url = if endpoint.ends_with("/v1/traces") {
        endpoint.to_owned()
    } else {
        format!("{endpoint}/v1/traces")
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(url)
        .build()
        .map_err(|e| e.to_string())?;
    let batch = BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_scheduled_delay(EXPORT_DELAY)
                .build(),
        )
        .build();
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("toolhost")
        .with_attribute(opentelemetry::KeyValue::new(
            "service.instance.id",
            crate::replica::replica_id(),
        ))
        .build();
    let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)));
    Ok(SdkTracerProvider::builder()
        .with_span_processor(batch)
        .with_sampler(sampler)
        .with_resource(resource)
        .build())
}

/// The headers of a request, read by the W3C trace-context propagator.
struct Headers<'a>(&'a axum::http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// The request's span, `http.request`: a child of the `traceparent` it
/// carries, if any. Put in the request's extensions, so the MCP handler
/// (which rmcp may run on another task) continues it.
pub async fn request_span(mut req: Request, next: Next) -> Response {
    let method = req
        .headers()
        .get("mcp-method")
        .and_then(|v| v.to_str().ok());
    let span = tracing::info_span!(
        "http.request",
        http.request.method = %req.method(),
        url.path = %req.uri().path(),
        mcp.method = method.map(|m| m.chars().take(128).collect::<String>()),
        http.response.status_code = tracing::field::Empty,
    );
    if !span.is_disabled() {
        let parent = TraceContextPropagator::new().extract(&Headers(req.headers()));
        let _ = span.set_parent(parent);
        req.extensions_mut().insert(span.clone());
    }
    let response = next.run(req).instrument(span.clone()).await;
    span.record("http.response.status_code", response.status().as_u16());
    response
}
