// Whole-store comparisons for attack journeys: after an attack, every
// IndexedDB store must equal its state before, record for record and field
// for field, apart from what the runs themselves write.
import { expect } from '@playwright/test';

/// What a record is called in its store (every Hearth store keys by one of these).
const keyOf = (r) => r.id ?? r.skill_id ?? r.key ?? r.name ?? JSON.stringify(r);

const byKey = (records) => new Map(records.map((r) => [keyOf(r), r]));

/// Checks `after` against `before` (both from `appData`) given `runs`, the
/// number of calls made since `before` per skill id:
/// - activity: every earlier record unchanged, plus exactly one new record
///   per run, of the skills run, nothing else;
/// - usage: each skill's count grew by exactly its runs (its last-used
///   time may move forward), every other counter unchanged;
/// - conversations: unchanged but for the runs' own command messages,
///   added after the ones there were (each holding one of the new calls),
///   the message counter, and `updated_at_ms`, which a command moves
///   forward in the conversation it ran in;
/// - every other store: exactly equal.
export function expectOnlyRunsAdded(before, after, runs) {
  expect(Object.keys(after).sort(), 'the same stores').toEqual(Object.keys(before).sort());
  const total = Object.values(runs).reduce((a, b) => a + b, 0);
  const known = byKey(before.activity ?? []);
  const newCalls = new Set((after.activity ?? []).map(keyOf).filter((id) => !known.has(id)));
  for (const store of Object.keys(before)) {
    const was = byKey(before[store]);
    const now = byKey(after[store]);
    if (store === 'activity') {
      for (const [id, record] of was) expect(now.get(id), `activity record ${id} unchanged`).toEqual(record);
      const added = [...now.values()].filter((r) => !was.has(keyOf(r)));
      const perSkill = {};
      for (const r of added) perSkill[r.skill_id] = (perSkill[r.skill_id] ?? 0) + 1;
      expect(perSkill, `activity gained exactly the runs (${total})`).toEqual(runs);
    } else if (store === 'usage') {
      expect([...now.keys()].filter((k) => !was.has(k) && !(k in runs)), 'no counters but the skills run').toEqual([]);
      for (const [skill, record] of now) {
        const old = was.get(skill) ?? { skill_id: skill, count: 0, last_used_ms: 0 };
        const grew = runs[skill] ?? 0;
        expect(record.count, `usage of ${skill}`).toBe(old.count + grew);
        if (grew) expect(record.last_used_ms).toBeGreaterThanOrEqual(old.last_used_ms);
        else expect(record, `usage of ${skill} unchanged`).toEqual(old);
        expect({ ...record, count: 0, last_used_ms: 0 }).toEqual({ ...old, count: 0, last_used_ms: 0 });
      }
    } else if (store === 'conversations') {
      expect([...now.keys()].sort(), 'the same conversations').toEqual([...was.keys()].sort());
      for (const [id, record] of was) {
        const later = now.get(id);
        expect(later.updated_at_ms).toBeGreaterThanOrEqual(record.updated_at_ms);
        const messages = record.messages ?? [];
        expect(later.messages.slice(0, messages.length), `conversation ${id}: its messages unchanged`).toEqual(messages);
        for (const m of later.messages.slice(messages.length)) {
          expect(m.role, `conversation ${id} gained only commands`).toBe('command');
          expect(m.tool_calls.length).toBe(1);
          expect(newCalls.has(m.tool_calls[0].id), `command ${m.tool_calls[0].id} is one of the runs`).toBe(true);
        }
        const bare = (c) => ({ ...c, updated_at_ms: 0, next_seq: 0, messages: [] });
        expect(bare(later), `conversation ${id} unchanged`).toEqual(bare(record));
      }
    } else {
      expect(after[store], `store ${store} unchanged`).toEqual(before[store]);
    }
  }
}
