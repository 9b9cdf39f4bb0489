//! Model files: one self-contained, versioned, checksummed container per model,
//! written atomically.
//!
//! Layout (little endian):
//! `b"DEPFSMDL"` | format version u32 | kind length u32 | kind (UTF-8, e.g. "graph")
//! | payload length u64 | CRC-32 of the payload u32 | payload (postcard-encoded serde value).
//! A truncated, corrupted, foreign or wrong-version file gives one `Error::Model`.

pub use crate::atomic::atomic_write;
use crate::error::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"DEPFSMDL";
/// The container version this build writes and the only one it reads
/// (3: arc-eager label rows per arc direction; 2: 8-bit weights and template-free
/// partial hashes). Models of older versions must be retrained.
pub const FORMAT_VERSION: u32 = 3;

fn model_err(path: &Path, msg: impl Into<String>) -> Error {
    Error::Model { file: path.display().to_string(), msg: msg.into() }
}

/// Encodes `value` as a model of the given kind and writes it atomically.
pub fn save<T: Serialize>(path: &Path, kind: &str, value: &T) -> Result<()> {
    let payload = postcard::to_stdvec(value).map_err(|e| model_err(path, format!("cannot encode: {e}")))?;
    atomic_write(path, |w| {
        w.write_all(MAGIC)?;
        w.write_all(&FORMAT_VERSION.to_le_bytes())?;
        w.write_all(&(kind.len() as u32).to_le_bytes())?;
        w.write_all(kind.as_bytes())?;
        w.write_all(&(payload.len() as u64).to_le_bytes())?;
        w.write_all(&crc32fast::hash(&payload).to_le_bytes())?;
        w.write_all(&payload)
    })
}

/// A checked container: its kind and its payload bytes.
struct Container {
    kind: String,
    payload: Vec<u8>,
}

/// Takes `n` bytes from the front of `rest` or reports a truncated file.
fn take<'a>(path: &Path, rest: &mut &'a [u8], n: usize, what: &str) -> Result<&'a [u8]> {
    if rest.len() < n {
        return Err(model_err(path, format!("truncated file: {what} is cut off")));
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

fn read_container(path: &Path) -> Result<Container> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(&path.display().to_string(), &e))?;
    let mut rest: &[u8] = &bytes;
    if take(path, &mut rest, MAGIC.len(), "the header").ok() != Some(MAGIC.as_slice()) {
        return Err(model_err(path, "not a depfs model file (bad magic bytes)"));
    }
    let u32_at = |rest: &mut &[u8], what: &str| -> Result<u32> {
        let b = take(path, rest, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let version = u32_at(&mut rest, "the version")?;
    if version != FORMAT_VERSION {
        return Err(model_err(
            path,
            format!("model file format version {version} is not supported (this depfs reads version {FORMAT_VERSION})"),
        ));
    }
    let kind_len = u32_at(&mut rest, "the model kind")? as usize;
    let kind = std::str::from_utf8(take(path, &mut rest, kind_len, "the model kind")?)
        .map_err(|_| model_err(path, "corrupted file: model kind is not UTF-8"))?
        .to_string();
    let len_bytes = take(path, &mut rest, 8, "the payload length")?;
    let payload_len = u64::from_le_bytes(len_bytes.try_into().unwrap_or([0; 8]));
    let crc = u32_at(&mut rest, "the checksum")?;
    if (rest.len() as u64) < payload_len {
        return Err(model_err(
            path,
            format!("truncated file: payload has {} of {payload_len} bytes", rest.len()),
        ));
    }
    if (rest.len() as u64) > payload_len {
        return Err(model_err(path, "corrupted file: trailing bytes after the payload"));
    }
    if crc32fast::hash(rest) != crc {
        return Err(model_err(path, "corrupted file: checksum mismatch"));
    }
    Ok(Container { kind, payload: rest.to_vec() })
}

/// The kind of model a file holds ("graph", "arc-eager", ...), after checking the whole file.
pub fn peek_kind(path: &Path) -> Result<String> {
    Ok(read_container(path)?.kind)
}

/// Loads a model of kind `kind`.
pub fn load<T: DeserializeOwned>(path: &Path, kind: &str) -> Result<T> {
    let c = read_container(path)?;
    if c.kind != kind {
        return Err(model_err(path, format!("holds a {:?} model, expected {kind:?}", c.kind)));
    }
    postcard::from_bytes(&c.payload).map_err(|e| model_err(path, format!("corrupted payload: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Toy {
        name: String,
        weights: Vec<f32>,
    }

    fn toy() -> Toy {
        Toy { name: "toy".into(), weights: vec![0.5, -1.25, 3.0] }
    }

    fn saved(dir: &tempfile::TempDir) -> std::path::PathBuf {
        let p = dir.path().join("m.depfs");
        save(&p, "toy", &toy()).unwrap();
        p
    }

    fn err_of(path: &Path) -> String {
        load::<Toy>(path, "toy").unwrap_err().to_string()
    }

    #[test]
    fn round_trip_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        assert_eq!(load::<Toy>(&p, "toy").unwrap(), toy());
        assert_eq!(peek_kind(&p).unwrap(), "toy");
        assert!(load::<Toy>(&p, "graph").unwrap_err().to_string().contains("expected \"graph\""));
    }

    #[test]
    fn truncated_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let bytes = std::fs::read(&p).unwrap();
        for cut in [3, 10, 20, bytes.len() - 1] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let msg = err_of(&p);
            assert!(msg.contains("m.depfs"), "{msg}");
            assert!(msg.contains("truncated") || msg.contains("bad magic"), "{msg}");
        }
    }

    #[test]
    fn flipped_byte_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let mut bytes = std::fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&p, &bytes).unwrap();
        assert!(err_of(&p).contains("checksum mismatch"));
    }

    #[test]
    fn wrong_version_and_foreign_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[8] = 9;
        std::fs::write(&p, &bytes).unwrap();
        assert!(err_of(&p).contains("version 9 is not supported"));
        std::fs::write(&p, b"# sent_id = 1\n1\tA\n").unwrap();
        assert!(err_of(&p).contains("not a depfs model file"));
    }

    #[test]
    fn failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let before = std::fs::read(&p).unwrap();
        let r = atomic_write(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(r.unwrap_err().to_string().contains("disk full"));
        assert_eq!(std::fs::read(&p).unwrap(), before);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "temp file left behind");
    }
}
