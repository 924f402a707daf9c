//! `toolhost:plugin/notify`: a tool call tells subscribed clients that a
//! resource its plugin exports changed. The runtime bounds the telling
//! (side-effect-free calls may not, each URI once, [`MAX_RESOURCE_UPDATES`]
//! per call, the host-call budget); whoever built the call's context
//! decides whether the URI is the plugin's and who hears of it.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use super::HostCallMeter;
use crate::bindings::toolhost::plugin::notify::Host;
use crate::resources::MAX_URI_LEN;

/// Most distinct URIs one call may tell of.
pub const MAX_RESOURCE_UPDATES: usize = 16;

/// Checks one URI and hands it on, or says why not.
type Tell = dyn Fn(&str) -> Result<(), String> + Send + Sync;

/// Where a call's resource updates go: checks the URI and hands it on, or
/// says why not (the reason the plugin reads).
#[derive(Clone)]
pub struct UpdateSink(Arc<Tell>);

impl UpdateSink {
    /// A sink calling `f` for each URI, from the call's thread: `f` must
    /// not block (hand the update to a channel).
    pub fn new(f: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }
}

impl fmt::Debug for UpdateSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UpdateSink")
    }
}

/// The notify capability of one call.
pub(crate) struct NotifyCapability {
    sink: Option<UpdateSink>,
    meter: HostCallMeter,
    /// The call may not have side effects (a plan, a read, a listing).
    quiet: bool,
    told: BTreeSet<String>,
}

impl NotifyCapability {
    pub(crate) fn new(sink: Option<UpdateSink>, meter: HostCallMeter, quiet: bool) -> Self {
        Self {
            sink,
            meter,
            quiet,
            told: BTreeSet::new(),
        }
    }

    fn tell(&mut self, uri: String) -> Result<(), String> {
        if self.quiet {
            return Err("a call without side effects has no change to tell of".into());
        }
        let Some(sink) = &self.sink else {
            return Err("resource updates are told only from a tool call".into());
        };
        if uri.is_empty() || uri.len() > MAX_URI_LEN {
            return Err(format!("a URI is 1 to {MAX_URI_LEN} bytes"));
        }
        if self.told.contains(&uri) {
            return Ok(());
        }
        if self.told.len() >= MAX_RESOURCE_UPDATES {
            return Err(format!(
                "a call tells of at most {MAX_RESOURCE_UPDATES} resources"
            ));
        }
        (sink.0)(&uri)?;
        self.told.insert(uri);
        Ok(())
    }
}

impl Host for NotifyCapability {
    fn resource_updated(&mut self, uri: String) -> wasmtime::Result<Result<(), String>> {
        self.meter.charge()?;
        Ok(self.tell(uri))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn capture(quiet: bool) -> (NotifyCapability, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            UpdateSink::new(move |uri| {
                if uri.starts_with("other://") {
                    return Err(format!("{uri} is not this plugin's"));
                }
                seen.lock().expect("lock").push(uri.to_owned());
                Ok(())
            })
        };
        let cap = NotifyCapability::new(Some(sink), HostCallMeter::new(100), quiet);
        (cap, seen)
    }

    #[test]
    fn each_uri_is_told_once_and_the_sinks_refusal_reaches_the_plugin() {
        let (mut n, seen) = capture(false);
        assert_eq!(
            n.resource_updated("test://a".into()).expect("budget"),
            Ok(())
        );
        assert_eq!(
            n.resource_updated("test://a".into()).expect("budget"),
            Ok(())
        );
        let refused = n.resource_updated("other://b".into()).expect("budget");
        assert_eq!(refused, Err("other://b is not this plugin's".into()));
        assert_eq!(*seen.lock().expect("lock"), ["test://a"]);
    }

    #[test]
    fn a_call_tells_of_a_bounded_number_of_uris() {
        let (mut n, seen) = capture(false);
        for i in 0..MAX_RESOURCE_UPDATES {
            assert_eq!(n.tell(format!("test://{i}")), Ok(()));
        }
        let over = n.tell("test://one-more".into());
        assert!(over.is_err_and(|e| e.contains("at most 16")));
        assert_eq!(seen.lock().expect("lock").len(), MAX_RESOURCE_UPDATES);
    }

    #[test]
    fn quiet_calls_sinkless_calls_and_bad_uris_are_refused() {
        let (mut quiet, seen) = capture(true);
        assert!(quiet.tell("test://a".into()).is_err());
        let (mut n, _) = capture(false);
        assert!(n.tell(String::new()).is_err());
        assert!(n.tell("x".repeat(MAX_URI_LEN + 1)).is_err());
        let mut none = NotifyCapability::new(None, HostCallMeter::new(10), false);
        assert!(
            none.tell("test://a".into())
                .is_err_and(|e| e.contains("tool call"))
        );
        assert!(seen.lock().expect("lock").is_empty());
    }

    #[test]
    fn each_telling_is_a_host_call() {
        let mut n = NotifyCapability::new(None, HostCallMeter::new(1), false);
        assert!(n.resource_updated("test://a".into()).is_ok());
        assert!(n.resource_updated("test://a".into()).is_err());
    }
}
