//! Keyset pages read one row past the page: whether another page lies
//! beyond it is that extra row, never a count.

/// Keeps `limit` of `rows`, read with one more than `limit` asked for, in
/// the list's order: the extra row is the last when the page was read
/// forward from its cursor, and the first when it was read backward (from
/// the cursor toward the list's start, then put in the list's order).
/// Whether there was a row past the page, in the direction it was read.
pub fn keep_page<T>(rows: &mut Vec<T>, limit: usize, backward: bool) -> bool {
    let past = rows.len().saturating_sub(limit);
    if backward {
        rows.drain(..past);
    } else {
        rows.truncate(limit);
    }
    past > 0
}

#[cfg(test)]
mod tests {
    use super::keep_page;

    #[test]
    fn the_row_past_a_page_is_dropped_from_the_end_it_was_read_toward() {
        let mut forward = vec![1, 2, 3, 4];
        assert!(keep_page(&mut forward, 3, false));
        assert_eq!(forward, [1, 2, 3]);
        let mut backward = vec![1, 2, 3, 4];
        assert!(keep_page(&mut backward, 3, true));
        assert_eq!(backward, [2, 3, 4]);
        let mut short = vec![1, 2];
        assert!(!keep_page(&mut short, 3, true));
        assert_eq!(short, [1, 2]);
    }
}
