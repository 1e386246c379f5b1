//! The header around a model body: magic, version, length and CRC-32.

use std::io::Read;

use super::{Error, Result};

/// First bytes of every okr model file.
pub const MAGIC: &[u8; 8] = b"OKRMODEL";

/// Version of the body layout, bumped on any change to a persisted type.
///
/// History: 1 and 2 were okr-cli's own format (no checksum); 3 the first
/// library format; 4 adds LEML's convergence tolerance; 5 appends the
/// vector-output models (`Model::Vectors`), so a version-4 body decodes
/// unchanged and is still read ([`OLDEST_READ_VERSION`]); 6 appends the
/// models fitted on a precomputed input Gram (`Model::Gram`) and the
/// weighted-sum input kernel (`KernelSpec::WeightedSum`, multiple kernel
/// learning), again only new variants, so version-4 and -5 bodies still
/// decode; 7 appends the graph- and ranking-output models (`Model::Graphs`,
/// `Model::Rankings`), so version-4 to -6 bodies still decode; 8 appends,
/// after the model, the recipe it was fitted from (`Option<String>`, one
/// line of JSON, see [`SavedModel::recipe`](super::SavedModel::recipe)), so
/// version-4 to -7 bodies decode with no recipe; 9 appends the estimators
/// fitted on a precomputed input Gram that format 6 lacked (KDE, Nystroem
/// reduced rank and the trace norm in `Model::Gram`; `Model::GramVectors`,
/// `Model::GramGraphs`, `Model::GramRankings`), only new variants, so
/// version-4 to -8 bodies still decode. Older files are not read (refit).
pub const FORMAT_VERSION: u32 = 9;

/// First format version whose bodies end with the recipe.
pub(crate) const RECIPE_VERSION: u32 = 8;

/// Oldest format version whose bodies this okr decodes.
pub const OLDEST_READ_VERSION: u32 = 4;

/// Bytes before the body: magic, version, length, checksum.
pub(crate) const HEADER_LEN: usize = 8 + 4 + 8 + 4;

/// The header followed by `body`.
pub(crate) fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// The body length a model file's header declares, after checking the
/// magic and the version (`bytes` may hold more than the header).
fn declared_body_len(bytes: &[u8]) -> Result<u64> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(Error::NotAModel);
    }
    if bytes.len() < HEADER_LEN {
        return Err(Error::Corrupt(format!("the header is cut after {} of {HEADER_LEN} bytes", bytes.len())));
    }
    let version = word(bytes, 8);
    if version > FORMAT_VERSION {
        return Err(Error::NewerFormat { found: version, supported: FORMAT_VERSION });
    }
    if version < OLDEST_READ_VERSION {
        return Err(Error::OlderFormat { found: version, supported: OLDEST_READ_VERSION });
    }
    Ok(u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")))
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn check_body_len(declared: u64, present: u64) -> Result<()> {
    if declared > present {
        return Err(Error::Corrupt(format!("truncated: the body has {present} of {declared} bytes")));
    }
    if declared < present {
        return Err(Error::Corrupt(format!("{} trailing bytes after the body", present - declared)));
    }
    Ok(())
}

/// The format version of a model file whose header [`open`] accepted.
pub(crate) fn version(bytes: &[u8]) -> u32 {
    word(bytes, 8)
}

/// The body of a model file, after checking its header.
pub(crate) fn open(bytes: &[u8]) -> Result<&[u8]> {
    let declared = declared_body_len(bytes)?;
    check_body_len(declared, (bytes.len() - HEADER_LEN) as u64)?;
    let body = &bytes[HEADER_LEN..];
    if crc32fast::hash(body) != word(bytes, 20) {
        return Err(Error::Corrupt("checksum mismatch (the file was modified or damaged)".into()));
    }
    Ok(body)
}

/// Reads a model file's bytes from `reader`: the header first, then the body
/// it declares and at most one byte more (to tell trailing bytes). A stream
/// that is not a model file (`/dev/zero`, a pipe of something else) is
/// rejected after its first bytes, and memory never grows past what the
/// stream delivers up to the declared length. `size`, the length of a
/// regular file, rejects a truncated or extended file before its body is
/// read. `io` wraps a read error.
pub(crate) fn read_sealed(
    mut reader: impl Read,
    size: Option<u64>,
    io: impl Fn(std::io::Error) -> Error,
) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    (&mut reader).take(HEADER_LEN as u64).read_to_end(&mut bytes).map_err(&io)?;
    let declared = declared_body_len(&bytes)?;
    if let Some(size) = size {
        check_body_len(declared, size.saturating_sub(HEADER_LEN as u64))?;
    }
    reader.take(declared.saturating_add(1)).read_to_end(&mut bytes).map_err(&io)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors_name_the_problem() {
        let file = seal(b"body");
        assert_eq!(open(&file).unwrap(), b"body");
        assert!(matches!(open(b"PK\x03\x04"), Err(Error::NotAModel)));
        assert!(open(&file[..10]).unwrap_err().to_string().contains("header is cut"));
        let mut newer = file.clone();
        newer[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        let msg = open(&newer).unwrap_err().to_string();
        assert_eq!(
            msg,
            format!("written by a newer okr (format {}, this okr reads up to {FORMAT_VERSION})", FORMAT_VERSION + 1)
        );
        let mut older = file.clone();
        older[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert!(matches!(open(&older), Err(Error::OlderFormat { found: 2, .. })));
        assert!(open(&file[..file.len() - 1]).unwrap_err().to_string().contains("truncated"));
        let mut long = file.clone();
        long.push(b'\n');
        assert!(open(&long).unwrap_err().to_string().contains("1 trailing bytes"));
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(open(&flipped).unwrap_err().to_string().contains("checksum"));
    }

    #[test]
    fn read_sealed_stops_at_the_declared_body() {
        let io = |e: std::io::Error| Error::Corrupt(e.to_string());
        let file = seal(b"body");
        assert_eq!(read_sealed(&file[..], None, io).unwrap(), file);
        assert_eq!(read_sealed(&file[..], Some(file.len() as u64), io).unwrap(), file);
        // An endless stream of something else is refused after its first bytes.
        assert!(matches!(read_sealed(std::io::repeat(0), None, io), Err(Error::NotAModel)));
        // An endless stream after a valid header is read up to one byte past the body.
        let endless = std::io::Read::chain(&file[..], std::io::repeat(b'x'));
        let read = read_sealed(endless, None, io).unwrap();
        assert_eq!(read.len(), file.len() + 1);
        assert!(open(&read).unwrap_err().to_string().contains("1 trailing bytes"));
        // A regular file's size is checked before its body is read.
        let msg = read_sealed(&file[..], Some(file.len() as u64 - 1), io).unwrap_err().to_string();
        assert!(msg.contains("truncated: the body has 3 of 4 bytes"), "{msg}");
        let msg = read_sealed(&file[..HEADER_LEN - 3], None, io).unwrap_err().to_string();
        assert!(msg.contains("header is cut after 21"), "{msg}");
    }
}
