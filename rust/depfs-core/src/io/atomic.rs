//! Atomic file writes: nothing half-written is ever left under the final name, and on
//! Linux nothing at all is left by a killed write.
//!
//! On Linux the bytes go to an unnamed file (`O_TMPFILE`) in the target's folder; only
//! once it is complete and synced is it linked to a fresh hidden name and renamed over
//! the target, so a process killed while writing (SIGKILL, a power cut) leaves no file
//! behind; only the few microseconds between the link and the rename hold a name.
//! Where `O_TMPFILE` is not supported (a file system without it, other systems) the
//! bytes go to a named hidden temporary file `.NAME.XXXXXX.tmp` instead, removed on
//! any error but left behind by a kill.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Writes `path` the way a Unix tool should. A regular file (or a new one) is written
/// atomically (see the module comment): on any error the old file is left untouched
/// and the temporary file removed. An existing file keeps its permission bits (a new
/// one gets 0644). A symlink's target is replaced, never the link. A path that is not
/// a regular file — a device such as `/dev/null`, a FIFO, a socket — is written in
/// place, never replaced.
pub fn atomic_write(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let name = path.display().to_string();
    let io_err = |e: std::io::Error| Error::io(&name, &e);
    let target = follow_symlinks(path).map_err(io_err)?;
    let mode = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(io_err(std::io::Error::other("is a directory")));
        }
        Ok(m) if !m.is_file() => {
            let file = std::fs::OpenOptions::new().write(true).open(&target).map_err(io_err)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            write(&mut out).map_err(io_err)?;
            return out.flush().map_err(io_err);
        }
        Ok(m) => Some(m.permissions()),
        Err(_) => None,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let file_name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{file_name}.");
    let mut hidden = tempfile::Builder::new();
    hidden.prefix(&prefix).suffix(".tmp");
    // The named temporary file of the fallback is removed when `named` is dropped.
    let (file, named) = match unnamed_file(dir).map_err(io_err)? {
        Some(file) => (file, None),
        None => {
            let tmp = hidden.tempfile_in(dir).map_err(io_err)?;
            let (file, tmp_path) = tmp.into_parts();
            (file, Some(tmp_path))
        }
    };
    {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &file);
        write(&mut buffered).map_err(io_err)?;
        buffered.flush().map_err(io_err)?;
    }
    let perms = match mode {
        Some(p) => p,
        None => default_permissions(&file).map_err(io_err)?,
    };
    file.set_permissions(perms).map_err(io_err)?;
    file.sync_all().map_err(io_err)?;
    let tmp_path = match named {
        Some(p) => p,
        None => hidden.make_in(dir, |fresh| link_unnamed(&file, fresh)).map_err(io_err)?.into_temp_path(),
    };
    tmp_path.persist(&target).map_err(|e| io_err(e.error))?;
    Ok(())
}

/// An unnamed file in `dir`, open for writing (Linux `O_TMPFILE`, mode 0600 until the
/// final mode is set); `None` where the system or the file system does not support it
/// (or no `/proc` is mounted to name it through).
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Path) -> std::io::Result<Option<File>> {
    use rustix::fs::{openat, Mode, OFlags, CWD};
    use rustix::io::Errno;
    if !Path::new("/proc/self/fd").is_dir() {
        return Ok(None);
    }
    let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
    match openat(CWD, dir, flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => Ok(Some(File::from(fd))),
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn unnamed_file(_dir: &Path) -> std::io::Result<Option<File>> {
    Ok(None)
}

/// Gives the unnamed `file` the name `fresh` (which must not exist).
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, fresh: &Path) -> std::io::Result<()> {
    use rustix::fs::{linkat, AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    linkat(CWD, proc_path.as_str(), CWD, fresh, AtFlags::SYMLINK_FOLLOW).map_err(Into::into)
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _fresh: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
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
fn default_permissions(file: &File) -> std::io::Result<std::fs::Permissions> {
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

    /// While the bytes are written, the folder holds no new name (a kill then leaves
    /// nothing); afterwards only the target.
    #[cfg(target_os = "linux")]
    #[test]
    fn nothing_is_named_while_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.conllu");
        std::fs::write(&p, b"old").unwrap();
        let names = || -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into())
                .collect();
            v.sort();
            v
        };
        let mut during = Vec::new();
        atomic_write(&p, |w| {
            w.write_all(&[b'x'; 1 << 17])?; // past the buffer: bytes are in the file
            during = names();
            Ok(())
        })
        .unwrap();
        assert_eq!(during, ["out.conllu"]);
        assert_eq!(names(), ["out.conllu"]);
        assert_eq!(std::fs::read(&p).unwrap().len(), 1 << 17);
    }

    #[test]
    fn missing_directory_names_the_file() {
        let err = atomic_write(Path::new("/nonexistent-dir/x.conllu"), |_| Ok(())).unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent-dir/x.conllu:"), "{err}");
    }
}
