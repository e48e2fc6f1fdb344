//! How numbers are shown to people: counts, durations and byte counts.

/// A count with its noun, singular or plural as the number needs: "1
/// memory", "3 memories", "0 notes".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A duration for result cards: "0.42 ms", "12 ms", "3.1 s".
pub fn duration(ms: f64) -> String {
    if ms < 1.0 {
        format!("{ms:.2} ms")
    } else if ms < 1_000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1_000.0)
    }
}

/// The time a call waited for its approval, shown apart from its run:
/// "waited 1.9 s for approval". `None` when nobody was asked.
pub fn approval_wait(wait_ms: Option<f64>) -> Option<String> {
    wait_ms.map(|ms| format!("waited {} for approval", duration(ms)))
}

/// A byte count in SI units: "1.2 MB".
pub fn bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes.max(0.0);
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_noun_they_need() {
        assert_eq!(count(1, "memory", "memories"), "1 memory");
        assert_eq!(count(3, "memory", "memories"), "3 memories");
        assert_eq!(count(0, "note", "notes"), "0 notes");
    }

    #[test]
    fn durations() {
        let got: Vec<String> = [0.0, 0.4234, 1.0, 12.4, 999.4, 1_000.0, 3_140.0]
            .into_iter()
            .map(duration)
            .collect();
        assert_eq!(
            got,
            [
                "0.00 ms", "0.42 ms", "1 ms", "12 ms", "999 ms", "1.0 s", "3.1 s"
            ]
        );
    }

    #[test]
    fn an_approval_wait_reads_apart() {
        assert_eq!(
            approval_wait(Some(1_900.0)).as_deref(),
            Some("waited 1.9 s for approval")
        );
        assert_eq!(approval_wait(None), None);
    }

    #[test]
    fn byte_counts() {
        let got: Vec<String> = [0.0, 999.0, 1_000.0, 1_234_567.0, 5e12, 7e15, -3.0]
            .into_iter()
            .map(bytes)
            .collect();
        assert_eq!(
            got,
            [
                "0 B",
                "999 B",
                "1.0 KB",
                "1.2 MB",
                "5.0 TB",
                "7000.0 TB",
                "0 B"
            ]
        );
    }
}
