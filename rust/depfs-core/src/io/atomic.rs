//! Atomic file writes: nothing half-written is ever left under the final name.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `path` atomically: the bytes go to a temporary file in the same
/// directory, which is flushed to disk and renamed over `path` only once
/// completely written. On any error the old file (if any) is left untouched
/// and the temporary file is removed. The new file gets mode 0644 (the
/// temporary file is created 0600).
pub fn atomic_write(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let name = path.display().to_string();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(&name, &e))?;
    {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        write(&mut buffered).map_err(|e| Error::io(&name, &e))?;
        buffered.flush().map_err(|e| Error::io(&name, &e))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms = std::fs::Permissions::from_mode(0o644);
        tmp.as_file().set_permissions(perms).map_err(|e| Error::io(&name, &e))?;
    }
    tmp.as_file().sync_all().map_err(|e| Error::io(&name, &e))?;
    tmp.persist(path).map_err(|e| Error::io(&name, &e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn written_file_is_world_readable_and_complete() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.conllu");
        atomic_write(&p, |w| w.write_all(b"1\tA\n")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"1\tA\n");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o644);
    }

    #[test]
    fn missing_directory_names_the_file() {
        let err = atomic_write(Path::new("/nonexistent-dir/x.conllu"), |_| Ok(())).unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent-dir/x.conllu:"), "{err}");
    }
}
