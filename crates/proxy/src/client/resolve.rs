//! Name resolution for the network tier, behind a trait so tests can map
//! names like `evil.test` to loopback without touching the system resolver.
//!
//! The guarded client resolves each name once, checks every address it got,
//! and connects only to those addresses: there is no second lookup a DNS
//! rebinding server could answer differently.

use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;

/// A boxed future, as the trait object needs.
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Turns a host name into addresses.
pub trait Resolve: Send + Sync {
    /// Every address `host` resolves to; an empty list is an error for the
    /// caller to report.
    fn resolve<'a>(&'a self, host: &'a str) -> ResolveFuture<'a>;
}

/// The operating system's resolver (getaddrinfo, on tokio's blocking pool).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> ResolveFuture<'a> {
        Box::pin(async move {
            // The port is irrelevant: the client connects to the URL's port.
            let addrs = tokio::net::lookup_host((host, 0)).await?;
            let mut ips: Vec<IpAddr> = Vec::new();
            for a in addrs {
                if !ips.contains(&a.ip()) {
                    ips.push(a.ip());
                }
            }
            Ok(ips)
        })
    }
}

/// A fixed table of names, for tests: anything not in it does not resolve.
#[cfg(test)]
#[derive(Clone, Debug, Default)]
pub struct StaticResolver {
    names: std::collections::HashMap<String, Vec<IpAddr>>,
}

#[cfg(test)]
impl StaticResolver {
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps `name` (case-insensitive) to `addrs`.
    pub fn with(mut self, name: &str, addrs: &[IpAddr]) -> Self {
        self.names.insert(name.to_ascii_lowercase(), addrs.to_vec());
        self
    }
}

#[cfg(test)]
impl Resolve for StaticResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> ResolveFuture<'a> {
        let found = self.names.get(&host.to_ascii_lowercase()).cloned();
        Box::pin(async move {
            found.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host} is not in the test resolver"),
                )
            })
        })
    }
}
