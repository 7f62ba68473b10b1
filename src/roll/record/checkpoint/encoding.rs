//! A checkpoint's bytes at rest: its JSON as it is, or, once that JSON
//! reaches `COMPRESS_FROM` (512 KiB), the same JSON gzip-compressed at
//! the fastest level, under the same name. Reading takes either: a gzip
//! stream is told by its magic bytes, which no JSON document starts with.
//!
//! Why: a checkpoint is written whole, and synced, a few times a tick. A
//! roll of a few dozen agents writes tens of kilobytes and stays readable
//! with `jq`; one of 2,000 agents mid-drain wrote 2.6 MB each time
//! (`scripts/bench-roll huge`), which gzip level 1 makes about a fifth of
//! that in a few milliseconds. Such a file reads with `gzip -dc FILE | jq
//! .`; `roller status` and `roller plan show --file` read it as they read
//! any checkpoint.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use super::{Checkpoint, CheckpointError, FILE_MODE};
use crate::atomic_file;

/// The checkpoint's JSON and its bytes at rest.
impl Checkpoint {
    /// The checkpoint as written to `path`.
    pub fn to_json(&self, path: &Path) -> Result<Vec<u8>, CheckpointError> {
        let mut json = Vec::new();
        self.to_json_into(path, &mut json)?;
        Ok(json)
    }

    /// `to_json` into `json` (cleared first): a run that writes the
    /// checkpoint every tick reuses one buffer rather than growing a new
    /// one to megabytes each time (at 2,000 agents, page faults and copies
    /// were nearly half of the serialization's CPU).
    pub(crate) fn to_json_into(
        &self,
        path: &Path,
        json: &mut Vec<u8>,
    ) -> Result<(), CheckpointError> {
        json.clear();
        // Compact: written whole a few times a tick, and at 2,000 agents a
        // pretty-printed one was 40 % indentation (`jq .` shows it laid out).
        serde_json::to_writer(&mut *json, self).map_err(|e| CheckpointError::Write {
            path: path.to_path_buf(),
            source: io::Error::other(e),
        })?;
        json.push(b'\n');
        Ok(())
    }

    /// Writes `json` (from `to_json`) to `path` atomically, mode 0600,
    /// compressed from 512 KiB on (`encoding`); answers the bytes written.
    pub(crate) fn write(&self, path: &Path, json: &[u8]) -> Result<usize, CheckpointError> {
        let failed = |source| CheckpointError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let bytes = Checkpoint::bytes_of(json).map_err(failed)?;
        crate::crash_point::before_checkpoint_write();
        atomic_file::replace(path, &bytes, FILE_MODE).map_err(failed)?;
        crate::crash_point::after_checkpoint_write();
        Ok(bytes.len())
    }

    /// The bytes a checkpoint's JSON is kept as (`encoding`).
    pub(crate) fn bytes_of(json: &[u8]) -> io::Result<Cow<'_, [u8]>> {
        encode(json)
    }
}

/// From this size on, a checkpoint's JSON is written compressed: so no
/// write passes it, until a JSON several times as large as any measured.
pub(crate) const COMPRESS_FROM: usize = 512 << 10;

/// The first two bytes of every gzip stream (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The most a compressed checkpoint is inflated to: a corrupt or foreign
/// file cannot take the run's memory (the largest measured, 2,000 agents,
/// is 2.6 MB).
const INFLATED_AT_MOST: u64 = 256 << 20;

/// The bytes to write for the checkpoint JSON `json`.
pub(crate) fn encode(json: &[u8]) -> io::Result<Cow<'_, [u8]>> {
    encode_from(json, COMPRESS_FROM)
}

fn encode_from(json: &[u8], threshold: usize) -> io::Result<Cow<'_, [u8]>> {
    if json.len() < threshold {
        return Ok(Cow::Borrowed(json));
    }
    let mut gzip = GzEncoder::new(Vec::with_capacity(json.len() / 4), Compression::fast());
    gzip.write_all(json)?;
    Ok(Cow::Owned(gzip.finish()?))
}

