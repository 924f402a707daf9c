//! What `fuzz/targets` drives and the public API does not offer: the path
//! builder behind [`Backends::send`](crate::Backends::send), without the
//! HTTP client around it. Hidden from the docs and not an API: nothing but
//! the fuzz targets uses it.

use url::Url;

/// The URL a plugin's `path` leads to under the backend base `base`,
/// built exactly as for a request: the base is checked as configuration
/// is, then the path joined. The error is the rule broken.
pub fn join(base: &Url, path: &str) -> Result<Url, String> {
    crate::path::Base::new(base)
        .map_err(str::to_owned)?
        .join(path)
}
