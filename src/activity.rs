//! The Activity service: the execution log's records in IndexedDB, the
//! call path's writes to it (each with its skill's usage count), the
//! queries views make of it, and a signal that changes whenever it does.
//! Views ask this service; none reads the activity store itself.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use futures::FutureExt;
use futures::future::LocalBoxFuture;
use hearth_core::skill::activity::{ActivityFilter, ActivityRecord, ActivityStore, Usage};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::storage::Db;
use crate::version::bump;
use hearth_core::stores::{ACTIVITY, USAGE};

/// The execution log: one per app, made at start-up with the other
/// services.
pub struct Activity {
    db: Rc<Db>,
    /// Each skill's usage count, which a logged call updates.
    usage: Rc<RefCell<HashMap<String, Usage>>>,
    /// Bumped when a usage count changes.
    usage_version: RwSignal<u64>,
    /// Bumped when the log changes.
    version: RwSignal<u64>,
    /// The record lists [`Activity::watch`] handed out, emptied at once
    /// when the log is cleared.
    watchers: RefCell<Vec<RwSignal<Vec<ActivityRecord>>>>,
}

/// Every record of the log, newest first, kept up to date by
/// [`Activity::watch`].
#[derive(Clone, Copy)]
pub struct Watched {
    pub records: ReadSignal<Vec<ActivityRecord>>,
    /// Why the last read failed, if it did.
    pub error: ReadSignal<Option<String>>,
}

impl Activity {
    /// The log in `db`: a logged call updates `usage` and bumps
    /// `usage_version`; any change to the log bumps `version`.
    pub fn new(
        db: Rc<Db>,
        usage: Rc<RefCell<HashMap<String, Usage>>>,
        usage_version: RwSignal<u64>,
        version: RwSignal<u64>,
    ) -> Activity {
        Activity {
            db,
            usage,
            usage_version,
            version,
            watchers: RefCell::new(Vec::new()),
        }
    }

    /// Changes whenever a record is added, the log is cleared, or the
    /// data as a whole is replaced (a restore, Clear all).
    pub fn changed(&self) -> RwSignal<u64> {
        self.version
    }

    /// Every record, newest first.
    pub async fn newest_first(&self) -> Result<Vec<ActivityRecord>, String> {
        let (mut list, _) = self
            .db
            .all::<ActivityRecord>(ACTIVITY)
            .await
            .map_err(|e| e.to_string())?;
        list.sort_by(|a, b| b.result.started_at_ms.total_cmp(&a.result.started_at_ms));
        Ok(list)
    }

    /// Every record, newest first, re-read whenever the log changes, for
    /// as long as the calling component lives.
    pub fn watch(self: &Rc<Self>) -> Watched {
        let records = RwSignal::new(Vec::new());
        let error = RwSignal::new(None);
        {
            let mut watchers = self.watchers.borrow_mut();
            watchers.retain(|w| !w.is_disposed());
            watchers.push(records);
        }
        let changed = self.changed();
        let this = self.clone();
        Effect::new(move |_| {
            changed.track();
            let this = this.clone();
            spawn_local(async move {
                match this.newest_first().await {
                    Ok(list) => {
                        let _ = records.try_set(list);
                    }
                    Err(e) => {
                        let _ = error.try_set(Some(e));
                    }
                }
            });
        });
        Watched {
            records: records.read_only(),
            error: error.read_only(),
        }
    }

    /// Empties the log. Watchers see it empty as soon as this returns
    /// (what depends on there being records, such as the Clear button,
    /// changes before the caller goes on); those of components that are
    /// gone are forgotten.
    pub async fn clear(&self) -> Result<(), String> {
        self.db.clear(ACTIVITY).await.map_err(|e| e.to_string())?;
        self.watchers
            .borrow_mut()
            .retain(|records| records.try_set(Vec::new()).is_none());
        bump(self.changed());
        Ok(())
    }
}

/// The records `filter` keeps, in their order.
pub fn matching(records: &[ActivityRecord], filter: &ActivityFilter) -> Vec<ActivityRecord> {
    records
        .iter()
        .filter(|r| filter.matches(r))
        .cloned()
        .collect()
}

/// The call path's log: each call's record goes to IndexedDB in one
/// transaction with its skill's updated usage count.
impl ActivityStore for Activity {
    fn append<'a>(&'a self, record: &'a ActivityRecord) -> LocalBoxFuture<'a, Result<(), String>> {
        async move {
            let mut usage = self
                .usage
                .borrow()
                .get(record.skill_id.as_str())
                .cloned()
                .unwrap_or_else(|| Usage {
                    skill_id: record.skill_id.to_string(),
                    ..Usage::default()
                });
            usage.record(&record.result);
            let entries = [
                (ACTIVITY, Db::value(record).map_err(|e| e.to_string())?),
                (USAGE, Db::value(&usage).map_err(|e| e.to_string())?),
            ];
            let stored = self
                .db
                .put_across(&entries)
                .await
                .map_err(|e| e.to_string());
            if stored.is_ok() {
                self.usage
                    .borrow_mut()
                    .insert(usage.skill_id.clone(), usage);
                bump(self.usage_version);
            }
            bump(self.version);
            stored
        }
        .boxed_local()
    }
}