/// The checkpoint's JSON text from the bytes read (`encode`'s, or a
/// checkpoint written before compression, or by hand); the reason it is
/// not one otherwise.
pub(crate) fn decode(bytes: Vec<u8>) -> Result<String, String> {
    decode_at_most(bytes, INFLATED_AT_MOST)
}

fn decode_at_most(bytes: Vec<u8>, limit: u64) -> Result<String, String> {
    if !bytes.starts_with(&GZIP_MAGIC) {
        return String::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"));
    }
    let mut inflated = Vec::with_capacity(bytes.len().saturating_mul(6));
    GzDecoder::new(bytes.as_slice())
        .take(limit + 1)
        .read_to_end(&mut inflated)
        .map_err(|e| format!("gzip-compressed, but not a whole gzip stream: {e}"))?;
    if inflated.len() as u64 > limit {
        return Err(format!(
            "gzip-compressed, and inflates to more than {} MiB: no checkpoint is that large",
            limit >> 20
        ));
    }
    String::from_utf8(inflated).map_err(|e| format!("gzip-compressed, but not UTF-8 inside: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON document of about `n` bytes, as repetitive as a checkpoint.
    fn json_of(n: usize) -> Vec<u8> {
        let mut text = String::from("{\"events\":[");
        let mut i = 0;
        while text.len() < n {
            text.push_str(&format!(
                "{{\"at\":\"2026-11-29T22:{:02}:{:02}Z\",\"message\":\"terminate i-{i:017x}\"}},",
                i / 60 % 60,
                i % 60
            ));
            i += 1;
        }
        text.push_str("{}]}\n");
        text.into_bytes()
    }

    #[test]
    fn a_checkpoint_under_the_threshold_is_written_as_its_json() {
        let json = json_of(10_000);
        let written = encode_from(&json, json.len() + 1).unwrap();
        assert!(matches!(written, Cow::Borrowed(_)));
        assert_eq!(&*written, json.as_slice());
        assert_eq!(decode(written.into_owned()).unwrap().as_bytes(), json);
    }

    #[test]
    fn a_checkpoint_from_the_threshold_on_is_compressed_and_reads_back_whole() {
        let json = json_of(10_000);
        let written = encode_from(&json, json.len()).unwrap().into_owned();
        assert!(written.starts_with(&GZIP_MAGIC));
        assert!(
            written.len() * 4 < json.len(),
            "{} bytes for {} of JSON",
            written.len(),
            json.len()
        );
        assert_eq!(decode(written).unwrap().as_bytes(), json);
        // The threshold in force: 512 KiB.
        let big = json_of(COMPRESS_FROM);
        assert!(encode(&big).unwrap().starts_with(&GZIP_MAGIC));
        let small = json_of(COMPRESS_FROM - 200);
        assert!(small.len() < COMPRESS_FROM);
        assert_eq!(&*encode(&small).unwrap(), small.as_slice());
    }

    #[test]
    fn a_cut_or_foreign_file_is_refused_with_its_reason() {
        let json = json_of(10_000);
        let written = encode_from(&json, 0).unwrap().into_owned();
        let cut = written[..written.len() / 2].to_vec();
        let reason = decode(cut).unwrap_err();
        assert!(reason.contains("not a whole gzip stream"), "{reason}");
        let reason = decode(vec![b'{', 0xff, b'}']).unwrap_err();
        assert!(reason.starts_with("not UTF-8"), "{reason}");
        let reason = decode_at_most(written, 1_000).unwrap_err();
        assert!(reason.contains("inflates to more than"), "{reason}");
        let binary = encode_from(&[0xff, 0xfe, 0x00], 0).unwrap().into_owned();
        let reason = decode(binary).unwrap_err();
        assert!(reason.contains("not UTF-8 inside"), "{reason}");
    }
}
