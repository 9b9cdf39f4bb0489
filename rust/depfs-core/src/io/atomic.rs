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
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `path` the way a Unix tool should: [`AtomicFile::create`], `write`, then
/// [`AtomicFile::commit`]; on any error the old file is left untouched and nothing new
/// is left behind.
pub fn atomic_write(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    write(&mut file).map_err(|e| file.error(&e))?;
    file.commit()
}

/// A file being written the way a Unix tool should, whose bytes replace its path only
/// at [`AtomicFile::commit`]. A regular file (or a new one) is written atomically (see
/// the module comment); dropped without a commit, nothing is left and the old file is
/// untouched. An existing file keeps its permission bits; a new one gets 0666 less the
/// process's umask, as `open(2)` would give it. A symlink's target is replaced, never
/// the link. A path that is not a regular file — a device such as `/dev/null`, a FIFO,
/// a socket — is written in place, never replaced. Python's `depfs.files` writes
/// through this too: one writer for every output.
pub struct AtomicFile {
    /// The path as given, for messages.
    name: String,
    target: PathBuf,
    out: BufWriter<File>,
    how: How,
    /// Bytes written, and the first of those whose writeback is not started yet.
    written: u64,
    unstarted: u64,
    /// The replaced file's owner and group, given to the new one where permitted.
    owner: Option<(u32, u32)>,
}

/// Bytes of a regular file handed to the kernel at a time before their writeback is
/// started (`sync_file_range`): the disk then writes while the program works, and the
/// commit's sync waits for the last few megabytes only, not the whole file (a 71 MB
/// parse's sync took 32 ms at the end, with every core idle).
const WRITEBACK_STEP: u64 = 8 << 20;

enum How {
    /// A device, FIFO or socket: written as it is.
    InPlace,
    /// Linux `O_TMPFILE`: named at the commit; `mode` is the old file's, if any.
    Unnamed { mode: Option<std::fs::Permissions> },
    /// The fallback: a hidden named file, removed when dropped uncommitted.
    Named { tmp: tempfile::TempPath, mode: std::fs::Permissions },
}

impl AtomicFile {
    pub fn create(path: &Path) -> Result<Self> {
        Self::create_as(path, true)
    }

    /// [`Self::create`]; `unnamed: false` takes the fallback (tests run it where
    /// `O_TMPFILE` works).
    fn create_as(path: &Path, unnamed: bool) -> Result<Self> {
        let name = path.display().to_string();
        let io_err = |e: std::io::Error| Error::io(&name, &e);
        let target = match follow_symlinks(path).map_err(io_err)? {
            Resolved::Path(target) => target,
            Resolved::Descriptor(file) => {
                // `/dev/stdout`, `/dev/fd/N`: the process's own descriptor, written
                // through (its offset and its append mode shared), never replaced.
                let out = BufWriter::with_capacity(1 << 16, file);
                let target = path.to_path_buf();
                let how = How::InPlace;
                return Ok(AtomicFile { name, target, out, how, written: 0, unstarted: 0, owner: None });
            }
        };
        let old = match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => return Err(io_err(std::io::Error::other("is a directory"))),
            Ok(m) if !m.is_file() => {
                let file = std::fs::OpenOptions::new().write(true).open(&target).map_err(io_err)?;
                let out = BufWriter::with_capacity(1 << 16, file);
                let how = How::InPlace;
                return Ok(AtomicFile { name, target, out, how, written: 0, unstarted: 0, owner: None });
            }
            Ok(m) => Some(m.permissions()),
            Err(_) => None,
        };
        let owner = std::fs::metadata(&target).ok().and_then(|m| owner_of(&m));
        let dir = folder(&target);
        // (the OS says only "No such file or directory", as if the file were read)
        if matches!(std::fs::metadata(dir), Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
            let msg = format!("the folder {} does not exist", dir.display());
            return Err(Error::Io { file: name, msg });
        }
        let unnamed = if unnamed { unnamed_file(dir).map_err(io_err)? } else { None };
        let (file, how) = match unnamed {
            Some(file) => (file, How::Unnamed { mode: old }),
            None => {
                let prefix = hidden_prefix(&target);
                let named = tempfile::Builder::new()
                    .prefix(&prefix)
                    .suffix(".tmp")
                    .rand_bytes(RAND_CHARS)
                    .tempfile_in(dir);
                let (file, tmp) = named.map_err(io_err)?.into_parts();
                let mode = match old {
                    Some(m) => m,
                    None => new_file_permissions(&file).map_err(io_err)?,
                };
                (file, How::Named { tmp, mode })
            }
        };
        let out = BufWriter::with_capacity(1 << 16, file);
        Ok(AtomicFile { name, target, out, how, written: 0, unstarted: 0, owner })
    }

    /// The named temporary file the bytes go to (the fallback), else `None`: a caller
    /// that cannot drop the file while another thread writes to it removes this.
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.how {
            How::Named { tmp, .. } => Some(tmp),
            _ => None,
        }
    }

    /// The path's error for an I/O error while writing.
    pub fn error(&self, e: &std::io::Error) -> Error {
        Error::io(&self.name, e)
    }

    /// Flushes, syncs and puts the bytes under the path (for a device: flushes).
    pub fn commit(self) -> Result<()> {
        let AtomicFile { name, target, out, how, owner, .. } = self;
        let io_err = |e: std::io::Error| Error::io(&name, &e);
        let file = out.into_inner().map_err(|e| io_err(e.into_error()))?;
        let tmp = match how {
            How::InPlace => return Ok(()),
            How::Unnamed { mode } => {
                if let Some(mode) = mode {
                    file.set_permissions(keep_owner(&file, owner, mode)).map_err(io_err)?;
                }
                file.sync_all().map_err(io_err)?;
                let prefix = hidden_prefix(&target);
                let mut fresh = tempfile::Builder::new();
                fresh.prefix(&prefix).suffix(".tmp").rand_bytes(RAND_CHARS);
                let named = fresh.make_in(folder(&target), |path| link_unnamed(&file, path));
                named.map_err(io_err)?.into_temp_path()
            }
            How::Named { tmp, mode } => {
                file.set_permissions(keep_owner(&file, owner, mode)).map_err(io_err)?;
                file.sync_all().map_err(io_err)?;
                tmp
            }
        };
        tmp.persist(&target).map_err(|e| io_err(e.error))
    }
}

