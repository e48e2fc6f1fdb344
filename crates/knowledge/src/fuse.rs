//! Reciprocal rank fusion: the word ranking and the meaning ranking merged
//! by rank alone, so BM25's unbounded scores and cosine's [-1, 1] never
//! need to be put on one scale. A passage scores Σ 1 / (k + rank) over the
//! lists it is in (rank from 1).

/// The k of reciprocal rank fusion. 60 is the value Cormack, Clarke and
/// Büttcher found best across collections when they proposed the method
/// (SIGIR 2009) and the one most hybrid search systems use: large enough
/// that the first few ranks of one list do not drown the other, small
/// enough that rank still matters.
pub const RRF_K: f32 = 60.0;

/// Fuses ranked lists of item numbers, best first, into one, best first,
/// as (item, fused score); ties keep the item that first appears earlier.
pub fn reciprocal_rank(lists: &[&[usize]], k: f32) -> Vec<(usize, f32)> {
    let mut fused: Vec<(usize, f32, usize)> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for list in lists {
        for (rank, &item) in list.iter().enumerate() {
            let add = 1.0 / (k + rank as f32 + 1.0);
            match seen.get(&item) {
                Some(&at) => {
                    let entry: &mut (usize, f32, usize) = &mut fused[at];
                    entry.1 += add;
                    entry.2 = entry.2.min(rank);
                }
                None => {
                    seen.insert(item, fused.len());
                    fused.push((item, add, rank));
                }
            }
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    fused
        .into_iter()
        .map(|(item, score, _)| (item, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_high_in_both_lists_beats_one_first_in_only_one() {
        let words = [7, 3, 5];
        let meaning = [3, 9, 7];
        let fused = reciprocal_rank(&[&words, &meaning], RRF_K);
        let order: Vec<usize> = fused.iter().map(|f| f.0).collect();
        assert_eq!(order, [3, 7, 9, 5]);
        let expected = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((fused[0].1 - expected).abs() < 1e-7);
    }

    #[test]
    fn one_list_keeps_its_order() {
        let fused = reciprocal_rank(&[&[4, 2, 8]], RRF_K);
        let order: Vec<usize> = fused.iter().map(|f| f.0).collect();
        assert_eq!(order, [4, 2, 8]);
    }
}
