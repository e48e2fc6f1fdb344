//! The connected agents, kept in `agents.json` (owner-only) in the config
//! directory: each agent's record and the SHA-256 of its credential. The
//! credential itself is shown once, when the agent is connected, and
//! never stored.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use base64::Engine;
use hearth_core::agents::wire::{AgentUpdate, CREDENTIAL_PREFIX};
use hearth_core::agents::{AgentClient, AgentRecord, DEFAULT_SHARED, clean_name};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::api::token::{create_private_dir, replace_private};

/// The file name inside the config directory.
pub const AGENTS_FILE: &str = "agents.json";
/// How many agents one install may connect.
pub const MAX_AGENTS: usize = 50;
/// `last_used_ms` is written to disk at most this often per agent.
const LAST_USED_WRITE_MS: u64 = 60_000;

/// Why a change to the agents was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// 400: the name is empty or too long.
    #[error("an agent needs a name of 1 to {max} characters", max = hearth_core::agents::MAX_NAME)]
    BadName,
    /// 400: too many agents.
    #[error("Hearth keeps at most {MAX_AGENTS} agents; revoke one you no longer use first")]
    TooMany,
    /// 404: no agent has that id (it may have been revoked).
    #[error("there is no agent {0}; it may have been revoked")]
    NoSuchAgent(String),
    /// 400: a skill id in the update is not one.
    #[error("{0:?} is not a skill id")]
    BadSkill(String),
    /// 500: the file could not be written.
    #[error("cannot save the agents: {0}")]
    Save(String),
    /// 500: the random number generator failed.
    #[error("cannot make a credential: {0}")]
    Random(String),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Stored {
    #[serde(flatten)]
    record: AgentRecord,
    /// SHA-256 of the credential, lower-case hex.
    key_sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct AgentsFile {
    #[serde(default)]
    agents: Vec<Stored>,
}

/// The agents of this install.
pub struct AgentStore {
    path: PathBuf,
    agents: RwLock<Vec<Stored>>,
}

fn digest(credential: &str) -> [u8; 32] {
    Sha256::digest(credential.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Equal in time independent of where the first difference is.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn random_part(bytes: usize) -> Result<String, RegistryError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| RegistryError::Random(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

impl AgentStore {
    /// Reads the agents in `dir` (none when the file is missing). A file
    /// that cannot be read is an error: starting with no agents would
    /// overwrite it on the next change.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join(AGENTS_FILE);
        let file: AgentsFile = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a valid agents file ({e}); fix or remove it (removing it revokes every agent)",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => AgentsFile::default(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(Self {
            path,
            agents: RwLock::new(file.agents),
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Stored>> {
        self.agents.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Stored>> {
        self.agents.write().unwrap_or_else(|p| p.into_inner())
    }

    fn save(&self, agents: &[Stored]) -> Result<(), RegistryError> {
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir).map_err(|e| RegistryError::Save(e.to_string()))?;
        }
        let text = serde_json::to_string_pretty(&AgentsFile {
            agents: agents.to_vec(),
        })
        .map_err(|e| RegistryError::Save(e.to_string()))?;
        replace_private(&self.path, &text).map_err(|e| RegistryError::Save(e.to_string()))
    }

    pub fn list(&self) -> Vec<AgentRecord> {
        self.read().iter().map(|s| s.record.clone()).collect()
    }

    #[cfg(test)]
    pub fn get(&self, id: &str) -> Option<AgentRecord> {
        self.read()
            .iter()
            .find(|s| s.record.id == id)
            .map(|s| s.record.clone())
    }

    /// Connects an agent: a new record sharing the defaults, and its
    /// credential (returned here only).
    pub fn create(
        &self,
        name: &str,
        client: AgentClient,
        now_ms: u64,
    ) -> Result<(AgentRecord, String), RegistryError> {
        let name = clean_name(name).ok_or(RegistryError::BadName)?;
        let credential = format!("{CREDENTIAL_PREFIX}{}", random_part(32)?);
        let record = AgentRecord {
            id: format!("agent-{}", random_part(9)?),
            name,
            client,
            created_ms: now_ms,
            last_used_ms: None,
            shared: DEFAULT_SHARED.iter().map(|s| s.to_string()).collect(),
            always: Vec::new(),
            ask: Default::default(),
        };
        let mut agents = self.write();
        if agents.len() >= MAX_AGENTS {
            return Err(RegistryError::TooMany);
        }
        let mut next = agents.clone();
        next.push(Stored {
            record: record.clone(),
            key_sha256: hex(&digest(&credential)),
        });
        self.save(&next)?;
        *agents = next;
        Ok((record, credential))
    }

    /// Changes an agent's name, what it may see, what it is always
    /// allowed, or when it asks.
    pub fn update(&self, id: &str, update: AgentUpdate) -> Result<AgentRecord, RegistryError> {
        let check = |ids: &[String]| -> Result<Vec<String>, RegistryError> {
            let mut out: Vec<String> = Vec::new();
            for s in ids {
                hearth_core::SkillId::new(s).map_err(|_| RegistryError::BadSkill(s.clone()))?;
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
            Ok(out)
        };
        let mut agents = self.write();
        let mut next = agents.clone();
        let stored = next
            .iter_mut()
            .find(|s| s.record.id == id)
            .ok_or_else(|| RegistryError::NoSuchAgent(id.to_string()))?;
        if let Some(name) = &update.name {
            stored.record.name = clean_name(name).ok_or(RegistryError::BadName)?;
        }
        if let Some(shared) = &update.shared {
            stored.record.shared = check(shared)?;
        }
        if let Some(always) = &update.always {
            stored.record.always = check(always)?;
        }
        if let Some(ask) = update.ask {
            stored.record.ask = ask;
        }
        let record = stored.record.clone();
        self.save(&next)?;
        *agents = next;
        Ok(record)
    }

    /// Revokes an agent: its credential stops working now.
    pub fn revoke(&self, id: &str) -> Result<AgentRecord, RegistryError> {
        let mut agents = self.write();
        let mut next = agents.clone();
        let at = next
            .iter()
            .position(|s| s.record.id == id)
            .ok_or_else(|| RegistryError::NoSuchAgent(id.to_string()))?;
        let gone = next.remove(at);
        self.save(&next)?;
        *agents = next;
        Ok(gone.record)
    }

    /// The agent `credential` belongs to, noting the use. Every stored
    /// hash is compared, in constant time each.
    pub fn authenticate(&self, credential: &str, now_ms: u64) -> Option<AgentRecord> {
        if !credential.starts_with(CREDENTIAL_PREFIX) {
            return None;
        }
        let want = digest(credential);
        let found = {
            let agents = self.read();
            let mut found = None;
            for s in agents.iter() {
                if let Some(have) = unhex(&s.key_sha256)
                    && same(&have, &want)
                {
                    found = Some(s.record.clone());
                }
            }
            found?
        };
        let stale = found
            .last_used_ms
            .is_none_or(|t| now_ms.saturating_sub(t) >= LAST_USED_WRITE_MS);
        if stale {
            let mut agents = self.write();
            let mut next = agents.clone();
            if let Some(s) = next.iter_mut().find(|s| s.record.id == found.id) {
                s.record.last_used_ms = Some(now_ms);
                // Losing a "last used" time is no reason to fail a call.
                if self.save(&next).is_ok() {
                    *agents = next;
                }
            }
        }
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_is_shown_once_and_only_its_hash_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = AgentStore::load(dir.path()).unwrap();
        let (agent, key) = store
            .create("  Claude Code ", AgentClient::ClaudeCode, 1000)
            .unwrap();
        assert_eq!(agent.name, "Claude Code");
        assert_eq!(agent.shared, DEFAULT_SHARED);
        assert!(key.starts_with(CREDENTIAL_PREFIX) && key.len() > 50);
        let text = std::fs::read_to_string(dir.path().join(AGENTS_FILE)).unwrap();
        assert!(!text.contains(&key), "the credential is never written");
        assert!(text.contains(&hex(&digest(&key))));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(AGENTS_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Read back by a new server.
        let again = AgentStore::load(dir.path()).unwrap();
        assert_eq!(again.authenticate(&key, 2000).unwrap().id, agent.id);
        assert_eq!(again.get(&agent.id).unwrap().last_used_ms, Some(2000));
    }

    #[test]
    fn only_the_exact_credential_opens() {
        let dir = tempfile::tempdir().unwrap();
        let store = AgentStore::load(dir.path()).unwrap();
        let (a, key_a) = store.create("A", AgentClient::Other, 1).unwrap();
        let (b, key_b) = store.create("B", AgentClient::Other, 1).unwrap();
        assert_eq!(store.authenticate(&key_a, 2).unwrap().id, a.id);
        assert_eq!(store.authenticate(&key_b, 2).unwrap().id, b.id);
        for wrong in [
            String::new(),
            key_a[..key_a.len() - 1].to_string(),
            format!("{key_a}x"),
            key_a.trim_start_matches(CREDENTIAL_PREFIX).to_string(),
            hex(&digest(&key_a)),
        ] {
            assert_eq!(store.authenticate(&wrong, 2), None, "{wrong}");
        }
        store.revoke(&a.id).unwrap();
        assert_eq!(store.authenticate(&key_a, 3), None, "revoked");
        assert_eq!(store.authenticate(&key_b, 3).unwrap().id, b.id);
        assert_eq!(
            store.revoke(&a.id),
            Err(RegistryError::NoSuchAgent(a.id.clone()))
        );
    }

    #[test]
    fn updates_change_only_what_they_name() {
        let dir = tempfile::tempdir().unwrap();
        let store = AgentStore::load(dir.path()).unwrap();
        let (a, _) = store.create("Codex", AgentClient::Codex, 1).unwrap();
        let updated = store
            .update(
                &a.id,
                AgentUpdate {
                    always: Some(vec!["notes".into(), "notes".into()]),
                    ..AgentUpdate::default()
                },
            )
            .unwrap();
        assert_eq!(updated.always, ["notes"]);
        assert_eq!(updated.shared, a.shared);
        assert_eq!(
            store.update(
                &a.id,
                AgentUpdate {
                    shared: Some(vec!["../etc".into()]),
                    ..AgentUpdate::default()
                }
            ),
            Err(RegistryError::BadSkill("../etc".into()))
        );
        assert_eq!(
            store.update(
                &a.id,
                AgentUpdate {
                    name: Some(" ".into()),
                    ..AgentUpdate::default()
                }
            ),
            Err(RegistryError::BadName)
        );
    }

    #[test]
    fn a_broken_file_stops_the_server_instead_of_being_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(AGENTS_FILE), "{not json").unwrap();
        let err = AgentStore::load(dir.path()).err().unwrap();
        assert!(err.contains("not a valid agents file"), "{err}");
    }
}
