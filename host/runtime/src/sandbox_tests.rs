//! Sandbox mechanics with inline WAT components: no guest toolchain needed.
//! Each test runs a component exporting `run: func()` in a store built by
//! the same `new_store` and judged by the same `classify` as plugin calls.

use std::time::Duration;

use toolhost_limits::{ByteSize, CallBudget};
use wasmtime::component::Component;

use super::*;

fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig {
        slots: 4,
        ..RuntimeConfig::default()
    })
    .expect("runtime builds")
}

fn budget() -> CallBudget {
    CallBudget {
        timeout: Duration::from_millis(200),
        ..CallBudget::DEFAULT
    }
}

/// A component whose `run` export is the core function `body` of a module
/// with one page of memory and a one-element table.
fn component(body: &str) -> String {
    format!(
        r#"(component
             (core module $m
               (memory 1)
               (table 1 funcref)
               (func $run (export "run") {body}))
             (core instance $i (instantiate $m))
             (func (export "run") (canon lift (core func $i "run"))))"#
    )
}

async fn run_wat(rt: &Runtime, wat: &str, budget: &CallBudget) -> Result<(), CallError> {
    let bytes = wat::parse_str(wat).expect("valid WAT");
    let component = Component::new(&rt.engine, &bytes).expect("the component compiles");
    let ctx = CallContext::new("tenant-a", "alice");
    let mut store = rt.new_store("wat", &ctx, "test-call", budget, false);
    let run = async {
        let instance = rt.linker.instantiate_async(&mut store, &component).await?;
        let f = instance.get_typed_func::<(), ()>(&mut store, "run")?;
        f.call_async(&mut store, ()).await
    };
    let outcome = match tokio::time::timeout(budget.timeout + WALL_GRACE, run).await {
        Ok(r) => r,
        Err(_) => {
            return Err(CallError::Timeout {
                limit: budget.timeout,
            });
        }
    };
    outcome.map_err(|e| classify(&e, store.data(), budget, "test-call"))
}

#[tokio::test]
async fn a_component_that_returns_runs_cleanly() {
    let rt = runtime();
    assert_eq!(run_wat(&rt, &component("nop"), &budget()).await, Ok(()));
}

