//! The header around a model body: magic, version, length and CRC-32.

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
/// `Model::Rankings`), so version-4 to -6 bodies still decode. Older files
/// are not read (refit).
pub const FORMAT_VERSION: u32 = 7;

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

/// The body of a model file, after checking its header.
pub(crate) fn open(bytes: &[u8]) -> Result<&[u8]> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(Error::NotAModel);
    }
    if bytes.len() < HEADER_LEN {
        return Err(Error::Corrupt(format!("the header is cut after {} of {HEADER_LEN} bytes", bytes.len())));
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let version = word(8);
    if version > FORMAT_VERSION {
        return Err(Error::NewerFormat { found: version, supported: FORMAT_VERSION });
    }
    if version < OLDEST_READ_VERSION {
        return Err(Error::OlderFormat { found: version, supported: OLDEST_READ_VERSION });
    }
    let declared = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let present = (bytes.len() - HEADER_LEN) as u64;
    if declared > present {
        return Err(Error::Corrupt(format!("truncated: the body has {present} of {declared} bytes")));
    }
    if declared < present {
        return Err(Error::Corrupt(format!("{} trailing bytes after the body", present - declared)));
    }
    let body = &bytes[HEADER_LEN..];
    if crc32fast::hash(body) != word(20) {
        return Err(Error::Corrupt("checksum mismatch (the file was modified or damaged)".into()));
    }
    Ok(body)
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
}
