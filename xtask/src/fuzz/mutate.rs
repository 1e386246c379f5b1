//! Byte-level mutations for text formats: bit flips, random bytes, inserts,
//! deletes, duplicated ranges, splices with another corpus entry, and
//! interesting numbers and format tokens written as text.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Numbers at type and format limits, and tokens of the readers' formats.
const TOKENS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "255",
    "256",
    "65535",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "16777215",
    "16777216",
    "99999999999",
    "1e308",
    "-1e308",
    "1e309",
    "1e-320",
    "1e120",
    "0.5",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "?",
    "\"",
    "'",
    "\\",
    "{",
    "}",
    "{}",
    ",",
    ",,",
    ":",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "#",
    "%",
    "===\n",
    "@relation r\n",
    "@attribute a numeric\n",
    "@attribute l {0,1}\n",
    "@data\n",
    "qid:1",
    "1:1",
    "0:0",
    "\u{feff}",
    "\u{1b}[2J",
    "é",
];

/// A mutated copy of `input`: one to four stacked mutations, cut to `max_len`.
pub fn mutate(rng: &mut ChaCha8Rng, input: &[u8], corpus: &[Vec<u8>], max_len: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        mutate_once(rng, &mut out, corpus);
    }
    out.truncate(max_len);
    out
}

fn pos(rng: &mut ChaCha8Rng, len: usize) -> usize {
    rng.random_range(0..=len)
}

fn mutate_once(rng: &mut ChaCha8Rng, out: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    let len = out.len();
    match rng.random_range(0..10u32) {
        0 if len > 0 => {
            let i = rng.random_range(0..len);
            out[i] ^= 1 << rng.random_range(0..8);
        }
        1 if len > 0 => {
            let i = rng.random_range(0..len);
            out[i] = rng.random();
        }
        2 => {
            // Mostly printable ASCII: the formats are text.
            let b = if rng.random_range(0..4u32) == 0 { rng.random() } else { rng.random_range(b' '..=b'~') };
            let i = pos(rng, len);
            out.insert(i, b);
        }
        3 if len > 0 => {
            let i = rng.random_range(0..len);
            let n = rng.random_range(1..=(len - i).min(64));
            out.drain(i..i + n);
        }
        4 if len > 0 => {
            let i = rng.random_range(0..len);
            let n = rng.random_range(1..=(len - i).min(256));
            let chunk = out[i..i + n].to_vec();
            let at = pos(rng, len);
            out.splice(at..at, chunk);
        }
        5 if !corpus.is_empty() => {
            let other = &corpus[rng.random_range(0..corpus.len())];
            let cut = pos(rng, len);
            let from = pos(rng, other.len());
            out.truncate(cut);
            out.extend_from_slice(&other[from..]);
        }
        6 => {
            // Replace a run of digits (or insert at a random place) with a token.
            let tok = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
            let digits: Vec<usize> = (0..len).filter(|&i| out[i].is_ascii_digit()).collect();
            if digits.is_empty() {
                let at = pos(rng, len);
                out.splice(at..at, tok.iter().copied());
            } else {
                let start = digits[rng.random_range(0..digits.len())];
                let end = (start..len).find(|&i| !out[i].is_ascii_digit() && out[i] != b'.').unwrap_or(len);
                out.splice(start..end, tok.iter().copied());
            }
        }
        7 => {
            let tok = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
            let at = pos(rng, len);
            out.splice(at..at, tok.iter().copied());
        }
        8 if len > 1 => {
            // Swap two lines' worth of bytes: reorders headers and rows.
            let a = rng.random_range(0..len);
            let b = rng.random_range(0..len);
            out.swap(a, b);
        }
        9 if len > 0 => {
            let at = rng.random_range(0..len);
            out.truncate(at);
        }
        _ => {
            let tok = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
            out.extend_from_slice(tok);
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn mutations_change_inputs_and_respect_the_length_cap() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let corpus = vec![b"1,2,3\n4,5,6\n".to_vec(), b"@data\n".to_vec()];
        let mut changed = 0;
        for _ in 0..1000 {
            let m = mutate(&mut rng, &corpus[0], &corpus, 32);
            assert!(m.len() <= 32);
            changed += usize::from(m != corpus[0]);
        }
        assert!(changed > 900, "{changed}");
        assert!(mutate(&mut rng, b"", &[], 8).len() <= 8);
    }
}
