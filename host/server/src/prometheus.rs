//! The host's Prometheus metrics: the recorder, its upkeep, and the
//! optional listener that serves them apart from the API.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::background::Background;

/// Latency buckets (seconds): sandbox calls take tens of microseconds,
/// tools that wait on backends take seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 10.0,
];

/// How often the metrics recorder folds histogram samples into their
/// buckets. It keeps every sample until then (or until a scrape), so a host
/// nobody scrapes would grow by each call's samples (`bench footprint`
/// found it: about 2 MiB per 100,000 calls).
const METRICS_UPKEEP: Duration = Duration::from_secs(5);

/// Installs the recorder, with its upkeep among `background`'s tasks.
pub(crate) fn install(background: &mut Background) -> anyhow::Result<PrometheusHandle> {
    let metrics = PrometheusBuilder::new()
        .set_buckets(&LATENCY_BUCKETS)?
        .install_recorder()?;
    background.spawn(upkeep_every(metrics.clone(), METRICS_UPKEEP));
    Ok(metrics)
}

/// Serves `app` (metrics) on `at`, among `background`'s tasks: the address
/// bound.
pub(crate) async fn serve(
    at: SocketAddr,
    app: axum::Router,
    background: &mut Background,
) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(at)
        .await
        .with_context(|| format!("listening for metrics on {at}"))?;
    let bound = listener.local_addr()?;
    background.spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "serving metrics failed");
        }
    });
    Ok(bound)
}

/// Folds the metrics recorder's samples into their buckets every `period`.
async fn upkeep_every(metrics: PrometheusHandle, period: Duration) {
    let mut tick = tokio::time::interval(period);
    loop {
        tick.tick().await;
        metrics.run_upkeep();
    }
}
