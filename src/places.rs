//! The app's places, and how those that load on demand arrive. Each
//! place but Chat is a split point (`crate::split`): its code, and
//! whatever only it uses, goes into a separate wasm chunk that is
//! fetched the first time the place opens.

use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::split::{LoadError, split_point};

/// The places in the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Chat,
    Notes,
    Tasks,
    Memory,
    Skills,
    Servers,
    Activity,
    Settings,
}

impl Place {
    pub const ALL: [Place; 8] = [
        Place::Chat,
        Place::Notes,
        Place::Tasks,
        Place::Memory,
        Place::Skills,
        Place::Servers,
        Place::Activity,
        Place::Settings,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            Place::Chat => "chat",
            Place::Notes => "notes",
            Place::Tasks => "tasks",
            Place::Memory => "memory",
            Place::Skills => "skills",
            Place::Servers => "servers",
            Place::Activity => "activity",
            Place::Settings => "settings",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Place::Chat => "Chat",
            Place::Notes => "Notes",
            Place::Tasks => "Tasks",
            Place::Memory => "Memory",
            Place::Skills => "Skills",
            Place::Servers => "Servers",
            Place::Activity => "Activity",
            Place::Settings => "Settings",
        }
    }

    pub fn icon(self) -> &'static str {
        match self {
            Place::Chat => "chat",
            Place::Notes => "note",
            Place::Tasks => "tasks",
            Place::Memory => "memory",
            Place::Skills => "skills",
            Place::Servers => "server",
            Place::Activity => "activity",
            Place::Settings => "settings",
        }
    }

    pub fn from_hash(hash: &str) -> Place {
        let slug = hash.trim_start_matches('#').trim_start_matches('/');
        // `#/chat/<conversation>` is still Chat.
        let slug = slug.split('/').next().unwrap_or("");
        Place::ALL
            .into_iter()
            .find(|p| p.slug() == slug)
            .unwrap_or(Place::Chat)
    }
}

split_point!(
    notes,
    preload warm_notes,
    fn notes() -> AnyView {
        view! { <crate::views::notes::NotesView/> }.into_any()
    }
);
split_point!(
    tasks,
    preload warm_tasks,
    fn tasks() -> AnyView {
        view! { <crate::views::tasks::TasksView/> }.into_any()
    }
);
split_point!(
    memory,
    preload warm_memory,
    fn memory() -> AnyView {
        view! { <crate::views::memory::MemoryView/> }.into_any()
    }
);
split_point!(
    skills,
    preload warm_skills,
    fn skills() -> AnyView {
        view! { <crate::views::skills::SkillsView/> }.into_any()
    }
);
split_point!(
    servers,
    preload warm_servers,
    fn servers() -> AnyView {
        view! { <crate::views::servers::ServersView/> }.into_any()
    }
);
split_point!(
    activity,
    preload warm_activity,
    fn activity() -> AnyView {
        view! { <crate::views::activity::ActivityView/> }.into_any()
    }
);
split_point!(
    settings,
    preload warm_settings,
    fn settings() -> AnyView {
        view! { <crate::views::settings::SettingsView/> }.into_any()
    }
);

/// Fetches every chunk into memory, one after another. Run where no
/// service worker controls the page yet (a first visit): the worker's copy
/// of the chunks is not kept until it has installed, and a network that
/// goes before then would leave every place and skill outside the first
/// load unreachable for the rest of the visit. Later visits fetch a chunk
/// from the worker when it is first used. A chunk that does not arrive
/// here is simply fetched again when it is used.
pub async fn warm_chunks() {
    use crate::{agent_skills, files, mcp, runtime, sandbox, web};
    // Each awaited in turn, so the warming never competes with itself.
    let _ = runtime::warm_calculator().await;
    let _ = warm_notes().await;
    let _ = warm_tasks().await;
    let _ = warm_memory().await;
    let _ = warm_skills().await;
    let _ = warm_servers().await;
    let _ = warm_activity().await;
    let _ = warm_settings().await;
    let _ = agent_skills::warm_packages().await;
    let _ = agent_skills::warm_package_tools().await;
    let _ = mcp::warm_mcp().await;
    let _ = files::skills::warm_files().await;
    let _ = sandbox::skill::warm_code().await;
    let _ = web::warm_web().await;
    let _ = runtime::warm_collections().await;
    let _ = runtime::warm_artifact_skills().await;
    let _ = crate::views::cards::warm_artifact_panel().await;
    let _ = crate::assistant::engine::load().await;
}

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
