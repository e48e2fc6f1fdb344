//! The app's IndexedDB stores, as data: every schema version the app has
//! shipped, each store's name, key path and indexes. The app's storage
//! opens and upgrades the database from these and backups name and review
//! stores by them, so a store's name is spelled in one place.

pub const DB_NAME: &str = "hearth";

/// A stored record with a stable string id: what the collections and sync
/// know of a note, a task, a memory or a conversation.
pub trait Record: Clone + serde::Serialize + serde::de::DeserializeOwned {
    fn id(&self) -> &str;
}

/// One object store: its name, key path and indexes.
#[derive(Clone, Copy, Debug)]
pub struct StoreSpec {
    pub name: &'static str,
    pub key_path: &'static str,
    /// (index name, key path)
    pub indexes: &'static [(&'static str, &'static str)],
}

/// A schema version and the stores it has. A version adds stores or
/// indexes (or moves an index's key path); records change only through
/// the app's data migrations.
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    pub version: u32,
    pub stores: &'static [StoreSpec],
}

impl Schema {
    pub fn store(&self, name: &str) -> Option<&StoreSpec> {
        self.stores.iter().find(|s| s.name == name)
    }

    pub fn store_names(&self) -> Vec<&'static str> {
        self.stores.iter().map(|s| s.name).collect()
    }
}

pub const ACTIVITY: &str = "activity";

/// Version 1, the foundation: the execution log only.
pub const SCHEMA_V1: Schema = Schema {
    version: 1,
    stores: &[StoreSpec {
        name: ACTIVITY,
        key_path: "id",
        indexes: &[("started_at", "result.started_at_ms")],
    }],
};

pub const NOTES: &str = "notes";
pub const TASKS: &str = "tasks";
pub const MEMORIES: &str = "memories";
/// Key-value records: `{key, value}`, e.g. the permission settings.
pub const SETTINGS: &str = "settings";
pub const USAGE: &str = "usage";

/// Version 2: the core skills' data, settings and usage counts.
///
/// Each version spells its stores whole rather than sharing specs with the
/// next: a shipped version is a record of what databases of that version
/// hold, so a later change must not be able to alter it.
pub const SCHEMA_V2: Schema = Schema {
    version: 2,
    stores: &[
        StoreSpec {
            name: ACTIVITY,
            key_path: "id",
            indexes: &[("started_at", "result.started_at_ms")],
        },
        StoreSpec {
            name: NOTES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: TASKS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: MEMORIES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: SETTINGS,
            key_path: "key",
            indexes: &[],
        },
        StoreSpec {
            name: USAGE,
            key_path: "skill_id",
            indexes: &[],
        },
    ],
};

pub const CONVERSATIONS: &str = "conversations";
/// Agent Skills packages (SKILL.md and metadata), keyed by skill name.
pub const SKILL_PACKAGES: &str = "skill_packages";
/// The files of those packages, keyed `package/path`.
pub const SKILL_FILES: &str = "skill_files";
pub const MCP_SERVERS: &str = "mcp_servers";
/// Folder and file grants for the file-reading skill.
pub const GRANTS: &str = "grants";
/// Artifacts the model made (pages, pictures, documents, charts), kept
/// with their conversation.
pub const ARTIFACTS: &str = "artifacts";
/// The index of [`ARTIFACTS`] by conversation id.
pub const ARTIFACTS_BY_CONVERSATION: &str = "conversation";

/// Version 3: conversations, Agent Skills packages, MCP servers, file
/// grants and artifacts.
pub const SCHEMA_V3: Schema = Schema {
    version: 3,
    stores: &[
        StoreSpec {
            name: ACTIVITY,
            key_path: "id",
            indexes: &[("started_at", "result.started_at_ms")],
        },
        StoreSpec {
            name: NOTES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: TASKS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: MEMORIES,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: SETTINGS,
            key_path: "key",
            indexes: &[],
        },
        StoreSpec {
            name: USAGE,
            key_path: "skill_id",
            indexes: &[],
        },
        StoreSpec {
            name: CONVERSATIONS,
            key_path: "id",
            indexes: &[("updated", "updated_ms")],
        },
        StoreSpec {
            name: SKILL_PACKAGES,
            key_path: "name",
            indexes: &[],
        },
        StoreSpec {
            name: SKILL_FILES,
            key_path: "key",
            indexes: &[("package", "package")],
        },
        StoreSpec {
            name: MCP_SERVERS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: GRANTS,
            key_path: "id",
            indexes: &[],
        },
        StoreSpec {
            name: ARTIFACTS,
            key_path: "id",
            indexes: &[("conversation", "conversation_id")],
        },
    ],
};

/// Version 4: the same stores; conversations keep the commands run in
/// them as messages of their own (the app's data migrations move them).
pub const SCHEMA_V4: Schema = Schema {
    version: 4,
    stores: SCHEMA_V3.stores,
};

/// Every schema the app has shipped, oldest first; the last is current.
/// To change storage: add a `SCHEMA_Vn` after the last, append it here,
/// and put any record transforms it needs in the app's data migrations. The
/// wasm tests open every earlier version with data and upgrade it.
pub const SCHEMAS: &[Schema] = &[SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4];

pub fn current_schema() -> Schema {
    SCHEMAS[SCHEMAS.len() - 1]
}
