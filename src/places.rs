//! The places that load on demand, and the split points other modules
//! declare with `split_point!`. Each place but Chat is a split point:
//! in a build with the `split` feature (the release build, through
//! `cargo xtask precache`'s split step) its code, and whatever only it
//! uses, goes into a separate wasm chunk that is fetched the first time
//! the place opens and precached by the service worker after the first
//! render. Without the feature (tests, clippy) the same functions run
//! in place, so both builds go through one path.

use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::app::Place;

/// A place whose code did not arrive (the network and the service
/// worker's cache both failed). Loading again starts afresh.
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
macro_rules! split_point {
    ($chunk:ident, fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        #[cfg(feature = "split")]
        #[leptos::wasm_split::wasm_split($chunk, wasm_split_path = ::leptos::wasm_split, fallible)]
        fn $name($($arg: $ty),*) -> Result<$ret, $crate::places::LoadError> {
            Ok($body)
        }

        #[cfg(not(feature = "split"))]
        async fn $name($($arg: $ty),*) -> Result<$ret, $crate::places::LoadError> {
            Ok($body)
        }
    };
}
pub(crate) use split_point;

split_point!(
    notes,
    fn notes() -> AnyView {
        view! { <crate::views::notes::NotesView/> }.into_any()
    }
);
split_point!(
    tasks,
    fn tasks() -> AnyView {
        view! { <crate::views::tasks::TasksView/> }.into_any()
    }
);
split_point!(
    memory,
    fn memory() -> AnyView {
        view! { <crate::views::memory::MemoryView/> }.into_any()
    }
);
split_point!(
    skills,
    fn skills() -> AnyView {
        view! { <crate::views::skills::SkillsView/> }.into_any()
    }
);
split_point!(
    servers,
    fn servers() -> AnyView {
        view! { <crate::views::servers::ServersView/> }.into_any()
    }
);
split_point!(
    activity,
    fn activity() -> AnyView {
        view! { <crate::views::activity::ActivityView/> }.into_any()
    }
);
split_point!(
    settings,
    fn settings() -> AnyView {
        view! { <crate::views::settings::SettingsView/> }.into_any()
    }
);

/// The view of a place other than Chat, loading its code first.
async fn load(place: Place) -> Result<AnyView, LoadError> {
    match place {
        // Chat is in the main module; the shell never routes it here.
        Place::Chat => Err(LoadError),
        Place::Notes => notes().await,
        Place::Tasks => tasks().await,
        Place::Memory => memory().await,
        Place::Skills => skills().await,
        Place::Servers => servers().await,
        Place::Activity => activity().await,
        Place::Settings => settings().await,
    }
}

/// A place that loads on demand: "Opening …" while its code
/// arrives, and, if it cannot arrive, what happened and a way to try
/// again.
#[component]
pub fn LazyPlace(place: Place) -> impl IntoView {
    let attempt = RwSignal::new(0u32);
    let loading = move || {
        view! {
            <p class="place-loading" role="status">
                <span class="spinner" aria-hidden="true"></span>
                {format!("Opening {}…", place.label())}
            </p>
        }
    };
    view! {
        <Suspense fallback=loading>
            {move || {
                attempt.track();
                Suspend::new(SendWrapper::new(async move {
                    match load(place).await {
                        Ok(view) => view,
                        Err(LoadError) => view! {
                            <div class="empty-state small place-failed" role="alert">
                                <p>{format!("{} could not be opened: its part of Hearth did not load.", place.label())}</p>
                                <p>"Check the connection, or open Hearth once online so it is kept for offline use."</p>
                                <button class="primary" on:click=move |_| attempt.update(|n| *n += 1)>"Try again"</button>
                            </div>
                        }
                        .into_any(),
                    }
                }))
            }}
        </Suspense>
    }
}