#[tokio::test]
async fn an_infinite_loop_times_out_at_the_deadline_and_the_host_keeps_serving() {
    let rt = runtime();
    let started = Instant::now();
    let r = run_wat(&rt, &component("(loop $l (br $l))"), &budget()).await;
    assert_eq!(
        r,
        Err(CallError::Timeout {
            limit: Duration::from_millis(200)
        })
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(run_wat(&rt, &component("nop"), &budget()).await, Ok(()));
}

#[tokio::test]
async fn growing_memory_past_the_budget_is_a_memory_limit() {
    let rt = runtime();
    let b = CallBudget {
        memory: ByteSize::mib(1),
        ..budget()
    };
    // 32 pages = 2 MiB: refused; the guest then dies as a Rust guest would.
    let grow = "(if (i32.eq (memory.grow (i32.const 32)) (i32.const -1)) (then unreachable))";
    assert_eq!(
        run_wat(&rt, &component(grow), &b).await,
        Err(CallError::MemoryLimit {
            limit: ByteSize::mib(1)
        })
    );
    // Within the budget, growing is fine.
    let small = "(if (i32.eq (memory.grow (i32.const 4)) (i32.const -1)) (then unreachable))";
    assert_eq!(run_wat(&rt, &component(small), &b).await, Ok(()));
}

#[tokio::test]
async fn an_initial_memory_above_the_budget_fails_instantiation_as_a_memory_limit() {
    let rt = runtime();
    let b = CallBudget {
        memory: ByteSize::mib(1),
        ..budget()
    };
    let wat = component("nop").replace("(memory 1)", "(memory 100)");
    assert_eq!(
        run_wat(&rt, &wat, &b).await,
        Err(CallError::MemoryLimit {
            limit: ByteSize::mib(1)
        })
    );
}

#[tokio::test]
async fn unreachable_is_a_trap_with_its_kind() {
    let rt = runtime();
    match run_wat(&rt, &component("unreachable"), &budget()).await {
        Err(CallError::Trapped { detail }) => assert!(detail.contains("unreachable"), "{detail}"),
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[tokio::test]
async fn unbounded_recursion_is_a_stack_overflow() {
    let rt = runtime();
    assert_eq!(
        run_wat(&rt, &component("(call $run)"), &budget()).await,
        Err(CallError::StackOverflow)
    );
}

#[tokio::test]
async fn growing_a_table_past_the_budget_is_a_resource_limit() {
    let rt = runtime();
    let b = CallBudget {
        table_elements: 100,
        ..budget()
    };
    let grow = "(if (i32.eq (table.grow (ref.null func) (i32.const 1000)) (i32.const -1)) (then unreachable))";
    match run_wat(&rt, &component(grow), &b).await {
        Err(CallError::ResourceLimit { detail }) => assert!(detail.contains("table"), "{detail}"),
        other => panic!("expected a resource limit, got {other:?}"),
    }
}

#[tokio::test]
async fn more_core_instances_than_the_budget_fail_as_a_resource_limit() {
    let rt = runtime();
    let b = CallBudget {
        instances: 2,
        ..budget()
    };
    let wat = r#"(component
        (core module $m)
        (core instance (instantiate $m))
        (core instance (instantiate $m))
        (core instance (instantiate $m))
        (core module $r (func (export "run")))
        (core instance $i (instantiate $r))
        (func (export "run") (canon lift (core func $i "run"))))"#;
    match run_wat(&rt, wat, &b).await {
        Err(CallError::ResourceLimit { detail }) => {
            assert!(detail.contains("instance"), "{detail}")
        }
        other => panic!("expected a resource limit, got {other:?}"),
    }
}

#[tokio::test]
async fn a_dropped_call_releases_its_slot_and_the_next_call_runs() {
    let rt = Runtime::new(RuntimeConfig {
        slots: 1,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let long = CallBudget {
        timeout: Duration::from_secs(30),
        ..budget()
    };
    let spin = component("(loop $l (br $l))");
    // The caller gives up after 50 ms: dropping the future interrupts the guest.
    let r = tokio::time::timeout(Duration::from_millis(50), run_wat(&rt, &spin, &long)).await;
    assert!(r.is_err(), "the spin cannot have finished");
    let bytes = wat::parse_str(component("nop")).expect("valid");
    let component = Component::new(&rt.engine, &bytes).expect("compiles");
    let _slot = tokio::time::timeout(Duration::from_secs(1), rt.slots.acquire())
        .await
        .expect("the slot is free again")
        .expect("the semaphore is open");
    drop(component);
}

#[tokio::test]
async fn a_component_importing_an_ungranted_interface_is_refused_at_load_by_name() {
    let rt = runtime();
    let wat = r#"(component
        (import "wasi:http/outgoing-handler@0.2.0" (instance (export "handle" (func))))
        (core module $m (func (export "run")))
        (core instance $i (instantiate $m))
        (func (export "run") (canon lift (core func $i "run"))))"#;
    let bytes = wat::parse_str(wat).expect("valid WAT");
    let err = rt
        .load("ungranted".parse().expect("name"), &bytes)
        .await
        .err()
        .expect("refused");
    let text = err.to_string();
    assert!(matches!(err, LoadError::Imports { .. }), "{text}");
    assert!(text.contains("wasi:http/outgoing-handler"), "{text}");
}

#[tokio::test]
async fn a_component_without_the_tool_export_is_refused_at_load() {
    let rt = runtime();
    let bytes = wat::parse_str(component("nop")).expect("valid WAT");
    let err = rt
        .load("no-export".parse().expect("name"), &bytes)
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, LoadError::Exports { .. }), "{err}");
}

/// The optional exports' indices from a component built by `wat`.
fn optional_exports(rt: &Runtime, wat: &str) -> Result<(bool, bool), LoadError> {
    let bytes = wat::parse_str(wat).expect("valid WAT");
    let component = Component::new(&rt.engine, &bytes).expect("the component compiles");
    let pre = rt.linker.instantiate_pre(&component).expect("links");
    use crate::authoring::AUTHORING_EXPORT;
    use crate::bindings::exports::toolhost::plugin::authoring as wit_authoring;
    use crate::contract::{ENTITIES_EXPORT, optional};
    let entities = optional(
        &pre,
        "old",
        ENTITIES_EXPORT,
        wit_entities::GuestIndices::new,
    )?;
    let authoring = optional(
        &pre,
        "old",
        AUTHORING_EXPORT,
        wit_authoring::GuestIndices::new,
    )?;
    Ok((entities.is_some(), authoring.is_some()))
}

#[tokio::test]
async fn a_component_of_an_older_world_has_neither_optional_export_and_loads_their_absence() {
    let rt = runtime();
    let got = optional_exports(&rt, &component("nop")).expect("absent exports are no error");
    assert_eq!(got, (false, false));
}

#[tokio::test]
async fn an_authoring_export_without_the_contracts_functions_is_refused_at_load() {
    let rt = runtime();
    let wat = r#"(component
        (instance $empty)
        (export "toolhost:plugin/authoring@0.2.0" (instance $empty)))"#;
    match optional_exports(&rt, wat) {
        Err(LoadError::Exports { plugin, detail }) => {
            assert_eq!(plugin, "old");
            assert!(
                detail.contains("kinds") || detail.contains("authoring"),
                "{detail}"
            );
        }
        other => panic!("expected an exports error, got {other:?}"),
    }
}

