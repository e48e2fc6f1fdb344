//! Vectors: cosine similarity and the nearest passages to a query, the
//! meaning half of hybrid search. Passages' vectors are stored L2-normalised,
//! so their cosine with a normalised query is a dot product.

/// The dot product of two vectors of one length.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity; 0 when either vector is all zeros.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let norms = dot(a, a).sqrt() * dot(b, b).sqrt();
    if norms == 0.0 { 0.0 } else { dot(a, b) / norms }
}

/// Scales `v` to length 1, as the model's last step does (a zero vector
/// stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt().max(1e-12);
    for x in v {
        *x /= norm;
    }
}

/// The `k` vectors most similar to `query` (all normalised), best first,
/// as (position, cosine); ties keep position order.
pub fn top_k<'a>(
    query: &[f32],
    vectors: impl IntoIterator<Item = &'a [f32]>,
    k: usize,
) -> Vec<(usize, f32)> {
    let mut scored: Vec<(usize, f32)> = vectors
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i, dot(query, v)))
        .collect();
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k < scored.len() && k > 0 {
        scored.select_nth_unstable_by(k - 1, order);
    }
    scored.truncate(k);
    scored.sort_by(order);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_ignores_length() {
        assert!((cosine(&[1.0, 0.0], &[3.0, 0.0]) - 1.0).abs() < 1e-6);
        assert!(cosine(&[1.0, 0.0], &[0.0, 2.0]).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn top_k_picks_the_nearest_in_order() {
        let mut vs = vec![
            vec![1.0, 0.0],
            vec![0.6, 0.8],
            vec![0.0, 1.0],
            vec![0.8, 0.6],
        ];
        for v in &mut vs {
            normalize(v);
        }
        let hits = top_k(&[1.0, 0.0], vs.iter().map(Vec::as_slice), 2);
        let order: Vec<usize> = hits.iter().map(|h| h.0).collect();
        assert_eq!(order, [0, 3]);
        assert_eq!(
            top_k(&[1.0, 0.0], vs.iter().map(Vec::as_slice), 10).len(),
            4
        );
        assert_eq!(top_k(&[1.0, 0.0], vs.iter().map(Vec::as_slice), 0), []);
    }
}
