//! Atomic file writes: nothing half-written is ever left under the final name.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `path` the way a Unix tool should. A regular file (or a new one) is written
/// atomically: the bytes go to a hidden temporary file in the same directory, which is
/// flushed to disk and renamed over `path` only once complete; on any error the old
/// file is left untouched and the temporary file removed. An existing file keeps its
/// permission bits (a new one gets 0644). A symlink's target is replaced, never the
/// link. A path that is not a regular file — a device such as `/dev/null`, a FIFO, a
/// socket — is written in place, never replaced.
pub fn atomic_write(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let name = path.display().to_string();
    let target = follow_symlinks(path).map_err(|e| Error::io(&name, &e))?;
    let mode = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(Error::io(&name, &std::io::Error::other("is a directory")));
        }
        Ok(m) if !m.is_file() => {
            let file =
                std::fs::OpenOptions::new().write(true).open(&target).map_err(|e| Error::io(&name, &e))?;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            write(&mut out).map_err(|e| Error::io(&name, &e))?;
            return out.flush().map_err(|e| Error::io(&name, &e));
        }
        Ok(m) => Some(m.permissions()),
        Err(_) => None,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let file_name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(&name, &e))?;
    {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        write(&mut buffered).map_err(|e| Error::io(&name, &e))?;
        buffered.flush().map_err(|e| Error::io(&name, &e))?;
    }
    let perms = match mode {
        Some(p) => p,
        None => default_permissions(tmp.as_file()).map_err(|e| Error::io(&name, &e))?,
    };
    tmp.as_file().set_permissions(perms).map_err(|e| Error::io(&name, &e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(&name, &e))?;
    tmp.persist(&target).map_err(|e| Error::io(&name, &e.error))?;
    Ok(())
}

/// `path` with symlinks followed (relative links resolve against the link's folder);
/// a dangling link gives the path it points to. At most 40 links, as the kernel does.
fn follow_symlinks(path: &Path) -> std::io::Result<std::path::PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// 0644 for a new file (as most tools create data files).
fn default_permissions(file: &std::fs::File) -> std::io::Result<std::fs::Permissions> {
    #[allow(unused_mut)]
    let mut p = file.metadata()?.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.set_mode(0o644);
    }
    Ok(p)
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

    #[cfg(unix)]
    #[test]
    fn modes_symlinks_and_devices_survive() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        // An existing file keeps its mode.
        let p = dir.path().join("private.conllu");
        std::fs::write(&p, b"old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        atomic_write(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        // A symlink stays a link; its target gets the bytes.
        let link = dir.path().join("link.conllu");
        std::os::unix::fs::symlink("private.conllu", &link).unwrap();
        atomic_write(&link, |w| w.write_all(b"via link")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&p).unwrap(), b"via link");
        // A device is written in place, not replaced by a regular file.
        atomic_write(Path::new("/dev/null"), |w| w.write_all(b"gone")).unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
        assert!(atomic_write(dir.path(), |_| Ok(())).is_err());
    }

    #[test]
    fn missing_directory_names_the_file() {
        let err = atomic_write(Path::new("/nonexistent-dir/x.conllu"), |_| Ok(())).unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent-dir/x.conllu:"), "{err}");
    }
}