/// A `run` that traps if any page of its 3 MiB memory is not zero, then
/// writes to every page: a second run sees what an earlier one left.
fn writes_every_page() -> String {
    let body = r#"(local $a i32)
        (block $done
          (loop $page
            (br_if $done (i32.ge_u (local.get $a) (i32.const 3145728)))
            (if (i32.load (local.get $a)) (then unreachable))
            (i32.store (local.get $a) (i32.const 0x5ec2e7))
            (local.set $a (i32.add (local.get $a) (i32.const 4096)))
            (br $page)))"#;
    // 48 pages: beyond the 1 MiB kept resident, so both halves of a reset
    // (reset in place, handed back to the OS) are crossed.
    component(body).replace("(memory 1)", "(memory 48)")
}

/// Runs `run` `times` in one instance, in a store of its own.
async fn instance_runs(rt: &Runtime, component: &Component, times: usize) -> Result<(), String> {
    let ctx = CallContext::new("tenant-a", "alice");
    let mut store = rt.new_store("wat", &ctx, "test-call", &budget(), false);
    let instance = rt
        .linker
        .instantiate_async(&mut store, component)
        .await
        .map_err(|e| e.to_string())?;
    let run = instance
        .get_typed_func::<(), ()>(&mut store, "run")
        .map_err(|e| e.to_string())?;
    for _ in 0..times {
        run.call_async(&mut store, ())
            .await
            .map_err(|e| format!("{e:?}"))?;
    }
    Ok(())
}

/// A runtime with one slot: every instance takes the slot the last one left.
fn one_slot() -> Runtime {
    Runtime::new(RuntimeConfig {
        slots: 1,
        ..RuntimeConfig::default()
    })
    .expect("runtime builds")
}

#[tokio::test]
async fn the_next_caller_in_the_slot_reads_zeros() {
    let rt = one_slot();
    let bytes = wat::parse_str(writes_every_page()).expect("valid WAT");
    let component = Component::new(&rt.engine, &bytes).expect("compiles");
    // The check sees what a run left: a second run in the same instance traps.
    let again = instance_runs(&rt, &component, 2).await;
    assert!(again.is_err_and(|e| e.contains("unreachable")));
    // One slot, the same component: each new instance takes the slot the
    // last one left, reset, and finds every page zero.
    for caller in 0..3 {
        let fresh = instance_runs(&rt, &component, 1).await;
        assert_eq!(fresh, Ok(()), "caller {caller}");
    }
}
