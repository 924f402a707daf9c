//! The compile queue: a compile never holds the thread that serves
//! requests, and a tenant past its share of the queue is refused while
//! another tenant's compile goes on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use toolhost_fixtures::HELLO;
use toolhost_limits::CallBudget;
use toolhost_runtime::{LoadError, Payer, Runtime, RuntimeConfig};

fn runtime(share: usize) -> Runtime {
    Runtime::new(RuntimeConfig {
        compile_workers: 1,
        compile_share: share,
        ..RuntimeConfig::default()
    })
    .expect("runtime")
}

fn tenant(name: &str) -> Payer {
    Payer::Tenant(name.into())
}

#[tokio::test]
async fn a_tenant_past_its_share_is_refused_while_another_tenants_compile_goes_on() {
    let rt = runtime(1);
    let bytes = HELLO.bytes();
    let load = |payer: Payer| {
        let (rt, bytes) = (&rt, &bytes);
        async move {
            rt.load_within(
                "hello".parse().expect("name"),
                bytes,
                &CallBudget::DEFAULT,
                &payer,
            )
            .await
        }
    };
    // Polled in order: the first takes tenant a's one place before the
    // second asks for one.
    let (first, second, other) =
        tokio::join!(load(tenant("a")), load(tenant("a")), load(tenant("b")));
    first.expect("tenant a's first compile runs");
    match second {
        Err(LoadError::Busy { share: 1, .. }) => {}
        Err(e) => panic!("expected busy, got {e}"),
        Ok(_) => panic!("tenant a's second compile was not refused"),
    }
    other.expect("tenant b compiles within its own share");
    load(tenant("a"))
        .await
        .expect("a place given back takes the next compile");
    load(Payer::Host).await.expect("the host is never refused");
}

#[tokio::test]
async fn a_compile_does_not_hold_the_thread_that_serves_requests() {
    // One thread serves everything here (tokio's current-thread runtime):
    // a compile on it would stop the ticker for as long as it takes.
    let rt = runtime(2);
    let bytes = HELLO.bytes();
    let done = Arc::new(AtomicBool::new(false));
    let ticker = tokio::spawn({
        let done = done.clone();
        async move {
            let (mut last, mut widest) = (Instant::now(), Duration::ZERO);
            while !done.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(1)).await;
                widest = widest.max(last.elapsed());
                last = Instant::now();
            }
            widest
        }
    });
    tokio::task::yield_now().await;
    let (_, report) = rt
        .load_within(
            "hello".parse().expect("name"),
            &bytes,
            &CallBudget::DEFAULT,
            &tenant("a"),
        )
        .await
        .expect("loads");
    done.store(true, Ordering::Relaxed);
    let widest = ticker.await.expect("the ticker ends");
    assert!(
        report.compile >= Duration::from_millis(20),
        "the compile took {:?}: too quick to tell",
        report.compile
    );
    assert!(
        widest < report.compile / 2,
        "the serving thread stood still for {widest:?} of a {:?} compile",
        report.compile
    );
}
