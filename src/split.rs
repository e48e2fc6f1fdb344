//! Split points: functions whose bodies become separate wasm chunks in
//! a build with the `split` feature (the release build, through `cargo
//! xtask precache`'s split step), fetched the first time they are called
//! and precached by the service worker after the first render. Without
//! the feature (tests, clippy) the same functions run in place, so both
//! builds go through one path. This module uses nothing else of the
//! app, so any module may declare a split point.

/// What a call says when the code it needs did not arrive: `what` names
/// that code for a person ("web pages", "MCP servers").
pub fn not_loaded(what: &str) -> String {
    format!(
        "Hearth could not load its code for {what} (the network and the offline copy both failed). Check the connection, then try again."
    )
}

/// Loads a split point that hands back a future (`entering`, the call of
/// the split function), then runs that future; when the chunk did not
/// arrive, the result is `failed()`.
pub async fn enter<T, E>(
    entering: impl std::future::Future<
        Output = Result<futures::future::LocalBoxFuture<'static, Result<T, E>>, LoadError>,
    >,
    failed: impl FnOnce() -> E,
) -> Result<T, E> {
    match entering.await {
        Ok(running) => running.await,
        Err(LoadError) => Err(failed()),
    }
}

/// A split point whose code did not arrive (the network and the
/// service worker's cache both failed). Loading again starts afresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadError;

#[cfg(feature = "split")]
impl From<leptos::wasm_split::SplitLoaderError> for LoadError {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        LoadError
    }
}

/// A function whose body becomes its own chunk in a split build, and an
/// ordinary async function otherwise. A failed load is an `Err`, never a
/// panic. Arguments and the result pass by value between the modules.
///
/// With `preload NAME` first, `NAME()` (crate-visible) fetches and
/// instantiates the chunk without running anything in it; without the
/// `split` feature it does nothing.
macro_rules! split_point {
    ($chunk:ident, preload $pre:ident, fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        #[cfg(feature = "split")]
        #[leptos::wasm_split::wasm_split(
            $chunk,
            wasm_split_path = ::leptos::wasm_split,
            fallible,
            preload($pre)
        )]
        pub(crate) fn $name($($arg: $ty),*) -> Result<$ret, $crate::split::LoadError> {
            Ok($body)
        }

        #[cfg(not(feature = "split"))]
        pub(crate) async fn $name($($arg: $ty),*) -> Result<$ret, $crate::split::LoadError> {
            Ok($body)
        }

        #[cfg(not(feature = "split"))]
        pub(crate) async fn $pre() -> Result<(), $crate::split::LoadError> {
            Ok(())
        }
    };
    ($chunk:ident, fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        #[cfg(feature = "split")]
        #[leptos::wasm_split::wasm_split($chunk, wasm_split_path = ::leptos::wasm_split, fallible)]
        fn $name($($arg: $ty),*) -> Result<$ret, $crate::split::LoadError> {
            Ok($body)
        }

        #[cfg(not(feature = "split"))]
        async fn $name($($arg: $ty),*) -> Result<$ret, $crate::split::LoadError> {
            Ok($body)
        }
    };
}
pub(crate) use split_point;
