//! What the authorization server's integration tests share: a browser's
//! cookie jar.

use std::collections::BTreeMap;

/// The cookies a browser keeps for the site under test.
#[derive(Default)]
pub struct Jar(pub BTreeMap<String, String>);

impl Jar {
    /// The `Cookie` header to send.
    pub fn header(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Keeps each cookie `resp` sets (name and value; attributes dropped).
    pub fn keep(&mut self, resp: &reqwest::Response) {
        for v in resp.headers().get_all("set-cookie") {
            if let Some((k, v)) = v
                .to_str()
                .ok()
                .and_then(|c| c.split(';').next())
                .and_then(|c| c.split_once('='))
            {
                self.0.insert(k.into(), v.into());
            }
        }
    }

    /// Forgets every cookie (a browser whose session ended).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}
