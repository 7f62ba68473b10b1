//! Finding one of many records by its id without a scan each time: a
//! group of 2,000 agents has 2,000 terminate steps a tick, each looking up
//! its instance among the group's (and the roll's) thousands, and
//! `iter().find` made that millions of string comparisons a tick.
//!
//! `ById` sits beside a `Vec` it does not own: built on the first lookup
//! of a long list, it maps each id to its position. A position is used
//! only when the list still has as many records as when it was indexed
//! and the record there has the id; otherwise (records added, removed or
//! moved since) the list is scanned. What it cannot see is a record's id
//! changed in place at the same length: none of the lists it indexes is
//! changed that way (a group's instances are read whole each tick, a
//! roll's instances never change id or number once recorded). Short
//! lists are always scanned. It is no part of the record: never
//! serialized, equal to any other, and a clone starts empty.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

/// Below this many records a scan is as quick as building a map.
const SCAN_BELOW: usize = 64;

#[derive(Default)]
pub(crate) struct ById {
    /// Positions by id, and the list's length when they were taken.
    index: OnceLock<(usize, HashMap<String, usize>)>,
}

impl ById {
    /// The position of the record of `items` whose `key` is `id`.
    pub(crate) fn position<T>(&self, items: &[T], id: &str, key: fn(&T) -> &str) -> Option<usize> {
        let scan = || items.iter().position(|t| key(t) == id);
        if items.len() < SCAN_BELOW {
            return scan();
        }
        let (len, positions) = self.index.get_or_init(|| {
            let mut positions = HashMap::with_capacity(items.len());
            for (n, t) in items.iter().enumerate() {
                // A duplicate id keeps its first place, as a scan finds.
                positions.entry(key(t).to_string()).or_insert(n);
            }
            (items.len(), positions)
        });
        if *len != items.len() {
            return scan();
        }
        match positions.get(id) {
            Some(&n) if items.get(n).is_some_and(|t| key(t) == id) => Some(n),
            // Not where it was when indexed: the scan finds it.
            Some(_) => scan(),
            None => None,
        }
    }
}

impl Clone for ById {
    fn clone(&self) -> Self {
        ById::default()
    }
}

impl PartialEq for ById {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ById {}

impl fmt::Debug for ById {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ById")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("i-{i:017x}")).collect()
    }

    fn key(s: &String) -> &str {
        s
    }

    #[test]
    fn finds_every_record_of_a_long_list_and_none_it_lacks() {
        let items = ids(500);
        let by_id = ById::default();
        for (n, id) in items.iter().enumerate() {
            assert_eq!(by_id.position(&items, id, key), Some(n));
        }
        assert_eq!(by_id.position(&items, "i-missing", key), None);
    }

    #[test]
    fn a_list_changed_after_indexing_is_scanned_not_trusted() {
        let mut items = ids(100);
        let by_id = ById::default();
        assert_eq!(by_id.position(&items, &items[10].clone(), key), Some(10));
        // Same length, records moved: the index's place is checked.
        items.swap(10, 20);
        assert_eq!(by_id.position(&items, &items[20].clone(), key), Some(20));
        assert_eq!(by_id.position(&items, &items[10].clone(), key), Some(10));
        // Another length: scanned, a new record found too.
        items.push("i-new".to_string());
        assert_eq!(by_id.position(&items, "i-new", key), Some(100));
        items.remove(0);
        assert_eq!(by_id.position(&items, &items[0].clone(), key), Some(0));
    }

    #[test]
    fn a_duplicate_id_is_found_at_its_first_place_as_a_scan_would() {
        let mut items = ids(100);
        items[70] = items[5].clone();
        let by_id = ById::default();
        assert_eq!(by_id.position(&items, &items[5].clone(), key), Some(5));
    }

    #[test]
    fn a_clone_starts_empty_and_any_two_are_equal() {
        let items = ids(100);
        let by_id = ById::default();
        by_id.position(&items, &items[3].clone(), key);
        let copy = by_id.clone();
        assert!(copy.index.get().is_none());
        assert_eq!(copy, by_id);
    }
}