impl AtomicFile {
    /// Counts `n` bytes written; starts the writeback of every [`WRITEBACK_STEP`] of
    /// them the kernel has (a hint: its error is the sync's to report, at the commit).
    fn wrote(&mut self, n: usize) {
        self.written += n as u64;
        let handed = self.written - self.out.buffer().len() as u64;
        if handed - self.unstarted >= WRITEBACK_STEP && !matches!(self.how, How::InPlace) {
            start_writeback(self.out.get_ref(), self.unstarted, handed - self.unstarted);
            self.unstarted = handed;
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.out.write_all(buf)?;
        self.wrote(buf.len());
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A file's owner and group.
#[cfg(unix)]
fn owner_of(m: &std::fs::Metadata) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.uid(), m.gid()))
}

#[cfg(not(unix))]
fn owner_of(_m: &std::fs::Metadata) -> Option<(u32, u32)> {
    None
}

/// Gives the new `file` the replaced file's `owner` where permitted (root rewriting a
/// user's output left it root's, unreadable to its owner at mode 0600), and returns
/// `mode` to set: without the setuid and setgid bits when the owner could not be kept
/// (another user's setuid file must not become one of ours).
#[cfg(unix)]
fn keep_owner(file: &File, owner: Option<(u32, u32)>, mode: std::fs::Permissions) -> std::fs::Permissions {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Some((uid, gid)) = owner else { return mode };
    let _ = std::os::unix::fs::fchown(file, Some(uid), Some(gid)); // only root gives files away
    match file.metadata() {
        Ok(m) if (m.uid(), m.gid()) == (uid, gid) => mode,
        _ => std::fs::Permissions::from_mode(mode.mode() & !0o6000),
    }
}

#[cfg(not(unix))]
fn keep_owner(_file: &File, _owner: Option<(u32, u32)>, mode: std::fs::Permissions) -> std::fs::Permissions {
    mode
}

/// Starts writing `len` bytes of `file` from `at` to the disk, without waiting.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, at: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(at), Ok(len)) = (i64::try_from(at), i64::try_from(len)) else { return };
    // SAFETY: a plain system call on an open descriptor; it reads no memory of ours.
    #[allow(unsafe_code)]
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), at, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _at: u64, _len: u64) {}

fn folder(target: &Path) -> &Path {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The random characters of a hidden temporary name (`depfs.files.temporary_pattern`
/// matches exactly six).
const RAND_CHARS: usize = 6;

/// Bytes of the target's name kept in a hidden temporary name: the name is 12 bytes
/// longer (`.`, `.XXXXXX.tmp`), and a name of up to 255 bytes is legal
/// (`depfs.files.temporary_pattern` cuts it the same).
const HIDDEN_NAME_BYTES: usize = 200;

/// The prefix of the hidden temporary names next to `target`: `.NAME.XXXXXX.tmp`, NAME
/// cut to [`HIDDEN_NAME_BYTES`] (at a character's start): a legal 250-byte name failed
/// at the commit, after all the work, with "File name too long".
fn hidden_prefix(target: &Path) -> String {
    let file_name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut cut = file_name.len().min(HIDDEN_NAME_BYTES);
    while !file_name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(".{}.", &file_name[..cut])
}

/// An unnamed file in `dir`, open for writing (Linux `O_TMPFILE`, created 0666 less
/// the umask, as a new file would be; no one can open it by a name); `None` where the system or the file system does not support it
/// (or no `/proc` is mounted to name it through).
#[cfg(target_os = "linux")]
fn unnamed_file(dir: &Path) -> std::io::Result<Option<File>> {
    use rustix::fs::{openat, Mode, OFlags, CWD};
    use rustix::io::Errno;
    if !Path::new("/proc/self/fd").is_dir() {
        return Ok(None);
    }
    let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
    match openat(CWD, dir, flags, Mode::from_raw_mode(0o666)) {
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

/// Where a path leads once its symlinks are followed.
enum Resolved {
    Path(PathBuf),
    /// One of this process's open descriptors (`/proc/self/fd/N`), duplicated.
    Descriptor(File),
}

/// `path` with symlinks followed (relative links resolve against the link's folder);
/// a dangling link gives the path it points to. At most 40 links, as the kernel does.
/// A link to one of this process's descriptors (`/dev/stdout` → `/proc/self/fd/1`)
/// gives that descriptor: its "target" (`pipe:[…]`, or the file the shell opened
/// for appending) is not a path to replace.
fn follow_symlinks(path: &Path) -> std::io::Result<Resolved> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        if let Some(file) = own_descriptor(&p)? {
            return Ok(Resolved::Descriptor(file));
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(Resolved::Path(p)),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// A duplicate of descriptor N when `p` is `N` in this process's `/proc/self/fd`
/// (however named: `/dev/fd/N`, `/proc/PID/fd/N`); `None` for any other path.
#[cfg(target_os = "linux")]
fn own_descriptor(p: &Path) -> std::io::Result<Option<File>> {
    use std::os::fd::{BorrowedFd, RawFd};
    let Some(n) = p.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse::<RawFd>().ok()) else {
        return Ok(None);
    };
    let dir = p.parent().and_then(|d| d.canonicalize().ok());
    let own = Path::new("/proc/self/fd").canonicalize().ok();
    if n < 0 || dir.is_none() || dir != own || !p.exists() {
        return Ok(None);
    }
    // SAFETY: descriptor `n` is open in this process (its /proc entry was just
    // found); it is only duplicated here, never closed.
    #[allow(unsafe_code)]
    let fd = unsafe { BorrowedFd::borrow_raw(n) };
    Ok(Some(File::from(fd.try_clone_to_owned()?)))
}

#[cfg(not(target_os = "linux"))]
fn own_descriptor(_p: &Path) -> std::io::Result<Option<File>> {
    Ok(None)
}

/// A new file's mode as `open(2)` with 0666 gives it: 0666 less the umask, read from
/// `/proc/self/status` (setting the umask to read it would race with other threads);
/// 022 where that cannot be read. Only the named fallback needs it: the unnamed file is
/// created with 0666 and the kernel applies the umask.
fn new_file_permissions(file: &File) -> std::io::Result<std::fs::Permissions> {
    #[allow(unused_mut)]
    let mut p = file.metadata()?.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("Umask:"))?;
                u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
            })
            .unwrap_or(0o022);
        p.set_mode(0o666 & !umask);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing folder is named as such (the OS's "No such file or directory" read as
    /// if the output were an input), and nothing is made.
    #[test]
    fn a_missing_folder_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no").join("x.depfs");
        for unnamed in [true, false] {
            let err = AtomicFile::create_as(&p, unnamed).err().expect("a missing folder").to_string();
            let want = format!("the folder {} does not exist", dir.path().join("no").display());
            assert!(err.contains(&want) && err.contains("x.depfs"), "{err}");
        }
        assert!(!dir.path().join("no").exists());
    }

    /// A replaced file keeps its owner and group where the writer may give them (root:
    /// it made the file root's); a writer that may not drops the old setuid bit.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_replaced_file_keeps_its_owner() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("users.conllu");
        std::fs::write(&p, b"mine").unwrap();
        let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
        let (uid, gid) = if root { (65534, 65534) } else { (std::fs::metadata(&p).unwrap().uid(), 0) };
        if root {
            std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o4640)).unwrap();
        for unnamed in [true, false] {
            let mut f = AtomicFile::create_as(&p, unnamed).unwrap();
            f.write_all(b"new").unwrap();
            f.commit().unwrap();
            let m = std::fs::metadata(&p).unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), b"new");
            if root {
                assert_eq!((m.uid(), m.gid(), m.permissions().mode() & 0o7777), (uid, gid, 0o4640));
            }
        }
    }

    /// A legal name of 250 bytes (its hidden temporary name would be 262) is written,
    /// and so is one whose cut falls inside a character.
    #[test]
    fn a_long_name_is_written() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["m".repeat(250), format!("{}{}", "m".repeat(199), "é".repeat(20))] {
            let p = dir.path().join(&name);
            for unnamed in [true, false] {
                let mut f = AtomicFile::create_as(&p, unnamed).unwrap();
                f.write_all(b"1\tA\n").unwrap();
                f.commit().unwrap();
                assert_eq!(std::fs::read(&p).unwrap(), b"1\tA\n");
            }
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: the process's own descriptor is
    /// written through (at its offset: after what was written to it before), not
    /// replaced: the same file, nothing else in its folder. A link's "target" there
    /// (`pipe:[…]`, or the file the shell opened) is no path to replace.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_descriptor_of_this_process_is_written_through() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        for folder in ["/dev/fd", "/proc/self/fd"] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("out.conllu");
            let mut f = File::create(&p).unwrap();
            f.write_all(b"before\n").unwrap();
            let inode = std::fs::metadata(&p).unwrap().ino();
            let via = PathBuf::from(format!("{folder}/{}", f.as_raw_fd()));
            atomic_write(&via, |w| w.write_all(b"1\tA\n")).unwrap();
            f.write_all(b"after\n").unwrap(); // the offset was shared
            assert_eq!(std::fs::read(&p).unwrap(), b"before\n1\tA\nafter\n", "{folder}");
            assert_eq!(std::fs::metadata(&p).unwrap().ino(), inode);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
        // A number that is not an open descriptor is a path as any other: not found.
        let closed = PathBuf::from("/proc/self/fd/999999");
        assert!(AtomicFile::create(&closed).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_complete_with_the_mode_open_gives() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.conllu");
        atomic_write(&p, |w| w.write_all(b"1\tA\n")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"1\tA\n");
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"").unwrap(); // open(2) with 0666, less the umask
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&p), mode(&plain));
        // The fallback's rule gives the same.
        let named = tempfile::tempfile_in(dir.path()).unwrap();
        assert_eq!(new_file_permissions(&named).unwrap().mode() & 0o7777, mode(&plain));
    }

    /// Dropped without a commit: the old file untouched, nothing new in the folder;
    /// committed: the new bytes, the old mode, nothing else. Both ways of writing.
    #[cfg(unix)]
    #[test]
    fn uncommitted_leaves_nothing_committed_keeps_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        for unnamed in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("out.conllu");
            std::fs::write(&p, b"old").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
            let mut f = AtomicFile::create_as(&p, unnamed).unwrap();
            f.write_all(&[b'x'; 1 << 17]).unwrap();
            drop(f);
            assert_eq!(std::fs::read(&p).unwrap(), b"old");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "unnamed: {unnamed}");
            let mut f = AtomicFile::create_as(&p, unnamed).unwrap();
            f.write_all(b"new").unwrap();
            f.commit().unwrap();
            assert_eq!(std::fs::read(&p).unwrap(), b"new");
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o640);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "unnamed: {unnamed}");
        }
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

    /// The writeback of a regular file is started every WRITEBACK_STEP bytes handed to
    /// the kernel (the commit's sync then waits for the rest only); never on a device.
    #[cfg(target_os = "linux")]
    #[test]
    fn writeback_starts_as_the_bytes_come() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.conllu");
        let mut f = AtomicFile::create(&p).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let mut started = Vec::new();
        for _ in 0..20 {
            f.write_all(&chunk).unwrap();
            started.push(f.unstarted >> 20);
        }
        // After 8 and 16 MiB; small writes wait in the buffer, uncounted until handed over.
        assert_eq!(started[6..9], [0, 8, 8]);
        assert_eq!(started[19], 16);
        f.write_all(b"tail").unwrap();
        assert_eq!(f.written, (20 << 20) + 4);
        f.commit().unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), (20 << 20) + 4);
        let mut null = AtomicFile::create(Path::new("/dev/null")).unwrap();
        for _ in 0..10 {
            null.write_all(&chunk).unwrap();
        }
        assert_eq!(null.unstarted, 0);
    }

    #[test]
    fn missing_directory_names_the_file() {
        let err = atomic_write(Path::new("/nonexistent-dir/x.conllu"), |_| Ok(())).unwrap_err();
        assert!(err.to_string().starts_with("/nonexistent-dir/x.conllu:"), "{err}");
    }
}
